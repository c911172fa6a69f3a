/**
 * A load profile as a function of time: the rate multiplier m(t), its integral Λ(t) = ∫₀ᵗ m, and Λ's inverse.
 *
 * Arrivals are shaped by time-warping (see warp.ts): a client's own arrival process runs in "operational time"
 * τ, and each arrival is placed at the real time t with Λ(t) = τ. The instantaneous rate at t is then the base
 * rate times m(t), while every random draw stays exactly what it would have been without the profile — only the
 * arrival instants move. That is why a profile needs Λ⁻¹, computed here piece by piece: closed forms for
 * constant and ramp pieces, a bracketed Newton iteration for the cosine (diurnal) and exponential (spike decay)
 * ones. Everything is IEEE double arithmetic plus Math.sin/cos/exp/expm1, which V8 computes with its own port
 * of fdlibm (not the platform libm), so a profile warps identically on every machine.
 *
 * All times here are µs (floats); the YAML's seconds are converted on construction.
 */
import type { LoadProfileSpec, LoadSegment } from './types.js';
import { DIURNAL_DEFAULT_PERIOD_S, SPIKE_DEFAULT_BASE } from './types.js';

const US_PER_S = 1e6;

/** One stretch `[start, end)` of the profile with a simple multiplier shape. */
interface Piece {
  readonly start: number;
  /** Infinity for the tail after the last segment. */
  readonly end: number;
  rate(x: number): number;
  /** ∫ m from `start` to `x` (x within the piece). */
  integral(x: number): number;
  /** The earliest x in [start, end] with integral(x) = y (0 <= y <= the piece's total). */
  inverse(y: number): number;
}

class ConstantPiece implements Piece {
  constructor(
    readonly start: number,
    readonly end: number,
    private readonly m: number,
  ) {}
  rate(): number {
    return this.m;
  }
  integral(x: number): number {
    return this.m === 0 ? 0 : this.m * (x - this.start);
  }
  inverse(y: number): number {
    return this.m === 0 ? this.start : this.start + y / this.m;
  }
}

/** Linear from `a` at start to `b` at end. */
class RampPiece implements Piece {
  private readonly slope: number;
  constructor(
    readonly start: number,
    readonly end: number,
    private readonly a: number,
    b: number,
  ) {
    this.slope = (b - a) / (end - start);
  }
  rate(x: number): number {
    return this.a + this.slope * (x - this.start);
  }
  integral(x: number): number {
    const u = x - this.start;
    return this.a * u + 0.5 * this.slope * u * u;
  }
  inverse(y: number): number {
    if (y <= 0) return this.start;
    // Root of (slope/2)u² + a·u − y = 0 written as 2y / (a + √(a² + 2·slope·y)), which stays accurate when the
    // slope is tiny (no cancellation) and is exact for a flat ramp.
    const disc = Math.max(0, this.a * this.a + 2 * this.slope * y);
    const u = (2 * y) / (this.a + Math.sqrt(disc));
    return Math.min(this.end, this.start + u);
  }
}

/** trough + (peak − trough)·(1 + cos(2π(x − peakAt)/period))/2: the shape of the reference's cohort diurnal. */
class DiurnalPiece implements Piece {
  private readonly omega: number;
  private readonly mean: number;
  private readonly amp: number;
  private readonly sinStart: number;
  constructor(
    readonly start: number,
    readonly end: number,
    trough: number,
    peak: number,
    period: number,
    private readonly peakAt: number,
  ) {
    this.omega = (2 * Math.PI) / period;
    this.mean = (peak + trough) / 2;
    this.amp = (peak - trough) / 2;
    this.sinStart = Math.sin(this.omega * (start - peakAt));
  }
  rate(x: number): number {
    return this.mean + this.amp * Math.cos(this.omega * (x - this.peakAt));
  }
  integral(x: number): number {
    return this.mean * (x - this.start) + (this.amp / this.omega) * (Math.sin(this.omega * (x - this.peakAt)) - this.sinStart);
  }
  inverse(y: number): number {
    return solveMonotone(this, y);
  }
}

/** base + (peak − base)·e^(−(x − start)/tau): a spike that decays back towards the base multiplier. */
class DecayPiece implements Piece {
  constructor(
    readonly start: number,
    readonly end: number,
    private readonly base: number,
    private readonly peak: number,
    private readonly tau: number,
  ) {}
  rate(x: number): number {
    return this.base + (this.peak - this.base) * Math.exp(-(x - this.start) / this.tau);
  }
  integral(x: number): number {
    const u = x - this.start;
    return this.base * u + (this.peak - this.base) * this.tau * -Math.expm1(-u / this.tau);
  }
  inverse(y: number): number {
    return solveMonotone(this, y);
  }
}

/**
 * Inverts a piece's non-decreasing integral by Newton steps kept inside a shrinking bracket (bisecting whenever a
 * step would leave it). Converges in a handful of iterations for smooth multipliers; the iteration cap only
 * guards against pathological inputs.
 */
function solveMonotone(p: Piece, y: number): number {
  let lo = p.start;
  let hi = p.end;
  if (y <= 0) return lo;
  const total = p.integral(hi);
  if (y >= total) return hi;
  let x = lo + (hi - lo) * (y / total);
  for (let i = 0; i < 200; i++) {
    const f = p.integral(x) - y;
    if (f === 0) return x;
    if (f > 0) hi = x;
    else lo = x;
    const d = p.rate(x);
    let next = d > 0 ? x - f / d : Number.NaN;
    if (!(next > lo && next < hi)) next = lo + (hi - lo) / 2;
    if (Math.abs(next - x) < 1e-7 || hi - lo < 1e-6) return next;
    x = next;
  }
  return x;
}

function piecesOfSegment(s: LoadSegment): Piece[] {
  const start = s.startS * US_PER_S;
  const end = s.endS * US_PER_S;
  switch (s.kind) {
    case 'constant':
      return [new ConstantPiece(start, end, s.multiplier ?? 1)];
    case 'step': {
      const levels = s.levels ?? [1];
      const width = (end - start) / levels.length;
      return levels.map((m, i) => new ConstantPiece(start + i * width, i === levels.length - 1 ? end : start + (i + 1) * width, m));
    }
    case 'ramp':
      return [new RampPiece(start, end, s.from ?? 1, s.to ?? 1)];
    case 'diurnal': {
      const period = (s.periodS ?? DIURNAL_DEFAULT_PERIOD_S) * US_PER_S;
      const peak = s.peak ?? 1;
      return [new DiurnalPiece(start, end, s.trough ?? peak, peak, period, (s.peakAtS ?? 0) * US_PER_S)];
    }
    case 'spike': {
      const base = s.base ?? SPIKE_DEFAULT_BASE;
      const peak = s.peak ?? base;
      const at = Math.max(start, (s.atS ?? s.startS) * US_PER_S);
      const stop = s.durationS === null ? end : Math.min(end, at + s.durationS * US_PER_S);
      const out: Piece[] = [];
      if (at > start) out.push(new ConstantPiece(start, at, base));
      const decay = s.decayS ?? 0;
      if (stop > at) out.push(decay > 0 ? new DecayPiece(at, stop, base, peak, decay * US_PER_S) : new ConstantPiece(at, stop, peak));
      if (end > stop) out.push(new ConstantPiece(stop, end, base));
      return out;
    }
    default:
      throw new RangeError(`unknown load segment kind "${s.kind}"`);
  }
}

/**
 * m(t), Λ(t) and Λ⁻¹ of a validated profile (segments sorted and non-overlapping). Gaps between segments,
 * the time before the first and after the last take `default_multiplier`.
 */
export class RateProfile {
  private readonly pieces: Piece[] = [];
  /** Λ at each piece's start. */
  private readonly cum: number[] = [];

  constructor(spec: LoadProfileSpec) {
    const segments = [...spec.segments].sort((a, b) => a.startS - b.startS);
    let cursor = 0;
    const add = (p: Piece): void => {
      if (!(p.end > p.start)) return;
      const prev = this.pieces[this.pieces.length - 1];
      this.cum.push(prev === undefined ? 0 : this.cum[this.cum.length - 1]! + prev.integral(prev.end));
      this.pieces.push(p);
    };
    for (const s of segments) {
      const start = s.startS * US_PER_S;
      if (start > cursor) add(new ConstantPiece(cursor, start, spec.defaultMultiplier));
      for (const p of piecesOfSegment(s)) add(p);
      cursor = Math.max(cursor, s.endS * US_PER_S);
    }
    add(new ConstantPiece(cursor, Number.POSITIVE_INFINITY, spec.defaultMultiplier));
  }

  private indexAt(t: number): number {
    let lo = 0;
    let hi = this.pieces.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.pieces[mid]!.start <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The multiplier m(t) at real time t (µs). */
  multiplierAt(t: number): number {
    return this.pieces[this.indexAt(t)]!.rate(t);
  }

  /** Λ(t) = ∫₀ᵗ m (µs); Infinity at t = Infinity unless the tail multiplier is 0. */
  cumulative(t: number): number {
    const i = this.indexAt(t);
    const p = this.pieces[i]!;
    if (t === Number.POSITIVE_INFINITY) return p.rate(t) === 0 ? this.cum[i]! : Number.POSITIVE_INFINITY;
    return this.cum[i]! + p.integral(t);
  }

  /** The earliest t with Λ(t) >= y, or Infinity when Λ never gets there (a zero tail). */
  inverse(y: number): number {
    // The first piece whose end value reaches y.
    let lo = 0;
    let hi = this.pieces.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.endValue(mid) >= y) hi = mid;
      else lo = mid + 1;
    }
    if (this.endValue(lo) < y) return Number.POSITIVE_INFINITY;
    return this.pieces[lo]!.inverse(y - this.cum[lo]!);
  }

  private endValue(i: number): number {
    const next = this.cum[i + 1];
    if (next !== undefined) return next;
    const tail = this.pieces[i]!;
    return tail.rate(tail.start) === 0 ? this.cum[i]! : Number.POSITIVE_INFINITY;
  }
}
