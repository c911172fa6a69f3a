/**
 * Inter-arrival-time samplers (µs) for the spec's arrival processes.
 *
 * Rates are requests per microsecond. Every sampler truncates its real-valued draw toward zero and lifts
 * results below 1 µs to 1, so arrivals of one client strictly increase. The draw order inside each sampler
 * (e.g. gamma's uniform before its recursive draw for shape < 1) follows the reference exactly.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import { goLog } from '../../gocompat/go-rand.js';
import { goInt64, goPow } from '../../gocompat/go-math.js';
import { goGamma } from '../../gocompat/go-math-special.js';
import type { ArrivalSampler, ArrivalSpec } from './types.js';

export type { ArrivalSampler } from './types.js';

/** The arrival processes the reference accepts. */
export const ARRIVAL_PROCESSES = ['poisson', 'gamma', 'weibull', 'constant'] as const;

/** Rates below this are raised to it, so 1/rate stays finite. */
export const MIN_RATE_PER_US = 1e-15;

function atLeastOne(iat: number): number {
  return iat < 1 ? 1 : iat;
}

/** Exponential gaps (coefficient of variation 1). */
export class PoissonSampler implements ArrivalSampler {
  constructor(readonly ratePerUs: number) {}

  sampleIat(rng: GoRand): number {
    return atLeastOne(goInt64(rng.expFloat64() / this.ratePerUs));
  }
}

/** Gamma-distributed gaps; shape = 1/cv² (cv > 1 is bursty), scale in µs. */
export class GammaSampler implements ArrivalSampler {
  constructor(
    readonly shape: number,
    readonly scale: number,
  ) {}

  sampleIat(rng: GoRand): number {
    return atLeastOne(goInt64(gammaRand(rng, this.shape, this.scale)));
  }
}

/**
 * Marsaglia–Tsang gamma variate. For shape < 1 it boosts the shape by one and multiplies by U^(1/shape), with
 * U drawn before the boosted variate.
 */
export function gammaRand(rng: GoRand, shape: number, scale: number): number {
  if (shape < 1.0) {
    const u = rng.float64();
    return gammaRand(rng, shape + 1.0, scale) * goPow(u, 1.0 / shape);
  }
  const d = shape - 1.0 / 3.0;
  const c = 1.0 / Math.sqrt(9.0 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = rng.normFloat64();
      v = 1.0 + c * x;
    } while (!(v > 0));
    v = v * v * v;
    const u = rng.float64();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v * scale;
    if (goLog(u) < 0.5 * x * x + d * (1.0 - v + goLog(v))) return d * v * scale;
  }
}

/** Weibull gaps by inverse CDF: scale · (−ln U)^(1/shape). */
export class WeibullSampler implements ArrivalSampler {
  constructor(
    readonly shape: number,
    readonly scale: number,
  ) {}

  sampleIat(rng: GoRand): number {
    let u = rng.float64();
    if (u === 0) u = Number.MIN_VALUE;
    return atLeastOne(goInt64(this.scale * goPow(-goLog(u), 1.0 / this.shape)));
  }
}

/** Fixed gaps; draws nothing from the RNG. */
export class ConstantArrivalSampler implements ArrivalSampler {
  constructor(readonly iatUs: number) {}

  sampleIat(): number {
    return this.iatUs;
  }
}

/** Weibull's coefficient of variation for shape k: sqrt(Γ(1+2/k)/Γ(1+1/k)² − 1). */
export function weibullCv(k: number): number {
  const g1 = goGamma(1.0 + 1.0 / k);
  const g2 = goGamma(1.0 + 2.0 / k);
  return Math.sqrt(g2 / (g1 * g1) - 1.0);
}

/**
 * The Weibull shape whose CV is `targetCv`, by bisection on [0.1, 100] (CV falls as k grows). Stops at the first
 * midpoint within 0.001 of the target, or after 100 halvings (then the reference logs a warning and uses the
 * final midpoint).
 */
export function weibullShapeFromCv(targetCv: number): number {
  let lo = 0.1;
  let hi = 100.0;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2.0;
    const cv = weibullCv(mid);
    if (Math.abs(cv - targetCv) < 0.001) return mid;
    if (cv > targetCv) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2.0;
}

/** Explicit fitted parameters win when both are present and positive; otherwise the CV (default 1) is used. */
function explicitParams(spec: ArrivalSpec): [number, number] | null {
  if (spec.shape === null || spec.scale === null) return null;
  if (spec.shape <= 0 || spec.scale <= 0) return null;
  return [spec.shape, spec.scale];
}

function cvOf(spec: ArrivalSpec): number {
  const cv = spec.cv ?? 1.0;
  return cv <= 0 ? 1.0 : cv;
}

/**
 * Builds the sampler for `spec` at `ratePerUs` requests/µs (floored at {@link MIN_RATE_PER_US}). Unknown
 * processes fall back to Poisson, as in the reference (validation rejects them first). `honourBurstyGamma`
 * (--semantics corrected) keeps a gamma process with CV > 10 gamma instead of silently substituting Poisson:
 * the boosted Marsaglia–Tsang draw stays valid for tiny shapes (a factor U^(1/shape) that underflows is a gap
 * below 1 µs, lifted to 1 like any other).
 */
export function newArrivalSampler(spec: ArrivalSpec, ratePerUs: number, honourBurstyGamma = false): ArrivalSampler {
  const rate = ratePerUs < MIN_RATE_PER_US ? MIN_RATE_PER_US : ratePerUs;
  switch (spec.process) {
    case 'constant':
      return new ConstantArrivalSampler(atLeastOne(goInt64(1.0 / rate)));
    case 'gamma': {
      const explicit = explicitParams(spec);
      // Explicit parameters encode the mean gap themselves; the rate is ignored then.
      if (explicit !== null) return new GammaSampler(explicit[0], explicit[1]);
      const cv = cvOf(spec);
      const shape = 1.0 / (cv * cv);
      const scale = (1.0 / rate) * cv * cv;
      // Extremely bursty CVs make Marsaglia–Tsang's boost degenerate; the reference switches to Poisson.
      if (shape < 0.01 && !honourBurstyGamma) return new PoissonSampler(rate);
      return new GammaSampler(shape, scale);
    }
    case 'weibull': {
      const explicit = explicitParams(spec);
      if (explicit !== null) return new WeibullSampler(explicit[0], explicit[1]);
      const k = weibullShapeFromCv(cvOf(spec));
      return new WeibullSampler(k, 1.0 / rate / goGamma(1.0 + 1.0 / k));
    }
    default:
      return new PoissonSampler(rate);
  }
}
