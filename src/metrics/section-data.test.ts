import { describe, expect, it } from 'vitest';
import { computePerModelMetrics, computePerSloDistributions, computePerTenantMetrics, computeSessionMetrics } from './breakdowns.js';
import { summarizePd, type PdSummary } from './pd.js';
import { pdData, perModelData, perSloData, perTenantData, sessionData } from './section-data.js';
import { breakdownSections } from './sections.js';
import { done, outcome } from '../../test/metrics/outcomes.js';

describe('perSloData', () => {
  it('gives counts and ms statistics per class; a TTFT without completion counts in ttft_count only', () => {
    const slo = perSloData(computePerSloDistributions([
      done('a', 1000, 20000, { sloClass: 'critical', itlMean: 9.125 }),
      done('b', 3000, 40000, { sloClass: 'critical', itlMean: 10.5 }),
      outcome({ id: 'c', sloClass: 'critical', hasTTFT: true, ttft: 2000 }),
      done('d', 500, 5000, { itlMean: 1 }),
    ]));
    expect(Object.keys(slo)).toEqual(['critical', 'default']);
    // TTFT over 1000, 2000, 3000 µs; ITL and E2E over the two completed requests (percentiles interpolated).
    const at = (p: number): number => (9.125 + p * (10.5 - 9.125)) / 1000;
    const itl = { itl_mean_ms: 9.8125 / 1000, itl_p50_ms: at(0.5), itl_p90_ms: at(0.9), itl_p95_ms: at(0.95), itl_p99_ms: at(0.99) };
    expect(slo['critical']).toEqual({
      completed_requests: 2,
      ttft_count: 3,
      ttft_mean_ms: 2, ttft_p50_ms: 2, ttft_p90_ms: 2.8, ttft_p95_ms: 2.9, ttft_p99_ms: 2.98,
      ...itl,
      e2e_mean_ms: 30, e2e_p50_ms: 30, e2e_p90_ms: 38, e2e_p95_ms: 39, e2e_p99_ms: 39.8,
    });
    expect(slo['default']?.completed_requests).toBe(1);
    expect(slo['default']?.e2e_p99_ms).toBe(5);
  });
  it('prints zeros for a distribution with no samples', () => {
    const slo = perSloData(computePerSloDistributions([outcome({ id: 'a', sloClass: 'batch', hasTTFT: true, ttft: 40 })]));
    expect(slo['batch']).toMatchObject({ completed_requests: 0, ttft_count: 1, ttft_mean_ms: 0.04, e2e_mean_ms: 0, e2e_p99_ms: 0, itl_p50_ms: 0 });
  });
});

describe('perModelData', () => {
  it('keeps the model names as keys and reports throughput per second', () => {
    const m = perModelData(computePerModelMetrics([done('a', 100, 1000, { model: 'meta-llama/llama-3.1-8b-instruct', outputLen: 3 })], 2_000_000) ?? new Map());
    expect(m).toEqual({
      'meta-llama/llama-3.1-8b-instruct': {
        completed_requests: 1,
        ttft_count: 1,
        ttft_mean_ms: 0.1, ttft_p50_ms: 0.1, ttft_p90_ms: 0.1, ttft_p95_ms: 0.1, ttft_p99_ms: 0.1,
        e2e_mean_ms: 1, e2e_p50_ms: 1, e2e_p90_ms: 1, e2e_p95_ms: 1, e2e_p99_ms: 1,
        responses_per_sec: 0.5,
        tokens_per_sec: 1.5,
      },
    });
  });
});

describe('perTenantData', () => {
  it('puts the tenants under `tenants` and Jain\'s index beside them, unrounded', () => {
    const t = perTenantData(computePerTenantMetrics([done('a', 1, 2, { tenantId: 'b', outputLen: 3 }), done('b', 1, 2, { tenantId: 'a', outputLen: 1 })]) ?? new Map());
    expect(t).toEqual({ tenants: { a: { completed_requests: 1, output_tokens: 1 }, b: { completed_requests: 1, output_tokens: 3 } }, jain_fairness_index: 0.8 });
    expect(Object.keys(t.tenants)).toEqual(['a', 'b']);
  });
  it('does not confuse a tenant named like the index with the index', () => {
    const t = perTenantData(computePerTenantMetrics([done('a', 1, 2, { tenantId: 'jain_fairness_index', outputLen: 2 })]) ?? new Map());
    expect(t).toEqual({ tenants: { jain_fairness_index: { completed_requests: 1, output_tokens: 2 } }, jain_fairness_index: 1 });
  });
});

describe('sessionData', () => {
  it('gives the session count and the three distributions (already in ms), empty ones as zeros', () => {
    const s = computeSessionMetrics([done('r', 2500, 10_000, { sessionId: 's', arrivalTime: 1_000_000 })]);
    expect(s).not.toBeNull();
    if (s === null) return;
    expect(sessionData(s)).toMatchObject({
      sessions: 1,
      ttft_cold_count: 1, ttft_cold_mean_ms: 2.5, ttft_cold_p99_ms: 2.5,
      ttft_warm_count: 0, ttft_warm_mean_ms: 0,
      session_duration_count: 1, session_duration_mean_ms: 10,
    });
  });
});

describe('pdData', () => {
  const summary = (over: Partial<PdSummary>): PdSummary => ({
    ...(summarizePd({
      parents: [
        { id: 'p0', transferStartTime: 1000, transferCompleteTime: 3000, req: { hasTTFT: true, ttft: 5000 } },
        { id: 'p1', transferStartTime: 2000, transferCompleteTime: 6000, req: { hasTTFT: true, ttft: 7000 } },
      ],
      instances: [{ completedRequests: 2, prefill: true, decode: false }, { completedRequests: 2, prefill: false, decode: true }],
      simEndedTime: 2_000_000,
      contention: false,
      peakConcurrentTransfers: 2,
      meanTransferQueueDepth: 0.5,
    }) as PdSummary),
    ...over,
  });
  it('reports counts, sub-requests per second and the distributions in ms; contention figures only with contention', () => {
    expect(pdData(summary({}), false)).toEqual({
      disaggregated_requests: 2,
      dropped_at_decode_kv: 0,
      prefill_sub_requests_per_sec: 1,
      decode_sub_requests_per_sec: 1,
      load_imbalance_ratio: 1,
      parent_ttft_count: 2,
      parent_ttft_mean_ms: 6, parent_ttft_p50_ms: 6, parent_ttft_p90_ms: 6.8, parent_ttft_p95_ms: 6.9, parent_ttft_p99_ms: 6.98,
      kv_transfer_count: 2,
      kv_transfer_mean_ms: 3, kv_transfer_p50_ms: 3, kv_transfer_p90_ms: 3.8, kv_transfer_p95_ms: 3.9, kv_transfer_p99_ms: 3.98,
    });
    expect(pdData(summary({ peakConcurrentTransfers: 2, meanTransferQueueDepth: 0.5 }), true)).toMatchObject({ peak_concurrent_transfers: 2, mean_transfer_queue_depth: 0.5 });
  });
  it('gives null for the text\'s "inf" load imbalance (one pool idle)', () => {
    expect(pdData(summary({ loadImbalanceRatio: Infinity }), false).load_imbalance_ratio).toBeNull();
  });
});

describe('breakdownSections', () => {
  it('carries each printed section\'s data beside its lines, and nothing for sections not printed', () => {
    const reqs = [done('a', 100, 1000, { sloClass: 'critical', tenantId: 't' }), done('b', 300, 3000, { sloClass: 'batch', tenantId: 't' })];
    const s = breakdownSections(reqs, 1e6, false);
    expect(s.map((x) => x.key)).toEqual(['per_slo_metrics', 'per_tenant_metrics']);
    expect(s[0]?.data).toEqual(perSloData(computePerSloDistributions(reqs)));
    expect(s[1]?.data).toEqual(perTenantData(computePerTenantMetrics(reqs) ?? new Map()));
    // One class without goodput targets: no Per-SLO section in either format.
    expect(breakdownSections([reqs[0] as (typeof reqs)[0]], 1e6, false).map((x) => x.key)).toEqual(['per_tenant_metrics']);
  });
});
