/**
 * The router's view of the cluster (ClusterSimulator's chain: core.ts -> router-view.ts -> pipeline.ts ->
 * cluster.ts): the snapshots one routing, admission, P/D pool or autoscaler decision reads, which instances
 * are in view (lifecycle, model), and the cached-prefix lookups cache-aware scorers make.
 */
import type { Request } from '../domain/request.js';
import type { Instance } from '../instance/instance.js';
import { routingSnapshot, type RouterState, type RoutingSnapshot } from '../routing/types.js';
import { DeferredRouterState } from './deferred-state.js';
import type { PdCoordinator } from './pd/coordinator.js';
import { hasRole } from './pd/pools.js';
import type { StaticFacts } from './snapshot.js';
import { InstanceState, type Lifecycle } from './autoscaler/lifecycle.js';
import { ClusterCore } from './core.js';

export abstract class RouterViews extends ClusterCore {
  /** Whether instance `i` is in the router's view for `req` (all models when null). */
  protected routableFor(i: number, req: Request | null): boolean {
    const lc = this.lifecycle;
    if (lc !== null && !lc.routable(i)) return false;
    return req === null || req.model === '' || req.model === (this.facts[i] as StaticFacts).model;
  }

  protected readonly buildState = (req: Request): RouterState => this.routerState(req);

  /**
   * The router's view for one decision (reference buildRouterState): refreshes the stale cache view if due,
   * then one snapshot per routable instance serving the request's model (all when the request names none or
   * when there is no request: the gateway's saturation read).
   */
  protected routerState(req: Request | null): RouterState {
    this.snapshots.refreshCacheIfNeeded(this.clock);
    const out: RoutingSnapshot[] = [];
    const sig = this.signals;
    const positions: number[] | null = sig === null ? null : [];
    for (let i = 0; i < this.instances.length; i++) {
      if (!this.routableFor(i, req)) continue;
      out.push(this.snapshots.snapshot(i, this.clock, this.inFlight[i] as number));
      positions?.push(i);
    }
    if (sig === null) return { snapshots: out, clock: this.clock };
    sig.beginDecision(this.clock, out, positions as number[]);
    return { snapshots: out, clock: this.clock, signals: sig };
  }

  /**
   * {@link routerState} for an admission decision, whose objects are built only when the policy reads them. What a
   * build does besides (the stale cache view's refresh, the periodic snapshot refreshes, the signals' clock)
   * happens now, so a later build at the same clock reads exactly what this one would have.
   */
  protected admissionState(req: Request): RouterState {
    this.snapshots.refreshCacheIfNeeded(this.clock);
    for (let i = 0; i < this.instances.length; i++) if (this.routableFor(i, req)) this.snapshots.refreshAt(i, this.clock);
    this.signals?.observeClock(this.clock);
    return new DeferredRouterState(this.buildState, req, this.clock);
  }

  /** The decode- or prefill-pool view of one P/D decision: routable members of the pool, in instance order. */
  protected poolState(role: number, model: string | null): RouterState {
    this.snapshots.refreshCacheIfNeeded(this.clock);
    const pd = this.pd as PdCoordinator;
    const out: RoutingSnapshot[] = [];
    const sig = this.signals;
    const positions: number[] | null = sig === null ? null : [];
    const lc = this.lifecycle;
    for (let i = 0; i < this.instances.length; i++) {
      if (!hasRole(pd.role(i), role)) continue;
      if (lc !== null && !lc.routable(i)) continue;
      if (model !== null && (this.facts[i] as StaticFacts).model !== model) continue;
      out.push(this.snapshots.snapshot(i, this.clock, this.inFlight[i] as number));
      positions?.push(i);
    }
    if (sig === null) return { snapshots: out, clock: this.clock };
    sig.beginDecision(this.clock, out, positions as number[]);
    return { snapshots: out, clock: this.clock, signals: sig };
  }

  /** The autoscaler's view: routable instances of every model, plus the loading ones (capacity only). */
  protected scalingState(): RouterState {
    const state = this.routerState(null);
    const lc = this.lifecycle as Lifecycle;
    const loading: RoutingSnapshot[] = [];
    for (let i = 0; i < this.instances.length; i++) {
      if (lc.state(i) !== InstanceState.Loading) continue;
      const f = this.facts[i] as StaticFacts;
      if (f.model === '' || f.gpuType === '') continue;
      const inst = this.instances[i] as Instance;
      // Built directly, not through the snapshot provider: reading would move its refresh clocks.
      loading.push(routingSnapshot(inst.id, { model: f.model, gpuType: f.gpuType, tpDegree: f.tpDegree, costPerHour: f.costPerHour ?? 0, totalKvCapacityTokens: inst.kv.totalBlocks * inst.kv.blockSize }));
    }
    return { ...state, loadingSnapshots: loading };
  }

  /** Consecutive cached prefix blocks of `req` on the instance `id` as the router sees it (0 if unknown). */
  cachedBlocksFor(id: string, req: Request): number {
    const i = this.indexById.get(id);
    return i === undefined ? 0 : this.snapshots.cachedBlocks(i, req);
  }

  /** Gateway queue counters (all zero until flow control is enabled). */
  gatewayCounters(): { queueDepth: number; queueShed: number; queueRejected: number; evicted: number; expired: number } {
    return this.flowController?.counters() ?? { queueDepth: 0, queueShed: 0, queueRejected: 0, evicted: 0, expired: 0 };
  }
}
