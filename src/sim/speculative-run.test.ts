import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { simulate, type SimulationConfig } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const SPEC = [
  'version: "2"', 'seed: 7', 'aggregate_rate: 12', 'num_requests: 150', 'clients:', '  - id: a', '    rate_fraction: 1',
  '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 300}}',
  '    output_distribution: {type: constant, params: {value: 120}}',
].join('\n');
const base = { mode: 'run' as const, model: MODEL, workloadSpec: 'w.yaml', files: { 'w.yaml': SPEC } };

interface Row { itl_ms: number; e2e_ms: number; ttft_ms: number }

async function run(extra: Partial<SimulationConfig> = {}): Promise<{ m: Record<string, number>; rows: Row[] }> {
  const r = await simulate({ ...base, ...extra, outputs: { metrics: true } });
  const rows = (JSON.parse(r.files.metrics!) as { requests: Row[] }).requests;
  return { m: r.metrics as unknown as Record<string, number>, rows };
}
const mean = (v: number[]): number => v.reduce((s, x) => s + x, 0) / v.length;

describe('speculative decoding end to end', () => {
  it('K=3 with α=0.7 lowers the per-token ITL (TPOT) and E2E of the same workload; every output token is counted once', async () => {
    const off = await run();
    const on = await run({ numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7, speculativeMethod: 'mtp' });
    expect(on.m['completed_requests']).toBe(150);
    expect(on.m['total_output_tokens']).toBe(off.m['total_output_tokens']);
    expect(on.m['e2e_mean_ms']).toBeLessThan(off.m['e2e_mean_ms']!);
    // The per-request ITL is (E2E − TTFT) over the output's gaps: per token, so ~3.1 tokens per verify cut it.
    const tpotOff = mean(off.rows.map((r) => r.itl_ms));
    const tpotOn = mean(on.rows.map((r) => r.itl_ms));
    expect(tpotOn).toBeLessThan(tpotOff / 2);
    // Deterministic: the same run twice gives the same numbers.
    expect((await run({ numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7 })).m).toEqual(on.m);
  });

  it('off: K = 0 with a rate of 0 is accepted (as upstream) and changes nothing', async () => {
    expect((await run({ numSpeculativeTokens: 0, speculativeAcceptanceRate: 0 })).m).toEqual((await run()).m);
  });

  it('acceptance in the documented direction: α=0 only pays the verify width; a per-position curve sits between', async () => {
    const off = await run();
    const zero = await run({ numSpeculativeTokens: 3, speculativeAcceptanceRate: 0 });
    const full = await run({ numSpeculativeTokens: 3, speculativeAcceptanceRate: 1 });
    const curve = await run({ speculativeAcceptanceRates: [0.8, 0.6, 0.4] });
    expect(zero.m['e2e_mean_ms']).toBeGreaterThan(off.m['e2e_mean_ms']!);
    expect(full.m['e2e_mean_ms']).toBeLessThan(curve.m['e2e_mean_ms']!);
    expect(curve.m['e2e_mean_ms']).toBeLessThan(off.m['e2e_mean_ms']!);
    expect(curve.m['total_output_tokens']).toBe(off.m['total_output_tokens']);
  });

  it('every latency backend and corrected semantics (K+1 budget, look-ahead KV) run it and keep the token count', async () => {
    for (const latencyModel of ['roofline', 'corrected-physics', 'blackbox'] as const) {
      const coeffs = latencyModel === 'blackbox' ? { alphaCoeffs: [0, 0, 0], betaCoeffs: [2000, 2, 30] } : {};
      const off = await run({ latencyModel, ...coeffs });
      const on = await run({ latencyModel, ...coeffs, numSpeculativeTokens: 2, speculativeAcceptanceRate: 0.8 });
      expect(on.m['total_output_tokens']).toBe(off.m['total_output_tokens']);
      expect(on.m['e2e_mean_ms']).toBeLessThan(off.m['e2e_mean_ms']!);
    }
    const ref = await run({ numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7, maxNumBatchedTokens: 256 });
    const cor = await run({ numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7, maxNumBatchedTokens: 256, semantics: 'corrected' });
    expect(cor.m['completed_requests']).toBe(150);
    expect(cor.m['total_output_tokens']).toBe(ref.m['total_output_tokens']);
  });

  it('corrected semantics reserve the K look-ahead KV slots (beyond upstream #1627): more preemptions when KV is short', async () => {
    const tight = { numRequests: 500, rate: 40, totalKvBlocks: 1500 };
    const preemptions = async (extra: Partial<SimulationConfig>): Promise<number> => (await simulate({ mode: 'run', model: MODEL, ...tight, ...extra })).metrics.preemption_count;
    const spec = { numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7 };
    // Corrected semantics change more than the look-ahead; their preemption count without speculation is the
    // baseline (531 vs the reference's 543 here). With K=3 the look-ahead slots held for every running decode add
    // preemptions the reference's accounting by emitted tokens does not have (418 vs 362).
    const offDiff = (await preemptions({ semantics: 'corrected' })) - (await preemptions({}));
    const specDiff = (await preemptions({ ...spec, semantics: 'corrected' })) - (await preemptions(spec));
    expect(specDiff).toBeGreaterThan(offDiff + 20);
  });

  it('--kv-cache-dtype fp8 doubles the auto-sized cache; auto changes nothing', async () => {
    const info: string[] = [];
    const blocks = async (args: string[]): Promise<number> => {
      info.length = 0;
      const code = await main(['run', '--model', MODEL, '--num-requests', '5', '--log', 'info', ...args], { stdout: () => undefined, warn: (t) => info.push(t), error: (t) => info.push(t), logInfo: (t) => info.push(t) });
      expect(code).toBe(0);
      const line = info.find((l) => / KV blocks of /.test(l)) ?? '';
      return Number(/(\d+) KV blocks of/.exec(line)?.[1]);
    };
    expect(await blocks([])).toBe(26312);
    expect(await blocks(['--kv-cache-dtype', 'auto'])).toBe(26312);
    expect(await blocks(['--kv-cache-dtype', 'fp8'])).toBe(52625);
    const a = await run();
    const b = await run({ kvCacheDtype: 'auto' });
    expect(b.m).toEqual(a.m);
  });
});

describe('deployment files: per-configuration speculative decoding and KV dtype', () => {
  const dep = (fields: string): string => [
    'models:', `  - name: ${MODEL}`, '    configurations:', '      - name: a', '        hardware: H100', '        replicas: 2', fields,
  ].join('\n');
  const runDep = async (fields: string, extra: Partial<SimulationConfig> = {}): Promise<Record<string, number>> =>
    (await simulate({ ...base, ...extra, deployment: 'd.yaml', files: { ...base.files, 'd.yaml': dep(fields) } })).metrics as unknown as Record<string, number>;

  it('a configuration\'s num_speculative_tokens / speculative_acceptance_rate act as the flags do; 0 turns the flags off there', async () => {
    const off = await runDep('');
    const on = await runDep('        num_speculative_tokens: 3\n        speculative_acceptance_rate: 0.7\n        speculative_method: mtp');
    expect(on['total_output_tokens']).toBe(off['total_output_tokens']);
    expect(on['e2e_mean_ms']).toBeLessThan(off['e2e_mean_ms']!);
    const flags = await runDep('', { numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7 });
    expect(flags).toEqual(on);
    const zero = await runDep('        num_speculative_tokens: 0', { numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7 });
    expect(zero).toEqual(off);
  });

  it('kv_cache_dtype sizes that configuration\'s cache as --kv-cache-dtype does', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-spec-'));
    const blocksOf = async (fields: string, args: string[] = []): Promise<number> => {
      const file = path.join(dir, 'd.yaml');
      writeFileSync(file, dep(fields));
      const lines: string[] = [];
      const code = await main(['run', '--model', MODEL, '--num-requests', '5', '--log', 'info', '--deployment', file, ...args], { stdout: () => undefined, warn: (t) => lines.push(t), error: (t) => lines.push(t), logInfo: (t) => lines.push(t) });
      expect(code, lines.join('\n')).toBe(0);
      return Number(/(\d+) KV blocks of/.exec(lines.find((l) => / KV blocks of /.test(l)) ?? '')?.[1]);
    };
    expect(await blocksOf('')).toBe(26312);
    expect(await blocksOf('        kv_cache_dtype: fp8')).toBe(52625);
    expect(await blocksOf('', ['--kv-cache-dtype', 'fp8'])).toBe(52625);
    expect(await blocksOf('        kv_cache_dtype: auto', ['--kv-cache-dtype', 'fp8'])).toBe(26312);
  });
});

describe('speculative decoding and --kv-cache-dtype: one clear error per bad value, naming the flag (exit 2)', () => {
  it.each([
    [['--num-speculative-tokens', '3'], /^--num-speculative-tokens 3 needs --speculative-acceptance-rate/],
    [['--speculative-acceptance-rate', '0.5'], /^--speculative-acceptance-rate needs --num-speculative-tokens > 0/],
    [['--num-speculative-tokens', '3', '--speculative-acceptance-rate', '1.5'], /^--speculative-acceptance-rate must be in \[0, 1\], got 1.5/],
    [['--num-speculative-tokens', '-1'], /^--num-speculative-tokens must be >= 0/],
    [['--num-speculative-tokens', '2', '--speculative-acceptance-rate', '0.5', '--speculative-method', 'lookahead'], /--speculative-method/],
    [['--speculative-method', 'mtp'], /^--speculative-method needs --num-speculative-tokens > 0/],
    [['--speculative-acceptance-rates', Array.from({ length: 65 }, () => '0.5').join(',')], /^--speculative-acceptance-rates has 65 rates; at most 64/],
    [['--speculative-acceptance-rates', '0.8,1.2'], /^--speculative-acceptance-rates element 2 must be in \[0, 1\], got 1.2/],
    [['--speculative-acceptance-rates', '0.8,0.6', '--num-speculative-tokens', '3'], /^--speculative-acceptance-rates has 2 rates but --num-speculative-tokens is 3/],
    [['--speculative-acceptance-rates', '0.8', '--speculative-acceptance-rate', '0.8'], /^--speculative-acceptance-rates and --speculative-acceptance-rate both set/],
    [['--num-speculative-tokens', '2', '--speculative-acceptance-rate', '0.5', '--scheduling-mode', 'prefill-first'], /^--num-speculative-tokens cannot be combined with --scheduling-mode prefill-first/],
    [['--kv-cache-dtype', 'int4'], /--kv-cache-dtype/],
  ])('%j', async (args, want) => {
    const errs: string[] = [];
    const code = await main(['run', '--model', MODEL, '--num-requests', '5', ...args], { stdout: () => undefined, warn: () => undefined, error: (t) => errs.push(t) });
    expect(code).toBe(2);
    expect(errs.join('').split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(errs.join('')).toMatch(want);
  });
});
