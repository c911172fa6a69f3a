/**
 * The JSON-only `autoscaler` section of a run with instance lifecycle: the replica timeline per scaling
 * target, the scale actions, the drains' killed / redirected requests, and GPU-hours and cost (each replica
 * from its creation to its termination or the end of the run, times its TP; cost at its cost per hour).
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import { InstanceState, type LifecycleChange } from '../cluster/autoscaler/lifecycle.js';

const LIVE = new Set<number>([InstanceState.Loading, InstanceState.WarmingUp, InstanceState.Active]);

export interface ScaleEvent {
  readonly timeUs: number;
  readonly deployment: string;
  readonly from: number;
  readonly to: number;
}

function targetOf(cs: ClusterSimulator, i: number): string {
  return cs.autoscaler?.actuator.targetOf(i) ?? cs.facts[i]?.target ?? cs.facts[i]?.model ?? '';
}

/** Replica counts (routable or loading) per target after each change that moved them. */
export function replicaTimeline(cs: ClusterSimulator): { timeUs: number; target: string; replicas: number; routable: number }[] {
  const lc = cs.lifecycle;
  if (lc === null) return [];
  const state = new Map<number, number>();
  const last = new Map<string, string>();
  const out: { timeUs: number; target: string; replicas: number; routable: number }[] = [];
  const changes = lc.changes;
  for (let k = 0; k < changes.length; k++) {
    const c = changes[k] as LifecycleChange;
    state.set(c.index, c.to);
    // Report once per tick and target: after the last change at this time.
    const next = changes[k + 1];
    const t = targetOf(cs, c.index);
    if (next !== undefined && next.clock === c.clock && targetOf(cs, next.index) === t) continue;
    let live = 0;
    let routable = 0;
    for (const [i, s] of state) {
      if (targetOf(cs, i) !== t) continue;
      if (LIVE.has(s)) live++;
      if (s === InstanceState.Active || s === InstanceState.WarmingUp) routable++;
    }
    const key = `${live}/${routable}`;
    if (last.get(t) === key) continue;
    last.set(t, key);
    out.push({ timeUs: c.clock, target: t, replicas: live, routable });
  }
  return out;
}

/** Scale actions as the oscillation detector reads them (replicas before and after). */
export function scaleEvents(cs: ClusterSimulator): ScaleEvent[] {
  return (cs.autoscaler?.records ?? []).filter((r) => r.action !== 'failed').map((r) => ({
    timeUs: r.clock, deployment: r.target, from: r.action === 'up' ? r.replicas - 1 : r.replicas + 1, to: r.replicas,
  }));
}

/**
 * What the run's replicas cost up to `endUs`: GPU-hours (each replica from its creation to its termination,
 * times its TP), dollars at each replica's cost per hour, and the time-weighted mean number of live replicas.
 * Without an instance lifecycle every instance lives for the whole run.
 */
export function gpuUsage(cs: ClusterSimulator, endUs: number): { gpuHours: number; cost: number; replicasMean: number } {
  const created = new Map<number, number>();
  const ended = new Map<number, number>();
  for (const c of cs.lifecycle?.changes ?? []) {
    if (c.from === 0) created.set(c.index, c.clock);
    if (c.to === InstanceState.Terminated) ended.set(c.index, c.clock);
  }
  let gpuUs = 0;
  let cost = 0;
  let replicaUs = 0;
  cs.instances.forEach((_, i) => {
    const span = Math.max((ended.get(i) ?? endUs) - (created.get(i) ?? 0), 0);
    const tp = Math.max(cs.facts[i]?.tpDegree ?? 1, 1);
    gpuUs += span * tp;
    replicaUs += span;
    cost += (span / 3.6e9) * (cs.facts[i]?.costPerHour ?? 0);
  });
  return { gpuHours: gpuUs / 3.6e9, cost, replicasMean: endUs > 0 ? replicaUs / endUs : cs.instances.length };
}

/** One point of the replica timeline: a target's live (loading, warming up, active) and routable replicas from `time_us`. */
export interface ReplicaTimelinePoint {
  readonly time_us: number;
  /** Model or deployment configuration. */
  readonly target: string;
  readonly replicas: number;
  readonly routable: number;
}

/** One scale action of the autoscaler (`failed`: it could not be carried out; `reason` says why). */
export interface ScaleAction {
  readonly time_us: number;
  readonly target: string;
  readonly action: 'up' | 'down' | 'failed';
  readonly instance_id: string;
  /** Replicas (routable + loading) of the target after the action. */
  readonly replicas: number;
  readonly reason: string;
}

/** The JSON output's `autoscaler` section (runs with an instance lifecycle: node pools or an autoscaler). */
export interface AutoscalerReport {
  readonly replica_timeline: readonly ReplicaTimelinePoint[];
  readonly scale_actions: readonly ScaleAction[];
  /** Scale actions that failed (the `failed` entries of `scale_actions`). */
  readonly failed_actions: number;
  /** Event triggers that fired (each ran one autoscaler evaluation). */
  readonly triggers_fired: number;
  /** Requests killed by an immediate drain or a drain timeout. */
  readonly drain_killed: number;
  /** Queued requests routed again by a redirect drain. */
  readonly drain_redirected: number;
  /** Σ over replicas of (termination or end of run − creation) × TP, hours. */
  readonly gpu_hours: number;
  /** Σ over replicas of their lifetime × cost per hour. */
  readonly cost: number;
}

export function scalingSection(cs: ClusterSimulator): AutoscalerReport | null {
  if (cs.lifecycle === null) return null;
  const { gpuHours, cost } = gpuUsage(cs, cs.clock);
  const a = cs.autoscaler;
  return {
    replica_timeline: replicaTimeline(cs).map((e) => ({ time_us: e.timeUs, target: e.target, replicas: e.replicas, routable: e.routable })),
    scale_actions: (a?.records ?? []).map((r) => ({ time_us: r.clock, target: r.target, action: r.action, instance_id: r.instanceId, replicas: r.replicas, reason: r.reason })),
    failed_actions: a?.actuator.failures ?? 0,
    triggers_fired: a?.triggersFired ?? 0,
    drain_killed: cs.drainKilled,
    drain_redirected: cs.drainRedirected,
    gpu_hours: gpuHours,
    cost,
  };
}
