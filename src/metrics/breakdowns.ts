/**
 * Per-SLO-class, per-model, per-tenant and per-session breakdowns of the aggregated request outcomes
 * (blis-cluster.md §5.3). Only requests still in the request table (`registered`) are attributed, as in the
 * reference, which joins its latency tables with that table by request id.
 */
import { newDistribution, type Distribution, type RequestOutcomeView } from './cluster-metrics.js';
import { goCompareStrings } from '../gocompat/go-format.js';

/**
 * Output tokens a completed request generated: its first token comes with the end of prefill (progress =
 * input length), each decode step adds one, so a length-capped request generated fewer than planned.
 */
export function generatedTokens(r: Pick<RequestOutcomeView, 'outputLen' | 'inputLen' | 'progressIndex'>): number {
  if (r.outputLen <= 0) return 0;
  return Math.max(0, Math.min(r.outputLen, r.progressIndex - r.inputLen + 1));
}

/**
 * Whether a request's TTFT joins the latency breakdowns: the reference counts every request that produced a
 * first token; corrected semantics count the completed ones, the population of the E2E figures beside them.
 */
function ttftCounts(r: RequestOutcomeView, corrected: boolean): boolean {
  return r.hasTTFT && (r.hasE2E || !corrected);
}

/** Empty SLO class is reported as "default" in per-class output and goodput. */
export function sloClassKey(cls: string): string {
  return cls === '' ? 'default' : cls;
}

export interface SloMetrics {
  /** Ticks. */
  readonly ttft: Distribution;
  /** Per-request mean ITL, ticks. */
  readonly itl: Distribution;
  /** Ticks. */
  readonly e2e: Distribution;
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

/** Per-class distributions; a class appears when any of its requests has a TTFT or an E2E. */
export function computePerSloDistributions(requests: readonly RequestOutcomeView[], corrected = false): Map<string, SloMetrics> {
  const ttft = new Map<string, number[]>();
  const itl = new Map<string, number[]>();
  const e2e = new Map<string, number[]>();
  for (const r of requests) {
    if (!r.registered) continue;
    const cls = sloClassKey(r.sloClass);
    if (ttftCounts(r, corrected)) push(ttft, cls, r.ttft);
    // The mean ITL is recorded together with the E2E at completion.
    if (r.hasE2E) {
      push(itl, cls, r.itlMean);
      push(e2e, cls, r.e2e);
    }
  }
  const classes = new Set([...ttft.keys(), ...itl.keys(), ...e2e.keys()]);
  const out = new Map<string, SloMetrics>();
  for (const cls of [...classes].sort(goCompareStrings)) {
    out.set(cls, {
      ttft: newDistribution(ttft.get(cls) ?? []),
      itl: newDistribution(itl.get(cls) ?? []),
      e2e: newDistribution(e2e.get(cls) ?? []),
    });
  }
  return out;
}

export interface ModelMetrics {
  readonly model: string;
  readonly ttft: Distribution;
  readonly e2e: Distribution;
  readonly throughputRps: number;
  readonly tokensPerSec: number;
  /** Completed (E2E-bearing) requests. */
  readonly totalRequests: number;
}

/**
 * Per-model metrics over requests with a model tag; null when none has one (section not printed). Tokens are
 * the planned output lengths (reference) or the generated ones (`corrected`).
 */
export function computePerModelMetrics(requests: readonly RequestOutcomeView[], simEndedTime: number, corrected = false): Map<string, ModelMetrics> | null {
  const ttft = new Map<string, number[]>();
  const e2e = new Map<string, number[]>();
  const tokens = new Map<string, number>();
  for (const r of requests) {
    if (!r.registered || r.model === '') continue;
    if (ttftCounts(r, corrected)) push(ttft, r.model, r.ttft);
    if (r.hasE2E) {
      push(e2e, r.model, r.e2e);
      // The reference adds the planned output length (the oracle token count), even for length-capped requests.
      tokens.set(r.model, (tokens.get(r.model) ?? 0) + (corrected ? generatedTokens(r) : r.outputLen));
    }
  }
  if (ttft.size === 0 && e2e.size === 0) return null;
  const names = [...new Set([...ttft.keys(), ...e2e.keys()])].sort(goCompareStrings);
  const out = new Map<string, ModelMetrics>();
  for (const name of names) {
    const count = e2e.get(name)?.length ?? 0;
    const tok = tokens.get(name) ?? 0;
    let rps = 0;
    let tps = 0;
    if (simEndedTime > 0 && count > 0) {
      const dur = simEndedTime / 1e6;
      rps = count / dur;
      if (tok > 0) tps = tok / dur;
    }
    out.set(name, {
      model: name,
      ttft: newDistribution(ttft.get(name) ?? []),
      e2e: newDistribution(e2e.get(name) ?? []),
      throughputRps: rps,
      tokensPerSec: tps,
      totalRequests: count,
    });
  }
  return out;
}

export interface TenantMetrics {
  readonly tenantId: string;
  readonly completedRequests: number;
  /** Σ output tokens of the completed requests: planned (reference) or generated (corrected). */
  readonly totalTokensServed: number;
}

/** Per-tenant completion counts; null when no completed request carries a tenant (section not printed). */
export function computePerTenantMetrics(requests: readonly RequestOutcomeView[], corrected = false): Map<string, TenantMetrics> | null {
  const acc = new Map<string, { n: number; tokens: number }>();
  for (const r of requests) {
    if (!r.registered || !r.hasE2E || r.tenantId === '') continue;
    const tokens = corrected ? generatedTokens(r) : r.outputLen;
    const a = acc.get(r.tenantId);
    if (a) {
      a.n++;
      a.tokens += tokens;
    } else acc.set(r.tenantId, { n: 1, tokens });
  }
  if (acc.size === 0) return null;
  const out = new Map<string, TenantMetrics>();
  for (const id of [...acc.keys()].sort(goCompareStrings)) {
    const a = acc.get(id) as { n: number; tokens: number };
    out.set(id, { tenantId: id, completedRequests: a.n, totalTokensServed: a.tokens });
  }
  return out;
}

/**
 * Jain's fairness index (Σx)² / (n·Σx²), summed in sorted-key order. Empty → 0; all zero → 1 (perfectly
 * fair). A single tenant gives 1, which the reference keeps deliberately.
 */
export function jainFairnessIndex(values: ReadonlyMap<string, number>): number {
  const n = values.size;
  if (n === 0) return 0;
  let sx = 0;
  let sx2 = 0;
  for (const k of [...values.keys()].sort(goCompareStrings)) {
    const x = values.get(k) as number;
    sx += x;
    sx2 += x * x;
  }
  if (sx2 === 0) return 1.0;
  return (sx * sx) / (n * sx2);
}

export interface SessionMetrics {
  /** Distinct session ids among the registered requests. */
  readonly sessionCount: number;
  /** TTFT of round-0 requests, ms. */
  readonly ttftCold: Distribution;
  /** TTFT of follow-up rounds, ms. */
  readonly ttftWarm: Distribution;
  /** Last completion − round-0 arrival per session, ms (sessions with a round 0 and a positive span). */
  readonly sessionDuration: Distribution;
}

/** Session metrics; null when no registered request has a session id. */
export function computeSessionMetrics(requests: readonly RequestOutcomeView[], corrected = false): SessionMetrics | null {
  const sessionReqs = requests.filter((r) => r.registered && r.sessionId !== '');
  if (sessionReqs.length === 0) return null;
  // Request-id order fixes the float accumulation and the order samples are collected in.
  sessionReqs.sort((a, b) => goCompareStrings(a.id, b.id));
  const cold: number[] = [];
  const warm: number[] = [];
  const sessions = new Map<string, { round0Ms: number; hasRound0: boolean; maxCompMs: number }>();
  for (const r of sessionReqs) {
    if (ttftCounts(r, corrected)) (r.roundIndex === 0 ? cold : warm).push(r.ttft / 1000.0);
    let sd = sessions.get(r.sessionId);
    if (!sd) {
      sd = { round0Ms: 0, hasRound0: false, maxCompMs: 0 };
      sessions.set(r.sessionId, sd);
    }
    if (r.roundIndex === 0) {
      // The reference stores arrival in seconds and converts back to ms; keep both roundings.
      sd.round0Ms = (r.arrivalTime / 1e6) * 1000.0;
      sd.hasRound0 = true;
    }
    if (r.hasE2E) {
      const compMs = (r.arrivalTime + r.e2e) / 1000.0;
      if (compMs > sd.maxCompMs) sd.maxCompMs = compMs;
    }
  }
  const durations: number[] = [];
  for (const sid of [...sessions.keys()].sort(goCompareStrings)) {
    const sd = sessions.get(sid) as { round0Ms: number; hasRound0: boolean; maxCompMs: number };
    if (!sd.hasRound0) continue;
    const dur = sd.maxCompMs - sd.round0Ms;
    // A zero/negative span means no round completed (maxCompMs still 0).
    if (dur > 0) durations.push(dur);
  }
  return {
    sessionCount: sessions.size,
    ttftCold: newDistribution(cold),
    ttftWarm: newDistribution(warm),
    sessionDuration: newDistribution(durations),
  };
}
