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
const PROFILE = `kind: latency-profile\nversion: 1\nlatency_model: corrected-physics\ncoefficients:\n${Object.entries(TRUTH).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;
const SPEC = (outputs: string): string => `version: "2"
seed: 3
aggregate_rate: 6
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
async function observedTrace(dir: string, name: string, outputs: string): Promise<void> {
  const p = (f: string): string => join(dir, f);
  writeFileSync(p(`${name}-spec.yaml`), SPEC(outputs));
  expect((await cli(['run', ...ENGINE, '--latency-profile', p('truth.yaml'), '--workload-spec', p(`${name}-spec.yaml`), '--trace-output', p(`${name}-gen`)])).code).toBe(0);
  expect((await cli(['replay', ...ENGINE, '--latency-profile', p('truth.yaml'), '--trace-header', p(`${name}-gen.yaml`), '--trace-data', p(`${name}-gen.csv`), '--results-path', p(`${name}-res.json`)])).code).toBe(0);
  const results = new Map((JSON.parse(readFileSync(p(`${name}-res.json`), 'utf8')) as { request_id: number; ttft_us: number; e2e_us: number }[]).map((r) => [r.request_id, r]));
  const rows = parseTraceCsv(readFileSync(p(`${name}-gen.csv`), 'utf8'), 'gen.csv').map((r) => {
    const s = results.get(r.requestId)!;
    return { ...r, sendTimeUs: r.arrivalTimeUs, firstChunkTimeUs: r.arrivalTimeUs + s.ttft_us, lastChunkTimeUs: r.arrivalTimeUs + s.e2e_us, status: 'ok' };
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
    await observedTrace(dir, 'prefill-only', '{type: constant, params: {value: 1}}');
  }, 120_000);

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

  it('says which coefficient a trace cannot identify: without decode steps the per-step costs are not pinned', async () => {
    const r = await fit([], 'prefill-only');
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/coefficient (step_us|kv_read|request_us)\b.*decode steps/);
    // Leaving it out makes the same trace usable.
    expect((await fit(['--fit-params', 'compute,step_us,frontend_us'], 'prefill-only')).code).toBe(0);
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
