/**
 * The router state of an admission decision, built on first read. Most admission policies (always-admit, the
 * token bucket, prompt-size limits) never read the instance snapshots, and building them — one object per
 * instance, twice per request with routing — was a visible share of a short run's allocations.
 *
 * Exact because the cluster does everything else a build does at once (the stale cache view's refresh, the
 * periodic snapshot refreshes, the signals' clock): a build at the same clock then changes nothing and reads the
 * same values. The state is built by the first read of `snapshots` or `signals` during the call; like every
 * RouterState it describes the decision's instant only.
 */
import type { Request } from '../domain/request.js';
import type { RouterSignals, RouterState, RoutingSnapshot } from '../routing/types.js';

export class DeferredRouterState implements RouterState {
  private built: RouterState | null = null;

  constructor(
    private readonly build: (req: Request) => RouterState,
    private readonly req: Request,
    readonly clock: number,
  ) {}

  private get state(): RouterState {
    return (this.built ??= this.build(this.req));
  }

  get snapshots(): readonly RoutingSnapshot[] {
    return this.state.snapshots;
  }

  /** null where a built state has none (every reader treats absent and null alike). */
  get signals(): RouterSignals | null {
    return this.state.signals ?? null;
  }
}
