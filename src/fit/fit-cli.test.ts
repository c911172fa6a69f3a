/**
 * `blis calibrate --fit` on traces made in-process: a simulated "server" (corrected-physics with known
 * coefficients) answers a generated workload; its per-request TTFT and E2E become the observed trace. No wall
 * clock is involved, so the fit must find the coefficients almost exactly, and bad inputs must each give one
 * clear error line and exit 2.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { parseTraceCsv, formatTraceCsv } from '../workload/tracev2-csv.js';

const MODEL = 'meta-llama/llama-2-7b-hf';
const ENGINE = ['--model', MODEL, '--hardware', 'H100', '--tp', '1'];
const TRUTH = { compute: 2, weight_read: 1, kv_read: 1.5, comm: 1, step_us: 3000, request_us: 200, frontend_us: 50000 };
const DEFAULTS = { compute: 1, weight_read: 1, kv_read: 1, comm: 1, step_us: 838, request_us: 8, frontend_us: 9030 };
const PROFILE = `kind: latency-profile\nversion: 1\nlatency_model: corrected-physics\ncoefficients:\n${Object.entries(TRUTH).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;
const SPEC = (outputs: string, rate = 6): string => `version: "2"
seed: 3
aggregate_rate: ${rate}
num_requests: 240
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: lognormal, params: {mu: 5.5, sigma: 1.0, min: 16, max: 3000}}
    output_distribution: ${outputs}
`;

interface Captured {
  code: number;
  stdout: string;
  errors: string[];
}

async function cli(args: string[]): Promise<Captured> {
  let stdout = '';
  const errors: string[] = [];
  const code = await main(args, { stdout: (t) => void (stdout += t), warn: () => undefined, error: (t) => void errors.push(t), info: () => undefined });
  return { code, stdout, errors };
}

/** Simulates the workload on the truth profile and writes the observed trace (`<name>.yaml`, `<name>.csv`). */
/** `noise` > 0: every observed TTFT is off by a deterministic pseudo-random ±noise fraction (a real trace's jitter). */
async function observedTrace(dir: string, name: string, outputs: string, rate = 6, noise = 0): Promise<void> {
  const p = (f: string): string => join(dir, f);
  writeFileSync(p(`${name}-spec.yaml`), SPEC(outputs, rate));
  expect((await cli(['run', ...ENGINE, '--latency-profile', p('truth.yaml'), '--workload-spec', p(`${name}-spec.yaml`), '--trace-output', p(`${name}-gen`)])).code).toBe(0);
  expect((await cli(['replay', ...ENGINE, '--latency-profile', p('truth.yaml'), '--trace-header', p(`${name}-gen.yaml`), '--trace-data', p(`${name}-gen.csv`), '--results-path', p(`${name}-res.json`), '--horizon', '9000000000000'])).code).toBe(0);
  const results = new Map((JSON.parse(readFileSync(p(`${name}-res.json`), 'utf8')) as { request_id: number; ttft_us: number; e2e_us: number }[]).map((r) => [r.request_id, r]));
  const rows = parseTraceCsv(readFileSync(p(`${name}-gen.csv`), 'utf8'), 'gen.csv').map((r) => {
    const s = results.get(r.requestId)!;
    const jitter = noise * Math.sin(r.requestId * 12.9898 + 78.233);
    const ttft = Math.round(s.ttft_us * (1 + jitter));
    return { ...r, sendTimeUs: r.arrivalTimeUs, firstChunkTimeUs: r.arrivalTimeUs + ttft, lastChunkTimeUs: r.arrivalTimeUs + ttft + (s.e2e_us - s.ttft_us), status: 'ok' };
  });
  writeFileSync(p(`${name}.csv`), formatTraceCsv(rows));
  writeFileSync(p(`${name}.yaml`), readFileSync(p(`${name}-gen.yaml`), 'utf8'));
}

describe('calibrate --fit', () => {
  let dir: string;
  const p = (f: string): string => join(dir, f);
  const fit = (extra: string[] = [], trace = 'obs'): Promise<Captured> =>
    cli(['calibrate', '--fit', ...ENGINE, '--trace-header', p(`${trace}.yaml`), '--trace-data', p(`${trace}.csv`), '--profile-out', p('fit.yaml'), ...extra]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'blis-fit-cli-'));
    writeFileSync(p('truth.yaml'), PROFILE);
    await observedTrace(dir, 'obs', '{type: gaussian, params: {mean: 80, std_dev: 60, min: 2, max: 300}}');
    await observedTrace(dir, 'prefill-only', '{type: constant, params: {value: 1}}', 6, 0.05);
    // 60 req/s against a server that sustains about half of that: the queue grows for the whole trace.
    await observedTrace(dir, 'overload', '{type: gaussian, params: {mean: 80, std_dev: 60, min: 2, max: 300}}', 60);
  }, 180_000);

  it('recovers the coefficients of an exactly simulated server and writes a profile run/replay accept', async () => {
    const r = await fit();
    expect(r.code, r.errors.join('\n')).toBe(0);
    const rep = JSON.parse(r.stdout) as { coefficients: Record<string, number>; fitted: string[]; held_out: { requests: number; ttft_mape_pct: number }; held_out_before_fit: { ttft_mape_pct: number } };
    expect(rep.fitted).toEqual(['compute', 'kv_read', 'step_us', 'request_us', 'frontend_us']);
    for (const name of rep.fitted) {
      const truth = TRUTH[name as keyof typeof TRUTH];
      expect(Math.abs((rep.coefficients[name] as number) - truth) / truth, name).toBeLessThan(0.01);
    }
    expect(rep.held_out.requests).toBe(48);
    // TTFT moves in whole steps: coefficients 0.5 % off still land a few first tokens one step apart.
    expect(rep.held_out.ttft_mape_pct).toBeLessThan(2);
    expect(rep.held_out.ttft_mape_pct).toBeLessThan(rep.held_out_before_fit.ttft_mape_pct / 10);
    // The profile drives a replay like the truth does (a few µs apart at most).
    expect((await cli(['replay', ...ENGINE, '--latency-profile', p('fit.yaml'), '--trace-header', p('obs-gen.yaml'), '--trace-data', p('obs-gen.csv')])).code).toBe(0);
  });

  it('is deterministic: the same traces give the same bytes', async () => {
    const a = await fit();
    const profileA = readFileSync(p('fit.yaml'), 'utf8');
    const b = await fit();
    expect(b.stdout).toBe(a.stdout);
    expect(readFileSync(p('fit.yaml'), 'utf8')).toBe(profileA);
  });

  it('keeps the coefficients a trace cannot pin at their defaults and says so (no refusal): without decode steps, the per-step costs', async () => {
    const r = await fit([], 'prefill-only');
    expect(r.code, r.errors.join('\n')).toBe(0);
    const rep = JSON.parse(r.stdout) as { coefficients: Record<string, number>; fitted: string[]; held_at_default: { coefficient: string; value: number; why: string }[]; confidence_95: Record<string, [number, number]> };
    const held = rep.held_at_default.map((h) => h.coefficient);
    // Output 1 token and 5 % jitter on every TTFT: no decode step pins the KV-read cost (nor, at this noise, the
    // per-step ones, which add a few hundred µs to 50 ms first tokens).
    expect(held).toContain('kv_read');
    expect(held.every((n) => ['step_us', 'kv_read', 'request_us'].includes(n))).toBe(true);
    for (const h of rep.held_at_default) {
      expect(h.value).toBe(DEFAULTS[h.coefficient as keyof typeof DEFAULTS]);
      expect(rep.coefficients[h.coefficient]).toBe(h.value);
      expect(h.why).toMatch(/cannot pin it/);
    }
    expect(rep.fitted).toEqual(expect.arrayContaining(['compute', 'frontend_us']));
    expect(rep.fitted.some((n) => held.includes(n))).toBe(false);
    // The coefficients it can pin are fitted, with an interval around the value; compute is recovered despite
    // the jitter. The front end absorbs what is kept at its default (8 µs per request where this server has 200).
    expect(Math.abs(rep.coefficients['compute']! - TRUTH.compute) / TRUTH.compute).toBeLessThan(0.05);
    expect(Math.abs(rep.coefficients['frontend_us']! - TRUTH.frontend_us) / TRUTH.frontend_us).toBeLessThan(0.1);
    for (const n of ['compute', 'frontend_us'] as const) {
      expect(rep.confidence_95[n]![0]).toBeLessThanOrEqual(rep.coefficients[n]!);
      expect(rep.confidence_95[n]![1]).toBeGreaterThanOrEqual(rep.coefficients[n]!);
    }
    expect(readFileSync(p('fit.yaml'), 'utf8')).toMatch(/held_at_default:\n {4}(step_us|kv_read|request_us): /);
  });

  it('starts from the --engine-profile\'s overheads: what the trace cannot pin stays at vLLM V0\'s, not V1\'s', async () => {
    const r = await fit(['--engine-profile', 'vllm-v0', '--scheduling-mode', 'async'], 'prefill-only');
    expect(r.code, r.errors.join('\n')).toBe(0);
    const rep = JSON.parse(r.stdout) as { held_at_default: { coefficient: string; value: number }[] };
    const V0 = { ...DEFAULTS, step_us: 4000, request_us: 80 };
    expect(rep.held_at_default.length).toBeGreaterThan(0);
    for (const h of rep.held_at_default) expect(h.value).toBe(V0[h.coefficient as keyof typeof V0]);
  });

  it('fits every request of an overloaded trace (runs them to completion), or stops at --horizon when asked', async () => {
    const r = await fit([], 'overload');
    expect(r.code, r.errors.join('\n')).toBe(0);
    const rep = JSON.parse(r.stdout) as { requests_usable: number; requests_unfinished_in_simulation: number; fitted_range: { request_rate: [number, number]; batch_size: [number, number] }; coefficients: Record<string, number> };
    expect(rep.requests_usable).toBe(240);
    expect(rep.requests_unfinished_in_simulation).toBe(0);
    expect(Math.abs(rep.coefficients['step_us']! - TRUTH.step_us) / TRUTH.step_us).toBeLessThan(0.02);
    // The profile records the load it was fitted on; a run far outside it warns.
    expect(rep.fitted_range.request_rate[0]).toBeGreaterThan(30);
    expect(rep.fitted_range.batch_size[1]).toBeGreaterThan(20);
    const profile = readFileSync(p('fit.yaml'), 'utf8');
    expect(profile).toMatch(/fitted_range:\n {2}request_rate: \[[\d.]+, [\d.]+\]\n {2}batch_size: \[\d+, \d+\]/);
    const warnings: string[] = [];
    const code = await main(['run', ...ENGINE, '--latency-profile', p('fit.yaml'), '--rate', '1', '--num-requests', '20'], { stdout: () => undefined, warn: (t) => void warnings.push(t), error: () => undefined, info: () => undefined });
    expect(code).toBe(0);
    expect(warnings.join('\n')).toMatch(/was fitted on [\d.]+–[\d.]+ req\/s .*this workload arrives at 1\.\d+ req\/s, outside that range/);
    const cut = await fit(['--horizon', '2000000'], 'overload');
    expect(cut.code, cut.errors.join('\n')).toBe(0);
    expect((JSON.parse(cut.stdout) as { requests_unfinished_in_simulation: number }).requests_unfinished_in_simulation).toBeGreaterThan(0);
  });

  it('refuses bad inputs with one error line and exit 2', async () => {
    const header = readFileSync(p('obs.yaml'), 'utf8');
    const rows = parseTraceCsv(readFileSync(p('obs.csv'), 'utf8'), 'obs.csv');
    writeFileSync(p('empty.yaml'), header);
    writeFileSync(p('empty.csv'), `${formatTraceCsv([]).split('\n')[0]}\n`);
    writeFileSync(p('failed.yaml'), header);
    writeFileSync(p('failed.csv'), formatTraceCsv(rows.map((r) => ({ ...r, status: 'error', errorMessage: 'HTTP 500' }))));
    writeFileSync(p('other.yaml'), `${header}server:\n  type: vllm\n  model: meta-llama/llama-3.1-8b-instruct\n`);
    writeFileSync(p('other.csv'), readFileSync(p('obs.csv'), 'utf8'));
    const cases: [string[], RegExp][] = [
      [['--trace-header', p('empty.yaml'), '--trace-data', p('empty.csv')], /empty|no requests|no records/i],
      [['--trace-header', p('failed.yaml'), '--trace-data', p('failed.csv')], /no usable request: 240 of 240 failed or timed out/],
      [['--trace-header', p('other.yaml'), '--trace-data', p('other.csv')], /recorded against model "meta-llama\/llama-3\.1-8b-instruct" but --model is "meta-llama\/llama-2-7b-hf"/],
      [['--trace-header', p('obs.yaml'), '--trace-data', p('obs.csv'), '--fit-params', 'compute,bogus'], /--fit-params: unknown coefficient "bogus"/],
      [['--trace-header', p('obs.yaml'), '--trace-data', p('obs.csv'), '--fit-params', 'comm'], /comm cannot be fitted at tp=1/],
      [['--trace-header', `${p('obs.yaml')},${p('obs.yaml')}`, '--trace-data', p('obs.csv')], /names 2 file\(s\) but --trace-data 1/],
      [['--trace-header', p('obs.yaml'), '--trace-data', p('obs.csv'), '--latency-model', 'roofline'], /fits corrected-physics coefficients; drop --latency-model roofline/],
      [['--trace-header', p('obs.yaml'), '--trace-data', p('obs.csv'), '--holdout-every', '1'], /--holdout-every must be 0/],
    ];
    for (const [args, msg] of cases) {
      const r = await cli(['calibrate', '--fit', ...ENGINE, '--profile-out', p('bad.yaml'), ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.errors, args.join(' ')).toHaveLength(1);
      expect(r.errors[0]).toMatch(msg);
    }
    const noOut = await cli(['calibrate', '--fit', ...ENGINE, '--trace-header', p('obs.yaml'), '--trace-data', p('obs.csv')]);
    expect(noOut.code).toBe(2);
    expect(noOut.errors[0]).toMatch(/--profile-out is required with --fit/);
    const stray = await cli(['calibrate', '--trace-header', p('obs.yaml'), '--trace-data', p('obs.csv'), '--sim-results', 'x', '--report', 'y', '--profile-out', 'z']);
    expect(stray.code).toBe(2);
    expect(stray.errors[0]).toMatch(/--profile-out only applies with --fit/);
  });
});
