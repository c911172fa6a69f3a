/**
 * The weighted-scoring routing policy (reference blis-cluster.md §3.1): composite = Σ clamp(score_i, 0, 1) ×
 * w_i with w_i = weight_i / Σ weight, then argmax.
 *
 * Order of operations, all of which the reference fixes:
 * 1. scorers run in profile order; each composite starts at 0 and accumulates in that order (the float
 *    sums must match bit for bit, because ties are found by exact equality);
 * 2. the maximum is found, every position equal to it is tied, and the RNG is drawn from only when two or
 *    more tie (`rng.intn(numberTied)`, see policies.ts);
 * 3. only then do the stateful scorers observe the final target, in profile order.
 */
import type { Request } from '../domain/request.js';
import { goFixed } from './go-text.js';
import { breakTie, requireSnapshots } from './policies.js';
import { defaultScorerConfigs, normalizeScorerWeights, validateScorerConfigs, type ScorerConfig } from './scorer-config.js';
import { makeScorer, type ScorerContext } from './scorer-registry.js';
import type { RouterState, RoutingDecision, RoutingPolicy, RoutingSnapshot, Scorer, ScorerContribution, TieBreakRng } from './types.js';

export interface WeightedOptions extends ScorerContext {
  /** The profile; null or empty means {@link defaultScorerConfigs}. */
  readonly scorers: readonly ScorerConfig[] | null;
  readonly rng: TieBreakRng | null;
}

function clampUnit(s: number): number {
  // NaN passes through unchanged, as in the reference; it then never wins the argmax, and when every
  // composite is NaN no instance is found at all.
  if (s < 0) return 0;
  if (s > 1) return 1;
  return s;
}

/** --semantics corrected: a NaN score is the lowest score (0) instead of poisoning the composite. */
function clampUnitNaNLowest(s: number): number {
  if (!(s >= 0)) return 0;
  if (s > 1) return 1;
  return s;
}

export function weighted(opts: WeightedOptions): RoutingPolicy {
  const profile = validateScorerConfigs(opts.scorers === null || opts.scorers.length === 0 ? defaultScorerConfigs() : opts.scorers);
  const weights = normalizeScorerWeights(profile);
  const scorers: Scorer[] = profile.map((c) => makeScorer(c.name, opts));
  const rng = opts.rng;
  const clamp = opts.corrected === true ? clampUnitNaNLowest : clampUnit;

  function composite(req: Request, snaps: readonly RoutingSnapshot[]): { total: Float64Array; parts: ScorerContribution[] } {
    const total = new Float64Array(snaps.length);
    const parts: ScorerContribution[] = [];
    scorers.forEach((scorer, k) => {
      const w = weights[k] as number;
      const values = scorer.score(req, snaps).map(clamp);
      for (let i = 0; i < snaps.length; i++) total[i] = (total[i] as number) + (values[i] ?? 0) * w;
      parts.push({ scorer: scorer.name, weight: w, values });
    });
    return { total, parts };
  }

  return {
    name: 'weighted',
    route(req: Request, state: RouterState): RoutingDecision {
      const snaps = requireSnapshots('weighted', state);
      const { total, parts } = composite(req, snaps);
      let best = -1.0;
      for (const v of total) if (v > best) best = v;
      const tied: number[] = [];
      total.forEach((v, i) => {
        if (v === best) tied.push(i);
      });
      const target = breakTie(tied, rng);
      const targetId = (snaps[target] as RoutingSnapshot).id;
      for (const s of scorers) s.observe?.(req, targetId);
      // The reason text and the scores by id are read only by decision traces and observers: built on first read.
      let reason: string | null = null;
      let scores: Map<string, number> | null = null;
      return {
        target,
        targetId,
        breakdown: parts,
        get reason(): string {
          return (reason ??= `weighted-scoring (score=${goFixed(best, 3)})`);
        },
        get scores(): ReadonlyMap<string, number> {
          if (scores === null) {
            scores = new Map<string, number>();
            for (let i = 0; i < snaps.length; i++) scores.set((snaps[i] as RoutingSnapshot).id, total[i] as number);
          }
          return scores;
        },
      };
    },
  };
}
