/**
 * Misbehaving tenants, as building blocks for shaping.ts:
 *
 * - bursty: an on/off schedule with Pareto-distributed period lengths (heavy-tailed, as measured for real
 *   bursty sources), scaling the client's rate by `burst_rate_multiplier` while on and `off_rate_multiplier`
 *   while off;
 * - abusive: oversized requests (input/output multipliers or a fixed huge prompt, for all requests or a
 *   `fraction` of them) and rapid fire (a constant rate multiplier);
 * - adversarial: synchronised bursts — every client of a group fires `burst_size` requests at the same instants
 *   `start_s + k·period_s`, each request jittered by up to `jitter_ms`.
 *
 * Every random draw here comes from the client's misbehavior stream (one seed drawn from the client's own
 * stream), never from the workload stream, so other clients are unaffected.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import { goPow, goRound } from '../../gocompat/go-math.js';
import type { FactorPiece, FactorSource } from './warp.js';
import type { MisbehaviorSpec } from './types.js';
import { MISBEHAVIOR_DEFAULTS } from './types.js';

const US_PER_S = 1e6;

/**
 * A Pareto(alpha) draw with the given mean: scale x_m = mean·(α−1)/α, value x_m / U^(1/α) with U in (0, 1]
 * (1 − Float64 excludes 0, which would give an infinite period).
 */
export function paretoWithMean(rng: GoRand, mean: number, alpha: number): number {
  const xm = (mean * (alpha - 1)) / alpha;
  const u = 1 - rng.float64();
  return xm / goPow(u, 1 / alpha);
}

export interface OnOffParams {
  readonly onFactor: number;
  readonly offFactor: number;
  readonly meanOnUs: number;
  readonly meanOffUs: number;
  readonly alpha: number;
}

export function onOffParams(m: MisbehaviorSpec): OnOffParams {
  return {
    onFactor: m.burstRateMultiplier ?? 1,
    offFactor: m.offRateMultiplier ?? MISBEHAVIOR_DEFAULTS.offRateMultiplier,
    meanOnUs: (m.meanOnS ?? 1) * US_PER_S,
    meanOffUs: (m.meanOffS ?? 1) * US_PER_S,
    alpha: m.paretoAlpha ?? MISBEHAVIOR_DEFAULTS.paretoAlpha,
  };
}

/**
 * Alternating on/off pieces from time 0. The first phase is "on" with the long-run on fraction as probability
 * (one uniform), so the schedule does not favour either phase at t = 0; then each period's length is one
 * Pareto draw.
 */
export class OnOffSchedule implements FactorSource {
  private cursor = 0;
  private on: boolean | null = null;

  constructor(
    private readonly rng: GoRand,
    private readonly p: OnOffParams,
  ) {}

  next(): FactorPiece {
    if (this.on === null) this.on = this.rng.float64() < this.p.meanOnUs / (this.p.meanOnUs + this.p.meanOffUs);
    else this.on = !this.on;
    const length = paretoWithMean(this.rng, this.on ? this.p.meanOnUs : this.p.meanOffUs, this.p.alpha);
    const piece = { start: this.cursor, end: this.cursor + length, factor: this.on ? this.p.onFactor : this.p.offFactor };
    this.cursor = piece.end;
    return piece;
  }
}

export interface BurstParams {
  /** First burst instant (µs). */
  readonly startUs: number;
  readonly periodUs: number;
  readonly size: number;
  readonly jitterUs: number;
}

/** Instants are integers so every client of a group computes exactly the same ones. */
export function burstParams(m: MisbehaviorSpec): BurstParams {
  const periodUs = Math.round((m.periodS ?? 1) * US_PER_S);
  return {
    startUs: m.startS === null ? periodUs : Math.round(m.startS * US_PER_S),
    periodUs,
    size: m.burstSize ?? 1,
    jitterUs: (m.jitterMs ?? MISBEHAVIOR_DEFAULTS.jitterMs) * 1000,
  };
}

/** The k-th synchronised instant (µs) of a group. */
export function burstInstant(p: BurstParams, k: number): number {
  return p.startUs + k * p.periodUs;
}

/**
 * The requests of one client's bursts in time order: per instant, `size` offsets of floor(U·jitter) µs, drawn
 * together and sorted (jitter is validated to be shorter than the period, so bursts never interleave).
 */
export class BurstStream {
  private k = 0;
  private queue: number[] = [];
  private head = 0;

  constructor(
    private readonly rng: GoRand,
    private readonly p: BurstParams,
  ) {}

  /** The next burst arrival without consuming it. */
  peek(): number {
    if (this.head >= this.queue.length) this.refill();
    return this.queue[this.head]!;
  }

  take(): number {
    const t = this.peek();
    this.head++;
    return t;
  }

  private refill(): void {
    const instant = burstInstant(this.p, this.k++);
    const offsets: number[] = [];
    for (let i = 0; i < this.p.size; i++) offsets.push(this.p.jitterUs > 0 ? Math.floor(this.rng.float64() * this.p.jitterUs) : 0);
    offsets.sort((a, b) => a - b);
    this.queue = offsets.map((o) => instant + o);
    this.head = 0;
  }
}

/** Scales (or replaces) sampled lengths for the abusive share of a client's requests. */
export class AbusiveLengths {
  private readonly inputMultiplier: number;
  private readonly outputMultiplier: number;
  private readonly fixedInput: number;
  private readonly fraction: number;

  constructor(
    private readonly rng: GoRand,
    m: MisbehaviorSpec,
  ) {
    this.inputMultiplier = m.inputMultiplier ?? MISBEHAVIOR_DEFAULTS.inputMultiplier;
    this.outputMultiplier = m.outputMultiplier ?? MISBEHAVIOR_DEFAULTS.outputMultiplier;
    this.fixedInput = m.fixedInputTokens ?? 0;
    this.fraction = m.fraction ?? MISBEHAVIOR_DEFAULTS.fraction;
  }

  /** [input, output] after abuse; one uniform per request decides membership when fraction < 1. */
  apply(input: number, output: number): [number, number] {
    if (this.fraction < 1 && !(this.rng.float64() < this.fraction)) return [input, output];
    const inLen = this.fixedInput > 0 ? this.fixedInput : Math.max(1, goRound(input * this.inputMultiplier));
    const outLen = Math.max(1, goRound(output * this.outputMultiplier));
    return [inLen, outLen];
  }
}
