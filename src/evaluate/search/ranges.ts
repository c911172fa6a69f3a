/**
 * Sampling and moving template parameters inside their search ranges (policy/templates/catalog.ts SearchRange):
 * uniform or log-uniform draws, an "off" value taken with its share, and Gaussian steps scaled to the range (on
 * the log scale for log ranges) for hill-climbing. Draws come from a seeded Go-compatible stream.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import type { ParamSpec, ParamValue, SearchRange } from '../../policy/templates/catalog.js';

/** A value of `r` (the off value excluded). */
export function sampleRange(r: SearchRange, rng: GoRand): number {
  const u = rng.float64();
  if (r.log === true && r.min > 0) return Math.exp(Math.log(r.min) + u * (Math.log(r.max) - Math.log(r.min)));
  return r.min + u * (r.max - r.min);
}

/** `v` moved by a normal step of `sigma` times the range's width (in log space for a log range), kept inside it. */
export function perturbRange(r: SearchRange, v: number, sigma: number, rng: GoRand): number {
  const z = rng.normFloat64() * sigma;
  if (r.log === true && r.min > 0) {
    const lo = Math.log(r.min);
    const hi = Math.log(r.max);
    const x = Math.log(Math.max(v, r.min)) + z * (hi - lo);
    return Math.exp(Math.min(Math.max(x, lo), hi));
  }
  return Math.min(Math.max(v + z * (r.max - r.min), r.min), r.max);
}

/** The search range of a numeric parameter: its own, or (for a parameter without one) its bounds cut to a useful scale. */
export function searchRangeOf(p: ParamSpec): SearchRange {
  if (p.search !== undefined) return p.search;
  const lo = p.min ?? 0;
  return { min: lo, max: Math.min(p.max ?? lo + 100, lo + Math.max(10 * Math.abs(Number(p.default) || 1), 10)) };
}

function finish(p: ParamSpec, v: number): number {
  const x = Math.min(Math.max(v, p.min ?? -Infinity), p.max ?? Infinity);
  return p.type === 'integer' ? Math.round(x) : Math.round(x * 1e6) / 1e6;
}

/** A random value of `p` from its search range (booleans and enums: any of their values). */
export function sampleParam(p: ParamSpec, rng: GoRand): ParamValue {
  if (p.type === 'boolean') return rng.intn(2) === 1;
  if (p.type === 'enum') return (p.values ?? [])[rng.intn((p.values ?? []).length)] as string;
  const r = searchRangeOf(p);
  if (r.off !== undefined && rng.float64() < (r.offShare ?? 0.25)) return r.off;
  return finish(p, sampleRange(r, rng));
}

/**
 * `v` moved by one hill-climbing step of relative size `sigma`: numbers by a Gaussian step (an off value first
 * drawn fresh from the range, and switched off again with a small probability); a boolean flips and an enum takes
 * another of its values (a parameter chosen for a step always changes).
 */
export function mutateParam(p: ParamSpec, v: ParamValue, sigma: number, rng: GoRand): ParamValue {
  if (p.type === 'boolean') return !(v as boolean);
  if (p.type === 'enum') {
    const others = (p.values ?? []).filter((x) => x !== v);
    return others.length === 0 ? v : (others[rng.intn(others.length)] as string);
  }
  const r = searchRangeOf(p);
  if (r.off !== undefined) {
    if (v === r.off) return finish(p, sampleRange(r, rng));
    if (rng.float64() < sigma * 0.25) return r.off;
  }
  const x = typeof v === 'number' && Number.isFinite(v) ? v : Number(p.default);
  const y = finish(p, perturbRange(r, x, sigma, rng));
  if (y !== x || p.type !== 'integer') return y;
  // An integer step smaller than 1 moves by one, inside the range.
  const up = x + 1 <= Math.min(r.max, p.max ?? Infinity);
  const down = x - 1 >= Math.max(r.min, p.min ?? -Infinity);
  return up && (!down || rng.intn(2) === 0) ? x + 1 : down ? x - 1 : x;
}
