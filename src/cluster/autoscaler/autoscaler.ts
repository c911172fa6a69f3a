/**
 * The model autoscaler on the cluster's event queue (reference autoscaler.go, direct_actuator.go,
 * blis-cluster.md §7.2–7.3):
 *
 *   ScalingTick (prio 8, first at t=0, then every interval) -> router state over routable instances (stale
 *   signals apply) -> decisions (the reference's saturation pipeline, or a pluggable AutoScalePolicy per
 *   model) -> stabilization windows per model and direction -> ScaleActuation (prio 9) after the HPA scrape
 *   delay -> scale-up places new instances on node pools (Loading, then Active after the loading delay),
 *   scale-down drains the Active instance with the smallest id.
 *
 * Ticking stops when the horizon is unbounded and no arrival is pending and nothing is in flight, so the run
 * can end.
 */
import type { ScaleRecord } from '../../domain/decision-records.js';
import { MAX_INT64 } from '../../domain/units.js';
import type { GoRand } from '../../engine/go-rand.js';
import { EventKind } from '../../instance/events.js';
import type { Instance } from '../../instance/instance.js';
import { analyzeSaturation, collectModelSignals, unlimitedEngine, type SaturationConfig, type ScaleDelta, type Variant } from '../../routing/autoscale-saturation.js';
import type { RouterState } from '../../routing/types.js';
import type { StaticFacts } from '../snapshot.js';
import { sampleDelayUs, type DelaySpec, type PlacementManager } from './infra.js';
import { InstanceState, type Lifecycle } from './lifecycle.js';

export interface AutoscalerSetup {
  readonly intervalUs: number;
  readonly scaleUpWindowUs: number;
  readonly scaleDownWindowUs: number;
  readonly hpaScrapeDelay: DelaySpec;
  readonly saturation: SaturationConfig;
}

/** What a new replica runs with, resolved for its GPU (KV capacity from the pool's GPU memory). */
export interface ReplicaBuild {
  readonly kvTotalBlocks: number | null;
  readonly maxModelLen: number | null;
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
  /** Adds a placed replica in Loading state; returns its index. */
  addReplica(id: string, facts: StaticFacts, build: ReplicaBuild): number;
  /** Loading delay just passed or was zero: Loading -> Active (or WarmingUp). */
  loaded(index: number): void;
  /** KV capacity / max-model-len for a replica placed on a GPU with this much memory. */
  buildFor(gpuMemoryGiB: number): ReplicaBuild;
  readonly loadingRng: GoRand;
  readonly loadingDelay: DelaySpec;
}

/** Payload of a ScaleActuation event. */
interface Actuation {
  readonly decisions: readonly ScaleDelta[];
}

export class Autoscaler {
  private readonly upFirst = new Map<string, number>();
  private readonly downFirst = new Map<string, number>();
  private nextSeq = 0;
  readonly records: ScaleRecord[] = [];
  /** Decisions the actuator could not carry out (no placement, no Active instance). */
  failures = 0;

  constructor(
    private readonly host: ScalingHost,
    private readonly cfg: AutoscalerSetup,
    private readonly rng: GoRand,
  ) {}

  /** The first tick, at the current clock (pushed before any arrival, as the reference's Run does). */
  start(): void {
    this.host.scheduleCluster(this.host.clock, EventKind.ScalingTick, null);
  }

  tick(now: number): void {
    const h = this.host;
    const state = h.scalingState();
    const decisions = unlimitedEngine(collectModelSignals(state).map((m) => analyzeSaturation(m, this.cfg.saturation)));
    const ups = new Set<string>();
    const downs = new Set<string>();
    for (const d of decisions) (d.delta > 0 ? ups : downs).add(d.model);
    for (const m of [...this.upFirst.keys()]) if (!ups.has(m)) this.upFirst.delete(m);
    for (const m of [...this.downFirst.keys()]) if (!downs.has(m)) this.downFirst.delete(m);
    const passed: ScaleDelta[] = [];
    for (const d of decisions) {
      if (d.delta === 0) continue;
      const up = d.delta > 0;
      const timers = up ? this.upFirst : this.downFirst;
      const window = up ? this.cfg.scaleUpWindowUs : this.cfg.scaleDownWindowUs;
      let first = timers.get(d.model);
      if (first === undefined) {
        timers.set(d.model, now);
        if (window > 0) continue;
        first = now;
      }
      if (now - first < Math.trunc(window)) continue;
      timers.delete(d.model);
      passed.push(d);
    }
    if (passed.length > 0) {
      const at = now + sampleDelayUs(this.cfg.hpaScrapeDelay, this.rng);
      const payload: Actuation = { decisions: passed };
      h.scheduleCluster(at, EventKind.ScaleActuation, payload);
    }
    this.scheduleNext(now);
  }

  private scheduleNext(now: number): void {
    const h = this.host;
    if (h.horizon >= MAX_INT64 && h.pendingArrivals <= 0) {
      let inFlight = 0;
      for (const v of h.inFlight) inFlight += v;
      if (inFlight === 0) return;
    }
    h.scheduleCluster(now + Math.trunc(this.cfg.intervalUs), EventKind.ScalingTick, null);
  }

  actuate(payload: object): void {
    for (const d of (payload as Actuation).decisions) {
      if (d.delta > 0) this.scaleUp(d);
      else this.scaleDown(d);
    }
  }

  private scaleUp(d: ScaleDelta): void {
    const h = this.host;
    for (let k = 0; k < d.delta; k++) {
      this.nextSeq++;
      const id = `autoscale-${d.model}-${String(this.nextSeq).padStart(6, '0')}`;
      const placed = h.placement?.place(id, d.variant.gpuType, d.variant.tp) ?? null;
      if (placed === null) {
        this.failures++;
        this.record('failed', d.model, id, h.placement === null ? 'no node pools to place on' : `no Ready node has ${d.variant.tp} free ${d.variant.gpuType} GPUs`);
        continue;
      }
      const facts: StaticFacts = { model: d.model, gpuType: placed.gpuType, tpDegree: d.variant.tp, maxBatchSize: h.maxBatchSize, costPerHour: placed.pool.costPerHour };
      const index = h.addReplica(id, facts, h.buildFor(placed.pool.gpuMemoryGiB));
      const delay = sampleDelayUs(h.loadingDelay, h.loadingRng);
      if (delay === 0) h.loaded(index);
      else h.scheduleCluster(h.clock + delay, EventKind.InstanceLoaded, h.instances[index] as Instance);
      this.record('up', d.model, id, `placed on ${placed.nodeId}`);
    }
  }

  private scaleDown(d: ScaleDelta): void {
    const h = this.host;
    for (let k = 0; k < -d.delta; k++) {
      const index = this.oldestActive(d.model, d.variant);
      if (index < 0) {
        this.failures++;
        this.record('failed', d.model, '', 'no Active instance to drain');
        continue;
      }
      h.lifecycle.transition(index, InstanceState.Draining, h.clock);
      this.record('down', d.model, (h.instances[index] as Instance).id, 'draining');
    }
  }

  /** The Active instance of `model` and `variant` with the lexicographically smallest id (-1 if none). */
  private oldestActive(model: string, v: Variant): number {
    const h = this.host;
    let best = -1;
    for (let i = 0; i < h.instances.length; i++) {
      if (h.lifecycle.state(i) !== InstanceState.Active) continue;
      const f = h.facts(i);
      if (f.model !== model || f.gpuType !== v.gpuType || Math.max(f.tpDegree, 1) !== v.tp) continue;
      if (best < 0 || (h.instances[i] as Instance).id < (h.instances[best] as Instance).id) best = i;
    }
    return best;
  }

  /** Replicas of `model` that are routable or loading. */
  replicas(model: string): number {
    const h = this.host;
    let n = 0;
    for (let i = 0; i < h.instances.length; i++) {
      const s = h.lifecycle.state(i);
      if (h.facts(i).model === model && (s === InstanceState.Active || s === InstanceState.WarmingUp || s === InstanceState.Loading)) n++;
    }
    return n;
  }

  private record(action: ScaleRecord['action'], target: string, instanceId: string, reason: string): void {
    this.records.push({ clock: this.host.clock, target, action, instanceId, replicas: this.replicas(target), reason });
  }
}
