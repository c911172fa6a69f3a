/**
 * The fit recovers known coefficients from a live server: `blis serve` runs corrected-physics with a known
 * latency profile (child process), `blis observe` records a trace against it (child process), and
 * `blis calibrate --fit` must find the profile's coefficients again within 2 %.
 *
 * The workload is designed so that a live run can tell the terms apart: a chat phase (many short contexts:
 * request_us dominates the per-request cost), a document phase (few long contexts: kv_read dominates; long
 * prompts: compute), then chat again. The front-end delay is 2 s so the few milliseconds a loaded machine
 * adds to an observed TTFT (delivery lag, a noisy round-trip measurement) stay well under 2 % of it.
 * Skip with BLIS_SKIP_E2E=1 (about 70 s).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, startServeChild, type ServeChild } from '../../test/io/processes.js';
import { parseLatencyProfile } from '../latency/profile.js';

const MODEL = 'meta-llama/llama-2-7b-hf';
const ENGINE = ['--model', MODEL, '--hardware', 'H100', '--tp', '1'];
const TRUTH = { compute: 3, weight_read: 1, kv_read: 5, comm: 1, step_us: 10000, request_us: 800, frontend_us: 2000000 };
const PROFILE = `kind: latency-profile
version: 1
latency_model: corrected-physics
coefficients:
${Object.entries(TRUTH).map(([k, v]) => `  ${k}: ${v}`).join('\n')}
`;
const SPEC = `version: "2"
seed: 5
aggregate_rate: 4
num_requests: 400
clients:
  - id: chat
    rate_fraction: 1
    streaming: true
    arrival: {process: poisson}
    input_distribution: {type: lognormal, params: {mu: 4.5, sigma: 0.8, min: 16, max: 1000}}
    output_distribution: {type: gaussian, params: {mean: 120, std_dev: 60, min: 2, max: 300}}
    lifecycle: {windows: [{start_us: 0, end_us: 12000000}, {start_us: 24000000, end_us: 34000000}]}
  - id: docs
    rate_fraction: 1
    streaming: true
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 2200, std_dev: 500, min: 200, max: 3000}}
    output_distribution: {type: gaussian, params: {mean: 40, std_dev: 20, min: 2, max: 100}}
    lifecycle: {windows: [{start_us: 12000000, end_us: 24000000}]}
`;

describe.skipIf(process.env['BLIS_SKIP_E2E'] === '1')('calibrate --fit on a blis serve trace with known coefficients', () => {
  let serve: ServeChild;
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'blis-fit-'));
    writeFileSync(join(dir, 'truth.yaml'), PROFILE);
    serve = await startServeChild([...ENGINE, '--latency-profile', join(dir, 'truth.yaml')]);
  }, 240_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it('recovers every fitted coefficient within 2 %', { timeout: 240_000, retry: 1 }, async () => {
    const t = (n: string): string => join(dir, n);
    writeFileSync(t('spec.yaml'), SPEC);
    const obs = await runCli(['observe', '--server-url', serve.url, '--model', MODEL, '--workload-spec', t('spec.yaml'), '--measure-rtt',
      '--trace-header', t('trace.yaml'), '--trace-data', t('trace.csv'), '--log', 'error'], 150_000);
    expect(obs.code, obs.stderr).toBe(0);
    const fit = await runCli(['calibrate', '--fit', ...ENGINE, '--trace-header', t('trace.yaml'), '--trace-data', t('trace.csv'), '--profile-out', t('fit.yaml'), '--log', 'error'], 120_000);
    expect(fit.code, fit.stderr).toBe(0);
    const report = JSON.parse(fit.stdout) as { fitted: string[]; coefficients: Record<string, number>; held_out: { ttft_mape_pct: number; itl_mape_pct: number } };
    expect(report.fitted).toEqual(['compute', 'kv_read', 'step_us', 'request_us', 'frontend_us']);
    for (const name of report.fitted) {
      const truth = TRUTH[name as keyof typeof TRUTH];
      expect(Math.abs((report.coefficients[name] as number) - truth) / truth, `${name}: fitted ${report.coefficients[name]}, truth ${truth}`).toBeLessThan(0.02);
    }
    // The written profile holds the same numbers and reads back.
    const profile = parseLatencyProfile(readFileSync(t('fit.yaml'), 'utf8'), 'fit.yaml');
    expect(profile.coefficients).toEqual(report.coefficients);
    expect(report.held_out.itl_mape_pct).toBeLessThan(5);
  });
});
