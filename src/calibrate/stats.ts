/**
 * Real-vs-simulated comparison statistics for `blis calibrate` (blis-cluster.md §11.4): interpolated
 * percentiles, MAPE, Pearson r, bias direction and the quality grade.
 */
import { percentileFromSorted } from '../metrics/stats.js';

/** Workload-level view: how the two latency distributions compare as a whole. */
export interface WorkloadAggregates {
  realMean: number;
  simMean: number;
  meanError: number;
  meanPercentError: number;
  realMedian: number;
  simMedian: number;
  medianError: number;
  medianPercentError: number;
  realP50: number;
  simP50: number;
  p50Error: number;
  p50PercentError: number;
  realP90: number;
  simP90: number;
  p90Error: number;
  p90PercentError: number;
  realP95: number;
  simP95: number;
  p95Error: number;
  p95PercentError: number;
  realP99: number;
  simP99: number;
  p99Error: number;
  p99PercentError: number;
}

export type BiasDirection = 'over-predict' | 'under-predict' | 'neutral' | '';
export type Quality = 'excellent' | 'good' | 'fair' | 'poor';

/** Request-level view: how well each individual request is predicted. */
export interface PredictionQuality {
  mape: number;
  pearsonR: number;
  biasDirection: BiasDirection;
  quality: Quality;
}

export interface MetricComparison {
  workloadLevel: WorkloadAggregates;
  requestLevel: PredictionQuality;
  count: number;
}

export { percentileFromSorted };

/** Pearson correlation with the one-pass sums formula; 0 when either side has no variance. */
export function pearsonCorrelation(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  let sx = 0;
  let sy = 0;
  let sxy = 0;
  let sx2 = 0;
  let sy2 = 0;
  for (let i = 0; i < n; i++) {
    const a = x[i] as number;
    const b = y[i] as number;
    sx += a;
    sy += b;
    sxy += a * b;
    sx2 += a * a;
    sy2 += b * b;
  }
  const num = n * sxy - sx * sy;
  const den = Math.sqrt((n * sx2 - sx * sx) * (n * sy2 - sy * sy));
  // A zero (or NaN, from rounding below zero) denominator means a constant vector: no correlation to report.
  if (!(den > 0)) return 0;
  return num / den;
}

/** Mean |real − sim| / real over pairs with a finite, non-zero real value and a finite error; 0 if none. */
export function mape(real: readonly number[], sim: readonly number[]): number {
  if (real.length !== sim.length) throw new RangeError(`mape: real has ${real.length} values, sim ${sim.length}`);
  let sum = 0;
  let count = 0;
  for (let i = 0; i < real.length; i++) {
    const r = real[i] as number;
    if (r === 0 || !Number.isFinite(r)) continue;
    const e = Math.abs(r - (sim[i] as number)) / r;
    if (!Number.isFinite(e)) continue;
    sum += e;
    count++;
  }
  return count === 0 ? 0 : sum / count;
}

export function qualityRating(mapeValue: number, pearsonR: number): Quality {
  if (mapeValue < 0.1 && pearsonR > 0.95) return 'excellent';
  if (mapeValue < 0.2 && pearsonR > 0.85) return 'good';
  if (mapeValue < 0.35 && pearsonR > 0.7) return 'fair';
  return 'poor';
}

function ascending(v: readonly number[]): number[] {
  return [...v].sort((a, b) => a - b);
}

/** |err| / base, 0 when the base is not positive (nothing meaningful to divide by). */
function relative(err: number, base: number): number {
  return base > 0 ? Math.abs(err) / base : 0;
}

/**
 * Compares two parallel latency vectors (µs). Throws when they are empty or differ in length: callers only
 * compare metrics that have matched pairs.
 */
export function computeComparison(real: readonly number[], sim: readonly number[], metric: string): MetricComparison {
  if (real.length === 0 || sim.length === 0) throw new RangeError(`empty latency vectors for ${metric}`);
  if (real.length !== sim.length) throw new RangeError(`mismatched vector lengths for ${metric}: real=${real.length} sim=${sim.length}`);
  const n = real.length;
  let realSum = 0;
  let simSum = 0;
  for (let i = 0; i < n; i++) {
    realSum += real[i] as number;
    simSum += sim[i] as number;
  }
  const rs = ascending(real);
  const ss = ascending(sim);
  const pct = (p: number): [number, number] => [percentileFromSorted(rs, p), percentileFromSorted(ss, p)];
  const [r50, s50] = pct(50);
  const [r90, s90] = pct(90);
  const [r95, s95] = pct(95);
  const [r99, s99] = pct(99);
  const realMean = realSum / n;
  const simMean = simSum / n;
  const w: WorkloadAggregates = {
    realMean,
    simMean,
    meanError: simMean - realMean,
    meanPercentError: relative(simMean - realMean, realMean),
    realMedian: r50,
    simMedian: s50,
    medianError: s50 - r50,
    medianPercentError: relative(s50 - r50, r50),
    realP50: r50,
    simP50: s50,
    p50Error: s50 - r50,
    p50PercentError: relative(s50 - r50, r50),
    realP90: r90,
    simP90: s90,
    p90Error: s90 - r90,
    p90PercentError: relative(s90 - r90, r90),
    realP95: r95,
    simP95: s95,
    p95Error: s95 - r95,
    p95PercentError: relative(s95 - r95, r95),
    realP99: r99,
    simP99: s99,
    p99Error: s99 - r99,
    p99PercentError: relative(s99 - r99, r99),
  };

  // MAPE and bias over the same pairs (real == 0 has no relative error and is left out of both).
  let errSum = 0;
  let errCount = 0;
  let bias = 0;
  for (let i = 0; i < n; i++) {
    const r = real[i] as number;
    if (r === 0) continue;
    const s = sim[i] as number;
    errSum += Math.abs(r - s) / r;
    errCount++;
    bias += s - r;
  }
  const m = errCount > 0 ? errSum / errCount : 0;
  const biasDirection: BiasDirection = errCount === 0 ? '' : bias > 0 ? 'over-predict' : bias < 0 ? 'under-predict' : 'neutral';
  const pearsonR = n >= 3 ? pearsonCorrelation(real, sim) : 0;
  return { workloadLevel: w, requestLevel: { mape: m, pearsonR, biasDirection, quality: qualityRating(m, pearsonR) }, count: n };
}
