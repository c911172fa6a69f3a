/**
 * The cluster orchestrator (reference blis-cluster.md §1): N instances on one shared clock, driven by ONE
 * event queue for both layers. The reference keeps a cluster heap plus one heap per instance and always takes
 * the cluster event on a time tie, then the lowest-index instance; encoding (layer, instance index, event
 * priority) in the queue's order key reproduces exactly that pop sequence with a single heap.
 *
 * ClusterSimulator is the top of a class chain, one file per part: core.ts (state, construction, completion
 * bookkeeping), router-view.ts (what the router sees), pipeline.ts (arrival -> admission -> priority ->
 * gateway queue -> routing -> instance). This file owns the event loop (run / inject / advanceTo), the dispatch
 * of cluster events, and the instance lifecycle the autoscaler drives (loading, drains, added replicas, the
 * host it lends the autoscaler). Its configuration and the policies it consults are typed in config.ts
 * (re-exported here).
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import { EventKind, eventOrder, orderInstance } from '../instance/events.js';
import type { Instance } from '../instance/instance.js';
import type { SloPriorityMap } from '../domain/slo.js';
import { PdCoordinator } from './pd/coordinator.js';
import { projectParents } from './pd/project.js';
import type { StaticFacts } from './snapshot.js';
import { Autoscaler, type ReplicaBuild } from './autoscaler/autoscaler.js';
import type { ActuatorHost } from './autoscaler/actuator.js';
import { sampleDelayUs } from './autoscaler/infra.js';
import { InstanceState, Lifecycle } from './autoscaler/lifecycle.js';
import type { ClusterConfig, ClusterPolicies, InfraSetup, InstanceFactory } from './config.js';
import { ClusterPipeline } from './pipeline.js';

export type { ClusterConfig, ClusterPolicies, FollowUpHook, InfraSetup, InstanceFactory, RoutingObservation } from './config.js';
export { DEFAULT_MAX_ADMISSION_DELAYS } from './pipeline.js';

const ARRIVAL_ORDER = eventOrder(-1, EventKind.ClusterArrival);

function sortedByArrival(requests: readonly Request[]): boolean {
  for (let i = 1; i < requests.length; i++) if ((requests[i] as Request).arrivalTime < (requests[i - 1] as Request).arrivalTime) return false;
  return true;
}

/** Builds the policies once the cluster exists (cache-aware scorers query its instances). */
export type PolicyFactory = (cluster: ClusterSimulator) => ClusterPolicies;

export class ClusterSimulator extends ClusterPipeline {
  private finished = false;
  private started = false;
  /** An event beyond the horizon was reached: the reference stops there and discards the rest. */
  private pastHorizon = false;
  /** requestPause() was called: advanceTo returns before its next event. */
  private pauseAsked = false;
  /** Arrivals of {@link run} not executed yet: pending[pendingAt..], in arrival order. */
  private pending: readonly Request[] = [];
  private pendingAt = 0;
  /** Arrival time of pending[pendingAt] (Infinity when none is left). */
  private nextArrival = Infinity;

  constructor(cfg: ClusterConfig, numInstances: number, makeInstance: InstanceFactory, makePolicies: PolicyFactory, priorities: SloPriorityMap) {
    // The chain's only concrete class: the core it builds is this simulator.
    super(cfg, numInstances, makeInstance, (self) => makePolicies(self as ClusterSimulator), priorities);
  }

  /** Runs the simulation over `requests` (non-decreasing arrival times) to the end. Single use. */
  run(requests: readonly Request[]): void {
    this.load(requests);
    this.advanceTo(Infinity);
    this.finish();
  }

  /** run()'s first part: takes in `requests` (non-decreasing arrival times) without running any event. */
  load(requests: readonly Request[]): void {
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
        if (t > until || budget-- <= 0 || this.pauseAsked) return this.paused();
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
      if (t > until || budget-- <= 0 || this.pauseAsked) return this.paused();
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

  /**
   * Asks the current advanceTo to return (true: more pending) before its next event, as if its `maxEvents` had
   * run out (the fast engine's per-call wall-clock bound ends a slice of a run this way, sim/engine-setup.ts).
   * Pausing between events changes nothing; the request lapses when advanceTo returns.
   */
  requestPause(): void {
    this.pauseAsked = true;
  }

  private paused(): true {
    this.pauseAsked = false;
    return true;
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

  // ---- instance lifecycle (node pools, autoscaler) ------------------------------------------------------

  /** A Draining instance whose own event left it empty terminates (reference: checked after each of its events). */
  protected afterLifecycleEvent(lc: Lifecycle, idx: number): void {
    if (lc.state(idx) !== InstanceState.Draining) return;
    const inst = this.instances[idx] as Instance;
    if (inst.queueDepth !== 0 || inst.batchSize !== 0) return;
    lc.transition(idx, InstanceState.Terminated, this.clock);
    this.placement?.release(inst.id);
  }

  /** Samples instance `i`'s loading delay: Active now if zero, else an InstanceLoaded event. */
  protected scheduleLoaded(i: number): void {
    const infra = this.infra as InfraSetup;
    const delay = sampleDelayUs(infra.loadingDelay, infra.loadingRng);
    if (delay === 0) this.instanceLoaded(i);
    else this.queue.push(this.clock + delay, eventOrder(-1, EventKind.InstanceLoaded), EventKind.InstanceLoaded, this.instances[i] as Instance);
  }

  protected instanceLoaded(i: number): void {
    (this.lifecycle as Lifecycle).transition(i, InstanceState.Active, this.clock);
  }

  protected scalingHost(): ActuatorHost {
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
  protected killAll(i: number): number {
    const inst = this.instances[i] as Instance;
    const victims = [...inst.waitQ.toArray(), ...inst.runningBatch];
    for (const r of victims) {
      inst.evictRequest(r);
      this.routerSeesDone(i, r, this.clock);
      r.outcome = 'drain_killed';
      this.drainKilled++;
      if (r.pdPart !== PdPart.None) this.pd?.subKilled(r);
      else this.lost(r);
    }
    return victims.length;
  }

  /** Redirect drain: the requests waiting on instance `i` are routed again, now, among the routable instances. */
  protected redirectQueued(i: number): number {
    const moved = (this.instances[i] as Instance).takeQueued();
    for (const r of moved) {
      this.routerSeesDone(i, r, this.clock);
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
  protected addReplica(id: string, facts: StaticFacts, build: ReplicaBuild): number {
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
}
