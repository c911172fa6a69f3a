/**
 * The autoscaler on the cluster's event queue (reference autoscaler.go, direct_actuator.go, blis-cluster.md
 * §7.2–7.3; policy-search-design §4):
 *
 *   ScalingTick (prio 8, first at t=0, then every interval) or an event trigger -> router state over routable
 *   instances (stale signals apply) -> decisions: the reference's saturation pipeline per model, or a pluggable
 *   AutoScalePolicy per scaling target (clamped into its min/max) -> stabilization windows per target and
 *   direction -> ScaleActuation (prio 9) after the HPA scrape delay -> actuator.ts (scale up: place, provision,
 *   load, warm up; scale down: drain).
 *
 * Periodic ticking stops when the horizon is unbounded and no arrival is pending and nothing is in flight, so
 * the run can end.
 */
import type { Request } from '../../domain/request.js';
import { MAX_INT64 } from '../../domain/units.js';
import type { GoRand } from '../../gocompat/go-rand.js';
import { EventKind } from '../../instance/events.js';
import { analyzeSaturation, collectModelSignals, replicaSignal, unlimitedEngine, type ReplicaSignal, type SaturationConfig, type ScaleDelta } from '../../routing/autoscale-saturation.js';
import type { AutoScalePolicy, ScaleDecision } from '../../routing/autoscale.js';
import { Actuator, type ActuatorHost, type DrainConfig, type ReplicaLaunch } from './actuator.js';
import { sampleDelayUs, type DelaySpec } from './infra.js';
import { InstanceState } from './lifecycle.js';
import { HpaStabilizer, TimerStabilizer, type Stabilizer } from './stabilize.js';
import { buildContext, ScalingSignals, type TargetView } from './signals.js';

/** A scaling unit of the policy mode: a model, or one pool of a deployment configuration. */
export interface ScaleTarget extends TargetView {
  /** GPU type and TP its replicas are placed with. */
  readonly gpuType: string;
  readonly tp: number;
  /** P/D role of its replicas (0 = monolithic). */
  readonly role: number;
}

export interface PolicyScaling {
  readonly policy: AutoScalePolicy;
  /** Explicit targets (deployment file); null = one per model of the startup instances. */
  readonly targets: readonly ScaleTarget[] | null;
  /** Bounds for derived targets. */
  readonly minReplicas: number;
  /** 0 = bounded by node-pool capacity only. */
  readonly maxReplicas: number;
}

/** Event triggers (beyond the reference): an extra evaluation when a condition holds, at most every `minGapUs`. */
export interface TriggerConfig {
  /** Mean queue depth per routable replica above this triggers (0 = off). */
  readonly queueDepth: number;
  /** SLO attainment of any class below this triggers (0 = off). */
  readonly sloAttainment: number;
  /** Mean KV utilization above this for `sustainedUs` triggers (0 = off). */
  readonly utilization: number;
  readonly sustainedUs: number;
  /** Relative change of the request rate vs the last evaluation (0.5 = ±50%) triggers (0 = off). */
  readonly rateChange: number;
  readonly minGapUs: number;
  /** How often conditions are checked on arrivals and completions. */
  readonly checkEveryUs: number;
}

export interface AutoscalerSetup {
  /** Periodic tick interval; 0 = event triggers only. */
  readonly intervalUs: number;
  readonly scaleUpWindowUs: number;
  readonly scaleDownWindowUs: number;
  readonly hpaScrapeDelay: DelaySpec;
  readonly saturation: SaturationConfig;
  /** Pluggable policy per target; null/absent = the reference's saturation pipeline. */
  readonly policy?: PolicyScaling | null;
  readonly triggers?: TriggerConfig | null;
  readonly drain?: DrainConfig;
  readonly launch?: ReplicaLaunch;
  /**
   * Corrected semantics: the HPA's stabilization (each direction acts on the lowest up / highest down
   * recommendation of its window) instead of the reference's timers.
   */
  readonly hpaStabilization?: boolean;
  /**
   * Corrected semantics: the fewest replicas a scale-down of the saturation pipeline leaves a model (the HPA's
   * minReplicas, default 1; policy targets carry their own). Absent = 0, the reference's (it can drain a model to
   * zero, after which nothing is left to observe and it never scales up again).
   */
  readonly saturationMinReplicas?: number;
  /**
   * Corrected semantics: no scale-down is decided until the cluster has been observed for this long from the
   * autoscaler's start (one tick interval). The HPA treats a replica without a complete metrics window as fully
   * loaded when it would scale down; at t = 0 no replica has one, and a scrape then only shows a cluster that has
   * not been offered any load yet. Absent = 0 (the reference).
   */
  readonly scaleDownAfterUs?: number;
}

export type { ReplicaBuild, ScalingHost } from './actuator.js';

interface Actuation {
  readonly decisions: readonly ScaleDelta[];
}

/** Per-target decision record (JSON trace). */
export interface PolicyDecisionRecord {
  readonly clock: number;
  readonly target: string;
  readonly current: number;
  readonly decision: ScaleDecision;
  readonly trigger: 'periodic' | 'event';
}

export class Autoscaler {
  private readonly stabilizer: Stabilizer;
  readonly actuator: Actuator;
  readonly signals = new ScalingSignals();
  readonly decisions: PolicyDecisionRecord[] = [];
  private targets: readonly ScaleTarget[] | null = null;
  private lastCheck = -Infinity;
  private lastTrigger = -Infinity;
  private lastRate = -1;
  private utilHighSince = -1;
  /** When the autoscaler started observing (its first tick). */
  private startedAt = 0;
  /** Event triggers fired (each ran one evaluation). */
  triggersFired = 0;

  constructor(
    private readonly host: ActuatorHost,
    private readonly cfg: AutoscalerSetup,
    private readonly rng: GoRand,
  ) {
    this.actuator = new Actuator(host, cfg.drain ?? { mode: 'wait', timeoutUs: 0 }, cfg.launch ?? null, cfg.saturationMinReplicas ?? 0);
    const windows = { upUs: cfg.scaleUpWindowUs, downUs: cfg.scaleDownWindowUs };
    this.stabilizer = cfg.hpaStabilization === true ? new HpaStabilizer(windows) : new TimerStabilizer(windows);
  }

  get records(): Actuator['records'] {
    return this.actuator.records;
  }

  /** The first periodic tick, at the current clock (pushed before any arrival, as the reference's Run does). */
  start(): void {
    this.startedAt = this.host.clock;
    if (this.cfg.intervalUs > 0) this.host.scheduleCluster(this.host.clock, EventKind.ScalingTick, null);
  }

  /** Arrival / completion observers (policy signals and event triggers); cheap when neither is configured. */
  onArrival(req: Request, clock: number): void {
    if (this.cfg.policy) this.signals.onArrival(req, clock);
    if (this.cfg.triggers) this.maybeTrigger(clock);
  }

  onCompleted(req: Request, tick: number): void {
    if (this.cfg.policy) this.signals.onCompleted(req, tick);
    if (this.cfg.triggers) this.maybeTrigger(this.host.clock);
  }

  tick(now: number, trigger: 'periodic' | 'event' = 'periodic'): void {
    const current = new Map<string, number>();
    let decisions = this.cfg.policy ? this.policyDecisions(now, this.cfg.policy, trigger, current) : this.referenceDecisions(current);
    const observeUs = this.cfg.scaleDownAfterUs ?? 0;
    // Too early to judge spare capacity (corrected semantics): a scale-down recommends staying where it is.
    if (observeUs > 0 && now - this.startedAt < observeUs) decisions = decisions.filter((d) => d.delta > 0);
    const passed = this.stabilizer.apply(now, decisions, current);
    if (passed.length > 0) {
      const payload: Actuation = { decisions: passed };
      this.host.scheduleCluster(now + sampleDelayUs(this.cfg.hpaScrapeDelay, this.rng), EventKind.ScaleActuation, payload);
    }
    if (trigger === 'periodic') this.scheduleNext(now);
  }

  actuate(payload: object): void {
    this.actuator.apply((payload as Actuation).decisions, this.targetsById());
  }

  private referenceDecisions(current: Map<string, number>): ScaleDelta[] {
    const state = this.host.scalingState();
    const models = collectModelSignals(state);
    for (const m of models) current.set(m.model, m.replicas.length);
    return unlimitedEngine(models.map((m) => analyzeSaturation(m, this.cfg.saturation)), this.cfg.saturationMinReplicas ?? 0);
  }

  /** Targets of the policy mode: explicit, or one per model of the startup instances (fixed at the first tick). */
  private targetList(p: PolicyScaling): readonly ScaleTarget[] {
    if (this.targets !== null) return this.targets;
    if (p.targets !== null) {
      this.targets = [...p.targets].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return this.targets;
    }
    const h = this.host;
    const seen = new Map<string, ScaleTarget>();
    for (let i = 0; i < h.instances.length; i++) {
      const f = h.facts(i);
      if (f.model === '' || seen.has(f.model)) continue;
      seen.set(f.model, { id: f.model, model: f.model, gpuType: f.gpuType, tp: Math.max(f.tpDegree, 1), role: 0, minReplicas: p.minReplicas, maxReplicas: p.maxReplicas });
    }
    this.targets = [...seen.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.targets;
  }

  private targetsById(): ReadonlyMap<string, ScaleTarget> {
    const m = new Map<string, ScaleTarget>();
    for (const t of this.targets ?? []) m.set(t.id, t);
    return m;
  }

  private policyDecisions(now: number, p: PolicyScaling, trigger: 'periodic' | 'event', current: Map<string, number>): ScaleDelta[] {
    const h = this.host;
    const state = h.scalingState();
    const byId = new Map(state.snapshots.map((s) => [s.id, s]));
    const out: ScaleDelta[] = [];
    for (const t of this.targetList(p)) {
      const replicas: ReplicaSignal[] = [];
      let pending = 0;
      let pendingCap = 0;
      for (let i = 0; i < h.instances.length; i++) {
        if (this.actuator.targetOf(i) !== t.id) continue;
        const s = h.lifecycle.state(i);
        if (s === InstanceState.Loading) {
          pending++;
          pendingCap += this.actuator.capacityTokens(i);
          continue;
        }
        const snap = byId.get(h.instances[i]?.id ?? '');
        if (snap !== undefined) replicas.push(replicaSignal(snap));
      }
      const ctx = buildContext(this.signals, t, now, replicas, { count: pending, capacityTokens: pendingCap }, this.actuator.lastScaleAt(t.id));
      const d = p.policy.evaluate(ctx);
      this.decisions.push({ clock: now, target: t.id, current: ctx.currentReplicas, decision: d, trigger });
      current.set(t.id, ctx.currentReplicas);
      const delta = d.targetReplicas - ctx.currentReplicas;
      if (delta !== 0) out.push({ model: t.id, variant: { gpuType: t.gpuType, tp: t.tp }, delta });
    }
    return out;
  }

  private scheduleNext(now: number): void {
    const h = this.host;
    if (h.horizon >= MAX_INT64 && h.pendingArrivals <= 0 && totalInFlight(h.inFlight) === 0) return;
    h.scheduleCluster(now + Math.trunc(this.cfg.intervalUs), EventKind.ScalingTick, null);
  }

  /** Event triggers: checked at most every `checkEveryUs`; one extra evaluation at most every `minGapUs`. */
  private maybeTrigger(clock: number): void {
    const t = this.cfg.triggers as TriggerConfig;
    if (clock - this.lastCheck < t.checkEveryUs) return;
    this.lastCheck = clock;
    const h = this.host;
    let n = 0;
    let q = 0;
    let u = 0;
    for (let i = 0; i < h.instances.length; i++) {
      if (!h.lifecycle.routable(i)) continue;
      const inst = h.instances[i];
      if (inst === undefined) continue;
      n++;
      q += inst.queueDepth;
      u += inst.kv.usedBlocks() / Math.max(inst.kv.totalBlocks, 1);
    }
    const meanQ = n === 0 ? 0 : q / n;
    const meanU = n === 0 ? 0 : u / n;
    let fire = t.queueDepth > 0 && meanQ > t.queueDepth;
    if (t.utilization > 0) {
      if (meanU > t.utilization) {
        if (this.utilHighSince < 0) this.utilHighSince = clock;
        if (clock - this.utilHighSince >= t.sustainedUs) fire = true;
      } else this.utilHighSince = -1;
    }
    if (t.rateChange > 0 || t.sloAttainment > 0) {
      for (const tg of this.targets ?? []) {
        const rate = this.signals.requestRate(tg.model, clock);
        if (t.rateChange > 0 && this.lastRate > 0 && Math.abs(rate / this.lastRate - 1) > t.rateChange) fire = true;
        this.lastRate = rate;
        if (t.sloAttainment > 0 && Object.values(this.signals.latency(tg.model, clock).slo).some((a) => a < t.sloAttainment)) fire = true;
      }
    }
    if (!fire || clock - this.lastTrigger < t.minGapUs) return;
    this.lastTrigger = clock;
    this.triggersFired++;
    h.scheduleCluster(clock, EventKind.ScalingTrigger, null);
  }
}

function totalInFlight(a: readonly number[]): number {
  let s = 0;
  for (const v of a) s += v;
  return s;
}
