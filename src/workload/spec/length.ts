/**
 * Token-length samplers for `input_distribution`, `output_distribution` and the multimodal distributions.
 *
 * Each sampler consumes the client's GoRand exactly as the reference's does (same draws, same order, same
 * float arithmetic), because every later request of the client depends on how many values came before. Note
 * the draw-free shortcuts (gaussian with min == max, empirical with fewer than two bins, constant): they are part
 * of the stream's shape, not optimisations.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import { goExp, goInt64, goPow, goRound } from '../../gocompat/go-math.js';
import type { DistSpec } from './types.js';
import { showValue } from '../../domain/errors.js';

export interface LengthSampler {
  /** One length (>= 1 for every sampler defined here). */
  sample(rng: GoRand): number;
}

/** A distribution that cannot be built; `param` names the offending parameter when there is one. */
export class DistributionError extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly fix: string,
  ) {
    super(message);
    this.name = 'DistributionError';
  }
}

/** The distribution types the reference accepts. */
export const DIST_TYPES = ['gaussian', 'exponential', 'pareto_lognormal', 'lognormal', 'empirical', 'constant'] as const;

export class GaussianSampler implements LengthSampler {
  constructor(
    readonly mean: number,
    readonly stdDev: number,
    readonly min: number,
    readonly max: number,
  ) {}

  sample(rng: GoRand): number {
    if (this.min === this.max) return this.min;
    const v = rng.normFloat64() * this.stdDev + this.mean;
    const r = goInt64(goRound(Math.min(this.max, Math.max(this.min, v))));
    return r < 1 ? 1 : r;
  }
}

/** Applies the optional integer bounds (0 = unbounded) after rounding, then the floor of 1. */
function bound(result: number, min: number, max: number): number {
  let r = result;
  if (min > 0 && r < min) r = min;
  if (max > 0 && r > max) r = max;
  return r < 1 ? 1 : r;
}

export class ExponentialSampler implements LengthSampler {
  constructor(
    readonly mean: number,
    readonly min: number,
    readonly max: number,
  ) {}

  sample(rng: GoRand): number {
    return bound(goInt64(goRound(rng.expFloat64() * this.mean)), this.min, this.max);
  }
}

/** With probability `mixWeight` a Pareto(alpha, xm) draw, otherwise LogNormal(mu, sigma). */
export class ParetoLogNormalSampler implements LengthSampler {
  constructor(
    readonly alpha: number,
    readonly xm: number,
    readonly mu: number,
    readonly sigma: number,
    readonly mixWeight: number,
  ) {}

  sample(rng: GoRand): number {
    let v: number;
    if (rng.float64() < this.mixWeight) {
      let u = rng.float64();
      if (u === 0) u = Number.MIN_VALUE;
      v = this.xm / goPow(u, 1.0 / this.alpha);
    } else {
      v = goExp(this.mu + this.sigma * rng.normFloat64());
    }
    if (!Number.isFinite(v)) return 1;
    const r = goInt64(goRound(v));
    return r < 1 ? 1 : r;
  }
}

export class LognormalSampler implements LengthSampler {
  constructor(
    readonly mu: number,
    readonly sigma: number,
    readonly min: number,
    readonly max: number,
  ) {}

  sample(rng: GoRand): number {
    const v = goExp(this.mu + this.sigma * rng.normFloat64());
    if (!Number.isFinite(v)) return this.min > 0 ? this.min : 1;
    return bound(goInt64(goRound(v)), this.min, this.max);
  }
}

/** Inverse-CDF sampling over sorted integer bins (probabilities normalised; non-positive bins dropped). */
export class EmpiricalSampler implements LengthSampler {
  readonly values: number[] = [];
  readonly cdf: number[] = [];

  constructor(pdf: ReadonlyMap<number, number>) {
    const keys = [...pdf.keys()].sort((a, b) => a - b);
    // The total includes the dropped non-positive weights, as in the reference.
    let total = 0;
    for (const k of keys) total += pdf.get(k)!;
    let cumulative = 0;
    for (const k of keys) {
      const p = pdf.get(k)!;
      if (p <= 0) continue;
      cumulative += p / total;
      this.values.push(k);
      this.cdf.push(cumulative);
    }
    if (this.cdf.length > 0) this.cdf[this.cdf.length - 1] = 1.0;
  }

  sample(rng: GoRand): number {
    const n = this.values.length;
    if (n === 0) return 1;
    if (n === 1) return this.values[0]!;
    const u = rng.float64();
    // First index whose cumulative probability reaches u (Go's sort.SearchFloat64s).
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.values[Math.min(lo, n - 1)]!;
  }
}

export class ConstantSampler implements LengthSampler {
  constructor(readonly value: number) {}

  sample(): number {
    return this.value < 1 ? 1 : this.value;
  }
}

function need(params: ReadonlyMap<string, number>, type: string, ...keys: string[]): void {
  for (const k of keys) {
    if (!params.has(k)) {
      throw new DistributionError(
        `${type} distribution requires parameter "${k}"`,
        k,
        `add params.${k} (${type} needs ${keys.join(', ')})`,
      );
    }
  }
}

/** Go `int(v)` of an optional integer parameter (0 when absent). */
function intParam(params: ReadonlyMap<string, number>, key: string): number {
  const v = params.get(key);
  return v === undefined ? 0 : goInt64(v);
}

function checkBounds(type: string, min: number, max: number): void {
  if (min > 0 && max > 0 && min > max) {
    throw new DistributionError(`${type}: min (${min}) must be <= max (${max})`, 'min', 'make params.min at most params.max');
  }
}

/**
 * The key of an empirical bin the way the reference reads it (`fmt.Sscanf(key, "%d")`): leading blanks, an
 * optional sign and the leading digits; anything after them is ignored, so "12.5" is bin 12.
 */
export function parseEmpiricalKey(key: string): number | null {
  const m = /^[ \t]*([+-]?[0-9]+)/.exec(key);
  if (m === null) return null;
  const v = Number(m[1]);
  return Number.isSafeInteger(v) ? v : null;
}

function empirical(spec: DistSpec): EmpiricalSampler {
  if (spec.file === '' && spec.params.size === 0) {
    throw new DistributionError(
      'empirical distribution requires a file path or inline params',
      null,
      'list the bins as params, e.g. {"128": 0.7, "512": 0.3}',
    );
  }
  const pdf = new Map<number, number>();
  for (const [k, v] of spec.params) {
    const bin = parseEmpiricalKey(k);
    if (bin === null) {
      throw new DistributionError(`empirical PDF key ${showValue(k)} is not an integer`, k, 'use integer token counts as keys');
    }
    if (v < 0) {
      // The reference accepts these but counts them in the normalising total, which corrupts the CDF.
      throw new DistributionError(`empirical PDF weight for ${showValue(k)} is negative (${v})`, k, 'use weights >= 0');
    }
    if (pdf.has(bin)) {
      // The reference keeps whichever duplicate its map iteration visits last, which is not deterministic.
      throw new DistributionError(`empirical PDF keys collide: ${showValue(k)} is also bin ${bin}`, k, 'give each token count one key');
    }
    pdf.set(bin, v);
  }
  if (pdf.size === 0) {
    throw new DistributionError(
      'empirical distribution has no valid bins',
      null,
      'file-based distributions are not implemented; list the bins as params',
    );
  }
  return new EmpiricalSampler(pdf);
}

/** Builds the sampler for a distribution spec, rejecting what the reference's constructor rejects. */
export function newLengthSampler(spec: DistSpec): LengthSampler {
  const p = spec.params;
  const get = (k: string): number => p.get(k) ?? 0;
  switch (spec.type) {
    case 'gaussian':
      need(p, 'gaussian', 'mean', 'std_dev', 'min', 'max');
      return new GaussianSampler(get('mean'), get('std_dev'), goInt64(get('min')), goInt64(get('max')));
    case 'exponential': {
      need(p, 'exponential', 'mean');
      const [min, max] = [intParam(p, 'min'), intParam(p, 'max')];
      checkBounds('exponential', min, max);
      return new ExponentialSampler(get('mean'), min, max);
    }
    case 'pareto_lognormal':
      need(p, 'pareto_lognormal', 'alpha', 'xm', 'mu', 'sigma', 'mix_weight');
      return new ParetoLogNormalSampler(get('alpha'), get('xm'), get('mu'), get('sigma'), get('mix_weight'));
    case 'lognormal': {
      need(p, 'lognormal', 'mu', 'sigma');
      const [min, max] = [intParam(p, 'min'), intParam(p, 'max')];
      checkBounds('lognormal', min, max);
      return new LognormalSampler(get('mu'), get('sigma'), min, max);
    }
    case 'constant':
      need(p, 'constant', 'value');
      return new ConstantSampler(goInt64(get('value')));
    case 'empirical':
      return empirical(spec);
    default:
      throw new DistributionError(`unknown distribution type ${showValue(spec.type)}`, null, `use one of: ${DIST_TYPES.join(', ')}`);
  }
}

