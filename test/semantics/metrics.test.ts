/**
 * `--semantics`: the metric corrections (docs/reference-differences.md E5, E6, M2, M3, M4). Each test shows the
 * reference's figure and the corrected one on the same finished run or outcome list.
 */
import { describe, expect, it } from 'vitest';
import { computeGoodput } from '../../src/metrics/goodput.js';
import { breakdownSections } from '../../src/metrics/sections.js';
import { buildReport, DEFAULT_REPORT_OPTIONS } from '../../src/sim/report.js';
import { runEngine } from '../../src/sim/engine-setup.js';
import { done, outcome } from '../metrics/outcomes.js';
import { engineSetup, req } from './helpers.js';

/** A completes (TTFT 1 ms); B gets its first token at 1.5 ms, then times out mid-decode at 5 ms. */
function timedOutAfterFirstToken(corrected: boolean): Record<string, unknown> {
  const cs = runEngine(engineSetup(), [req(0, 16, 3, 0), req(1, 16, 100, 500, { deadline: 5500 })]);
  expect(cs.instances[0]!.metrics.timedOutRequests).toBe(1);
  return buildReport(cs, { ...DEFAULT_REPORT_OPTIONS, corrected }).clusterOutput;
}

describe('metrics under --semantics', () => {
  it('E5: total_input_tokens counts enqueued requests (reference) or completed ones (corrected)', () => {
    expect(timedOutAfterFirstToken(false)['total_input_tokens']).toBe(32);
    expect(timedOutAfterFirstToken(true)['total_input_tokens']).toBe(16);
  });

  it('E6: the TTFT distribution includes a timed-out request (reference) or only completed ones, like E2E (corrected)', () => {
    const ref = timedOutAfterFirstToken(false);
    const cor = timedOutAfterFirstToken(true);
    expect(ref['ttft_mean_ms']).toBe(1.25);
    expect(ref['ttft_p99_ms']).toBeGreaterThan(1.4);
    expect(cor['ttft_mean_ms']).toBe(1);
    expect(cor['ttft_p99_ms']).toBe(1);
    // E2E describes the one completed request in both modes.
    expect(ref['e2e_mean_ms']).toBe(cor['e2e_mean_ms']);
  });

  it('M2: Per-SLO and Per-Model latencies print in µs without a unit (reference) or in ms like the Session section (corrected)', () => {
    const reqs = [
      done('request_0', 1500, 9000, { sloClass: 'critical', model: 'm', itlMean: 250 }),
      done('request_1', 2500, 7000, { sloClass: 'batch', model: 'm', itlMean: 250 }),
    ];
    const ref = breakdownSections(reqs, 10_000, false, false);
    const cor = breakdownSections(reqs, 10_000, false, true);
    expect(ref[0]!.lines).toContain('    TTFT: mean=2500.00 p99=2500.00 (n=1)');
    expect(cor[0]!.lines).toContain('    TTFT: mean=2.50 p99=2.50 ms (n=1)');
    expect(ref[1]!.lines).toContain('    E2E:  p50=8000.00 p99=8980.00 (n=2)');
    expect(cor[1]!.lines).toContain('    E2E:  p50=8.00 p99=8.98 ms (n=2)');
  });

  it('M3: a goodput class count is its arrivals (reference) or its completions (corrected); attainment keeps arrivals', () => {
    const reqs = [done('request_0', 1000, 5000, { sloClass: 'critical' }), done('request_1', 1000, 50_000, { sloClass: 'critical' })];
    const injected = new Map([['critical', 5]]);
    const targets = new Map([['critical', { ttftMs: 0, itlMs: 0, e2eMs: 10 }]]);
    const ref = computeGoodput(reqs, injected, 1e6, targets, false)!;
    const cor = computeGoodput(reqs, injected, 1e6, targets, true)!;
    expect(ref.perClass['critical']!['count']).toBe(5);
    expect(cor.perClass['critical']!['count']).toBe(2);
    expect(ref.perClass['critical']!['slo_attainment']).toBe(0.2);
    expect(cor.perClass['critical']!['slo_attainment']).toBe(0.2);
  });

  it('M3: a completed request missing from the request table counts under "default" (reference) or its own class (corrected)', () => {
    const reqs = [outcome({ id: 'request_0', registered: false, hasTTFT: true, ttft: 1, hasE2E: true, e2e: 10, sloClass: 'critical' })];
    const injected = new Map([['critical', 1], ['', 1]]);
    const targets = new Map([['critical', { ttftMs: 0, itlMs: 0, e2eMs: 10 }], ['default', { ttftMs: 0, itlMs: 0, e2eMs: 10 }]]);
    const ref = computeGoodput(reqs, injected, 1e6, targets, false)!;
    const cor = computeGoodput(reqs, injected, 1e6, targets, true)!;
    expect([ref.perClass['critical']!['slo_attainment'], ref.perClass['default']!['slo_attainment']]).toEqual([0, 1]);
    expect([cor.perClass['critical']!['slo_attainment'], cor.perClass['default']!['slo_attainment']]).toEqual([1, 0]);
  });

  it('M4: per-tenant and per-model tokens add planned lengths (reference) or generated tokens (corrected) for a length-capped request', () => {
    // Capped after 10 of its 100 planned tokens: progress = input + 9.
    const capped = done('request_0', 1000, 5000, { tenantId: 't', model: 'm', inputLen: 20, outputLen: 100, progressIndex: 29 });
    const full = done('request_1', 1000, 5000, { tenantId: 't', model: 'm', inputLen: 20, outputLen: 7 });
    const ref = breakdownSections([capped, full], 1e6, false, false);
    const cor = breakdownSections([capped, full], 1e6, false, true);
    const tenant = (s: typeof ref): string => s.find((x) => x.key === 'per_tenant_metrics')!.lines[0]!;
    const model = (s: typeof ref): string => s.find((x) => x.key === 'per_model_metrics')!.lines[3]!;
    expect(tenant(ref)).toBe('  t: requests=2, tokens=107');
    expect(tenant(cor)).toBe('  t: requests=2, tokens=17');
    expect(model(ref)).toBe('    Throughput: 2.00 req/s, 107.00 tok/s');
    expect(model(cor)).toBe('    Throughput: 2.00 req/s, 17.00 tok/s');
  });
});
