/**
 * The P/D disaggregation decider (reference sim/disaggregation.go, blis-cluster.md §8.2): after the decode
 * pod is chosen, decide whether the request's prefill runs on a prefill pod (KV transferred afterwards) or
 * locally on that decode pod. Built-ins: `never`, `always`, `prefix-threshold`. The context carries the whole
 * decode-pool router state and the chosen pod's prefix-cache state, so evolved deciders can weigh load and
 * cache together; a decider may also move the request to another decode pod of the state.
 */
import type { Request } from '../domain/request.js';
import type { RouterState } from './types.js';
import { RoutingConfigError, RoutingErrorCode } from './errors.js';

export interface DisaggregationContext {
  /** The decode pool's router state the decode pod was chosen from. */
  readonly state: RouterState;
  /** Index into `state.snapshots` of the decode pod chosen by the decode routing policy. */
  readonly selected: number;
  /** Leading input blocks of the request cached on instance `id` as the router sees it (stale view when delayed). */
  cachedBlocks(id: string): number;
  readonly blockSize: number;
  /**
   * The prefill-capable pool's router state for this request, built on demand (only deciders that read it pay
   * for it; reading it refreshes those pods' snapshots as a prefill routing at this instant would). Absent
   * where no prefill pool is known (unit contexts): read as an empty pool.
   */
  readonly prefillState?: () => RouterState;
}

export interface DisaggregationDecision {
  readonly disaggregate: boolean;
  /** Another decode pod of `state.snapshots` to use instead of the selected one (absent = keep it). */
  readonly decodeOverride?: string;
  readonly reason: string;
}

export interface DisaggregationDecider {
  readonly name: string;
  decide(req: Request, ctx: DisaggregationContext): DisaggregationDecision;
}

export const DISAGGREGATION_DECIDERS = ['never', 'always', 'prefix-threshold'] as const;
export type DisaggregationDeciderName = (typeof DISAGGREGATION_DECIDERS)[number];

export function isDisaggregationDecider(name: string): name is DisaggregationDeciderName {
  return (DISAGGREGATION_DECIDERS as readonly string[]).includes(name);
}

const NEVER: DisaggregationDecider = { name: 'never', decide: () => ({ disaggregate: false, reason: 'never' }) };
const ALWAYS: DisaggregationDecider = { name: 'always', decide: () => ({ disaggregate: true, reason: 'always' }) };

/** Disaggregate when the prompt tokens not cached on the chosen decode pod exceed `threshold`. */
export function prefixThresholdDecider(threshold: number): DisaggregationDecider {
  if (!Number.isInteger(threshold) || threshold < 0) throw new RoutingConfigError(RoutingErrorCode.InvalidParameter, 'pd-prefix-threshold', `--pd-prefix-threshold must be >= 0, got ${threshold}`);
  return {
    name: 'prefix-threshold',
    decide(req, ctx) {
      if (req.inputLen === 0) return { disaggregate: false, reason: 'empty input' };
      const snap = ctx.state.snapshots[ctx.selected];
      if (snap === undefined) return { disaggregate: false, reason: 'no selected decode pod' };
      const nonCached = req.inputLen - ctx.cachedBlocks(snap.id) * ctx.blockSize;
      return { disaggregate: nonCached > threshold, reason: `non-cached tokens ${nonCached} vs threshold ${threshold}` };
    },
  };
}

export function makeDisaggregationDecider(name: string, prefixThreshold: number): DisaggregationDecider {
  switch (name) {
    case '':
    case 'never':
      return NEVER;
    case 'always':
      return ALWAYS;
    case 'prefix-threshold':
      return prefixThresholdDecider(prefixThreshold);
    default:
      throw new RoutingConfigError(RoutingErrorCode.InvalidParameter, 'pd-decider', `Unknown PD decider "${name}". Valid: ${DISAGGREGATION_DECIDERS.join(', ')}`);
  }
}
