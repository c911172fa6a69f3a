/**
 * Lifecycle and autoscaling invariants, checked on a finished run from the lifecycle's transition log, the
 * instances and the placement — never from the autoscaler's own counters:
 *   - every transition is one of the reference's valid ones, and each instance's log starts at its creation;
 *   - scale bounds: at every transition each bounded target holds min..max replicas (routable or loading);
 *   - a terminated instance holds no work and no KV, and no GPU; placed live instances hold exactly their TP;
 *   - every scale-down record drained the instance it names at that time;
 *   - routing went to routable instances only (when {@link watchRouting} observed the run).
 */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { InstanceState } from '../../src/cluster/autoscaler/lifecycle.js';
import type { InvariantContext } from './context.js';

const VALID: Record<number, readonly number[]> = {
  [InstanceState.Loading]: [InstanceState.WarmingUp, InstanceState.Active, InstanceState.Terminated],
  [InstanceState.WarmingUp]: [InstanceState.Active, InstanceState.Draining, InstanceState.Terminated],
  [InstanceState.Active]: [InstanceState.Draining, InstanceState.Terminated],
  [InstanceState.Draining]: [InstanceState.Terminated],
  [InstanceState.Terminated]: [],
};

/** Routing decisions to a non-routable instance, recorded while the run went (attach before `run`). */
export function watchRouting(cs: ClusterSimulator): string[] {
  const bad: string[] = [];
  const prev = cs.onRouting;
  cs.onRouting = (o) => {
    prev?.(o);
    if (!cs.routable(o.instanceIndex)) bad.push(`lifecycle: ${o.req.id} routed at ${o.clock} to ${cs.instances[o.instanceIndex]?.id}, which was not routable`);
  };
  return bad;
}

export interface ScalingBounds {
  /** Target id -> [min, max] replicas (max 0 = unbounded). */
  readonly bounds: ReadonlyMap<string, readonly [number, number]>;
}

export function checkScaling(ctx: InvariantContext, bounds: ScalingBounds | null = null): string[] {
  const { cs } = ctx;
  const lc = cs.lifecycle;
  if (lc === null) return [];
  const v: string[] = [];
  const state = new Map<number, number>();
  const live = (s: number | undefined): boolean => s === InstanceState.Loading || s === InstanceState.WarmingUp || s === InstanceState.Active;
  const targetOf = (i: number): string => cs.autoscaler?.actuator.targetOf(i) ?? cs.facts[i]?.target ?? cs.facts[i]?.model ?? '';
  let lastClock = 0;
  for (const c of lc.changes) {
    if (c.clock < lastClock) v.push(`lifecycle: transition of #${c.index} at ${c.clock} logged after one at ${lastClock}`);
    lastClock = c.clock;
    const before = state.get(c.index);
    if (c.from === 0) {
      if (before !== undefined) v.push(`lifecycle: instance #${c.index} created twice`);
    } else if (before !== c.from) {
      v.push(`lifecycle: instance #${c.index} left ${c.from} but was in ${before ?? 'no state'}`);
    } else if (!(VALID[c.from] ?? []).includes(c.to)) {
      v.push(`lifecycle: instance #${c.index} made the invalid transition ${c.from} -> ${c.to}`);
    }
    state.set(c.index, c.to);
    if (bounds !== null && c.clock > 0) {
      const t = targetOf(c.index);
      const b = bounds.bounds.get(t);
      if (b !== undefined) {
        let n = 0;
        for (const [i, s] of state) if (live(s) && targetOf(i) === t) n++;
        if (n < b[0] || (b[1] > 0 && n > b[1])) v.push(`scale_bounds: ${t} has ${n} replicas at ${c.clock}, outside [${b[0]}, ${b[1]}]`);
      }
    }
  }
  cs.instances.forEach((inst, i) => {
    if (state.get(i) !== lc.state(i)) v.push(`lifecycle: ${inst.id} ends ${lc.state(i)} but its log says ${state.get(i)}`);
    const gpus = cs.placement?.gpusOf(inst.id) ?? 0;
    if (lc.state(i) === InstanceState.Terminated) {
      if (inst.waitQ.length > 0 || inst.runningBatch.length > 0) v.push(`lifecycle: terminated ${inst.id} still holds work`);
      if (inst.kv.usedBlocks() > 0) v.push(`lifecycle: terminated ${inst.id} still uses ${inst.kv.usedBlocks()} KV blocks`);
      if (gpus !== 0) v.push(`placement: terminated ${inst.id} still holds ${gpus} GPUs`);
    } else if (cs.placement !== null && gpus > 0 && gpus !== Math.max(cs.facts[i]?.tpDegree ?? 1, 1)) {
      v.push(`placement: ${inst.id} holds ${gpus} GPUs, its TP is ${cs.facts[i]?.tpDegree}`);
    }
  });
  const err = cs.placement?.conservationError();
  if (err) v.push(`placement: ${err}`);
  for (const r of cs.autoscaler?.records ?? []) {
    if (r.action !== 'down') continue;
    const i = cs.instances.findIndex((x) => x.id === r.instanceId);
    if (i < 0 || !lc.changes.some((c) => c.index === i && c.to === InstanceState.Draining && c.clock === r.clock)) v.push(`scale: down record for ${r.instanceId} at ${r.clock} without a drain then`);
  }
  return v;
}
