import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { parseSimulationConfig, simulate } from './simulate.js';
import { resolveEngineFlags } from './resolve-engine.js';
import { stepBatchOf } from '../latency/types.js';
import { req } from '../latency/test-fixtures.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

async function resolve(options: Record<string, unknown>, files: Record<string, string> = {}): Promise<Awaited<ReturnType<typeof resolveEngineFlags>>> {
  const { values } = parseSimulationConfig({ mode: 'run', model: MODEL, hardware: 'H100', tp: 1, ...options });
  return resolveEngineFlags(values, {
    readText: (p) => {
      const t = files[p];
      if (t === undefined) throw new Error(`no file ${p}`);
      return t;
    },
    warn: () => undefined,
  });
}

/** One request at a time (rate far below service): every decode step holds exactly one sequence. */
const ALONE = { mode: 'run' as const, model: MODEL, hardware: 'H100', tp: 1, rate: 0.01, numRequests: 3, promptTokens: 100, promptTokensStdev: 0, outputTokens: 20, outputTokensStdev: 0 };

describe('--engine-profile', () => {
  it('selects corrected-physics, the profile\'s scheduling mode and overheads; explicit flags and a fitted profile win', async () => {
    const v1 = await resolve({ engineProfile: 'vllm-v1' });
    expect(v1.latency.backend).toBe('corrected-physics');
    expect(v1.setup.schedulingMode).toBe('async');
    expect(v1.latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 838, 8, 9030]);
    // A model of at most 32K tokens (Llama-3.1-8B capped at 8,192 here): V0 ran without chunked prefill.
    const v0 = await resolve({ engineProfile: 'vllm-v0', maxModelLen: 8192 });
    expect(v0.setup.schedulingMode).toBe('prefill-first');
    expect(v0.latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 4000, 80, 9030]);
    expect((await resolve({ engineProfile: 'vllm-v0', schedulingMode: 'sync' })).setup.schedulingMode).toBe('sync');
    const profile = 'kind: latency-profile\nversion: 1\nlatency_model: corrected-physics\ncoefficients: {step_us: 5000}\n';
    const fitted = await resolve({ engineProfile: 'vllm-v0', latencyProfile: 'p.yaml' }, { 'p.yaml': profile });
    expect(fitted.latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 5000, 80, 9030]);
    // --scheduling-mode prefill-first alone is V0's step formation: corrected-physics takes V0's overheads with it;
    // an explicit --engine-profile keeps its own, and the reference's backends are not switched to corrected-physics.
    expect((await resolve({ latencyModel: 'corrected-physics', schedulingMode: 'prefill-first' })).latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 4000, 80, 9030]);
    expect((await resolve({ engineProfile: 'vllm-v1', schedulingMode: 'prefill-first' })).latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 838, 8, 9030]);
    // V0 without chunked prefill: the token budget defaults to max(max_model_len, 2048); an explicit
    // --max-num-batched-tokens wins; V1 keeps 2,048.
    expect(v0.setup.maxNumBatchedTokens).toBe(8192);
    expect((await resolve({ latencyModel: 'corrected-physics', schedulingMode: 'prefill-first' })).setup.maxNumBatchedTokens).toBe(131_072);
    expect((await resolve({ engineProfile: 'vllm-v0', maxModelLen: 1024 })).setup.maxNumBatchedTokens).toBe(2048);
    expect((await resolve({ engineProfile: 'vllm-v0', maxModelLen: 8192, maxNumBatchedTokens: 4096 })).setup.maxNumBatchedTokens).toBe(4096);
    // Above 32K tokens V0 turned chunked prefill on by itself: mixed (sync) steps and V0's chunked budget of 512,
    // unless the flags say otherwise.
    const long = await resolve({ engineProfile: 'vllm-v0' });
    expect(long.setup.schedulingMode).toBe('sync');
    expect(long.setup.maxNumBatchedTokens).toBe(512);
    expect(long.latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 4000, 80, 9030]);
    expect((await resolve({ engineProfile: 'vllm-v0', maxModelLen: 32_768 })).setup.schedulingMode).toBe('prefill-first');
    expect((await resolve({ engineProfile: 'vllm-v0', schedulingMode: 'prefill-first' })).setup.maxNumBatchedTokens).toBe(131_072);
    expect((await resolve({ engineProfile: 'vllm-v0', maxNumBatchedTokens: 8192 })).setup.maxNumBatchedTokens).toBe(8192);
    expect(v1.setup.maxNumBatchedTokens).toBe(2048);
    const refV0 = await resolve({ schedulingMode: 'prefill-first' });
    expect(refV0.latency.backend).toBe('trained-physics');
    expect(refV0.setup.schedulingMode).toBe('prefill-first');
    // Without the flag nothing changes: corrected-physics is V1, the reference's backends stay synchronous.
    expect((await resolve({ latencyModel: 'corrected-physics' })).latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 838, 8, 9030]);
    expect((await resolve({})).setup.schedulingMode).toBe('sync');
  });

  it('V0 is slower than V1 on the same batch: 3,162 µs + 72 µs per sequence more (Llama-3.1-8B, H100)', async () => {
    const v1 = (await resolve({ engineProfile: 'vllm-v1' })).latency.latency;
    const v0 = (await resolve({ engineProfile: 'vllm-v0' })).latency.latency;
    for (const n of [1, 16, 128]) {
      const batch = stepBatchOf(Array.from({ length: n }, () => req(512, 600, 600, 1)));
      const d = v0.stepTime(batch) - v1.stepTime(batch);
      // The physics is shared; truncation of the two sums moves the difference by at most 1 µs.
      expect(Math.abs(d - (4000 - 838 + n * (80 - 8)))).toBeLessThanOrEqual(1);
    }
  });

  it('end to end through simulate(): a lone request\'s inter-token gap grows by the per-step difference', async () => {
    // Same step formation (async), only the overheads differ: each decode step of one sequence costs
    // (4,000 − 838) + (80 − 8) = 3,234 µs more under V0, so ITL grows by 3.234 ms (± 1 µs truncation).
    const v1 = await simulate({ ...ALONE, engineProfile: 'vllm-v1' });
    const v0same = await simulate({ ...ALONE, engineProfile: 'vllm-v0', schedulingMode: 'async' });
    expect(v0same.metrics.itl_mean_ms - v1.metrics.itl_mean_ms).toBeCloseTo(3.234, 2);
    // The V0 profile as shipped (prefill-first, synchronous): slower in every latency under load too.
    const load = { ...ALONE, rate: 20, numRequests: 200, promptTokens: 512, outputTokens: 128 };
    const a = await simulate({ ...load, engineProfile: 'vllm-v1' });
    const b = await simulate({ ...load, engineProfile: 'vllm-v0', maxModelLen: 8192 });
    expect(b.metrics.itl_mean_ms).toBeGreaterThan(a.metrics.itl_mean_ms * 2);
    expect(b.metrics.e2e_mean_ms).toBeGreaterThan(a.metrics.e2e_mean_ms);
  });

  it('refuses an unknown profile and another latency model, naming the flag', async () => {
    await expect(simulate({ ...ALONE, engineProfile: 'vllm-v2' as never })).rejects.toThrow(/engine-?[pP]rofile/);
    await expect(resolve({ engineProfile: 'vllm-v0', latencyModel: 'trained-physics' })).rejects.toThrow(/--engine-profile vllm-v0 needs --latency-model corrected-physics/);
    for (const [args, msg] of [
      [['--engine-profile', 'v0'], /--engine-profile.*vllm-v1, vllm-v0/],
      [['--engine-profile', 'vllm-v0', '--latency-model', 'roofline'], /--engine-profile vllm-v0 needs --latency-model corrected-physics/],
    ] as const) {
      let out = '';
      const errs: string[] = [];
      const code = await main(['run', '--model', MODEL, ...args], { stdout: (t) => (out += t), warn: () => undefined, error: (t) => errs.push(t) });
      expect(code, args.join(' ')).toBe(2);
      expect(out).toBe('');
      expect(errs).toHaveLength(1);
      expect(errs[0]).toMatch(msg);
    }
  });
});
