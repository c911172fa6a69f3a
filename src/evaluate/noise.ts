/**
 * Noise figures of an evaluation (docs/evaluate.md "Reading the noise figures"): a weighted mean over scenario runs
 * with its standard error over seeds, and a 95% confidence interval.
 *
 * The combined score is Σ_s w_s Σ_j x_sj / W over scenarios s and their seeds j (W = Σ_s w_s n_s). Scenarios are
 * fixed; seeds are random draws, so each scenario's runs estimate its variance σ_s² (sample variance, n_s - 1
 * degrees of freedom) and Var = Σ_s (w_s / W)² n_s σ_s². A scenario run on one seed has no spread to measure:
 * then there is no standard error (null). The interval is mean ± t(0.975, Σ_s (n_s - 1)) × SE.
 */
import type { Estimate } from './types.js';

/** Student's t 0.975 quantiles for 1..30 degrees of freedom. */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101,
  2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** Student's t 0.975 quantile for `df` degrees of freedom (table to 30, then the Cornish-Fisher expansion). */
export function t975(df: number): number {
  if (df < 1) return Infinity;
  if (df <= 30) return T975[Math.floor(df) - 1] as number;
  const z = 1.959963984540054;
  const z3 = z * z * z;
  const z5 = z3 * z * z;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

/** One run's value with its scenario and the scenario's weight. */
export interface WeightedRun {
  readonly scenario: string;
  readonly weight: number;
  readonly value: number;
}

/** The weighted mean of `runs` with its standard error over seeds and 95% interval (see the module comment). */
export function estimate(runs: readonly WeightedRun[]): Estimate {
  if (runs.length === 0) return { mean: 0, se: null, ci95: null, runs: 0 };
  const groups = new Map<string, { w: number; xs: number[] }>();
  for (const r of runs) {
    const g = groups.get(r.scenario) ?? { w: r.weight, xs: [] };
    g.xs.push(r.value);
    groups.set(r.scenario, g);
  }
  let total = 0;
  let weights = 0;
  for (const g of groups.values()) {
    for (const x of g.xs) total += g.w * x;
    weights += g.w * g.xs.length;
  }
  const mean = weights > 0 ? total / weights : 0;
  let variance = 0;
  let df = 0;
  let measurable = true;
  for (const g of groups.values()) {
    const n = g.xs.length;
    if (n < 2) {
      measurable = false;
      break;
    }
    const m = g.xs.reduce((a, b) => a + b, 0) / n;
    const s2 = g.xs.reduce((a, b) => a + (b - m) * (b - m), 0) / (n - 1);
    variance += ((g.w / weights) ** 2) * n * s2;
    df += n - 1;
  }
  if (!measurable || weights <= 0) return { mean, se: null, ci95: null, runs: runs.length };
  const se = Math.sqrt(variance);
  const h = t975(df) * se;
  return { mean, se, ci95: [mean - h, mean + h], runs: runs.length };
}
