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
import { goFixed } from '../gocompat/go-text.js';
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

/**
 * A weighted decision. The reason text and the scores by id are read only by decision traces and observers, so
 * they are built on first read; a class (getters on its prototype) rather than an object literal with getters,
 * which would allocate two closures and their accessors on every routing.
 */
class WeightedDecision implements RoutingDecision {
  private reasonText: string | null = null;
  private scoresById: Map<string, number> | null = null;

  constructor(
    readonly target: number,
    readonly targetId: string,
    readonly breakdown: readonly ScorerContribution[],
    private readonly best: number,
    private readonly total: Float64Array,
    private readonly snaps: readonly RoutingSnapshot[],
  ) {}

  get reason(): string {
    return (this.reasonText ??= `weighted-scoring (score=${goFixed(this.best, 3)})`);
  }

  get scores(): ReadonlyMap<string, number> {
    if (this.scoresById === null) {
      const m = new Map<string, number>();
      for (let i = 0; i < this.snaps.length; i++) m.set((this.snaps[i] as RoutingSnapshot).id, this.total[i] as number);
      this.scoresById = m;
    }
    return this.scoresById;
  }
}

export function weighted(opts: WeightedOptions): RoutingPolicy {
  const profile = validateScorerConfigs(opts.scorers === null || opts.scorers.length === 0 ? defaultScorerConfigs() : opts.scorers);
  const weights = normalizeScorerWeights(profile);
  const scorers: Scorer[] = profile.map((c) => makeScorer(c.name, opts));
  const rng = opts.rng;
  const clamp = opts.corrected === true ? clampUnitNaNLowest : clampUnit;

  const indexes = scorers.flatMap((s) => (s.prefixIndex !== undefined ? [s.prefixIndex] : []));

  return {
    name: 'weighted',
    ...(indexes.length === 1 ? { prefixIndex: indexes[0] } : {}),
    route(req: Request, state: RouterState): RoutingDecision {
      const snaps = requireSnapshots('weighted', state);
      const n = snaps.length;
      const total = new Float64Array(n);
      const parts: ScorerContribution[] = [];
      for (let k = 0; k < scorers.length; k++) {
        const scorer = scorers[k] as Scorer;
        const w = weights[k] as number;
        // Clamped in place: every built-in scorer returns a fresh array, which the breakdown then keeps.
        const values = scorer.score(req, snaps);
        for (let i = 0; i < values.length; i++) values[i] = clamp(values[i] as number);
        for (let i = 0; i < n; i++) total[i] = (total[i] as number) + (values[i] ?? 0) * w;
        parts.push({ scorer: scorer.name, weight: w, values });
      }
      let best = -1.0;
      for (let i = 0; i < n; i++) if ((total[i] as number) > best) best = total[i] as number;
      // The tied positions are listed only when the RNG must choose among them (the rare case).
      let target = -1;
      let ties = 0;
      for (let i = 0; i < n; i++) {
        if (total[i] !== best) continue;
        if (ties++ === 0) target = i;
      }
      if (ties === 0 || (ties > 1 && rng !== null)) {
        const tied: number[] = [];
        for (let i = 0; i < n; i++) if (total[i] === best) tied.push(i);
        target = breakTie(tied, rng);
      }
      const targetId = (snaps[target] as RoutingSnapshot).id;
      for (const s of scorers) s.observe?.(req, targetId);
      return new WeightedDecision(target, targetId, parts, best, total, snaps);
    },
  };
}
