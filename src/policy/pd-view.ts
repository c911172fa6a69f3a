/**
 * What an external P/D disaggregation decider (and encode decider) sees (docs/policies.md): the decode pool's state as a routing
 * policy sees it, the decode pod the decode routing chose with its prefix-cache figures, and the
 * prefill-capable pool. The prefill pool is read only when a decider asks for it (its snapshots are refreshed
 * by the read, as a prefill routing at that instant would), so trees that never name `prefill.*` and
 * templates that do not look at it leave the simulation exactly as the built-in deciders do.
 */
import type { Request } from '../domain/request.js';
import type { DisaggregationContext } from '../routing/disaggregation.js';
import type { EncodeContext } from '../routing/encode-decider.js';
import { clusterView, type ClusterView, type FeatureEnv, requestEnv, routerEnv } from './features.js';
import { instanceView, requestView, stateView, type InstanceView, type RequestView, type StateView } from './view.js';

/** The chosen decode pod, with what a local prefill would cost there. */
export interface SelectedDecodeView extends InstanceView {
  /** cachedPrefixBlocks x block size. */
  cachedTokens: number;
  /** Prompt tokens not cached on the pod (what prefilling there computes); never negative. */
  uncachedTokens: number;
  /** cachedPrefixBlocks / the request's full prompt blocks (0 below one block). */
  prefixMatchRatio: number;
}

/** `state` of a code decider: the decode pool's state view plus the decision's own facts. */
export interface DisaggregationStateView extends StateView {
  /** The decode pod chosen by the decode routing (`state.instances[selected.index]`). */
  selected: SelectedDecodeView;
  /** The prefill-capable pods for this request (empty when there is none). */
  prefillInstances: InstanceView[];
  blockSize: number;
}

/** The chosen pod's view; its cached blocks come from the same source the built-in prefix-threshold reads. */
export function selectedView(req: Request, ctx: DisaggregationContext): SelectedDecodeView {
  const snap = ctx.state.snapshots[ctx.selected];
  if (snap === undefined) throw new RangeError(`P/D decider context: selected index ${ctx.selected} is not in the decode pool of ${ctx.state.snapshots.length}`);
  const cached = ctx.cachedBlocks(snap.id);
  const cachedTokens = cached * ctx.blockSize;
  const blocks = ctx.blockSize > 0 ? Math.floor(req.inputLen / ctx.blockSize) : 0;
  return {
    ...instanceView(snap, ctx.selected, cached, req.adapter),
    cachedTokens,
    uncachedTokens: Math.max(0, req.inputLen - cachedTokens),
    prefixMatchRatio: blocks === 0 ? 0 : cached / blocks,
  };
}

/** The prefill pool's state view for the request (an empty view without a prefill pool). */
export function prefillStateView(req: Request, ctx: DisaggregationContext): StateView {
  const st = ctx.prefillState?.() ?? { snapshots: [], clock: ctx.state.clock };
  return stateView(req, st);
}

/** The full view a code decider receives (the prefill pool included). */
export function disaggregationView(req: Request, ctx: DisaggregationContext): { request: RequestView; state: DisaggregationStateView } {
  const decode = stateView(req, ctx.state);
  const selected = selectedView(req, ctx);
  const prefill = prefillStateView(req, ctx);
  return { request: requestView(req, ctx.blockSize), state: { ...decode, selected, prefillInstances: prefill.instances, blockSize: ctx.blockSize } };
}

/**
 * The decision-tree environment: the router's roots (request, tenant, global, clock) plus `selected`,
 * `decode` and `prefill` (pool aggregates, the latter built on first read).
 */
export function disaggregationEnv(req: Request, ctx: DisaggregationContext): FeatureEnv {
  const rv = requestView(req, ctx.blockSize);
  const decode = stateView(req, ctx.state);
  const base = routerEnv(rv, decode);
  let prefill: ClusterView | null = null;
  return {
    clock: base['clock'],
    request: base['request'],
    tenant: base['tenant'],
    global: base['global'],
    decode: base['cluster'],
    selected: selectedView(req, ctx),
    get prefill(): ClusterView {
      prefill ??= clusterView(prefillStateView(req, ctx));
      return prefill;
    },
  };
}

/** `state` of a code encode decider: the encode pool's state view plus the chosen decode pod's id. */
export interface EncodeStateView extends StateView {
  decodeInstance: string;
}

export function encodeView(req: Request, decodeInstanceId: string, ctx: EncodeContext, blockSize: number): { request: RequestView; state: EncodeStateView } {
  return { request: requestView(req, blockSize), state: { ...stateView(req, ctx.encodeState()), decodeInstance: decodeInstanceId } };
}

/**
 * The decision-tree environment of the encode decider: `request` and `clock`, and `tenant`, `global` and
 * `encode` (the encode pool's aggregates) from the encode pool's state, built on the first read of any of them.
 */
export function encodeEnv(req: Request, ctx: EncodeContext, blockSize: number): FeatureEnv {
  let view: StateView | null = null;
  let pool: ClusterView | null = null;
  const v = (): StateView => (view ??= stateView(req, ctx.encodeState()));
  return {
    clock: ctx.clock,
    request: requestEnv(requestView(req, blockSize)),
    get tenant(): unknown {
      return v().tenant;
    },
    get global(): unknown {
      return v().global;
    },
    get encode(): ClusterView {
      pool ??= clusterView(v());
      return pool;
    },
  };
}
