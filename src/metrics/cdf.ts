/**
 * Binned CDFs for reports: a distribution summarised by its values at a fixed list of probabilities (finer in
 * the tail), so a report of a million-request run stays small while p50/p90/p99 read exactly off the curve.
 * Quantiles use the nearest-rank rule on sorted values (no interpolation): deterministic and exact at the
 * listed probabilities.
 */

/** Probabilities at which every CDF is summarised: 0, 0.5 %, ..., 100 %, plus 99.1 %..99.9 %. */
export const CDF_PROBABILITIES: readonly number[] = (() => {
  const ps = new Set<number>();
  for (let i = 0; i <= 200; i++) ps.add(i / 200);
  for (let i = 1; i <= 9; i++) ps.add(Math.round((0.99 + i / 1000) * 1000) / 1000);
  return Object.freeze([...ps].sort((a, b) => a - b));
})();

export interface BinnedCdf {
  readonly count: number;
  readonly mean: number;
  /** Value at each of {@link CDF_PROBABILITIES}. */
  readonly values: readonly number[];
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** Nearest-rank index of probability p among n sorted values. */
function rank(p: number, n: number): number {
  return Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1));
}

/** CDF of plain values (scaled by `scale`, e.g. 1e-3 for µs -> ms); null for no values. */
export function binnedCdf(values: ArrayLike<number>, scale = 1): BinnedCdf | null {
  const n = values.length;
  if (n === 0) return null;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i] as number;
  return {
    count: n,
    mean: round3((sum / n) * scale),
    values: CDF_PROBABILITIES.map((p) => round3((sorted[rank(p, n)] as number) * scale)),
  };
}

/** CDF of a multiset given as values with integer weights (use counts); null when every weight is 0. */
export function weightedCdf(values: ArrayLike<number>, weights: ArrayLike<number>, scale = 1): BinnedCdf | null {
  const idx: number[] = [];
  let total = 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const w = weights[i] as number;
    if (w > 0) {
      idx.push(i);
      total += w;
      sum += w * (values[i] as number);
    }
  }
  if (total === 0) return null;
  idx.sort((a, b) => (values[a] as number) - (values[b] as number) || a - b);
  const out: number[] = [];
  let k = 0;
  let cum = weights[idx[0] as number] as number;
  for (const p of CDF_PROBABILITIES) {
    const r = rank(p, total);
    while (cum <= r && k < idx.length - 1) {
      k++;
      cum += weights[idx[k] as number] as number;
    }
    out.push(round3((values[idx[k] as number] as number) * scale));
  }
  return { count: total, mean: round3((sum / total) * scale), values: out };
}

/** The value a CDF gives at probability p (nearest listed probability at or above p). */
export function cdfAt(cdf: BinnedCdf, p: number): number {
  const i = CDF_PROBABILITIES.findIndex((q) => q >= p - 1e-12);
  return cdf.values[i < 0 ? cdf.values.length - 1 : i] as number;
}
