/**
 * Test-only builders for the metrics reductions: request outcome records with defaults, and the parity
 * fixture's metrics.json `requests[]` rows turned back into outcome records.
 */
import type { RequestOutcomeView } from '../../src/metrics/cluster-metrics.js';

export function outcome(p: Partial<RequestOutcomeView> & { id: string }): RequestOutcomeView {
  return {
    registered: true,
    hasTTFT: false,
    ttft: 0,
    hasE2E: false,
    e2e: 0,
    itlMean: 0,
    sloClass: '',
    tenantId: '',
    model: '',
    sessionId: '',
    roundIndex: 0,
    arrivalTime: 0,
    outputLen: 0,
    inputLen: 0,
    // A finished request's progress: its input plus every output token after the first.
    progressIndex: (p.inputLen ?? 0) + Math.max((p.outputLen ?? 0) - 1, 0),
    ...p,
  };
}

/** Completed request: TTFT, E2E and mean ITL (ticks) set. */
export function done(id: string, ttft: number, e2e: number, p: Partial<RequestOutcomeView> = {}): RequestOutcomeView {
  return outcome({ id, hasTTFT: true, ttft, hasE2E: true, e2e, ...p });
}

/** One row of a metrics.json `requests[]` array (the reference's RequestMetrics JSON). */
export interface RequestRow {
  arrived_at: number;
  requestID: string;
  num_prefill_tokens: number;
  num_decode_tokens: number;
  ttft_ms: number;
  itl_ms: number;
  e2e_ms: number;
  slo_class?: string;
  tenant_id?: string;
  handled_by?: string;
  model?: string;
  length_capped?: boolean;
  session_id?: string;
  round_index: number;
}

/**
 * Rebuilds the outcome from a row. TTFT/E2E/arrival are integer ticks printed after exact-enough scaling, so
 * rounding recovers them; the mean ITL is total/(outputLen−1) with an integer total, recovered the same way
 * (for requests that were not length-capped). Zero latencies mean "not recorded".
 */
export function fromRow(r: RequestRow): RequestOutcomeView {
  const k = Math.max(r.num_decode_tokens - 1, 1);
  const itlMean = r.num_decode_tokens > 0 ? Math.round(r.itl_ms * 1e3 * k) / k : 0;
  return outcome({
    id: r.requestID,
    arrivalTime: Math.round(r.arrived_at * 1e6),
    hasTTFT: r.ttft_ms > 0,
    ttft: Math.round(r.ttft_ms * 1e3),
    hasE2E: r.e2e_ms > 0,
    e2e: Math.round(r.e2e_ms * 1e3),
    itlMean,
    sloClass: r.slo_class ?? '',
    tenantId: r.tenant_id ?? '',
    model: r.model ?? '',
    sessionId: r.session_id ?? '',
    roundIndex: r.round_index,
    outputLen: r.num_decode_tokens,
  });
}
