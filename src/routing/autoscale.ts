/**
 * The autoscaling control point (policy-search-design §4): a policy that looks at one deployment's signals
 * and decides whether to change its replica count. The cluster's autoscaler (cluster/autoscaler) calls it on
 * every tick and trigger, clamps the answer into the deployment's bounds, applies the stabilization windows
 * and actuates it with provisioning, loading, warm-up and drain.
 */
import type { ReplicaSignal } from './autoscale-saturation.js';

export type ScaleAction = 'none' | 'up' | 'down';

/** Signals of one deployment configuration at a decision (policy-search-design §4 DeploymentMetrics). */
export interface DeploymentMetrics {
  readonly avgQueueDepth: number;
  /** Mean KV utilization over the deployment's instances, in [0, 1]. */
  readonly avgUtilization: number;
  /** Arrivals per second over the recent window. */
  readonly requestRate: number;
  /** Share of recent requests meeting their SLO, per SLO class. */
  readonly sloAttainment: Readonly<Record<string, number>>;
  readonly avgLatencyMs: number;
  readonly p99LatencyMs: number;
}

export interface LoadSample {
  readonly timeUs: number;
  readonly requestRate: number;
  readonly avgQueueDepth: number;
}

export interface AutoScaleContext {
  readonly configId: string;
  readonly currentReplicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly metrics: DeploymentMetrics;
  /** Oldest first. */
  readonly loadHistory: readonly LoadSample[];
  readonly pendingRequests: number;
  /** Simulation clock (µs). */
  readonly clock: number;
  /** µs since the last scale action of this deployment (clock when none yet). */
  readonly timeSinceLastScaleUs: number;
  /** Each routable replica as the router sees it (stale signals apply). */
  readonly replicas: readonly ReplicaSignal[];
  /** Replicas placed but still provisioning or loading, and their KV capacity in tokens. */
  readonly pendingReplicas: number;
  readonly pendingCapacityTokens: number;
}

export interface ScaleDecision {
  readonly action: ScaleAction;
  /** Replicas wanted; the caller clamps to [min, max] (INV scale_bounds). */
  readonly targetReplicas: number;
  readonly reason: string;
}

export interface AutoScalePolicy {
  readonly name: string;
  evaluate(ctx: AutoScaleContext): ScaleDecision;
}

/** A decision for `ctx`, with the target clamped into the deployment's bounds and the action made consistent. */
export function clampScaleDecision(ctx: AutoScaleContext, wanted: number, reason: string): ScaleDecision {
  const target = Math.min(ctx.maxReplicas, Math.max(ctx.minReplicas, Math.round(wanted)));
  const action: ScaleAction = target > ctx.currentReplicas ? 'up' : target < ctx.currentReplicas ? 'down' : 'none';
  return { action, targetReplicas: target, reason };
}
