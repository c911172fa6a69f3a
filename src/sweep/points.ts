/**
 * Point expansion: a grid (the cartesian product of the axes, the last axis varying fastest) or seeded random
 * samples over ranges, then each point once per seed (seeds innermost). Sampling uses the engine's Go
 * math/rand port and Go's Exp/Log, so the same sweep file draws the same points on every machine.
 */
import { goExp } from '../gocompat/go-math.js';
import { GoRand, goLog } from '../gocompat/go-rand.js';
import type { ParamValue } from './types.js';

/** A uniform range (integers for integer options, log-uniform with `log`), or a list to choose from. */
export type SampleRange = { readonly min: number; readonly max: number; readonly log: boolean } | { readonly choices: readonly ParamValue[] };

/** Where a point's value came from: an axis, a sample range or seeds:, and the value's index in its list (-1: drawn from a range). */
export interface ValueSource {
  readonly from: 'axes' | 'sample' | 'seeds';
  readonly key: string;
  readonly index: number;
}

export interface ExpandedPoint {
  readonly params: Record<string, ParamValue>;
  readonly sources: readonly ValueSource[];
}

/** The grid's points in nested-loop order (the first axis outermost). No axes: one point without parameters. */
export function gridPoints(axes: readonly (readonly [string, readonly ParamValue[]])[]): ExpandedPoint[] {
  let out: ExpandedPoint[] = [{ params: {}, sources: [] }];
  for (const [key, values] of axes) {
    const next: ExpandedPoint[] = [];
    for (const p of out) {
      values.forEach((v, index) => next.push({ params: { ...p.params, [key]: v }, sources: [...p.sources, { from: 'axes', key, index }] }));
    }
    out = next;
  }
  return out;
}

/**
 * `n` random points: for each point, one draw per range in the file's order. `isInt(key)` says whether the
 * option takes integers (then a range draws integers in [min, max], both ends included).
 */
export function samplePoints(n: number, seed: number, ranges: readonly (readonly [string, SampleRange])[], isInt: (key: string) => boolean): ExpandedPoint[] {
  const rng = new GoRand(BigInt(seed));
  const out: ExpandedPoint[] = [];
  for (let i = 0; i < n; i++) {
    const params: Record<string, ParamValue> = {};
    const sources: ValueSource[] = [];
    for (const [key, r] of ranges) {
      if ('choices' in r) {
        const index = rng.intn(r.choices.length);
        params[key] = r.choices[index] as ParamValue;
        sources.push({ from: 'sample', key, index });
        continue;
      }
      params[key] = isInt(key) ? drawInt(rng, r) : drawFloat(rng, r);
      sources.push({ from: 'sample', key, index: -1 });
    }
    out.push({ params, sources });
  }
  return out;
}

function drawFloat(rng: GoRand, r: { min: number; max: number; log: boolean }): number {
  const u = rng.float64();
  if (r.log) return goExp(goLog(r.min) + (goLog(r.max) - goLog(r.min)) * u);
  return r.min + (r.max - r.min) * u;
}

function drawInt(rng: GoRand, r: { min: number; max: number; log: boolean }): number {
  const lo = Math.ceil(r.min);
  const hi = Math.floor(r.max);
  if (!r.log) return lo + rng.intn(hi - lo + 1);
  // Log-uniform over [lo, hi + 1), floored: every integer is reachable, small ones more often.
  const v = Math.floor(goExp(goLog(lo) + (goLog(hi + 1) - goLog(lo)) * rng.float64()));
  return Math.min(hi, Math.max(lo, v));
}

/** Each point once per seed, seeds innermost; `seed` joins the parameters. No seeds: the points unchanged. */
export function withSeeds(points: readonly ExpandedPoint[], seeds: readonly (number | string)[] | null): ExpandedPoint[] {
  if (seeds === null) return [...points];
  return points.flatMap((p) => seeds.map((s, index) => ({ params: { ...p.params, seed: s }, sources: [...p.sources, { from: 'seeds', key: 'seed', index }] })));
}
