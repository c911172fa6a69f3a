/**
 * The load-based routing policies (reference blis-cluster.md §3.1). The weighted policy lives in weighted.ts.
 *
 * RNG rule shared with weighted: the router RNG is drawn from only when two or more instances tie for the
 * best value, exactly once, as `rng.intn(numberTied)` over the tied positions in snapshot order. A decision
 * without a tie draws nothing, so the stream stays aligned with the reference's.
 */
import type { Request } from '../domain/request.js';
import type { RouterState, RoutingDecision, RoutingPolicy, RoutingSnapshot, TieBreakRng } from './types.js';
import { effectiveLoad } from './types.js';

/** The reference panics on an empty routable set; the cluster must count a routing rejection instead. */
export function requireSnapshots(policy: string, state: RouterState): readonly RoutingSnapshot[] {
  if (state.snapshots.length === 0) throw new Error(`${policy}: route called with no routable instances`);
  return state.snapshots;
}

/**
 * Picks among tied positions: the first when there is no tie or no RNG, else `tied[rng.intn(tied.length)]`.
 */
export function breakTie(tied: readonly number[], rng: TieBreakRng | null): number {
  const first = tied[0];
  if (first === undefined) throw new Error('breakTie: no candidates (a score was NaN?)');
  if (tied.length > 1 && rng !== null) return tied[rng.intn(tied.length)] as number;
  return first;
}

export function decision(snapshots: readonly RoutingSnapshot[], target: number, reason: string): RoutingDecision {
  return { target, targetId: (snapshots[target] as RoutingSnapshot).id, reason, scores: null, breakdown: null };
}

/**
 * A copy of `d` with `patch` applied, as a plain object. Use it instead of `{ ...d, ... }`: a decision may keep
 * `reason` and `scores` as getters on its prototype (weighted builds them on first read), which a spread skips.
 */
export function amendDecision(d: RoutingDecision, patch: Partial<RoutingDecision>): RoutingDecision {
  return {
    target: d.target,
    targetId: d.targetId,
    breakdown: d.breakdown,
    reason: d.reason,
    scores: d.scores,
    ...(d.filteredOut !== undefined ? { filteredOut: d.filteredOut } : {}),
    ...(d.regretScores !== undefined ? { regretScores: d.regretScores } : {}),
    ...patch,
  };
}

/**
 * Cycles through the snapshot list; the counter advances once per call and is not reset when the list
 * changes size. The reference's reason carries the counter (the call number), not the chosen position;
 * `reasonShowsTarget` (--semantics corrected) prints the position.
 */
export function roundRobin(reasonShowsTarget = false): RoutingPolicy {
  let counter = 0;
  return {
    name: 'round-robin',
    route(_req: Request, state: RouterState): RoutingDecision {
      const snaps = requireSnapshots('round-robin', state);
      const call = counter++;
      const target = call % snaps.length;
      return decision(snaps, target, `round-robin[${reasonShowsTarget ? target : call}]`);
    },
  };
}

/**
 * Lowest effective load (queue + batch + in-flight); ties broken at random (see the module rule). The
 * reference returns no scores, so its counterfactual ranks by the very load it minimised and regret is always
 * 0. `scored` (--semantics corrected) returns the load as scores (−load, what the policy saw) and measures
 * regret on the estimated queueing delay (−estimatedWaitMs): how much longer the request is expected to wait
 * where it went than on the instance with the least queued work.
 */
export function leastLoaded(rng: TieBreakRng | null, scored = false): RoutingPolicy {
  return {
    name: 'least-loaded',
    route(_req: Request, state: RouterState): RoutingDecision {
      const snaps = requireSnapshots('least-loaded', state);
      let minLoad = effectiveLoad(snaps[0] as RoutingSnapshot);
      for (const s of snaps) minLoad = Math.min(minLoad, effectiveLoad(s));
      const tied: number[] = [];
      snaps.forEach((s, i) => {
        if (effectiveLoad(s) === minLoad) tied.push(i);
      });
      const d = decision(snaps, breakTie(tied, rng), `least-loaded (load=${minLoad})`);
      if (!scored) return d;
      // 0 - x keeps an idle instance's score +0 (never -0 in a trace).
      const scores = new Map(snaps.map((s) => [s.id, 0 - effectiveLoad(s)]));
      const regretScores = new Map(snaps.map((s) => [s.id, 0 - s.estimatedWaitMs]));
      return { ...d, scores, regretScores };
    },
  };
}

/**
 * Highest effective load — a deliberately bad policy for exercising imbalance detection. Ties go to the first
 * instance in snapshot order; it never draws from the RNG.
 */
export function alwaysBusiest(): RoutingPolicy {
  return {
    name: 'always-busiest',
    route(_req: Request, state: RouterState): RoutingDecision {
      const snaps = requireSnapshots('always-busiest', state);
      let target = 0;
      let maxLoad = effectiveLoad(snaps[0] as RoutingSnapshot);
      for (let i = 1; i < snaps.length; i++) {
        const load = effectiveLoad(snaps[i] as RoutingSnapshot);
        if (load > maxLoad) {
          maxLoad = load;
          target = i;
        }
      }
      return decision(snaps, target, `always-busiest (load=${maxLoad})`);
    },
  };
}
