/**
 * The reference's standalone-simulator golden dataset (`testdata/goldendataset.json` of
 * inference-sim/inference-sim at f90a1e3a, Apache-2.0), run there by `TestSimulator_GoldenDataset`.
 * Copied verbatim: the configuration fields the test reads and the expected metrics. The `label` is the
 * file's `model` field, which the reference test ignores (every case uses the same fake model, see
 * golden-dataset.test.ts). Beta coefficients are omitted: roofline does not read them.
 */
export type Quad = readonly [mean: number, std: number, min: number, max: number];

export interface GoldenCase {
  readonly label: string;
  readonly tp: number;
  readonly numRequests: number;
  readonly prefixTokens: number;
  readonly prompt: Quad;
  readonly output: Quad;
  readonly rate: number;
  readonly seed: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly maxModelLen: number;
  readonly totalKvBlocks: number;
  readonly blockSize: number;
  readonly longPrefillTokenThreshold: number;
  readonly alpha: readonly number[];
  /** Expected MetricsOutput fields (integers exact, floats to 1e-9 relative in the reference test). */
  readonly metrics: Readonly<Record<string, number>>;
}

export const GOLDEN_CASES: readonly GoldenCase[] = [
  {
    label: 'meta-llama/llama-3.1-8b-instruct',
    tp: 1, numRequests: 300, prefixTokens: 284,
    prompt: [70, 35, 2, 200],
    output: [215, 80, 1, 512],
    rate: 10, seed: 42, maxNumSeqs: 256, maxNumBatchedTokens: 2048, maxModelLen: 4096,
    totalKvBlocks: 7463, blockSize: 16, longPrefillTokenThreshold: 0,
    alpha: [232.46191091038054, 1.752360364195244, 3357.4400353290152],
    metrics: {
      completed_requests: 300,
      total_input_tokens: 106250,
      total_output_tokens: 65040,
      vllm_estimated_duration_s: 30.877336,
      responses_per_sec: 9.715864088793152,
      tokens_per_sec: 2106.3993344503556,
      e2e_mean_ms: 1491.0742633333334,
      e2e_p90_ms: 2146.2801,
      e2e_p95_ms: 2312.7783,
      e2e_p99_ms: 2855.36702,
      ttft_mean_ms: 9.41624,
      ttft_p90_ms: 10.8392,
      ttft_p95_ms: 11.021650000000001,
      ttft_p99_ms: 11.25506,
      itl_mean_ms: 6.865885186901451,
      itl_p90_ms: 6.9,
      itl_p95_ms: 6.916,
      itl_p99_ms: 6.945,
      scheduling_delay_p99_ms: 4.3571,
    },
  },
  {
    label: 'meta-llama/llama-3.1-8b-instruct',
    tp: 1, numRequests: 300, prefixTokens: 0,
    prompt: [2048, 1974, 2, 3500],
    output: [28, 60, 6, 200],
    rate: 10, seed: 42, maxNumSeqs: 256, maxNumBatchedTokens: 2048, maxModelLen: 4096,
    totalKvBlocks: 7463, blockSize: 16, longPrefillTokenThreshold: 0,
    alpha: [232.46191091038054, 1.752360364195244, 3357.4400353290152],
    metrics: {
      completed_requests: 300,
      total_input_tokens: 545758,
      total_output_tokens: 12841,
      vllm_estimated_duration_s: 30.325765,
      responses_per_sec: 9.892578142711322,
      tokens_per_sec: 423.4353197685203,
      e2e_mean_ms: 408.64216,
      e2e_p90_ms: 903.6522000000001,
      e2e_p95_ms: 1087.64205,
      e2e_p99_ms: 1354.7382699999996,
      ttft_mean_ms: 49.407650000000004,
      ttft_p90_ms: 90.65809999999999,
      ttft_p95_ms: 91.32064999999999,
      ttft_p99_ms: 91.85015,
      itl_mean_ms: 8.593441751056535,
      itl_p90_ms: 7.291,
      itl_p95_ms: 15.323,
      itl_p99_ms: 47.892,
      scheduling_delay_p99_ms: 9.81702,
    },
  },
  {
    label: 'qwen/qwen2.5-7b-instruct',
    tp: 4, numRequests: 500, prefixTokens: 284,
    prompt: [70, 35, 2, 200],
    output: [215, 80, 1, 512],
    rate: 10, seed: 42, maxNumSeqs: 256, maxNumBatchedTokens: 2048, maxModelLen: 4096,
    totalKvBlocks: 1281766, blockSize: 16, longPrefillTokenThreshold: 0,
    alpha: [6748.565706303843, 1.60068623289796, 1952.6809484593186],
    metrics: {
      completed_requests: 500,
      total_input_tokens: 177729,
      total_output_tokens: 107404,
      vllm_estimated_duration_s: 50.208749,
      responses_per_sec: 9.958423779887447,
      tokens_per_sec: 2139.1490953100624,
      e2e_mean_ms: 609.7568279999999,
      e2e_p90_ms: 898.3673000000001,
      e2e_p95_ms: 978.6018499999999,
      e2e_p99_ms: 1179.547,
      ttft_mean_ms: 10.513494000000001,
      ttft_p90_ms: 10.860299999999999,
      ttft_p95_ms: 10.91305,
      ttft_p99_ms: 10.985109999999999,
      itl_mean_ms: 2.802717082616179,
      itl_p90_ms: 2.808,
      itl_p95_ms: 2.809,
      itl_p99_ms: 2.813,
      scheduling_delay_p99_ms: 8.17206,
    },
  },
  {
    label: 'ibm-granite/granite-3.1-8b-instruct',
    tp: 2, numRequests: 300, prefixTokens: 0,
    prompt: [2048, 1974, 2, 3500],
    output: [28, 60, 6, 200],
    rate: 10, seed: 42, maxNumSeqs: 256, maxNumBatchedTokens: 2048, maxModelLen: 4096,
    totalKvBlocks: 105497, blockSize: 16, longPrefillTokenThreshold: 0,
    alpha: [10024.457261493666, 2.110235670377125, 5822.543580863752],
    metrics: {
      completed_requests: 300,
      total_input_tokens: 545758,
      total_output_tokens: 12841,
      vllm_estimated_duration_s: 30.125102,
      responses_per_sec: 9.958472505752844,
      tokens_per_sec: 426.25581815457423,
      e2e_mean_ms: 366.4080466666667,
      e2e_p90_ms: 837.2347000000001,
      e2e_p95_ms: 905.6869999999998,
      e2e_p99_ms: 1254.26397,
      ttft_mean_ms: 40.55762,
      ttft_p90_ms: 62.483,
      ttft_p95_ms: 63.065,
      ttft_p99_ms: 63.85729,
      itl_mean_ms: 7.794843154453393,
      itl_p90_ms: 7.636,
      itl_p95_ms: 7.698,
      itl_p99_ms: 22.464799999999936,
      scheduling_delay_p99_ms: 18.73929,
    },
  },
  {
    label: 'codellama/codellama-34b-instruct-hf',
    tp: 1, numRequests: 500, prefixTokens: 284,
    prompt: [70, 35, 2, 200],
    output: [215, 80, 1, 512],
    rate: 10, seed: 42, maxNumSeqs: 256, maxNumBatchedTokens: 2048, maxModelLen: 4096,
    totalKvBlocks: 2537, blockSize: 16, longPrefillTokenThreshold: 0,
    alpha: [13450.510995636703, 0.041813767451373045, 0],
    metrics: {
      completed_requests: 500,
      total_input_tokens: 177729,
      total_output_tokens: 107404,
      vllm_estimated_duration_s: 51.129613,
      responses_per_sec: 9.77906873654608,
      tokens_per_sec: 2100.6221971599903,
      e2e_mean_ms: 769.065764,
      e2e_p90_ms: 1129.2793,
      e2e_p95_ms: 1230.96025,
      e2e_p99_ms: 1483.78857,
      ttft_mean_ms: 18.684356,
      ttft_p90_ms: 20.0711,
      ttft_p95_ms: 20.27705,
      ttft_p99_ms: 20.42812,
      itl_mean_ms: 3.509603981141959,
      itl_p90_ms: 3.544,
      itl_p95_ms: 3.56,
      itl_p99_ms: 3.585,
      scheduling_delay_p99_ms: 16.914,
    },
  },
];
