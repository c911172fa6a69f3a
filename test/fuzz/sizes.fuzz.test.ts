/**
 * Large but under-cap inputs and huge counts (issue 27): workload specs with thousands of clients and long
 * values, JSON model configs with tens of thousands of keys, deployments whose replica, configuration and TP
 * counts run from ordinary to absurd, request counts and lengths far past what the token bound allows. The
 * outcome contract holds for each (a run, or one located error line), within the case's time and memory bound
 * (test/fuzz/harness.ts): a size must be checked before anything is allocated for it.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { CliWorker, caseDir, checkOutcome, cleanupSandbox, fuzzParams, fuzzTimeout, writeFiles } from './harness.js';

const worker = new CliWorker();
afterAll(async () => {
  await worker.close('sizes');
  cleanupSandbox();
});

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
const M = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
const huge = pick('0', '1', '2', '64', '10000', '10001', '65536', '1000000', '1e9', '2147483648', '9007199254740993', '1e18', '9223372036854775807', '1e308', '-1');

/** A workload spec with many clients (flow style), long ids and large counts. */
const bigSpec: fc.Arbitrary<string> = fc
  .record({
    clients: pick(1, 50, 2_000, 8_000),
    idLength: pick(1, 1_000, 100_000),
    numRequests: pick('5', '20', '1000000', '1e12', '9223372036854775807'),
    tokens: pick('10', '100000', '9000000', '2147483647'),
    horizon: pick('', 'horizon: 2000000\n', 'horizon: 9223372036854775807\n'),
  })
  .map(({ clients, idLength, numRequests, tokens, horizon }) => {
    // At most about 40 MB of text (some cases are over the 64 MiB or per-value caps on purpose, none by gigabytes).
    const id = 'c'.repeat(Math.min(idLength, Math.floor(4e7 / clients)));
    const lines: string[] = [];
    for (let i = 0; i < clients; i++) {
      lines.push(`  - {id: "${i}${id}", rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: ${tokens}}}, output_distribution: {type: constant, params: {value: 10}}}`);
    }
    return `version: "2"\nseed: 1\naggregate_rate: 10\nnum_requests: ${numRequests}\n${horizon}clients:\n${lines.join('\n')}\n`;
  });

/** A deployment whose counts range from ordinary to absurd. */
const bigDeployment: fc.Arbitrary<string> = fc
  .record({
    configs: pick(1, 3, 500),
    replicas: huge,
    min: huge,
    max: huge,
    tp: pick('1', '2', '8', '1024', '1e9', '0', '-2'),
    interval: pick('', '1', '1000', '10000000', '1e18'),
  })
  .map(({ configs, replicas, min, max, tp, interval }) => {
    const cs: string[] = [];
    for (let i = 0; i < configs; i++) {
      cs.push(`      - {name: c${i}, hardware: H100, tp: ${tp}, replicas: ${replicas}, min_replicas: ${min}, max_replicas: ${max}}`);
    }
    return `models:\n  - name: meta-llama/llama-3.1-8b-instruct\n    configurations:\n${cs.join('\n')}\n${interval === '' ? '' : `autoscaler:\n  policy: target-utilization\n  interval_us: ${interval}\n`}`;
  });

/** A HuggingFace config.json with many extra keys and long values beside the real ones. */
const bigModelConfig: fc.Arbitrary<string> = fc
  .record({ extra: pick(0, 1_000, 90_000), valueLength: pick(1, 10_000, 1_000_000), layers: huge })
  .map(({ extra, valueLength, layers }) => {
    const o: Record<string, unknown> = { architectures: ['LlamaForCausalLM'], hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_key_value_heads: 8, vocab_size: 128256, max_position_embeddings: 131072, torch_dtype: 'bfloat16' };
    const v = 'v'.repeat(valueLength);
    for (let i = 0; i < extra; i++) o[`extra_${i}`] = i < 20 ? v : i;
    return JSON.stringify(o).replace(/}$/, `, "num_hidden_layers": ${layers}}`);
  });

describe('fuzz: large but under-cap inputs and huge counts', () => {
  it('each ends in a run or one located error line, within the time and memory bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          bigSpec.map((text) => ({ name: 'spec.yaml', text, argv: (p: string) => ['run', ...M, '--workload-spec', p] })),
          bigDeployment.map((text) => ({ name: 'deploy.yaml', text, argv: (p: string) => ['run', '--num-requests', '12', '--rate', '20', '--deployment', p] })),
          bigModelConfig.map((text) => ({ name: 'config.json', text, argv: (p: string) => ['run', '--model', 'my/model', '--hardware', 'H100', '--tp', '1', '--num-requests', '5', '--rate', '5', '--model-config-folder', p.replace(/\/config\.json$/, '')] })),
          huge.map((n) => ({ name: '', text: '', argv: () => ['run', ...M, '--num-requests', n, '--rate', '10', '--prompt-tokens', n, '--prompt-tokens-max', n, '--num-instances', n] })),
        ),
        async ({ name, text, argv }) => {
          const dir = caseDir();
          const files = name === '' ? {} : writeFiles(dir, { [name]: text });
          checkOutcome(await worker.run(argv(name === '' ? '' : files[name]!), dir));
        },
      ),
      fuzzParams('sizes', 24),
    );
  }, fuzzTimeout(600_000));
});
