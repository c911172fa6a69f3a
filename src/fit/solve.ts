/**
 * Robust linear least squares for the latency fit: minimise Σ w_i ρ((a_i·x − y_i) / (s·d_i)) over x in a box,
 * with ρ the Huber loss (quadratic within δ = 1.345 robust standard deviations, linear beyond, so an outlier
 * request pulls with a bounded force), solved by iteratively reweighted least squares.
 *
 * Hand-rolled on purpose: the systems are at most 7 unknowns by a few thousand rows, which a 30-line Cholesky
 * solves exactly and deterministically; the numerical libraries available for Node (ml-matrix, mathjs) would
 * add a dependency for a 7×7 solve and none offers bounded Huber IRLS directly.
 */

export interface LinearRows {
  /** Row-major design matrix (n × k). */
  readonly a: Float64Array;
  /** What a·x should equal (n). */
  readonly y: Float64Array;
  /** Each row's residual is divided by this (n): the observed value, so residuals are relative. */
  readonly d: Float64Array;
  /** Non-negative row weights (n), e.g. to balance TTFT against ITL rows. */
  readonly w: Float64Array;
  /**
   * Noise group of each row (n): TTFT and ITL residuals have different noise levels, so each group gets its
   * own robust scale.
   */
  readonly g: Int32Array;
  readonly groups: number;
  readonly n: number;
  readonly k: number;
}

export interface SolveOptions {
  /** Lower bound per unknown. */
  readonly lower: readonly number[];
  /** Unknowns held at their `x0` value. */
  readonly fixed: readonly boolean[];
  /** Huber threshold in robust standard deviations (default 1.345: 95 % efficiency under normal noise). */
  readonly delta?: number;
  /** Relative tolerance on x between IRLS sweeps. */
  readonly tol?: number;
  readonly maxSweeps?: number;
  /**
   * Levenberg–Marquardt damping: each free unknown's diagonal is scaled by (1 + lambda), which pulls the
   * solution towards `x0` along directions the data pins weakly (default 0: plain least squares).
   */
  readonly lambda?: number;
  /**
   * Gaussian prior per unknown (mean, standard deviation; sd Infinity or 0 = none): adds ((x − mean)/sd)² to
   * the loss, so an unknown the rows pin weakly stays near its mean instead of making the system singular.
   */
  readonly prior?: Prior;
}

export interface Prior {
  readonly mean: readonly number[];
  readonly sd: readonly number[];
}

/** Precision 1/sd² of unknown c under `prior` (0 without one). */
export function priorPrecision(prior: Prior | undefined, c: number): number {
  const sd = prior?.sd[c] ?? 0;
  return sd > 0 && Number.isFinite(sd) ? 1 / (sd * sd) : 0;
}

/** ½ Σ ((x − mean)/sd)² over the unknowns that are not fixed. */
export function priorPenalty(prior: Prior | undefined, x: ArrayLike<number>, fixed: readonly boolean[]): number {
  if (prior === undefined) return 0;
  let s = 0;
  for (let c = 0; c < fixed.length; c++) {
    if (fixed[c]) continue;
    const p = priorPrecision(prior, c);
    s += 0.5 * p * ((x[c] as number) - (prior.mean[c] as number)) ** 2;
  }
  return s;
}

export const HUBER_DELTA = 1.345;

/** Relative residuals (a·x − y)/d. */
export function relativeResiduals(rows: LinearRows, x: ArrayLike<number>, out = new Float64Array(rows.n)): Float64Array {
  const { a, y, d, n, k } = rows;
  for (let i = 0; i < n; i++) {
    let p = 0;
    for (let c = 0; c < k; c++) p += (a[i * k + c] as number) * (x[c] as number);
    out[i] = (p - (y[i] as number)) / (d[i] as number);
  }
  return out;
}

/** Robust scale of each noise group. */
export function robustScales(rows: LinearRows, r: Float64Array): Float64Array {
  const out = new Float64Array(rows.groups);
  for (let g = 0; g < rows.groups; g++) out[g] = robustScale(r, rows.w, (i) => rows.g[i] === g);
  return out;
}

/** 1.4826 × the weighted median absolute deviation around 0 (residuals are centred by the model). */
export function robustScale(r: Float64Array, w: Float64Array, keep: (i: number) => boolean = () => true): number {
  const idx: number[] = [];
  for (let i = 0; i < r.length; i++) if ((w[i] as number) > 0 && keep(i)) idx.push(i);
  if (idx.length === 0) return 1;
  idx.sort((p, q) => Math.abs(r[p] as number) - Math.abs(r[q] as number) || p - q);
  let total = 0;
  for (const i of idx) total += w[i] as number;
  let acc = 0;
  for (const i of idx) {
    acc += w[i] as number;
    if (acc >= total / 2) return Math.max(1.4826 * Math.abs(r[i] as number), 1e-3);
  }
  return 1;
}

/** Huber loss of relative residuals at the groups' scales. */
export function huberLoss(rows: LinearRows, r: Float64Array, s: Float64Array, delta = HUBER_DELTA): number {
  const w = rows.w;
  let loss = 0;
  for (let i = 0; i < r.length; i++) {
    const u = Math.abs(r[i] as number) / (s[rows.g[i] as number] as number);
    loss += (w[i] as number) * (u <= delta ? 0.5 * u * u : delta * (u - 0.5 * delta));
  }
  return loss;
}

/**
 * Solves the symmetric positive (semi-)definite system m·x = b in place by Cholesky on the `free` unknowns;
 * returns false when a pivot vanishes (the unknowns are not separable).
 */
export function choleskySolve(m: Float64Array, b: Float64Array, k: number, free: readonly boolean[], x: Float64Array): boolean {
  const idx: number[] = [];
  for (let c = 0; c < k; c++) if (free[c]) idx.push(c);
  const f = idx.length;
  const l = new Float64Array(f * f);
  for (let i = 0; i < f; i++) {
    for (let j = 0; j <= i; j++) {
      let s = m[(idx[i] as number) * k + (idx[j] as number)] as number;
      for (let p = 0; p < j; p++) s -= (l[i * f + p] as number) * (l[j * f + p] as number);
      if (i === j) {
        if (!(s > 1e-12 * Math.abs(m[(idx[i] as number) * k + (idx[i] as number)] as number)) || !(s > 0)) return false;
        l[i * f + i] = Math.sqrt(s);
      } else l[i * f + j] = s / (l[j * f + j] as number);
    }
  }
  const z = new Float64Array(f);
  for (let i = 0; i < f; i++) {
    let s = b[idx[i] as number] as number;
    for (let p = 0; p < i; p++) s -= (l[i * f + p] as number) * (z[p] as number);
    z[i] = s / (l[i * f + i] as number);
  }
  for (let i = f - 1; i >= 0; i--) {
    let s = z[i] as number;
    for (let p = i + 1; p < f; p++) s -= (l[p * f + i] as number) * (x[idx[p] as number] as number);
    x[idx[i] as number] = s / (l[i * f + i] as number);
  }
  return true;
}

export interface SolveResult {
  readonly x: number[];
  readonly scale: Float64Array;
  readonly sweeps: number;
  /** False when the free unknowns could not be separated (a zero pivot). */
  readonly ok: boolean;
}

/**
 * Huber IRLS in the box `x >= lower` (active set: an unknown that would cross its bound is pinned there and the
 * rest re-solved). Rows are divided by `d` so every residual is relative. `x0` gives the start and the value of
 * fixed unknowns. `scale` fixes the robust scale (default: from the residuals at `x0`).
 */
export function solveRobust(rows: LinearRows, x0: readonly number[], opts: SolveOptions & { readonly scale?: Float64Array }): SolveResult {
  const { n, k, a, y, d: den, w, g } = rows;
  const delta = opts.delta ?? HUBER_DELTA;
  const tol = opts.tol ?? 1e-7;
  const maxSweeps = opts.maxSweeps ?? 100;
  const x = Float64Array.from(x0);
  const r = new Float64Array(n);
  relativeResiduals(rows, x, r);
  // A given scale stays (the caller compares losses at it); otherwise it is re-estimated every sweep, as
  // IRLS does, so a bad start does not leave every residual inside Huber's quadratic zone.
  let scale = opts.scale ?? robustScales(rows, r);
  const m = new Float64Array(k * k);
  const b = new Float64Array(k);
  const trial = new Float64Array(k);
  let sweeps = 0;
  let ok = true;
  for (; sweeps < maxSweeps; sweeps++) {
    relativeResiduals(rows, x, r);
    if (opts.scale === undefined && sweeps > 0) scale = robustScales(rows, r);
    // Without a given scale the first sweep is plain least squares: its residuals give a sane scale to start
    // Huber from (a far-off start would put every row in the linear zone and stall the iteration).
    const plainSweep = opts.scale === undefined && sweeps === 0;
    m.fill(0);
    b.fill(0);
    for (let i = 0; i < n; i++) {
      const si = scale[g[i] as number] as number;
      const u = Math.abs(r[i] as number) / si;
      const hw = plainSweep || u <= delta ? 1 : delta / u;
      const di = (den[i] as number) * si;
      const wi = ((w[i] as number) * hw) / (di * di);
      if (wi === 0) continue;
      // Fixed unknowns move to the right-hand side.
      let rhs = y[i] as number;
      for (let c = 0; c < k; c++) if (opts.fixed[c]) rhs -= (a[i * k + c] as number) * (x[c] as number);
      for (let c = 0; c < k; c++) {
        if (opts.fixed[c]) continue;
        const ac = a[i * k + c] as number;
        b[c]! += wi * ac * rhs;
        for (let d = 0; d <= c; d++) if (!opts.fixed[d]) m[c * k + d]! += wi * ac * (a[i * k + d] as number);
      }
    }
    for (let c = 0; c < k; c++) for (let d = 0; d < c; d++) m[d * k + c] = m[c * k + d] as number;
    for (let c = 0; c < k; c++) {
      const p = opts.fixed[c] ? 0 : priorPrecision(opts.prior, c);
      if (p === 0) continue;
      m[c * k + c]! += p;
      b[c]! += p * (opts.prior!.mean[c] as number);
    }
    const lambda = opts.lambda ?? 0;
    if (lambda > 0) {
      for (let c = 0; c < k; c++) {
        if (opts.fixed[c]) continue;
        const diag = m[c * k + c] as number;
        m[c * k + c] = diag * (1 + lambda);
        b[c]! += lambda * diag * (x0[c] as number);
      }
    }
    const free = opts.fixed.map((f) => !f);
    const pinned = new Array<boolean>(k).fill(false);
    let solved = false;
    for (let attempt = 0; attempt <= k; attempt++) {
      trial.set(x);
      const active = free.map((f, c) => f && !pinned[c]);
      if (!choleskySolveReduced(m, b, k, active, pinned, opts.lower, trial)) {
        ok = false;
        break;
      }
      let crossed = -1;
      for (let c = 0; c < k; c++) if (active[c] && (trial[c] as number) < (opts.lower[c] as number)) crossed = crossed < 0 || (trial[c] as number) < (trial[crossed] as number) ? c : crossed;
      if (crossed < 0) {
        solved = true;
        break;
      }
      pinned[crossed] = true;
    }
    if (!ok || !solved) break;
    let change = 0;
    for (let c = 0; c < k; c++) change = Math.max(change, Math.abs((trial[c] as number) - (x[c] as number)) / Math.max(Math.abs(x[c] as number), 1e-9, Math.abs(trial[c] as number)));
    x.set(trial);
    if (change < tol) {
      sweeps++;
      break;
    }
  }
  return { x: Array.from(x), scale, sweeps, ok };
}

/** Cholesky on the active unknowns with pinned ones at their lower bound moved to the right-hand side. */
function choleskySolveReduced(m: Float64Array, b: Float64Array, k: number, active: readonly boolean[], pinned: readonly boolean[], lower: readonly number[], x: Float64Array): boolean {
  const rhs = Float64Array.from(b);
  for (let c = 0; c < k; c++) {
    if (!pinned[c]) continue;
    x[c] = lower[c] as number;
    for (let d = 0; d < k; d++) if (active[d]) rhs[d]! -= (m[d * k + c] as number) * (lower[c] as number);
  }
  if (!active.some((v) => v)) return true;
  return choleskySolve(m, rhs, k, active, x);
}
