/**
 * Carrying out scale decisions (reference direct_actuator.go; policy-search-design §4 "Scaling Actuation
 * Model"):
 *
 *   up    id `autoscale-<target>-<%06d>` (the counter advances even when placement fails); placed first-fit
 *         on the node pools (or, beyond the reference, unplaced when the target allows it and is below its
 *         maximum); Loading for the provisioning delay + model load time (the reference: its loading delay),
 *         then WarmingUp for the warm-up profile (penalised step times), then Active.
 *   down  the Active replica of the target with the smallest id is drained: `wait` (the reference: it
 *         leaves the routable set and terminates once empty; with a timeout, what is left then is killed),
 *         `immediate` (queued and running work is killed: counted terminal state `drain_killed`), `redirect`
 *         (queued work is routed again; running work finishes).
 */
import type { ScaleRecord } from '../../domain/decision-records.js';
import type { GoRand } from '../../gocompat/go-rand.js';
import { EventKind } from '../../instance/events.js';
import type { Instance } from '../../instance/instance.js';
import type { WarmupProfile, WarmupState } from '../../latency/warmup.js';
import type { ScaleDelta } from '../../routing/autoscale-saturation.js';
import type { RouterState } from '../../routing/types.js';
import type { StaticFacts } from '../snapshot.js';
import { sampleDelayUs, sampleDistributionUs, type DelayDistribution, type DelaySpec, type PlacementManager } from './infra.js';
import { InstanceState, type Lifecycle } from './lifecycle.js';

/** What a new replica runs with. */
export interface ReplicaBuild {
  readonly kvTotalBlocks: number | null;
  readonly maxModelLen: number | null;
  /** The scaling target it belongs to (its configuration); absent = the cluster-wide configuration. */
  readonly target?: string | undefined;
  /** Its P/D pool role (0 = none). */
  readonly role?: number;
  /** Penalised step times while warming up. */
  readonly warmup?: { readonly profile: WarmupProfile; readonly state: WarmupState };
}

export interface ScalingHost {
  readonly clock: number;
  readonly horizon: number;
  readonly instances: readonly Instance[];
  readonly inFlight: readonly number[];
  readonly pendingArrivals: number;
  readonly lifecycle: Lifecycle;
  readonly placement: PlacementManager | null;
  readonly maxBatchSize: number;
  facts(index: number): StaticFacts;
  scheduleCluster(time: number, kind: EventKind, payload: object | null): void;
  /** Routable instances (no model filter) plus the loading ones (reference buildRouterState(nil)). */
  scalingState(): RouterState;
  /** Adds a replica in Loading state; returns its index. */
  addReplica(id: string, facts: StaticFacts, build: ReplicaBuild): number;
  /** Loading -> Active. */
  loaded(index: number): void;
  /** KV capacity / max-model-len for a replica placed on a GPU with this much memory (target's configuration). */
  buildFor(gpuMemoryGiB: number, target: string | null): ReplicaBuild;
  readonly loadingRng: GoRand;
  readonly loadingDelay: DelaySpec;
}

/** What the actuator needs beyond a ScalingHost: drains. */
export interface ActuatorHost extends ScalingHost {
  readonly provisioningRng: GoRand;
  /** Kills every request queued or running on instance `index`; returns how many. */
  killAll(index: number): number;
  /** Routes the requests waiting on instance `index` again; returns how many. */
  redirectQueued(index: number): number;
  /** Draining instance `index` with nothing left: Terminated, GPUs released. */
  terminateIfEmpty(index: number): void;
}

export type DrainMode = 'wait' | 'immediate' | 'redirect';

export interface DrainConfig {
  readonly mode: DrainMode;
  /** `wait` only: kill what is left this long after draining starts (0 = wait forever, the reference). */
  readonly timeoutUs: number;
}

/** Beyond the reference: how a replica comes up. */
export interface ReplicaLaunch {
  /** Before the model load (node/pod provisioning); null = none. */
  readonly provisioningDelay: DelayDistribution | null;
  /** Model load time; null = the reference's loading delay. */
  readonly modelLoadTime: DelayDistribution | null;
  readonly warmup: WarmupProfile | null;
  /** Cost of one GPU-hour of a replica of `target` not on a node pool. */
  readonly costPerGpuHourOf: (target: string) => number;
  /** Scale-up without node pools is allowed up to each target's maximum. */
  readonly unplaced: boolean;
  /** Also for the saturation pipeline's model-level decisions, which have no target maximum (corrected semantics). */
  readonly unplacedUntargeted?: boolean;
}

/** A target as the actuator needs it. */
export interface ActuationTarget {
  readonly id: string;
  readonly model: string;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly role: number;
}

export class Actuator {
  private seq = 0;
  readonly records: ScaleRecord[] = [];
  /** Per-instance target id of replicas added here (startup instances use their facts). */
  private readonly targets = new Map<number, string>();
  private readonly lastScale = new Map<string, number>();
  private readonly warming = new Map<number, WarmupState>();
  failures = 0;
  killed = 0;
  redirected = 0;

  constructor(
    private readonly h: ActuatorHost,
    private readonly drain: DrainConfig,
    private readonly launch: ReplicaLaunch | null,
    /** Floor of a model's replicas for decisions without a target (the saturation pipeline); 0 = none (reference). */
    private readonly untargetedMin = 0,
  ) {}

  targetOf(i: number): string {
    const t = this.targets.get(i);
    if (t !== undefined) return t;
    const f = this.h.facts(i);
    return f.target ?? f.model;
  }

  lastScaleAt(target: string): number | undefined {
    return this.lastScale.get(target);
  }

  capacityTokens(i: number): number {
    const kv = this.h.instances[i]?.kv;
    return kv === undefined ? 0 : kv.totalBlocks * kv.blockSize;
  }

  /** Replicas of `target` routable or loading (not draining or terminated). */
  replicas(target: string): number {
    let n = 0;
    for (let i = 0; i < this.h.instances.length; i++) {
      const s = this.h.lifecycle.state(i);
      if (this.targetOf(i) === target && (s === InstanceState.Active || s === InstanceState.WarmingUp || s === InstanceState.Loading)) n++;
    }
    return n;
  }

  apply(decisions: readonly ScaleDelta[], targets: ReadonlyMap<string, ActuationTarget>): void {
    for (const d of decisions) {
      const t = targets.get(d.model) ?? null;
      if (d.delta > 0) this.scaleUp(d, t);
      else this.scaleDown(d, t);
      if (t !== null) this.lastScale.set(t.id, this.h.clock);
    }
  }

  private scaleUp(d: ScaleDelta, t: ActuationTarget | null): void {
    const h = this.h;
    const target = t?.id ?? d.model;
    for (let k = 0; k < d.delta; k++) {
      this.seq++;
      const id = `autoscale-${target}-${String(this.seq).padStart(6, '0')}`;
      if (t !== null && t.maxReplicas > 0 && this.replicas(t.id) >= t.maxReplicas) {
        this.fail(target, id, `at its maximum of ${t.maxReplicas} replicas`);
        continue;
      }
      const placed = h.placement?.place(id, d.variant.gpuType, d.variant.tp, h.clock) ?? null;
      const unplaced = placed === null && h.placement === null && this.launch?.unplaced === true && (t !== null ? t.maxReplicas > 0 : this.launch.unplacedUntargeted === true);
      if (placed === null && !unplaced) {
        this.fail(target, id, h.placement === null ? 'no node pools to place on' : `no Ready node has ${d.variant.tp} free ${d.variant.gpuType} GPUs`);
        continue;
      }
      const gpuType = placed?.gpuType ?? d.variant.gpuType;
      const perGpuCost = placed !== null ? placed.pool.costPerHour / placed.pool.gpusPerNode : (this.launch?.costPerGpuHourOf(target) ?? 0);
      const facts: StaticFacts = { model: t?.model ?? d.model, gpuType, tpDegree: d.variant.tp, maxBatchSize: h.maxBatchSize, costPerHour: placed?.pool.costPerHour ?? perGpuCost * d.variant.tp, target };
      const base = h.buildFor(placed?.pool.gpuMemoryGiB ?? 0, t?.id ?? null);
      const warmState: WarmupState | null = this.launch?.warmup ? { startUs: -1 } : null;
      const build: ReplicaBuild = { ...base, target, ...(warmState !== null && this.launch?.warmup ? { warmup: { profile: this.launch.warmup, state: warmState } } : {}) };
      const index = h.addReplica(id, facts, build);
      if (t !== null) this.targets.set(index, t.id);
      if (warmState !== null) this.warming.set(index, warmState);
      this.record('up', target, id, placed !== null ? `placed on ${placed.nodeId}` : 'unplaced replica');
      // A node still being provisioned delays the replica's start until it is Ready.
      const delay = this.launchDelay() + Math.max(0, (placed?.readyAt ?? 0) - h.clock);
      if (delay === 0) this.ready(index);
      else h.scheduleCluster(h.clock + delay, EventKind.InstanceLoaded, h.instances[index] as Instance);
    }
  }

  /** Provisioning + model load (the reference: its loading delay alone). */
  private launchDelay(): number {
    const h = this.h;
    const l = this.launch;
    let d = l?.provisioningDelay ? sampleDistributionUs(l.provisioningDelay, h.provisioningRng) : 0;
    d += l?.modelLoadTime ? sampleDistributionUs(l.modelLoadTime, h.loadingRng) : sampleDelayUs(h.loadingDelay, h.loadingRng);
    return d;
  }

  /** The loading delay of replica `index` passed: warm up (when configured) or go Active. */
  ready(index: number): void {
    const h = this.h;
    const w = this.warming.get(index);
    const st = h.lifecycle.state(index);
    if (st === InstanceState.WarmingUp) {
      h.lifecycle.transition(index, InstanceState.Active, h.clock);
      return;
    }
    if (st !== InstanceState.Loading) return;
    if (w === undefined || !this.launch?.warmup || this.launch.warmup.durationUs <= 0) {
      h.loaded(index);
      return;
    }
    h.lifecycle.transition(index, InstanceState.WarmingUp, h.clock);
    w.startUs = h.clock;
    h.scheduleCluster(h.clock + this.launch.warmup.durationUs, EventKind.InstanceLoaded, h.instances[index] as Instance);
  }

  private scaleDown(d: ScaleDelta, t: ActuationTarget | null): void {
    const h = this.h;
    const target = t?.id ?? d.model;
    for (let k = 0; k < -d.delta; k++) {
      const min = t !== null ? t.minReplicas : this.untargetedMin;
      // Without a target the floor is 0 in the reference: the check is skipped, so its records stay as they were.
      if ((t !== null || min > 0) && this.replicas(target) <= min) {
        this.fail(target, '', `at its minimum of ${min} replicas`);
        continue;
      }
      const index = this.oldestActive(d, t);
      if (index < 0) {
        this.fail(target, '', 'no Active instance to drain');
        continue;
      }
      h.lifecycle.transition(index, InstanceState.Draining, h.clock);
      const inst = h.instances[index] as Instance;
      let how = 'draining';
      if (this.drain.mode === 'immediate') {
        const n = h.killAll(index);
        this.killed += n;
        how = `draining: killed ${n} requests`;
        h.terminateIfEmpty(index);
      } else if (this.drain.mode === 'redirect') {
        const n = h.redirectQueued(index);
        this.redirected += n;
        how = `draining: redirected ${n} queued requests`;
        h.terminateIfEmpty(index);
      } else if (this.drain.timeoutUs > 0) {
        h.scheduleCluster(h.clock + this.drain.timeoutUs, EventKind.DrainTimeout, inst);
      }
      this.record('down', target, inst.id, how);
    }
  }

  /** DrainTimeout: whatever is still on a draining instance is killed. */
  drainTimeout(index: number): void {
    const h = this.h;
    if (h.lifecycle.state(index) !== InstanceState.Draining) return;
    this.killed += h.killAll(index);
    h.terminateIfEmpty(index);
  }

  /** The Active replica with the smallest id: of the target (policy mode) or of the model and variant (reference). */
  private oldestActive(d: ScaleDelta, t: ActuationTarget | null): number {
    const h = this.h;
    let best = -1;
    for (let i = 0; i < h.instances.length; i++) {
      if (h.lifecycle.state(i) !== InstanceState.Active) continue;
      if (t !== null) {
        if (this.targetOf(i) !== t.id) continue;
      } else {
        const f = h.facts(i);
        if (f.model !== d.model || f.gpuType !== d.variant.gpuType || Math.max(f.tpDegree, 1) !== d.variant.tp) continue;
      }
      if (best < 0 || (h.instances[i] as Instance).id < (h.instances[best] as Instance).id) best = i;
    }
    return best;
  }

  private fail(target: string, id: string, reason: string): void {
    this.failures++;
    this.record('failed', target, id, reason);
  }

  private record(action: ScaleRecord['action'], target: string, instanceId: string, reason: string): void {
    this.records.push({ clock: this.h.clock, target, action, instanceId, replicas: this.replicas(target), reason });
  }
}
