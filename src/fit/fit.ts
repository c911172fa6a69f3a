/**
 * The latency fit: find the corrected-physics coefficients c that make simulated latencies match observed ones.
 *
 * Gauss–Newton on simulations: simulate every dataset at c, linearise each observed quantity in c with the
 * schedule held fixed (record.ts), solve the robust (Huber IRLS) least-squares problem on relative errors
 * (solve.ts), re-simulate at the solution and keep it only if the true robust loss went down (else halve the
 * step). Deterministic: the same datasets and start give the same bytes.
 */
import { BlisError } from '../domain/errors.js';
import type { Request } from '../domain/request.js';
import type { EngineSetup } from '../sim/engine-setup.js';
import { simulateLinearized, type Linearization } from './record.js';
import { HUBER_DELTA, choleskySolve, huberLoss, priorPenalty, priorPrecision, relativeResiduals, robustScales, solveRobust, type LinearRows, type Prior } from './solve.js';

/** An observed quantity of one simulated dataset. `split: 'test'` targets are predicted, never fitted. */
export type FitTarget =
  | { readonly kind: 'ttft' | 'itl' | 'e2e'; readonly id: string; readonly y: number; readonly w: number; readonly split: 'train' | 'test' }
  /** Mean over completed requests, leaving out the first `skip` requests of the dataset (a cold-cache warm-up). */
  | { readonly kind: 'mean-ttft' | 'mean-e2e'; readonly y: number; readonly w: number; readonly split: 'train' | 'test'; readonly skip?: number }
  | { readonly kind: 'itl-quantile'; readonly q: number; readonly y: number; readonly w: number; readonly split: 'train' | 'test' };

export interface FitDataset {
  readonly label: string;
  /** The engine for coefficients `c` (a fresh latency model each call). */
  setup(c: readonly number[]): EngineSetup;
  /** Fresh requests (a simulation mutates them). */
  requests(): Request[];
  readonly targets: readonly FitTarget[];
}

export interface FitOptions {
  readonly names: readonly string[];
  readonly start: readonly number[];
  readonly lower: readonly number[];
  readonly fixed: readonly boolean[];
  /** Typical magnitude of each coefficient (convergence and identifiability are judged relative to it). */
  readonly typical: readonly number[];
  readonly maxIterations?: number;
  /** Stop when no coefficient moves by more than this fraction of its size (default 1e-3). */
  readonly tolerance?: number;
  /**
   * Accept a step whose re-simulated loss is up to this fraction worse: simulated aggregates move in small
   * jumps when a request changes step, which can reject a good step (default 0).
   */
  readonly acceptSlack?: number;
  /** What each coefficient needs in the data, for the unidentifiable-coefficient error. */
  readonly needs?: Readonly<Record<string, string>>;
  /**
   * Index of a coefficient that adds to every TTFT one for one (a front-end delay). The fit then starts in two
   * stages: the decode-side coefficients on decode targets alone (queueing makes TTFTs far from the start
   * point a poor guide), then this coefficient from the median TTFT gap, then everything together.
   */
  readonly ttftOffset?: number;
  /**
   * Refuse a coefficient whose standard error exceeds half its size (default true: a trace fit should say
   * when it cannot pin a coefficient). Aggregate fits on a handful of numbers turn it off and report the errors.
   */
  readonly checkStandardErrors?: boolean;
  /**
   * Regularisation toward prior values (trace fits: the physics defaults or the starting profile). With it the
   * fit never refuses: a free coefficient the data cannot pin (its standard error at the solution, with the
   * prior, is still more than {@link PIN_RATIO} of the prior's) is put back to its prior mean and reported in
   * `held`, and the others refitted; the prior acts as a weak extra observation, which also settles
   * near-collinear pairs.
   */
  readonly prior?: Prior;
  /** Progress: called after every accepted step (iteration, coefficients, loss per target). */
  readonly onIteration?: (iteration: number, c: readonly number[], loss: number) => void;
}

export interface FitResult {
  readonly coefficients: number[];
  /** Standard error of each coefficient at the solution (0 for fixed ones), from the robust normal matrix. */
  readonly standardErrors: number[];
  readonly iterations: number;
  /** Robust loss per training target at the solution. */
  readonly loss: number;
  /** Robust scale of the relative residuals per noise group (TTFT, decode, aggregate). */
  readonly scale: Float64Array;
  readonly converged: boolean;
  /** With a prior: free coefficients the data could not pin, held at the prior mean (indices). */
  readonly held: readonly number[];
}

/**
 * With a prior, a coefficient counts as pinned by the data when its standard error with the data is at most
 * this fraction of the prior's standard deviation (the data carry at least three times the prior's information).
 */
export const PIN_RATIO = 0.5;

export const FIT_UNIDENTIFIABLE = 'FIT_UNIDENTIFIABLE';
export const FIT_NO_DATA = 'FIT_NO_DATA';

/** Value and gradient of a target in a linearisation; null when the simulation has no value for it. */
export function evaluateTarget(t: FitTarget, lin: Linearization, row: Float64Array): number | null {
  const k = lin.k;
  row.fill(0);
  if (t.kind === 'ttft' || t.kind === 'itl' || t.kind === 'e2e') {
    const l = lin.requests.get(t.id);
    if (l === undefined || !l.completed) return null;
    if (t.kind === 'ttft') {
      row.set(l.ttftRow);
      return l.ttft;
    }
    if (t.kind === 'e2e') {
      for (let c = 0; c < k; c++) row[c] = (l.ttftRow[c] as number) + (l.decodeRow[c] as number);
      return l.ttft + l.decode;
    }
    if (l.itlCount === 0) return null;
    for (let c = 0; c < k; c++) row[c] = (l.decodeRow[c] as number) / l.itlCount;
    return l.decode / l.itlCount;
  }
  if (t.kind === 'mean-ttft' || t.kind === 'mean-e2e') {
    let n = 0;
    let v = 0;
    let seen = 0;
    const skip = t.skip ?? 0;
    for (const l of lin.requests.values()) {
      if (seen++ < skip || !l.completed) continue;
      n++;
      v += l.ttft + (t.kind === 'mean-e2e' ? l.decode : 0);
      for (let c = 0; c < k; c++) row[c]! += (l.ttftRow[c] as number) + (t.kind === 'mean-e2e' ? (l.decodeRow[c] as number) : 0);
    }
    if (n === 0) return null;
    for (let c = 0; c < k; c++) row[c]! /= n;
    return v / n;
  }
  if (t.kind === 'itl-quantile') return quantileRow(lin, t.q, row);
  return null;
}

/**
 * The q-quantile of the ITL multiset (each step's value, used by every request that decoded in it) and the
 * gradient of the step(s) it falls on, interpolated as the metrics interpolate percentiles.
 */
function quantileRow(lin: Linearization, q: number, row: Float64Array): number | null {
  const { values, uses, rows } = lin.steps;
  const k = lin.k;
  const order: number[] = [];
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    if ((uses[i] as number) > 0) {
      order.push(i);
      total += uses[i] as number;
    }
  }
  if (total === 0) return null;
  order.sort((a, b) => (values[a] as number) - (values[b] as number) || a - b);
  const rank = q * (total - 1);
  const lo = Math.floor(rank);
  const frac = rank - lo;
  const at = (r: number): number => {
    let acc = 0;
    for (const i of order) {
      acc += uses[i] as number;
      if (r < acc) return i;
    }
    return order[order.length - 1] as number;
  };
  const a = at(lo);
  const b = frac > 0 ? at(lo + 1) : a;
  for (let c = 0; c < k; c++) row[c] = (1 - frac) * (rows[a * k + c] as number) + frac * (rows[b * k + c] as number);
  return (1 - frac) * (values[a] as number) + frac * (values[b] as number);
}

/** Times to first token, decode-side latencies and run-level aggregates each get their own noise scale. */
const NOISE_GROUP: Readonly<Record<FitTarget['kind'], number>> = { ttft: 0, itl: 1, e2e: 1, 'mean-ttft': 2, 'mean-e2e': 2, 'itl-quantile': 2 };

interface Stacked {
  readonly rows: LinearRows;
  /** Per row: the target's observed value. */
  readonly observed: Float64Array;
  readonly missing: number;
}

/** Linear rows a·c ≈ y for the chosen split, built from each dataset's linearisation at `c0`. */
function stack(datasets: readonly FitDataset[], lins: readonly Linearization[], c0: readonly number[], split: 'train' | 'test'): Stacked {
  const k = c0.length;
  const a: number[] = [];
  const y: number[] = [];
  const d: number[] = [];
  const w: number[] = [];
  const g: number[] = [];
  const row = new Float64Array(k);
  let missing = 0;
  datasets.forEach((ds, i) => {
    const lin = lins[i] as Linearization;
    for (const t of ds.targets) {
      if (t.split !== split) continue;
      const v = evaluateTarget(t, lin, row);
      if (v === null) {
        missing++;
        continue;
      }
      // pred(c) = v + row·(c − c0): exact at c0, linear around it.
      let offset = v;
      for (let c = 0; c < k; c++) offset -= (row[c] as number) * (c0[c] as number);
      for (let c = 0; c < k; c++) a.push(row[c] as number);
      y.push(t.y - offset);
      d.push(Math.abs(t.y));
      w.push(t.w);
      g.push(NOISE_GROUP[t.kind]);
    }
  });
  const n = y.length;
  // Relative errors give an observation far below its peers a large lever (a 10× too small TTFT weighs 10×):
  // the denominator is floored at a quarter of its group's median.
  for (let grp = 0; grp < 3; grp++) {
    const vals = d.filter((_, i) => g[i] === grp).sort((p, q) => p - q);
    if (vals.length === 0) continue;
    const floor = 0.25 * (vals[vals.length >> 1] as number);
    for (let i = 0; i < n; i++) if (g[i] === grp && (d[i] as number) < floor) d[i] = floor;
  }
  return { rows: { a: Float64Array.from(a), y: Float64Array.from(y), d: Float64Array.from(d), w: Float64Array.from(w), g: Int32Array.from(g), groups: 3, n, k }, observed: Float64Array.from(d), missing };
}

function simulateAll(datasets: readonly FitDataset[], c: readonly number[]): Linearization[] {
  return datasets.map((ds) => simulateLinearized(ds.setup(c), ds.requests()));
}

/**
 * Refuses a fit whose data cannot pin a free coefficient: its term contributes (almost) nothing to the
 * observed latencies, or it moves them exactly like the other terms together.
 */
export function checkIdentifiable(rows: LinearRows, opts: FitOptions): void {
  const { n, k, a, d, w } = rows;
  const free = opts.fixed.map((f) => !f);
  // Scaled columns: each term's share of the observed value at its typical magnitude.
  const col = (c: number, i: number): number => ((a[i * k + c] as number) * (opts.typical[c] as number)) / (d[i] as number);
  const norm = new Float64Array(k);
  let wsum = 0;
  for (let i = 0; i < n; i++) wsum += w[i] as number;
  for (let c = 0; c < k; c++) {
    if (!free[c]) continue;
    let s = 0;
    for (let i = 0; i < n; i++) s += (w[i] as number) * col(c, i) ** 2;
    norm[c] = Math.sqrt(s / Math.max(wsum, 1e-300));
  }
  const needs = (name: string): string => opts.needs?.[name] ?? 'more varied requests';
  for (let c = 0; c < k; c++) {
    if (free[c] && (norm[c] as number) < 1e-4) {
      const name = opts.names[c] as string;
      throw new BlisError(FIT_UNIDENTIFIABLE, `calibrate --fit: the trace cannot identify coefficient ${name}: its term contributes nothing measurable to the observed latencies (${needs(name)}); record such requests, or keep it at its default by leaving it out of --fit-params`, { field: name });
    }
  }
  // Gram–Schmidt in the weighted, normalised column space: a column left with < 1 % of its length is a
  // combination of the others.
  const basis: Float64Array[] = [];
  const names: string[] = [];
  for (let c = 0; c < k; c++) {
    if (!free[c]) continue;
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) v[i] = (Math.sqrt(w[i] as number) * col(c, i)) / (norm[c] as number);
    const len0 = dot(v, v);
    let best = '';
    let bestProj = 0;
    for (let b = 0; b < basis.length; b++) {
      const u = basis[b] as Float64Array;
      const p = dot(v, u);
      if (Math.abs(p) > bestProj) {
        bestProj = Math.abs(p);
        best = names[b] as string;
      }
      for (let i = 0; i < n; i++) v[i]! -= p * (u[i] as number);
    }
    const left = dot(v, v);
    const name = opts.names[c] as string;
    if (left < 1e-4 * len0) {
      throw new BlisError(FIT_UNIDENTIFIABLE, `calibrate --fit: the trace cannot separate coefficient ${name} from ${best || 'the other coefficients'}: in this trace they change latencies in the same proportions (${needs(name)}); record more varied load, or fix one of them by leaving it out of --fit-params`, { field: name });
    }
    const len = Math.sqrt(left);
    for (let i = 0; i < n; i++) v[i]! /= len;
    basis.push(v);
    names.push(name);
  }
}

function dot(u: Float64Array, v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < u.length; i++) s += (u[i] as number) * (v[i] as number);
  return s;
}

/** Robust training loss at the simulated point `lins` (exact values, not the linear model). */
function trueLoss(datasets: readonly FitDataset[], lins: readonly Linearization[], c: readonly number[], scale: Float64Array): { loss: number; n: number } {
  const s = stack(datasets, lins, c, 'train');
  const r = relativeResiduals(s.rows, c);
  return { loss: huberLoss(s.rows, r, scale), n: s.rows.n };
}

/**
 * Fits the free coefficients. Throws FIT_NO_DATA when no training target has a simulated value, and
 * FIT_UNIDENTIFIABLE (naming the coefficient and what data would identify it) when the data cannot pin one.
 */
export function fitCoefficients(datasets: readonly FitDataset[], given: FitOptions): FitResult {
  if (given.prior === undefined) return { ...fitStages(datasets, given), held: [] };
  const prior = given.prior;
  // Every chosen coefficient is fitted with the prior; those whose standard error at the solution (data and
  // prior, at the residuals' robust noise level) is still more than PIN_RATIO of the prior's are not pinned by
  // the data: they go back to their prior mean and the rest are fitted again without them.
  const first = fitStages(datasets, given);
  const held: number[] = [];
  given.fixed.forEach((f, i) => {
    if (!f && !((first.standardErrors[i] as number) <= PIN_RATIO * (prior.sd[i] as number))) held.push(i);
  });
  if (held.length === 0) return { ...first, held };
  const opts: FitOptions = {
    ...given,
    fixed: given.fixed.map((f, i) => f || held.includes(i)),
    start: first.coefficients.map((v, i) => (held.includes(i) ? (prior.mean[i] as number) : v)),
  };
  if (opts.fixed.every((f) => f)) {
    const c = [...opts.start];
    return { coefficients: c, standardErrors: c.map(() => 0), iterations: first.iterations, loss: first.loss, scale: first.scale, converged: true, held };
  }
  const second = fitStages(datasets, opts);
  return { ...second, iterations: first.iterations + second.iterations, held };
}

function fitStages(datasets: readonly FitDataset[], opts: FitOptions): Omit<FitResult, 'held'> {
  const off = opts.ttftOffset;
  if (off === undefined || opts.fixed[off] === true) return gaussNewton(datasets, opts, true);
  const decodeOnly = datasets.map((d) => ({ ...d, targets: d.targets.filter((t) => t.kind !== 'ttft' && t.kind !== 'mean-ttft') }));
  let start = [...opts.start];
  if (decodeOnly.some((d) => d.targets.some((t) => t.split === 'train')) && opts.fixed.some((f, i) => !f && i !== off)) {
    const first = gaussNewton(decodeOnly, { ...opts, fixed: opts.fixed.map((f, i) => f || i === off) }, false);
    start = first.coefficients;
  }
  // The front-end delay the TTFTs ask for at this point: the median gap, observed minus simulated.
  const gaps: number[] = [];
  const lins = simulateAll(datasets, start);
  const row = new Float64Array(start.length);
  datasets.forEach((d, i) => {
    for (const t of d.targets) {
      if (t.split !== 'train' || (t.kind !== 'ttft' && t.kind !== 'mean-ttft')) continue;
      const v = evaluateTarget(t, lins[i] as Linearization, row);
      if (v !== null) gaps.push(t.y - v);
    }
  });
  if (gaps.length > 0) {
    gaps.sort((a, b) => a - b);
    start[off] = Math.max(opts.lower[off] as number, (start[off] as number) + (gaps[gaps.length >> 1] as number));
  }
  return gaussNewton(datasets, { ...opts, start }, true);
}

function gaussNewton(datasets: readonly FitDataset[], opts: FitOptions, final: boolean): Omit<FitResult, 'held'> {
  const maxIt = opts.maxIterations ?? 20;
  let c = [...opts.start];
  let lins = simulateAll(datasets, c);
  let st = stack(datasets, lins, c, 'train');
  if (st.rows.n === 0) throw new BlisError(FIT_NO_DATA, 'calibrate --fit: no observed latency could be matched to a simulated request (every training request failed, timed out or was dropped in simulation)');
  if (opts.prior === undefined) checkIdentifiable(st.rows, opts);
  let scale = robustScales(st.rows, relativeResiduals(st.rows, c));
  let loss = huberLoss(st.rows, relativeResiduals(st.rows, c), scale) + priorPenalty(opts.prior, c, opts.fixed);
  let converged = false;
  let it = 0;
  // Levenberg–Marquardt: a rejected step (the re-simulated loss went up: the schedule moved too far for the
  // linear model) is retried with stronger damping towards the current point; an accepted one relaxes it.
  let lambda = 1e-3;
  for (; it < maxIt; it++) {
    let accepted = false;
    let next = c;
    let change = 0;
    while (!accepted && lambda <= 1e6) {
      const sol = solveRobust(st.rows, c, { lower: opts.lower, fixed: opts.fixed, scale, lambda, ...(opts.prior !== undefined ? { prior: opts.prior } : {}) });
      if (!sol.ok) throw new BlisError(FIT_UNIDENTIFIABLE, 'calibrate --fit: the free coefficients cannot be separated by this trace; fix some of them (--fit-params) or record more varied load');
      change = 0;
      for (let i = 0; i < c.length; i++) change = Math.max(change, Math.abs((sol.x[i] as number) - (c[i] as number)) / Math.max(Math.abs(c[i] as number), opts.typical[i] as number));
      // The linear model promises (almost) nothing more: a simulation would cost a full pass for nothing.
      if (change < 1e-4) break;
      const trial = sol.x.map((v, i) => Math.max(opts.lower[i] as number, v));
      const tl = simulateAll(datasets, trial);
      const tLoss = trueLoss(datasets, tl, trial, scale);
      tLoss.loss += priorPenalty(opts.prior, trial, opts.fixed);
      if (tLoss.n > 0 && tLoss.loss <= loss * (1 + (opts.acceptSlack ?? 0) + 1e-12)) {
        next = trial;
        lins = tl;
        accepted = true;
        lambda = Math.max(lambda / 10, 1e-6);
      } else {
        lambda *= 10;
      }
    }
    if (!accepted) {
      converged = true;
      break;
    }
    c = next;
    st = stack(datasets, lins, c, 'train');
    // The scale follows the residuals so Huber's threshold tracks the noise level as the fit improves.
    scale = robustScales(st.rows, relativeResiduals(st.rows, c));
    loss = huberLoss(st.rows, relativeResiduals(st.rows, c), scale) + priorPenalty(opts.prior, c, opts.fixed);
    opts.onIteration?.(it + 1, c, loss / Math.max(st.rows.n, 1));
    if (change < (opts.tolerance ?? 1e-3)) {
      converged = true;
      it++;
      break;
    }
  }
  const standardErrors = standardErrorsAt(st.rows, c, opts, scale);
  opts.fixed.forEach((f, i) => {
    if (f || !final || opts.checkStandardErrors === false || opts.prior !== undefined) return;
    const rel = (standardErrors[i] as number) / Math.max(Math.abs(c[i] as number), opts.typical[i] as number);
    if (!(rel <= MAX_RELATIVE_SE)) {
      const name = opts.names[i] as string;
      const needs = opts.needs?.[name] ?? 'more varied requests';
      throw new BlisError(FIT_UNIDENTIFIABLE, `calibrate --fit: the trace does not pin coefficient ${name} (fitted ${fmt(c[i] as number)} ± ${fmt(standardErrors[i] as number)}; ${needs}); record such requests, or keep it at its default by leaving it out of --fit-params`, { field: name });
    }
  });
  return { coefficients: c, standardErrors, iterations: it, loss: loss / Math.max(st.rows.n, 1), scale, converged };
}

/** A coefficient whose standard error exceeds half its size (or typical size) is not determined by the data. */
const MAX_RELATIVE_SE = 0.5;

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3);
}

/**
 * sqrt(diag((JᵀWJ)⁻¹)) over the free coefficients, J the Jacobian of the residuals in units of their group's
 * robust scale and W the Huber weights at the solution. Infinity when the normal matrix is singular.
 */
function standardErrorsAt(rows: LinearRows, c: readonly number[], opts: FitOptions, scale: Float64Array): number[] {
  const { n, k, a, d, w, g } = rows;
  const r = relativeResiduals(rows, c);
  const m = new Float64Array(k * k);
  for (let i = 0; i < n; i++) {
    const si = scale[g[i] as number] as number;
    const u = Math.abs(r[i] as number) / si;
    const hw = u <= HUBER_DELTA ? 1 : HUBER_DELTA / u;
    const wi = ((w[i] as number) * hw) / ((d[i] as number) * si) ** 2;
    for (let p = 0; p < k; p++) for (let q = 0; q < k; q++) m[p * k + q]! += wi * (a[i * k + p] as number) * (a[i * k + q] as number);
  }
  for (let p = 0; p < k; p++) if (!opts.fixed[p]) m[p * k + p]! += priorPrecision(opts.prior, p);
  const free = opts.fixed.map((f) => !f);
  const out = new Array<number>(k).fill(0);
  for (let j = 0; j < k; j++) {
    if (!free[j]) continue;
    const e = new Float64Array(k);
    e[j] = 1;
    const x = new Float64Array(k);
    if (!choleskySolve(m, e, k, free, x)) return out.map((_, i) => (free[i] ? Infinity : 0));
    out[j] = Math.sqrt(Math.max(x[j] as number, 0));
  }
  return out;
}

/** Simulated value of every target of a split at `c` (for held-out reporting). */
export function predictTargets(datasets: readonly FitDataset[], c: readonly number[]): { target: FitTarget; dataset: string; predicted: number | null }[] {
  const lins = simulateAll(datasets, c);
  const out: { target: FitTarget; dataset: string; predicted: number | null }[] = [];
  datasets.forEach((ds, i) => {
    const row = new Float64Array(c.length);
    for (const t of ds.targets) out.push({ target: t, dataset: ds.label, predicted: evaluateTarget(t, lins[i] as Linearization, row) });
  });
  return out;
}
