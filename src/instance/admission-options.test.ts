import { describe, expect, it } from 'vitest';
import { simulate } from '../sim/simulate.js';

/**
 * `--reserve-full-isl` (vLLM's scheduler_reserve_full_isl, default on from vLLM 0.19) on a hand-traceable replay:
 * a step costs 1000 µs plus 10 µs per prefill token (blackbox β0, β1), 16-token blocks, 8 blocks in all, 32
 * tokens per step. Request 0 (64-token prompt, 40 tokens out) arrives at t = 0: two prefill steps of 1,320 µs
 * (first token at 2,640), then 39 decode steps of 1,000 µs: done at 41,640 holding 103 tokens (7 blocks).
 * Request 1 (64-token prompt, 2 out) arrives at 1,500.
 */
const CSV = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
0,c,,,,0,,0,false,64,40,0,0,0,0,0,,0,0,0,0,0,0,0,ok,,
1,c,,,,0,,0,false,64,2,0,0,0,0,0,,0,0,1500,1500,0,0,0,ok,,
`;
const HEADER = 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n';

async function replay(reserveFullIsl: boolean): Promise<{ rows: Map<number, { ttft_us: number; e2e_us: number }>; metrics: { preemption_count: number } }> {
  const r = await simulate({
    mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 10, 0],
    totalKvBlocks: 8, blockSizeInTokens: 16, maxNumBatchedTokens: 32, horizon: 10_000_000, reserveFullIsl,
    traceHeader: 'h.yaml', traceData: 'd.csv', files: { 'h.yaml': HEADER, 'd.csv': CSV }, outputs: { results: true },
  });
  const rows = JSON.parse(r.files.results!) as { request_id: number; ttft_us: number; e2e_us: number }[];
  return { rows: new Map(rows.map((x) => [x.request_id, x])), metrics: { preemption_count: Number(r.metrics.preemption_count) } };
}

describe('--reserve-full-isl: admission on the whole known sequence (vLLM 0.19)', () => {
  it('request 1 waits until its four blocks are all free: after request 0 finishes, with no preemption', async () => {
    const { rows, metrics } = await replay(true);
    // From step 3 on request 0 holds 5+ of the 8 blocks: request 1 (4 blocks) is held back until request 0
    // ends at 41,640, then prefills in two 1,320 µs steps and decodes once: first token at 44,280 (TTFT
    // 42,780), done at 45,280 (E2E 43,780).
    expect(rows.get(0)!.ttft_us).toBe(2640);
    expect(rows.get(0)!.e2e_us).toBe(41_640);
    expect(rows.get(1)!.ttft_us).toBe(42_780);
    expect(rows.get(1)!.e2e_us).toBe(43_780);
    expect(metrics.preemption_count).toBe(0);
  });

  it('without it (the reference, vLLM before 0.19) request 1 is admitted on its first chunk and the cache thrashes', async () => {
    const { rows, metrics } = await replay(false);
    // Request 1 is admitted twice on a 31-token chunk and preempted twice when request 0's decode needs the
    // block: 62 wasted prefill tokens × 10 µs slow request 0 by 620 µs.
    expect(metrics.preemption_count).toBe(2);
    expect(rows.get(0)!.e2e_us).toBe(41_640 + 620);
    // Both end in exactly one counted state either way.
    expect(rows.size).toBe(2);
  });
});

/**
 * `--prefix-caching`: request 1 repeats request 0's prompt (prefix group g, 64 tokens) after request 0 is done.
 * A step costs 1000 µs + 10 µs per prefill token (budget 2048: one step per prompt).
 */
const SHARED = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
0,c,,,,0,g,64,false,1,2,0,0,0,0,0,,0,0,0,0,0,0,0,ok,,
1,c,,,,0,g,64,false,1,2,0,0,0,0,0,,0,0,100000,100000,0,0,0,ok,,
`;

async function sharedPrompt(prefixCaching: 'auto' | 'on' | 'off'): Promise<number[]> {
  const r = await simulate({
    mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 10, 0],
    totalKvBlocks: 100, horizon: 10_000_000, prefixCaching, traceHeader: 'h.yaml', traceData: 'd.csv', files: { 'h.yaml': HEADER, 'd.csv': SHARED }, outputs: { results: true },
  });
  return (JSON.parse(r.files.results!) as { request_id: number; ttft_us: number }[]).sort((a, b) => a.request_id - b.request_id).map((x) => x.ttft_us);
}

describe('--prefix-caching', () => {
  it('on (auto, outside vllm-v0): the repeated prompt prefills only what its 4 cached blocks do not hold', async () => {
    // Request 0: 65 tokens → 1,650 µs. Request 1: 64 of its 65 tokens are cached (4 full blocks): 1 token → 1,010 µs.
    expect(await sharedPrompt('auto')).toEqual([1650, 1010]);
    expect(await sharedPrompt('on')).toEqual([1650, 1010]);
  });

  it('off (vLLM --no-enable-prefix-caching, V0\'s default): both prompts are prefilled in full', async () => {
    expect(await sharedPrompt('off')).toEqual([1650, 1650]);
  });

  it('the vllm-v0 engine profile turns it off unless --prefix-caching on', async () => {
    const run = async (o: Record<string, unknown>): Promise<number> => (await simulate({
      mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', numRequests: 40, rate: 5, prefixTokens: 512, promptTokens: 64, outputTokens: 8, ...o,
    })).metrics.ttft_mean_ms;
    const v0 = await run({ engineProfile: 'vllm-v0' });
    expect(await run({ engineProfile: 'vllm-v0', prefixCaching: 'off' })).toBe(v0);
    expect(await run({ engineProfile: 'vllm-v0', prefixCaching: 'on' })).toBeLessThan(v0);
  });
});
