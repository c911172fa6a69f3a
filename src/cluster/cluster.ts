/**
 * The cluster orchestrator (reference blis-cluster.md §1): N instances on one shared clock, driven by ONE
 * event queue for both layers. The reference keeps a cluster heap plus one heap per instance and always takes
 * the cluster event on a time tie, then the lowest-index instance; encoding (layer, instance index, event
 * priority) in the queue's order key reproduces exactly that pop sequence with a single heap.
 *
 * Pipeline: ClusterArrival(t) -> AdmissionDecision(t + admissionLatency) -> RoutingDecision(+ routingLatency)
 * -> instance ArrivalEvent at the routing time (metrics still measure from the original arrival).
 *
 * This file owns the loop (run / advanceTo), the arrival -> admission -> priority -> routing pipeline, request
 * completion bookkeeping and the hosts it lends to the gateway queue, the P/D coordinator and the autoscaler.
 * Its configuration and the policies it consults are typed in config.ts (re-exported here).
 */
import type { AdmissionRecord, PriorityRecord, RoutingRecord } from '../domain/decision-records.js';
import { PdPart, RequestState, type Request } from '../domain/request.js';
import { EventQueue } from '../engine/event-queue.js';
import { EventKind, eventOrder, orderInstance } from '../instance/events.js';
import type { EventSink, Instance } from '../instance/instance.js';
import { computeCounterfactual } from '../routing/counterfactual.js';
import type { SloPriorityMap } from '../domain/slo.js';
import { routingSnapshot, type RouterState, type RoutingDecision, type RoutingSnapshot } from '../routing/types.js';
import { inputBlockHashes } from '../domain/block-hash.js';
import { FlowController, type FlowControlHost } from './flow-control/controller.js';
import { DeferredRouterState } from './deferred-state.js';
import { DEFAULT_SIGNALS_CONFIG, RouterSignalsTracker } from './signals.js';
import { SnapshotProvider } from './snapshot.js';
import { PdCoordinator } from './pd/coordinator.js';
import type { PdHost } from './pd/host.js';
import { hasRole } from './pd/pools.js';
import { projectParents } from './pd/project.js';
import type { StaticFacts } from './snapshot.js';
import { Autoscaler, type ReplicaBuild } from './autoscaler/autoscaler.js';
import type { ActuatorHost } from './autoscaler/actuator.js';
import { sampleDelayUs, type PlacementManager } from './autoscaler/infra.js';
import { InstanceState, Lifecycle } from './autoscaler/lifecycle.js';
import type { ClusterSampler } from './sampler.js';
import type { ClusterConfig, ClusterPolicies, FollowUpHook, InfraSetup, InstanceFactory, RoutingObservation } from './config.js';

export type { ClusterConfig, ClusterPolicies, FollowUpHook, InfraSetup, InstanceFactory, RoutingObservation } from './config.js';

export const DEFAULT_MAX_ADMISSION_DELAYS = 100;

const ARRIVAL_ORDER = eventOrder(-1, EventKind.ClusterArrival);

function sortedByArrival(requests: readonly Request[]): boolean {
  for (let i = 1; i < requests.length; i++) if ((requests[i] as Request).arrivalTime < (requests[i - 1] as Request).arrivalTime) return false;
  return true;
}

/** Builds the policies once the cluster exists (cache-aware scorers query its instances). */
export type PolicyFactory = (cluster: ClusterSimulator) => ClusterPolicies;

export class ClusterSimulator {
  readonly instances: Instance[] = [];
  /**
   * Payloads: the request an event is about (most events), an instance (lifecycle), or scaling data. Client
   * timeouts (one per request, almost all cancelled lazily) wait in a heap of their own.
   */
  private readonly queue = new EventQueue<object>(4096, EventKind.Timeout);
  clock = 0;
  /** Fresh arrivals in the order their ClusterArrival events executed (the trace export order). */
  readonly arrivals: Request[] = [];
  readonly inFlight: number[] = [];
  rejectedRequests = 0;
  routingRejections = 0;
  /** E/P/D: requests lost at encode routing (the encode pool had no routable pod). */
  encodeRoutingRejections = 0;
  readonly shedByTier = new Map<string, number>();
  readonly injectedByClass = new Map<string, number>();
  readonly admissionRecords: AdmissionRecord[] = [];
  readonly routingRecords: RoutingRecord[] = [];
  readonly priorityRecords: PriorityRecord[] = [];
  /** Requests waiting out an admission DELAY right now (INV-1's delayed bucket at the horizon). */
  readonly delayedNow = new Set<Request>();
  /** DELAY decisions issued, and requests rejected for waiting out too many. */
  admissionDelays = 0;
  delayLimitRejections = 0;
  /** Routings where ShadowKV's expected hit differed from the target's actual cache state. */
  shadowDivergences = 0;
  /** The router state of policy-search-design §3, when kept (see ClusterConfig.routerSignals). */
  readonly signals: RouterSignalsTracker | null;
  /** Observer of every routing decision (after validation, before the request moves); unset costs nothing. */
  onRouting: ((o: RoutingObservation) => void) | null = null;
  /**
   * Optional observer called just BEFORE each event executes (after the clock moves; lazily cancelled
   * timeouts are not reported). Used by invariant checkers; unset costs nothing.
   */
  onEvent: ((time: number, kind: EventKind, instanceIndex: number) => void) | null = null;
  /** Time-series sampler (timeseries.ts), called when an event reaches its next tick; unset costs one null check per event. */
  sampler: ClusterSampler | null = null;
  private finished = false;
  private started = false;
  /** An event beyond the horizon was reached: the reference stops there and discards the rest. */
  private pastHorizon = false;
  private readonly indexById = new Map<string, number>();
  readonly snapshots: SnapshotProvider;
  /** The gateway queue when flow control is on; its admission replaces the configured policy. */
  readonly flowController: FlowController | null;
  private readonly policies: ClusterPolicies;
  private followUps: FollowUpHook | null = null;
  /** Arrivals of {@link run} not executed yet: pending[pendingAt..], in arrival order. */
  private pending: readonly Request[] = [];
  private pendingAt = 0;
  /** Arrival time of pending[pendingAt] (Infinity when none is left). */
  private nextArrival = Infinity;
  /** Prefill/decode disaggregation; null when no pools are configured (the standard path pays one null check). */
  readonly pd: PdCoordinator | null;
  /** Instance lifecycle states; null when every instance is Active for the whole run (no node pools, no autoscaler). */
  readonly lifecycle: Lifecycle | null;
  readonly autoscaler: Autoscaler | null;
  readonly placement: PlacementManager | null;
  /** What each instance reports to the router, by index. */
  readonly facts: StaticFacts[] = [];
  /** Instances the configuration asked for (the per-instance report prints only when > 1, as the reference). */
  readonly configuredInstances: number;
  /** ClusterArrival events pushed and not executed yet (the autoscaler stops ticking at 0 with nothing in flight). */
  pendingArrivals = 0;
  /** Requests killed by an immediate drain (or a drain timeout): a terminal state of their own. */
  drainKilled = 0;
  /** Queued requests routed again by a redirect drain. */
  drainRedirected = 0;
  /** Called for each instance added during the run (recorders hook its steps). */
  onInstanceAdded: ((inst: Instance, index: number) => void) | null = null;
  /** After each instance event: lifecycle (drain completion), then P/D completion detection; null when neither exists. */
  private readonly afterInstanceEvent: ((index: number) => void) | null;
  private readonly makeInstance: InstanceFactory;
  private readonly infra: InfraSetup | null;

  constructor(
    private readonly cfg: ClusterConfig,
    numInstances: number,
    makeInstance: InstanceFactory,
    makePolicies: PolicyFactory,
    priorities: SloPriorityMap,
  ) {
    if (numInstances < 0) throw new RangeError('numInstances must be >= 0');
    this.configuredInstances = numInstances;
    this.makeInstance = makeInstance;
    this.infra = cfg.infra ?? null;
    const infra = this.infra;
    const startup = infra === null ? numInstances : infra.initialStates.length;
    for (let i = 0; i < startup; i++) {
      this.facts.push(cfg.facts?.[i] ?? cfg);
      this.register(makeInstance(i, this.sinkFor(i)));
    }
    this.snapshots = new SnapshotProvider(this.instances, cfg.snapshotRefreshInterval, cfg.cacheSignalDelay, this.facts, cfg.corrected === true);
    this.flowController = cfg.flowControl === null ? null : new FlowController(cfg.flowControl, priorities, this.flowHost(), cfg.corrected === true);
    const sig = cfg.routerSignals ?? false;
    this.signals = sig === false ? null : new RouterSignalsTracker(this.instances, (i, req) => this.snapshots.cachedBlocks(i, req), sig === true ? DEFAULT_SIGNALS_CONFIG : sig);
    this.policies = makePolicies(this);
    // Without P/D every routing decision is delivered to its target at once, so the prefix-affinity scorer's
    // records are exactly ShadowKV's, one step ahead: the scorer's index can stand on ShadowKV's (it falls back to
    // its own copy the moment that stops being exact).
    const scorerIndex = this.policies.routing.prefixIndex;
    if (this.signals !== null && !cfg.pd && scorerIndex !== undefined && cfg.sharePrefixIndex !== false) scorerIndex.follow(this.signals.shadow);
    if (cfg.pd) {
      if (!this.policies.pd) throw new Error('ClusterSimulator: P/D pools need PD policies (decider, pool routing)');
      this.pd = new PdCoordinator(this.pdHost(), cfg.pd, this.policies.pd, () => this.policies.routing);
    } else {
      this.pd = null;
    }
    this.placement = infra?.placement ?? null;
    if (infra !== null) {
      const lc = new Lifecycle();
      this.lifecycle = lc;
      for (const s of infra.initialStates) lc.add(s, 0);
      // Startup instances that load: their loading delays are drawn in instance order, as at construction.
      infra.initialStates.forEach((s, i) => {
        if (s === InstanceState.Loading) this.scheduleLoaded(i);
      });
      this.autoscaler = infra.autoscaler === null ? null : new Autoscaler(this.scalingHost(), infra.autoscaler, infra.autoscalerRng);
    } else {
      this.lifecycle = null;
      this.autoscaler = null;
    }
    const lc = this.lifecycle;
    const pd = this.pd;
    this.afterInstanceEvent = lc === null && pd === null ? null : (idx) => {
      if (lc !== null) this.afterLifecycleEvent(lc, idx);
      if (pd !== null && pd.hasPending) pd.afterInstanceEvent(idx);
    };
  }

  private sinkFor(i: number): EventSink {
    return { schedule: (time, kind, req) => this.queue.push(time, eventOrder(i, kind), kind, req) };
  }

  private register(inst: Instance): number {
    const i = this.instances.length;
    if (this.cfg.corrected === true) {
      // --semantics corrected (M6): the router sees a completion when the step producing it ends (its
      // RequestLeft event), not when that step starts; the rest of the completion handling keeps its moment.
      inst.onRequestDone = (req, tick) => (req.outcome === 'completed' ? this.afterDone(req, tick) : this.requestDone(i, req, tick));
      inst.onRequestLeft = (req, tick) => this.routerSeesDone(i, req, tick);
    } else {
      inst.onRequestDone = (req, tick) => this.requestDone(i, req, tick);
    }
    this.instances.push(inst);
    this.inFlight.push(0);
    this.indexById.set(inst.id, i);
    return i;
  }

  /** Whether instance `i` may be routed to (always, without lifecycle tracking). */
  routable(i: number): boolean {
    return this.lifecycle === null || this.lifecycle.routable(i);
  }

  /** A Draining instance whose own event left it empty terminates (reference: checked after each of its events). */
  private afterLifecycleEvent(lc: Lifecycle, idx: number): void {
    if (lc.state(idx) !== InstanceState.Draining) return;
    const inst = this.instances[idx] as Instance;
    if (inst.queueDepth !== 0 || inst.batchSize !== 0) return;
    lc.transition(idx, InstanceState.Terminated, this.clock);
    this.placement?.release(inst.id);
  }

  /** Samples instance `i`'s loading delay: Active now if zero, else an InstanceLoaded event. */
  private scheduleLoaded(i: number): void {
    const infra = this.infra as InfraSetup;
    const delay = sampleDelayUs(infra.loadingDelay, infra.loadingRng);
    if (delay === 0) this.instanceLoaded(i);
    else this.queue.push(this.clock + delay, eventOrder(-1, EventKind.InstanceLoaded), EventKind.InstanceLoaded, this.instances[i] as Instance);
  }

  private instanceLoaded(i: number): void {
    (this.lifecycle as Lifecycle).transition(i, InstanceState.Active, this.clock);
  }

  private scalingHost(): ActuatorHost {
    const self = (): ClusterSimulator => this;
    const infra = this.infra as InfraSetup;
    return {
      get clock() {
        return self().clock;
      },
      horizon: this.cfg.horizon,
      instances: this.instances,
      inFlight: this.inFlight,
      get pendingArrivals() {
        return self().pendingArrivals;
      },
      lifecycle: this.lifecycle as Lifecycle,
      placement: this.placement,
      maxBatchSize: this.cfg.maxBatchSize,
      facts: (i) => this.facts[i] as StaticFacts,
      scheduleCluster: (time, kind, payload) => this.queue.push(time, eventOrder(-1, kind), kind, payload),
      scalingState: () => this.scalingState(),
      addReplica: (id, facts, build) => this.addReplica(id, facts, build),
      loaded: (i) => this.instanceLoaded(i),
      buildFor: infra.buildFor,
      loadingRng: infra.loadingRng,
      loadingDelay: infra.loadingDelay,
      provisioningRng: infra.provisioningRng,
      killAll: (i) => this.killAll(i),
      redirectQueued: (i) => this.redirectQueued(i),
      terminateIfEmpty: (i) => this.afterLifecycleEvent(this.lifecycle as Lifecycle, i),
    };
  }

  /** Immediate drain: every request queued or running on instance `i` ends here, killed. */
  private killAll(i: number): number {
    const inst = this.instances[i] as Instance;
    const victims = [...inst.waitQ.toArray(), ...inst.runningBatch];
    for (const r of victims) {
      inst.evictRequest(r);
      this.inFlight[i] = Math.max(0, (this.inFlight[i] as number) - 1);
      this.signals?.onDone(r, this.clock);
      this.policies.tenants?.onComplete(r.tenantId);
      this.flowController?.onRequestDone(r);
      r.outcome = 'drain_killed';
      this.drainKilled++;
      if (r.pdPart !== PdPart.None) this.pd?.subKilled(r);
      else this.lost(r);
    }
    return victims.length;
  }

  /** Redirect drain: the requests waiting on instance `i` are routed again, now, among the routable instances. */
  private redirectQueued(i: number): number {
    const moved = (this.instances[i] as Instance).takeQueued();
    for (const r of moved) {
      this.inFlight[i] = Math.max(0, (this.inFlight[i] as number) - 1);
      this.signals?.onDone(r, this.clock);
      this.policies.tenants?.onComplete(r.tenantId);
      this.flowController?.onRequestDone(r);
      r.assignedInstance = '';
      this.drainRedirected++;
      if (r.pdPart === PdPart.Prefill) {
        (this.pd as PdCoordinator).redirectPrefill(r, this.clock);
        continue;
      }
      this.queue.push(this.clock + this.cfg.routingLatency, eventOrder(-1, EventKind.RoutingDecision), EventKind.RoutingDecision, r);
    }
    return moved.length;
  }

  /** An instance placed during the run: Loading until its loading delay passes. */
  private addReplica(id: string, facts: StaticFacts, build: ReplicaBuild): number {
    const i = this.instances.length;
    this.facts.push(facts);
    const inst = this.makeInstance(i, this.sinkFor(i), { id, build });
    this.register(inst);
    this.snapshots.addInstance(inst, this.clock);
    this.signals?.addInstance();
    this.pd?.addInstance(build.role ?? 0);
    (this.lifecycle as Lifecycle).add(InstanceState.Loading, this.clock);
    this.onInstanceAdded?.(inst, i);
    return i;
  }

  /** The autoscaler's view: routable instances of every model, plus the loading ones (capacity only). */
  private scalingState(): RouterState {
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

  /** Runs the simulation over `requests` (non-decreasing arrival times) to the end. Single use. */
  run(requests: readonly Request[]): void {
    this.begin();
    if (this.queue.length > 0 || this.finished || !sortedByArrival(requests)) {
      for (const r of requests) this.inject(r);
    } else {
      // The arrivals are not pushed onto the event queue: they are merged in from the sorted list as the run
      // reaches them, which keeps the queue as small as the in-flight work instead of the whole workload. Only
      // with an empty queue: every later event then comes after them in push order, as if pushed upfront.
      this.pending = requests;
      this.pendingAt = 0;
      this.nextArrival = requests.length > 0 ? (requests[0] as Request).arrivalTime : Infinity;
      this.pendingArrivals += requests.length;
    }
    this.advanceTo(Infinity);
    this.finish();
  }

  /**
   * Whether the next arrival of the pending list comes before the queue's earliest event. Pushed upfront (as
   * inject does) they would have had the smallest sequence numbers, so they win every (time, order) tie.
   */
  private pendingFirst(): boolean {
    const t = this.nextArrival;
    if (t === Infinity) return false;
    const qt = this.queue.peekTime();
    return t < qt || (t === qt && ARRIVAL_ORDER <= this.queue.peekOrder());
  }

  /**
   * Online use (a live server, a step-wise driver): schedules `req`'s arrival at `req.arrivalTime`, which must
   * not be earlier than the current clock once events have run.
   */
  inject(req: Request): void {
    if (this.finished) throw new Error('ClusterSimulator: inject after finish()');
    if (!this.started) this.begin();
    if (this.clock > 0 && req.arrivalTime < this.clock) {
      throw new RangeError(`ClusterSimulator.inject: ${req.id} arrives at ${req.arrivalTime}, before the clock ${this.clock}`);
    }
    this.queue.push(req.arrivalTime, eventOrder(-1, EventKind.ClusterArrival), EventKind.ClusterArrival, req);
    this.pendingArrivals++;
  }

  /**
   * Installs the follow-up hook (see {@link FollowUpHook}); null removes it. Without one, terminal requests cost
   * a single null check.
   */
  setFollowUpHook(hook: FollowUpHook | null): void {
    this.followUps = hook;
  }

  /** Time of the next pending event (Infinity when none). */
  nextEventTime(): number {
    return this.pendingFirst() ? (this.pending[this.pendingAt] as Request).arrivalTime : this.queue.peekTime();
  }

  /**
   * Executes every event with time <= `until` (and <= the horizon), or the first `maxEvents` of them (a driver
   * that interleaves other work runs the simulation in slices this way; the slices change nothing else). Returns
   * false once the horizon has been passed or no events remain, true while more events are pending.
   */
  advanceTo(until: number, maxEvents = Infinity): boolean {
    if (this.pastHorizon) return false;
    if (!this.started) this.begin();
    const q = this.queue;
    const horizon = this.cfg.horizon;
    let budget = maxEvents;
    while (q.length > 0 || this.nextArrival !== Infinity) {
      if (this.pendingFirst()) {
        const r = this.pending[this.pendingAt] as Request;
        const t = r.arrivalTime;
        if (t > horizon) {
          this.pastHorizon = true;
          return false;
        }
        if (t > until || budget-- <= 0) return true;
        if (this.sampler !== null && t >= this.sampler.next) this.sampler.sampleUpTo(t);
        this.pendingAt++;
        this.nextArrival = this.pendingAt < this.pending.length ? (this.pending[this.pendingAt] as Request).arrivalTime : Infinity;
        this.clock = t;
        if (this.onEvent !== null) this.announce(t, EventKind.ClusterArrival, -1);
        this.executeCluster(EventKind.ClusterArrival, r, t);
        continue;
      }
      const t = q.peekTime();
      // Past the horizon only once the caller lets the clock reach it: below `until` a streamed workload may
      // still inject arrivals that come first (the earliest pending one is the next chunk's, not injected yet).
      if (t > horizon && t <= until) {
        this.pastHorizon = true;
        return false;
      }
      if (t > until || budget-- <= 0) return true;
      const order = q.peekOrder();
      const kind = q.peekKind() as EventKind;
      const req = q.peekPayload();
      q.pop();
      const idx = orderInstance(order);
      // A timeout for a request that already completed is cancelled lazily without moving any clock (nor the
      // sampler: a stale deadline 300 s after the last request would otherwise add 300 s of empty rows).
      if (idx >= 0 && kind === EventKind.Timeout && (req as Request).state === RequestState.Completed) continue;
      if (this.sampler !== null && t >= this.sampler.next) this.sampler.sampleUpTo(t);
      if (idx < 0) {
        this.clock = t;
        if (this.onEvent !== null) this.announce(t, kind, -1);
        this.executeCluster(kind, req, t);
        continue;
      }
      this.clock = t;
      const inst = this.instances[idx] as Instance;
      inst.clock = t;
      if (this.onEvent !== null) this.announce(t, kind, idx);
      inst.handle(kind, req as Request | null, t);
      if (this.afterInstanceEvent !== null) this.afterInstanceEvent(idx);
    }
    return false;
  }

  /** Starts what runs on its own clock (the autoscaler's ticks) before the first arrival or event, however the run is driven. */
  private begin(): void {
    this.started = true;
    this.autoscaler?.start();
  }

  /** Calls onEvent; its observers read requests, so the running batches' request objects are synced first. */
  private announce(t: number, kind: EventKind, idx: number): void {
    for (const inst of this.instances) inst.syncRunning();
    (this.onEvent as (time: number, kind: EventKind, instanceIndex: number) => void)(t, kind, idx);
  }

  /** Ends the run: finalises every instance (still-queued/running counts, end time). */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.sampler?.finish(this.clock);
    for (const inst of this.instances) inst.finalize();
    if (this.pd !== null) projectParents(this.pd, this.instances);
  }

  private requestDone(i: number, req: Request, tick: number): void {
    this.routerSeesDone(i, req, tick);
    this.afterDone(req, tick);
  }

  /** The router-side bookkeeping of a request that ended on instance `i`: in-flight counts, tenants, the gateway. */
  private routerSeesDone(i: number, req: Request, tick: number): void {
    this.inFlight[i] = Math.max(0, (this.inFlight[i] as number) - 1);
    this.signals?.onDone(req, tick);
    this.policies.tenants?.onComplete(req.tenantId);
    this.flowController?.onRequestDone(req);
  }

  /** What follows a request's end: session follow-ups, P/D halves, the autoscaler's completion count. */
  private afterDone(req: Request, tick: number): void {
    if (this.followUps !== null) this.pushFollowUps(req, tick);
    if (this.pd !== null && req.pdPart !== PdPart.None) this.pd.subDone(req, tick);
    if (this.autoscaler !== null && req.outcome === 'completed') this.autoscaler.onCompleted(req, tick);
  }

  /**
   * The reference pushes follow-ups straight onto its cluster queue as arrivals (after the tenant and gateway
   * bookkeeping of the finished request). Gateway-side losses are reported too, where the reference reports
   * nothing: a session then ends as cancelled instead of staying active forever, and still has no next round.
   */
  private pushFollowUps(req: Request, tick: number): void {
    for (const next of (this.followUps as FollowUpHook)(req, tick)) this.inject(next);
  }

  /** A request that left the system at the gateway (rejected, shed, expired, evicted). */
  private lost(req: Request): void {
    if (this.followUps !== null) this.pushFollowUps(req, this.clock);
  }

  private shed(req: Request): void {
    const tier = req.sloClass === '' ? 'standard' : req.sloClass;
    this.shedByTier.set(tier, (this.shedByTier.get(tier) ?? 0) + 1);
  }

  /** What the flow controller schedules, pushed at once in the reference's order. */
  private flowHost(): FlowControlHost {
    const push = (time: number, kind: EventKind, req: Request | null): void => this.queue.push(time, eventOrder(-1, kind), kind, req);
    return {
      routerState: () => this.routerState(null),
      scheduleDispatchTick: (at) => push(at, EventKind.GatewayDispatchTick, null),
      scheduleTtl: (at, req) => push(at, EventKind.GatewayQueueTTL, req),
      // The eviction target is where the request was routed (the tracker records the same id).
      scheduleEviction: (at, req) => push(at, EventKind.GatewayEviction, req),
      scheduleRouting: (req, at) => push(at + this.cfg.routingLatency, EventKind.RoutingDecision, req),
    };
  }

  private evict(req: Request): void {
    const index = this.indexById.get(req.assignedInstance);
    if (index === undefined) return;
    if (!(this.instances[index] as Instance).evictRequest(req)) {
      this.flowController?.onEvictionFailed(req, req.assignedInstance);
      return;
    }
    this.inFlight[index] = Math.max(0, (this.inFlight[index] as number) - 1);
    this.signals?.onDone(req, this.clock);
    this.policies.tenants?.onComplete(req.tenantId);
    this.flowController?.onEvicted(req);
    req.outcome = 'gateway_evicted';
    this.shed(req);
    this.lost(req);
  }

  private executeCluster(kind: EventKind, payload: object | null, t: number): void {
    const req = payload as Request;
    switch (kind) {
      case EventKind.ClusterArrival:
        this.pendingArrivals--;
        if (req.model === '' && this.cfg.defaultModel) req.model = this.cfg.defaultModel;
        this.autoscaler?.onArrival(req, t);
        this.injectedByClass.set(req.sloClass, (this.injectedByClass.get(req.sloClass) ?? 0) + 1);
        this.arrivals.push(req);
        this.queue.push(t + this.cfg.admissionLatency, eventOrder(-1, EventKind.AdmissionDecision), EventKind.AdmissionDecision, req);
        return;
      case EventKind.AdmissionDecision:
        this.admit(req, t);
        return;
      case EventKind.RoutingDecision:
        this.route(req, t);
        return;
      case EventKind.GatewayDispatchTick:
        this.flowController?.onDispatchTick(t);
        return;
      case EventKind.GatewayQueueTTL:
        if (this.flowController?.onTtlExpiry(req)) {
          req.outcome = 'gateway_expired';
          this.shed(req);
          this.lost(req);
        }
        return;
      case EventKind.GatewayEviction:
        this.evict(req);
        return;
      case EventKind.PrefillRouting:
        (this.pd as PdCoordinator).routePrefill(req, t);
        return;
      case EventKind.KVTransferStarted:
        (this.pd as PdCoordinator).startTransfer(req, t);
        return;
      case EventKind.KVTransferCompleted:
        (this.pd as PdCoordinator).completeTransfer(req, t);
        return;
      case EventKind.ScalingTick:
        (this.autoscaler as Autoscaler).tick(t);
        return;
      case EventKind.ScaleActuation:
        (this.autoscaler as Autoscaler).actuate(payload as object);
        return;
      case EventKind.InstanceLoaded: {
        const i = this.instances.indexOf(payload as Instance);
        if (this.autoscaler !== null) this.autoscaler.actuator.ready(i);
        else this.instanceLoaded(i);
        return;
      }
      case EventKind.ScalingTrigger:
        (this.autoscaler as Autoscaler).tick(t, 'event');
        return;
      case EventKind.DrainTimeout:
        (this.autoscaler as Autoscaler).actuator.drainTimeout(this.instances.indexOf(payload as Instance));
        return;
      default:
        throw new Error(`cluster: unexpected event kind ${kind}`);
    }
  }

  private admit(req: Request, t: number): void {
    const sig = this.signals;
    if (this.delayedNow.delete(req)) sig?.onDelayEnd();
    else sig?.onArrival(req, t);
    const d = this.policies.admission.admit(req, this.admissionState(req));
    let delay = !d.admitted && d.delayUs !== undefined && d.delayUs > 0 ? Math.max(1, Math.ceil(d.delayUs)) : 0;
    let reason = d.reason;
    if (delay > 0 && req.admissionDelays >= (this.cfg.maxAdmissionDelays ?? DEFAULT_MAX_ADMISSION_DELAYS)) {
      // A request cannot wait forever: past the limit a DELAY counts as a rejection.
      delay = 0;
      reason = `admission delay limit (${req.admissionDelays} delays) reached: ${d.reason}`;
      this.delayLimitRejections++;
    }
    if (this.cfg.traceDecisions) {
      this.admissionRecords.push(delay > 0 ? { requestId: req.id, clock: this.clock, admitted: false, reason, delayUs: delay } : { requestId: req.id, clock: this.clock, admitted: d.admitted, reason });
    }
    if (delay > 0) {
      // DELAY: the request re-enters admission later; it is counted as delayed meanwhile.
      req.admissionDelays++;
      this.admissionDelays++;
      this.delayedNow.add(req);
      sig?.onDelayStart();
      this.queue.push(t + delay, eventOrder(-1, EventKind.AdmissionDecision), EventKind.AdmissionDecision, req);
      return;
    }
    if (!d.admitted) {
      sig?.onRejected(t);
      this.rejectedRequests++;
      req.outcome = 'rejected';
      this.shed(req);
      this.lost(req);
      return;
    }
    const prio = this.policies.priority;
    if (prio) {
      const p = prio.prioritize(req, this.routerState(req));
      req.hasPolicyPriority = true;
      req.policyPriority = p.score;
      req.schedulingHints = p.hints;
      if (this.cfg.traceDecisions) this.priorityRecords.push({ requestId: req.id, clock: this.clock, score: p.score, hints: p.hints });
    }
    const fc = this.flowController;
    if (fc !== null) {
      const r = fc.onAdmitted(req, this.clock);
      if (r.outcome === 'rejected') {
        req.outcome = 'gateway_rejected';
        this.lost(req);
      }
      if (r.victim !== null) {
        r.victim.outcome = 'gateway_shed';
        this.shed(r.victim);
        this.lost(r.victim);
      }
      return;
    }
    this.queue.push(t + this.cfg.routingLatency, eventOrder(-1, EventKind.RoutingDecision), EventKind.RoutingDecision, req);
  }

  private route(req: Request, t: number): void {
    this.flowController?.onRoutingDecision();
    if (this.pd !== null) {
      this.pd.route(req, t);
      return;
    }
    this.standardRoute(req, t);
  }

  private standardRoute(req: Request, t: number): void {
    const state = this.routerState(req);
    if (state.snapshots.length === 0) {
      this.rejectAtRouting(req);
      return;
    }
    const d = this.policies.routing.route(req, state);
    const index = this.indexById.get(d.targetId);
    if (index === undefined) throw new Error(`routing policy ${this.policies.routing.name} chose unknown instance ${d.targetId}`);
    this.deliver(req, t, state, d, index);
  }

  private rejectAtRouting(req: Request): void {
    this.routingRejections++;
    req.outcome = 'rejected';
    this.lost(req);
  }

  /** Injects `req` into instance `index` as routing decision `d` over `state` chose (records, counters, tenants). */
  private deliver(req: Request, t: number, state: RouterState, d: RoutingDecision, index: number): void {
    const inst = this.instances[index] as Instance;
    req.assignedInstance = inst.id;
    let expected: boolean | null = null;
    let actual: boolean | null = null;
    const sig = this.signals;
    if (sig !== null && inputBlockHashes(req, inst.kv.blockSize).length > 0) {
      expected = sig.shadow.matchLength(inputBlockHashes(req, inst.kv.blockSize), inst.id) > 0;
      actual = inst.kv.cachedPrefixBlocks(req) > 0;
      if (expected !== actual) this.shadowDivergences++;
    }
    this.onRouting?.({ req, clock: this.clock, decision: d, instanceIndex: index, expectedCacheHit: expected, cacheHit: actual });
    if (this.cfg.traceDecisions) this.recordRouting(req, d, state.snapshots, expected, actual);
    sig?.onRouted(req, index, inst.kv.blockSize);
    this.inFlight[index] = (this.inFlight[index] as number) + 1;
    this.policies.tenants?.onStart(req.tenantId);
    inst.injectArrivalAt(req, t);
    this.flowController?.onRouted(req, inst.id);
  }

  private recordRouting(req: Request, d: RoutingDecision, snaps: readonly RoutingSnapshot[], expected: boolean | null, actual: boolean | null): void {
    const cf = computeCounterfactual(d.targetId, d.regretScores ?? d.scores, snaps, this.cfg.counterfactualK);
    const rec: RoutingRecord = {
      requestId: req.id,
      clock: this.clock,
      chosenInstance: d.targetId,
      reason: d.reason,
      scores: d.scores === null ? null : new Map(d.scores),
      candidates: cf.candidates,
      regret: cf.regret,
      ...(expected === null ? {} : { expectedCacheHit: expected, cacheHit: actual as boolean }),
      ...(d.filteredOut !== undefined && d.filteredOut.length > 0 ? { filteredOut: [...d.filteredOut] } : {}),
    };
    this.routingRecords.push(rec);
  }

  private pdHost(): PdHost {
    const clockOf = (): number => this.clock;
    return {
      instances: this.instances,
      inFlight: this.inFlight,
      get clock() {
        return clockOf();
      },
      scheduleCluster: (time, kind, payload) => this.queue.push(time, eventOrder(-1, kind), kind, payload),
      poolState: (role, model) => this.poolState(role, model),
      standardRoute: (req, time) => this.standardRoute(req, time),
      targetOf: (i) => this.facts[i]?.target,
      instanceIndex: (id) => this.indexById.get(id) ?? -1,
      routable: (i) => this.routable(i),
      deliver: (req, time, state, d, index) => this.deliver(req, time, state, d, index),
      rejectAtRouting: (req) => this.rejectAtRouting(req),
      recordSplit: (req, state, d) => this.recordRouting(req, d, state.snapshots, null, null),
      rejectAtEncode: (req) => {
        this.encodeRoutingRejections++;
        req.outcome = 'encode_rejected';
        this.lost(req);
      },
      startSub: (req, index) => {
        this.inFlight[index] = (this.inFlight[index] as number) + 1;
        this.policies.tenants?.onStart(req.tenantId);
        this.signals?.onRouted(req, index, (this.instances[index] as Instance).kv.blockSize);
      },
      parentDone: (parent, state, progressIndex, tick) => this.parentDone(parent, state, progressIndex, tick),
      cachedBlocks: (index, req) => (index < 0 ? 0 : this.snapshots.cachedBlocks(index, req)),
      traceDecisions: this.cfg.traceDecisions,
      counterfactualK: this.cfg.counterfactualK,
    };
  }

  /**
   * The end of a split request, for session follow-ups: the reference hands its session manager a copy of the
   * parent with the decode half's state and progress. The parent object itself is lent for the call and
   * restored, so its recorded lifecycle (an incomplete row in the trace export) does not change.
   */
  private parentDone(parent: Request, state: RequestState, progressIndex: number, tick: number): void {
    if (this.followUps === null) return;
    const s = parent.state;
    const pi = parent.progressIndex;
    parent.state = state;
    parent.progressIndex = progressIndex;
    const next = this.followUps(parent, tick);
    parent.state = s;
    parent.progressIndex = pi;
    for (const r of next) this.inject(r);
  }

  /** The decode- or prefill-pool view of one P/D decision: routable members of the pool, in instance order. */
  private poolState(role: number, model: string | null): RouterState {
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

  /** Gateway queue counters (all zero until flow control is enabled). */
  gatewayCounters(): { queueDepth: number; queueShed: number; queueRejected: number; evicted: number; expired: number } {
    return this.flowController?.counters() ?? { queueDepth: 0, queueShed: 0, queueRejected: 0, evicted: 0, expired: 0 };
  }

  /**
   * {@link routerState} for an admission decision, whose objects are built only when the policy reads them. What a
   * build does besides (the stale cache view's refresh, the periodic snapshot refreshes, the signals' clock)
   * happens now, so a later build at the same clock reads exactly what this one would have.
   */
  private admissionState(req: Request): RouterState {
    this.snapshots.refreshCacheIfNeeded(this.clock);
    for (let i = 0; i < this.instances.length; i++) if (this.routableFor(i, req)) this.snapshots.refreshAt(i, this.clock);
    this.signals?.observeClock(this.clock);
    return new DeferredRouterState(this.buildState, req, this.clock);
  }

  /** Whether instance `i` is in the router's view for `req` (all models when null). */
  private routableFor(i: number, req: Request | null): boolean {
    const lc = this.lifecycle;
    if (lc !== null && !lc.routable(i)) return false;
    return req === null || req.model === '' || req.model === (this.facts[i] as StaticFacts).model;
  }

  private readonly buildState = (req: Request): RouterState => this.routerState(req);

  /**
   * The router's view for one decision (reference buildRouterState): refreshes the stale cache view if due,
   * then one snapshot per routable instance serving the request's model (all when the request names none or
   * when there is no request: the gateway's saturation read).
   */
  private routerState(req: Request | null): RouterState {
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
}
