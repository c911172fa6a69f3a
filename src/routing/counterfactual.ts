/**
 * Counterfactual regret for decision traces (reference blis-cluster.md §4): how much better the best
 * alternative looked than the instance actually chosen. Pure; the cluster passes the same pre-routing
 * snapshots the policy saw (in-flight counts not yet incremented for this request).
 */
import type { CandidateScore } from '../domain/decision-records.js';
import type { RoutingSnapshot } from './types.js';
import { effectiveLoad } from './types.js';

export type { CandidateScore } from '../domain/decision-records.js';

export interface Counterfactual {
  /** The top min(k, n) instances by score (descending), ties by id ascending; null when k <= 0, no instances,
   *  or the chosen id is not among the snapshots. */
  readonly candidates: readonly CandidateScore[] | null;
  /** max(0, best score − chosen score); 0 whenever candidates is null. */
  readonly regret: number;
}

const NONE: Counterfactual = Object.freeze({ candidates: null, regret: 0 });

/**
 * @param scores the policy's composite scores (an id missing from the map scores 0), or null for policies
 *   that do not score — then each instance scores −EffectiveLoad, so lower load ranks higher.
 */
export function computeCounterfactual(
  chosenId: string,
  scores: ReadonlyMap<string, number> | null,
  snapshots: readonly RoutingSnapshot[],
  k: number,
): Counterfactual {
  if (k <= 0 || snapshots.length === 0) return NONE;
  const scoreOf = (s: RoutingSnapshot): number => (scores !== null ? (scores.get(s.id) ?? 0) : -effectiveLoad(s));
  const ranked = snapshots.map((snap) => ({ snap, score: scoreOf(snap) }));
  const chosen = ranked.find((r) => r.snap.id === chosenId);
  if (chosen === undefined) return NONE;
  ranked.sort((a, b) => {
    if (a.score !== b.score) return a.score > b.score ? -1 : 1;
    return a.snap.id < b.snap.id ? -1 : a.snap.id > b.snap.id ? 1 : 0;
  });
  const candidates = ranked.slice(0, Math.min(k, ranked.length)).map(
    ({ snap, score }): CandidateScore => ({
      instanceId: snap.id,
      score,
      queueDepth: snap.queueDepth,
      batchSize: snap.batchSize,
      inFlightRequests: snap.inFlightRequests,
      kvUtilization: snap.kvUtilization,
      freeKVBlocks: snap.freeKVBlocks,
    }),
  );
  const regret = (ranked[0] as { score: number }).score - chosen.score;
  return { candidates, regret: regret < 0 ? 0 : regret };
}
