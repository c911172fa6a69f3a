import { describe, expect, it } from 'vitest';
import { GoRand } from '../gocompat/go-rand.js';
import { MAX_INT64 } from '../domain/units.js';
import {
  constantInterArrivalUs,
  generateDistributionWorkload,
  goRound,
  sampleGaussianLength,
} from './distribution.js';
import type { DistributionWorkloadOptions } from './distribution.js';
import { DEFAULT_DISTRIBUTION, resolvePreset, validateDistributionParams, validateWorkloadFlags, WORKLOAD_PRESETS } from './presets.js';
import type { DistributionShape } from './presets.js';
import { parseTraceCsv } from './tracev2.js';
import { PARITY_SKIP_NOTE, flagValue, parityCases, readCaseFile } from '../../test/parity/workload-fixtures.js';

function defaults(over: Partial<DistributionWorkloadOptions> = {}): DistributionWorkloadOptions {
  return {
    seed: 42n,
    rate: 1,
    numRequests: 100,
    horizon: MAX_INT64,
    prefixTokens: 0,
    prompt: DEFAULT_DISTRIBUTION.prompt,
    output: DEFAULT_DISTRIBUTION.output,
    timeoutUs: 300_000_000,
    ...over,
  };
}

describe('distribution workload', () => {
  it('matches the reference total_input_tokens for seed 42, 100 default requests', () => {
    const reqs = generateDistributionWorkload(defaults());
    expect(reqs).toHaveLength(100);
    expect(reqs.reduce((s, r) => s + r.inputLen, 0)).toBe(54508);
  });

  it('uses constant arrivals starting one IAT in, truncated reciprocal', () => {
    expect(constantInterArrivalUs(10)).toBe(99999);
    expect(constantInterArrivalUs(8)).toBe(125000);
    expect(constantInterArrivalUs(1e9)).toBe(1);
    const reqs = generateDistributionWorkload(defaults({ rate: 10, numRequests: 3 }));
    expect(reqs.map((r) => r.arrivalTime)).toEqual([99999, 199998, 299997]);
    expect(reqs.map((r) => r.id)).toEqual(['request_0', 'request_1', 'request_2']);
  });

  it('sets tags, MaxOutputLen and deadlines like the reference', () => {
    const reqs = generateDistributionWorkload(defaults({ numRequests: 5, prefixTokens: 64 }));
    const prefix = reqs[0]?.inputTokens.slice(0, 64);
    for (const r of reqs) {
      expect(r.clientId).toBe('distribution');
      expect(r.prefixGroup).toBe('shared');
      expect(r.prefixLength).toBe(64);
      expect(r.maxOutputLen).toBe(r.outputLen);
      expect(r.deadline).toBe(r.arrivalTime + 300_000_000);
      expect(r.sloClass).toBe('');
      expect(r.streaming).toBe(false);
      expect(Array.from(r.inputTokens.slice(0, 64))).toEqual(Array.from(prefix ?? []));
    }
    const noDeadline = generateDistributionWorkload(defaults({ numRequests: 2, timeoutUs: -1 }));
    expect(noDeadline.map((r) => r.deadline)).toEqual([0, 0]);
    expect(noDeadline[0]?.prefixGroup).toBe('');
  });

  it('stops at the horizon and bounds unbounded generation', () => {
    const reqs = generateDistributionWorkload(defaults({ rate: 1, numRequests: 0, horizon: 3_000_000 }));
    expect(reqs.map((r) => r.arrivalTime)).toEqual([1_000_000, 2_000_000]);
    expect(generateDistributionWorkload(defaults({ horizon: 0 }))).toEqual([]);
    expect(() => generateDistributionWorkload(defaults({ numRequests: 0 }))).toThrow(/--num-requests N > 0 or a --horizon/);
  });

  it('gaussian sampler: degenerate range draws nothing, clamps, rounds half away from zero, floors at 1', () => {
    const a = new GoRand(5n);
    const b = new GoRand(5n);
    expect(sampleGaussianLength(a, { mean: 9, stdev: 4, min: 7, max: 7 })).toBe(7);
    expect(a.int63()).toBe(b.int63());
    expect(goRound(2.5)).toBe(3);
    expect(goRound(-2.5)).toBe(-3);
    expect(goRound(0.49999999999999994)).toBe(0);
    const r = new GoRand(1n);
    for (let i = 0; i < 200; i++) {
      const v = sampleGaussianLength(r, { mean: 1, stdev: 1000, min: 0, max: 3 });
      expect(v).toBeGreaterThanOrEqual(1);
      expect(v).toBeLessThanOrEqual(3);
    }
  });
});

describe('presets and flag validation', () => {
  it('ships the reference presets', () => {
    expect(WORKLOAD_PRESETS.chatbot).toEqual({
      prefixTokens: 0,
      prompt: { mean: 256, stdev: 100, min: 2, max: 800 },
      output: { mean: 256, stdev: 100, min: 1, max: 1024 },
    });
    expect(resolvePreset('multidoc').prompt).toEqual({ mean: 10240, stdev: 1200, min: 500, max: 20480 });
    expect(resolvePreset('summarization').output.mean).toBe(512);
    expect(resolvePreset('contentgen').output.stdev).toBe(200);
    expect(() => resolvePreset('nope')).toThrow(/--workload.*"nope".*chatbot/);
  });

  it('accepts the defaults and every preset, and names the offending flag', () => {
    expect(validateDistributionParams(DEFAULT_DISTRIBUTION.prompt, DEFAULT_DISTRIBUTION.output)).toBeNull();
    for (const p of Object.values(WORKLOAD_PRESETS)) expect(validateDistributionParams(p.prompt, p.output)).toBeNull();
    const base = { mean: 100, stdev: 10, min: 10, max: 200 };
    const check = (prompt: object, output: object = base): string | null =>
      validateDistributionParams({ ...base, ...prompt }, { ...base, ...output });
    expect(check({ min: 0 })).toMatch(/^--prompt-tokens-min must be >= 1/);
    expect(check({}, { max: 0 })).toMatch(/^--output-tokens-max must be >= 1/);
    expect(check({ stdev: -1 })).toMatch(/^--prompt-tokens-stdev must be >= 0/);
    expect(check({ min: 300 })).toMatch(/^--prompt-tokens-min \(300\) must be <= --prompt-tokens-max \(200\)/);
    expect(check({ mean: 201 })).toMatch(/^--prompt-tokens \(201\) must lie within/);
    expect(check({}, { stdev: 300 })).toMatch(/^--output-tokens-stdev \(300\) must be <= --output-tokens-max/);
    expect(check({ stdev: 5 })).toMatch(/^--prompt-tokens-stdev \(5\) must be 0 or >= --prompt-tokens-min/);
    expect(check({ stdev: 0 })).toBeNull();
    // The reference checks every min/max bound before any stdev, and the prompt side before the output side.
    expect(check({ stdev: -1 }, { min: 0 })).toMatch(/^--output-tokens-min/);
  });

  it('validates rate, counts and timeout', () => {
    const ok = { rate: 1, numRequests: 100, prefixTokens: 0, timeoutSecs: 300 };
    expect(validateWorkloadFlags(ok)).toBeNull();
    expect(validateWorkloadFlags({ ...ok, rate: 0 })).toMatch(/^--rate must be a finite value > 0/);
    expect(validateWorkloadFlags({ ...ok, rate: Number.NaN })).toMatch(/^--rate/);
    expect(validateWorkloadFlags({ ...ok, rate: 0 }, false)).toBeNull();
    expect(validateWorkloadFlags({ ...ok, numRequests: -1 })).toMatch(/^--num-requests/);
    expect(validateWorkloadFlags({ ...ok, prefixTokens: -1 })).toMatch(/^--prefix-tokens/);
    expect(validateWorkloadFlags({ ...ok, timeoutSecs: 0 })).toMatch(/^--timeout/);
    expect(validateWorkloadFlags({ ...ok, timeoutSecs: -1 })).toBeNull();
  });
});

/** The distribution options a `blis run` argv implies (flag defaults per the reference CLI). */
function optionsFromArgv(argv: readonly string[]): DistributionWorkloadOptions {
  const num = (name: string, dflt: number): number => {
    const v = flagValue(argv, name);
    return v === undefined ? dflt : Number(v);
  };
  const workload = flagValue(argv, 'workload') ?? 'distribution';
  const shape: DistributionShape =
    workload === 'distribution'
      ? {
          prefixTokens: num('prefix-tokens', 0),
          prompt: {
            mean: num('prompt-tokens', 512), stdev: num('prompt-tokens-stdev', 256),
            min: num('prompt-tokens-min', 2), max: num('prompt-tokens-max', 7000),
          },
          output: {
            mean: num('output-tokens', 512), stdev: num('output-tokens-stdev', 256),
            min: num('output-tokens-min', 2), max: num('output-tokens-max', 7000),
          },
        }
      : resolvePreset(workload);
  const timeoutSecs = num('timeout', 300);
  return {
    seed: BigInt(flagValue(argv, 'seed') ?? '42'),
    rate: num('rate', 1),
    numRequests: num('num-requests', 100),
    horizon: num('horizon', MAX_INT64),
    prefixTokens: shape.prefixTokens,
    prompt: shape.prompt,
    output: shape.output,
    timeoutUs: timeoutSecs > 0 ? timeoutSecs * 1_000_000 : 0,
  };
}

const distributionCases = parityCases().filter((c) => flagValue(c.argv, 'workload-spec') === undefined && flagValue(c.argv, 'concurrency') === undefined);

describe(`distribution workload parity with the reference trace.csv${PARITY_SKIP_NOTE}`, () => {
  it.skipIf(distributionCases.length === 0)('has distribution cases to check', () => {
    expect(distributionCases.length).toBeGreaterThan(0);
  });
  for (const c of distributionCases) {
    it(c.name, () => {
      const rows = parseTraceCsv(readCaseFile(c, 'trace.csv'), `${c.name}/trace.csv`);
      const reqs = generateDistributionWorkload(optionsFromArgv(c.argv));
      expect(reqs).toHaveLength(rows.length);
      reqs.forEach((r, i) => {
        const row = rows[i];
        expect(row).toBeDefined();
        if (row === undefined) return;
        const got = {
          id: i, arrival: r.arrivalTime, input: r.inputLen - r.prefixLength, output: r.outputLen,
          deadline: r.deadline, group: r.prefixGroup, prefix: r.prefixLength, client: r.clientId,
        };
        const want = {
          id: row.requestId, arrival: row.arrivalTimeUs, input: row.inputTokens, output: row.outputTokens,
          deadline: row.deadlineUs, group: row.prefixGroup, prefix: row.prefixLength, client: row.clientId,
        };
        expect(got).toEqual(want);
      });
    });
  }
});
