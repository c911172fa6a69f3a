/**
 * Time-warping a client's arrival process: operational time τ (where the client's own arrival sampler runs at
 * its nominal rate) → real time t.
 *
 * The real-time rate multiplier is the product of the load profile m(t) (profile.ts) and a piecewise-constant
 * factor c(t) from the client's misbehavior (a constant rapid-fire or background factor, or a bursty tenant's
 * on/off schedule). With W(t) = ∫₀ᵗ c·m, an arrival at operational time τ lands at the earliest t with W(t) = τ.
 * Where c·m is 0 no arrival lands; where it is 2, arrivals come twice as often; a process with no profile and
 * c ≡ 1 is left exactly as it was (t = τ).
 *
 * Warping draws no random numbers of its own, so the sequence of sampled gaps, lengths and tokens of a client is
 * unchanged by a profile: only the instants move.
 */
import type { RateProfile } from './profile.js';

/** A stretch `[start, end)` of real time (µs) with a constant factor. */
export interface FactorPiece {
  readonly start: number;
  readonly end: number;
  readonly factor: number;
}

/** Consecutive factor pieces covering [0, ∞), produced on demand (a bursty schedule is unbounded). */
export interface FactorSource {
  next(): FactorPiece;
}

/** c(t) ≡ factor. */
export class ConstantFactor implements FactorSource {
  constructor(private readonly factor: number) {}
  next(): FactorPiece {
    return { start: 0, end: Number.POSITIVE_INFINITY, factor: this.factor };
  }
}

/** Maps non-decreasing operational times to real times (µs, as floats). */
export class TimeWarp {
  private piece: FactorPiece;
  /** Operational time at the current piece's start. */
  private opStart = 0;
  /** Operational length of the current piece: factor × (Λ(end) − Λ(start)). */
  private opLen: number;

  /** Λ(∞): finite when the profile's tail multiplier is 0. */
  private readonly lambdaTotal: number;

  constructor(
    private readonly profile: RateProfile | null,
    private readonly factors: FactorSource,
  ) {
    this.lambdaTotal = this.lambda(Number.POSITIVE_INFINITY);
    this.piece = factors.next();
    this.opLen = this.lengthOf(this.piece);
  }

  private lambda(t: number): number {
    return this.profile === null ? t : this.profile.cumulative(t);
  }

  private lambdaInverse(y: number): number {
    return this.profile === null ? y : this.profile.inverse(y);
  }

  private lengthOf(p: FactorPiece): number {
    // 0 × ∞ would be NaN for a zero factor over an unbounded piece; such a piece carries no arrivals.
    if (p.factor === 0) return 0;
    return p.factor * (this.lambda(p.end) - this.lambda(p.start));
  }

  /** Real time of operational time `tau`; Infinity when the warped process never reaches it. Call with non-decreasing τ. */
  realTime(tau: number): number {
    while (tau > this.opStart + this.opLen) {
      if (this.piece.end === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
      // A profile that ends in a zero multiplier leaves no operational time after its last positive stretch;
      // without this stop an unbounded factor schedule (bursty) would be walked forever.
      if (this.lambda(this.piece.end) >= this.lambdaTotal) return Number.POSITIVE_INFINITY;
      this.opStart += this.opLen;
      this.piece = this.factors.next();
      this.opLen = this.lengthOf(this.piece);
    }
    const p = this.piece;
    if (p.factor === 0) return p.start;
    const t = this.lambdaInverse(this.lambda(p.start) + (tau - this.opStart) / p.factor);
    return Math.min(Math.max(t, p.start), p.end);
  }
}

/**
 * The integer tick of a warped arrival: the first whole µs at or after it (never before 1 µs, as no open-loop
 * arrival is at time 0). A small tolerance absorbs float error, so an unwarped integer τ maps back to itself.
 */
export function toTick(t: number): number {
  if (t === Number.POSITIVE_INFINITY) return t;
  const tick = Math.ceil(t - 1e-6);
  return tick < 1 ? 1 : tick;
}
