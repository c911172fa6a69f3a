/**
 * The calibration report (blis-cluster.md §11.4): trace counts, per-metric comparisons, and the optional
 * goodput, KV hit-rate and TTFT-tolerance verdicts. {@link reportToJson} lays the fields out with the
 * reference's JSON names and order, so tools written for its report read ours.
 */
import type { SloDimTargets, TraceRecord } from '../workload/tracev2-types.js';
import { goCompareStrings } from '../gocompat/go-format.js';
import type { CalibrationPairs, ItlRecord, SimResult } from './pairs.js';
import { groupItl, perTokenItlUs } from './pairs.js';
import { computeComparison, type MetricComparison } from './stats.js';

export const KNOWN_LIMITATIONS: readonly string[] = [
  'BLIS models discrete batch steps. Real servers use iteration-level continuous batching. This may cause systematic TTFT prediction error under high load.',
  'Sim constructs synthetic prefix token IDs. Prefix cache hit rates may differ from real server, especially after evictions.',
  "If the real server uses speculative decoding, actual token generation patterns differ from sim's sequential model.",
  'Token mismatch detection uses ServerInputTokens (server-reported prompt_tokens) when available. Non-zero token_mismatches on observe-generated prefix-cached traces typically reflect KV-block granularity rounding (simulator accounts tokens in multiples of BlockSizeTokens; server reports raw count). Expected variance is at most BlockSizeTokens tokens per request. This is expected behavior, not data corruption.',
];

export interface GoodputClassComparison {
  count: number;
  realSloAttainment: number;
  simSloAttainment: number;
  realGoodputRps: number;
  simGoodputRps: number;
  /** Per gated dimension (ttft, itl, e2e); null when no dimension is gated. */
  realAttainmentByDim: Map<string, number> | null;
  simAttainmentByDim: Map<string, number> | null;
}

export interface GoodputComparison {
  targets: ReadonlyMap<string, SloDimTargets>;
  perClass: Map<string, GoodputClassComparison>;
  /** ITL gating was configured but ITL data was missing on one side. */
  skippedItl: boolean;
}

export interface HitRateComparison {
  realHitRate: number;
  simHitRate: number;
  absErrorPp: number;
  tolerancePp: number;
  within: boolean;
  source: string;
}

export interface ToleranceVerdict {
  mape: number;
  threshold: number;
  within: boolean;
}

export interface CalibrationReport {
  traceInfo: { numRequests: number; warmUpExcluded: number; matchedPairs: number; tokenMismatches: number; itlDropped: number };
  /** Present keys only: ttft, e2e, itl. */
  metrics: Map<string, MetricComparison>;
  knownLimitations: readonly string[];
  goodput: GoodputComparison | null;
  hitRate: HitRateComparison | null;
  ttftTolerance: ToleranceVerdict | null;
}

export function buildCalibrationReport(pairs: CalibrationPairs): CalibrationReport {
  const metrics = new Map<string, MetricComparison>();
  if (pairs.ttft.real.length > 0) metrics.set('ttft', computeComparison(pairs.ttft.real, pairs.ttft.sim, 'ttft'));
  if (pairs.e2e.real.length > 0) metrics.set('e2e', computeComparison(pairs.e2e.real, pairs.e2e.sim, 'e2e'));
  if (pairs.itl.real.length > 0) metrics.set('itl', computeComparison(pairs.itl.real, pairs.itl.sim, 'itl'));
  return {
    traceInfo: {
      numRequests: pairs.matchedCount + pairs.excludedWarmUp + pairs.unmatchedReal,
      warmUpExcluded: pairs.excludedWarmUp,
      matchedPairs: pairs.matchedCount,
      tokenMismatches: pairs.tokenMismatchCount,
      itlDropped: pairs.itlDropped,
    },
    metrics,
    knownLimitations: KNOWN_LIMITATIONS,
    goodput: null,
    hitRate: null,
    ttftTolerance: null,
  };
}

/** |sim − real| in percentage points against a tolerance, inclusive at the boundary despite float noise. */
export function compareHitRate(real: number, sim: number, tolerancePp: number, source: string): HitRateComparison {
  const absErrorPp = Math.abs(sim - real) * 100;
  return { realHitRate: real, simHitRate: sim, absErrorPp, tolerancePp, within: absErrorPp <= tolerancePp + 1e-9, source };
}

const ratio = (num: number, den: number): number => (den === 0 ? 0 : num / den);

interface Tally {
  met: number;
  n: number;
}

/**
 * One side's verdict for one request against one class's targets (0 = dimension not gated); counts each gated
 * dimension it could read in `dims`. A missing ITL fails the request and is flagged.
 */
function judge(ttftMs: number, e2eMs: number, itlMs: number | null, t: SloDimTargets, dims: Record<'ttft' | 'e2e' | 'itl', Tally>): { good: boolean; itlMissing: boolean } {
  let good = ttftMs > 0 && e2eMs > 0 && e2eMs >= ttftMs;
  let itlMissing = false;
  if (t.ttftMs > 0 && good) {
    dims.ttft.n++;
    if (ttftMs <= t.ttftMs) dims.ttft.met++;
    else good = false;
  }
  if (t.e2eMs > 0 && good) {
    dims.e2e.n++;
    if (e2eMs <= t.e2eMs) dims.e2e.met++;
    else good = false;
  }
  if (t.itlMs > 0 && good) {
    if (itlMs !== null && itlMs > 0) {
      dims.itl.n++;
      if (itlMs <= t.itlMs) dims.itl.met++;
      else good = false;
    } else {
      itlMissing = true;
      good = false;
    }
  }
  return { good, itlMissing };
}

/** The observed ITL a goodput judgment uses: mean chunk gap (reference) or per token (--semantics corrected). */
function realItlMs(chunks: readonly ItlRecord[] | undefined, outputTokens: number, perToken: boolean): number | null {
  if (!perToken) return meanPositiveDeltaMs(chunks);
  const us = perTokenItlUs(chunks, outputTokens);
  return us === null ? null : us / 1000;
}

function meanPositiveDeltaMs(chunks: readonly ItlRecord[] | undefined): number | null {
  if (chunks === undefined || chunks.length < 2) return null;
  let sum = 0;
  let n = 0;
  for (let i = 1; i < chunks.length; i++) {
    const d = (chunks[i] as ItlRecord).timestampUs - (chunks[i - 1] as ItlRecord).timestampUs;
    if (d > 0) {
      sum += d;
      n++;
    }
  }
  return n === 0 ? null : sum / n / 1000;
}

/**
 * Observed vs simulated SLO attainment per class over the matched rows. Failed real rows count in the
 * denominator only; the class of an unclassed row is "default"; classes without targets are skipped.
 */
export function computeGoodputComparison(
  records: readonly TraceRecord[],
  simById: ReadonlyMap<number, SimResult>,
  matched: ReadonlySet<number>,
  itl: readonly ItlRecord[],
  targets: ReadonlyMap<string, SloDimTargets>,
  runtimeSec: number,
  perTokenItl = false,
): GoodputComparison | null {
  if (targets.size === 0) return null;
  const itlBy = groupItl(itl);
  const tally = (): Record<'ttft' | 'e2e' | 'itl', Tally> => ({ ttft: { met: 0, n: 0 }, e2e: { met: 0, n: 0 }, itl: { met: 0, n: 0 } });
  const acc = new Map<string, { count: number; realGood: number; simGood: number; real: ReturnType<typeof tally>; sim: ReturnType<typeof tally> }>();
  for (const c of targets.keys()) acc.set(c, { count: 0, realGood: 0, simGood: 0, real: tally(), sim: tally() });
  let skippedItl = false;
  for (const rec of records) {
    if (rec.status !== 'ok' && rec.status !== 'error' && rec.status !== 'timeout') continue;
    if (!matched.has(rec.requestId)) continue;
    const cls = rec.sloClass === '' ? 'default' : rec.sloClass;
    const t = targets.get(cls);
    const a = acc.get(cls);
    if (t === undefined || a === undefined) continue;
    a.count++;
    if (rec.status === 'ok') {
      const v = judge((rec.firstChunkTimeUs - rec.sendTimeUs) / 1000, (rec.lastChunkTimeUs - rec.sendTimeUs) / 1000, realItlMs(itlBy.get(rec.requestId), rec.outputTokens, perTokenItl), t, a.real);
      if (v.itlMissing) skippedItl = true;
      if (v.good) a.realGood++;
    }
    const sr = simById.get(rec.requestId);
    if (sr !== undefined) {
      const v = judge(sr.ttftUs / 1000, sr.e2eUs / 1000, sr.itlMeanUs / 1000, t, a.sim);
      if (v.itlMissing) skippedItl = true;
      if (v.good) a.simGood++;
    }
  }
  const perClass = new Map<string, GoodputClassComparison>();
  for (const cls of [...targets.keys()].sort(goCompareStrings)) {
    const a = acc.get(cls);
    const t = targets.get(cls);
    if (a === undefined || t === undefined) continue;
    const byDim = (side: ReturnType<typeof tally>): Map<string, number> | null => {
      const m = new Map<string, number>();
      if (t.ttftMs > 0) m.set('ttft', ratio(side.ttft.met, side.ttft.n));
      if (t.itlMs > 0) m.set('itl', ratio(side.itl.met, side.itl.n));
      if (t.e2eMs > 0) m.set('e2e', ratio(side.e2e.met, side.e2e.n));
      return m.size > 0 ? m : null;
    };
    perClass.set(cls, {
      count: a.count,
      realSloAttainment: ratio(a.realGood, a.count),
      simSloAttainment: ratio(a.simGood, a.count),
      realGoodputRps: runtimeSec > 0 ? a.realGood / runtimeSec : 0,
      simGoodputRps: runtimeSec > 0 ? a.simGood / runtimeSec : 0,
      realAttainmentByDim: byDim(a.real),
      simAttainmentByDim: byDim(a.sim),
    });
  }
  return { targets, perClass, skippedItl };
}

function sortedObject<V>(m: ReadonlyMap<string, V>, f: (v: V) => unknown): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of [...m.keys()].sort(goCompareStrings)) o[k] = f(m.get(k) as V);
  return o;
}

function metricJson(c: MetricComparison): Record<string, unknown> {
  const w = c.workloadLevel;
  return {
    workload_level: {
      real_mean: w.realMean, sim_mean: w.simMean, mean_error: w.meanError, mean_percent_error: w.meanPercentError,
      real_median: w.realMedian, sim_median: w.simMedian, median_error: w.medianError, median_percent_error: w.medianPercentError,
      real_p50: w.realP50, sim_p50: w.simP50, p50_error: w.p50Error, p50_percent_error: w.p50PercentError,
      real_p90: w.realP90, sim_p90: w.simP90, p90_error: w.p90Error, p90_percent_error: w.p90PercentError,
      real_p95: w.realP95, sim_p95: w.simP95, p95_error: w.p95Error, p95_percent_error: w.p95PercentError,
      real_p99: w.realP99, sim_p99: w.simP99, p99_error: w.p99Error, p99_percent_error: w.p99PercentError,
    },
    request_level: { mape: c.requestLevel.mape, pearson_r: c.requestLevel.pearsonR, bias_direction: c.requestLevel.biasDirection, quality: c.requestLevel.quality },
    count: c.count,
  };
}

/** The report as the reference's JSON object (keys in its struct order; maps in sorted key order). */
export function reportToJson(r: CalibrationReport): Record<string, unknown> {
  const ti: Record<string, unknown> = {
    num_requests: r.traceInfo.numRequests,
    warm_up_excluded: r.traceInfo.warmUpExcluded,
    matched_pairs: r.traceInfo.matchedPairs,
    token_mismatches: r.traceInfo.tokenMismatches,
  };
  if (r.traceInfo.itlDropped !== 0) ti['itl_dropped'] = r.traceInfo.itlDropped;
  const o: Record<string, unknown> = {
    trace_info: ti,
    metrics: sortedObject(r.metrics, metricJson),
    config_match: {},
    known_limitations: [...r.knownLimitations],
  };
  if (r.goodput !== null) {
    const g: Record<string, unknown> = {
      targets: sortedObject(r.goodput.targets, (t) => ({ TTFTMs: t.ttftMs, ITLMs: t.itlMs, E2EMs: t.e2eMs })),
      per_class: sortedObject(r.goodput.perClass, (c) => {
        const e: Record<string, unknown> = {
          count: c.count,
          real_slo_attainment: c.realSloAttainment,
          sim_slo_attainment: c.simSloAttainment,
          real_goodput_rps: c.realGoodputRps,
          sim_goodput_rps: c.simGoodputRps,
        };
        if (c.realAttainmentByDim !== null) e['real_attainment_by_dim'] = sortedObject(c.realAttainmentByDim, (v) => v);
        if (c.simAttainmentByDim !== null) e['sim_attainment_by_dim'] = sortedObject(c.simAttainmentByDim, (v) => v);
        return e;
      }),
    };
    if (r.goodput.skippedItl) g['skipped_itl'] = true;
    o['goodput'] = g;
  }
  if (r.hitRate !== null) {
    const h = r.hitRate;
    o['hit_rate'] = { real_hit_rate: h.realHitRate, sim_hit_rate: h.simHitRate, abs_error_pp: h.absErrorPp, tolerance_pp: h.tolerancePp, within: h.within, source: h.source };
  }
  if (r.ttftTolerance !== null) o['ttft_tolerance'] = { mape: r.ttftTolerance.mape, threshold: r.ttftTolerance.threshold, within: r.ttftTolerance.within };
  return o;
}
