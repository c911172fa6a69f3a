/**
 * The cluster's state and wiring (reference blis-cluster.md §1), the bottom of ClusterSimulator's class chain:
 * core.ts (state, construction, completion bookkeeping) -> router-view.ts (what the router, the P/D pools and
 * the autoscaler see) -> pipeline.ts (the arrival -> admission -> priority -> gateway queue -> routing stages)
 * -> cluster.ts (the event loop, instance lifecycle, the public driving API). One class chain, not objects
 * calling each other, so the per-event path reads one object's fields and makes no extra call.
 *
 * This file owns the cluster's fields, the constructor that builds the instances, the snapshot provider, the
 * gateway queue, the router signals, the policies, the P/D coordinator and the autoscaler, each instance's
 * event sink, and what happens when a request ends (router-side counts, tenants, the gateway, session
 * follow-ups, P/D halves). The hosts it lends out are built by the classes above it (abstract here).
 */
import type { AdmissionRecord, PriorityRecord, RoutingRecord } from '../domain/decision-records.js';
import { PdPart, type Request } from '../domain/request.js';
import { EventQueue } from '../engine/event-queue.js';
import { EventKind, eventOrder } from '../instance/events.js';
import type { EventSink, Instance } from '../instance/instance.js';
import type { SloPriorityMap } from '../domain/slo.js';
import { FlowController, type FlowControlHost } from './flow-control/controller.js';
import { DEFAULT_SIGNALS_CONFIG, RouterSignalsTracker } from './signals.js';
import { SnapshotProvider } from './snapshot.js';
import { PdCoordinator } from './pd/coordinator.js';
import type { PdHost } from './pd/host.js';
import type { StaticFacts } from './snapshot.js';
import { Autoscaler } from './autoscaler/autoscaler.js';
import type { ActuatorHost } from './autoscaler/actuator.js';
import type { PlacementManager } from './autoscaler/infra.js';
import { InstanceState, Lifecycle } from './autoscaler/lifecycle.js';
import type { ClusterSampler } from './sampler.js';
import type { ClusterConfig, ClusterPolicies, FollowUpHook, InfraSetup, InstanceFactory, RoutingObservation } from './config.js';

export abstract class ClusterCore {
  readonly instances: Instance[] = [];
  /**
   * Payloads: the request an event is about (most events), an instance (lifecycle), or scaling data. Client
   * timeouts (one per request, almost all cancelled lazily) wait in a heap of their own.
   */
  protected readonly queue = new EventQueue<object>(4096, EventKind.Timeout);
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
  protected readonly indexById = new Map<string, number>();
  readonly snapshots: SnapshotProvider;
  /** The gateway queue when flow control is on; its admission replaces the configured policy. */
  readonly flowController: FlowController | null;
  protected readonly policies: ClusterPolicies;
  protected followUps: FollowUpHook | null = null;
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
  protected readonly afterInstanceEvent: ((index: number) => void) | null;
  protected readonly makeInstance: InstanceFactory;
  protected readonly infra: InfraSetup | null;

  constructor(
    protected readonly cfg: ClusterConfig,
    numInstances: number,
    makeInstance: InstanceFactory,
    /** Called once the cluster exists (cache-aware scorers query its instances); ClusterSimulator passes itself. */
    makePolicies: (self: ClusterCore) => ClusterPolicies,
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

  // ---- built by the classes above (the hosts lent to the gateway queue, P/D coordinator, autoscaler) ----

  /** What the flow controller schedules (pipeline.ts). */
  protected abstract flowHost(): FlowControlHost;
  /** What the P/D coordinator may do to the cluster (pipeline.ts). */
  protected abstract pdHost(): PdHost;
  /** What the autoscaler's actuator may do to the cluster (cluster.ts). */
  protected abstract scalingHost(): ActuatorHost;
  /** Samples instance `i`'s loading delay (cluster.ts). */
  protected abstract scheduleLoaded(i: number): void;
  /** Terminates a drained instance once its own event left it empty (cluster.ts). */
  protected abstract afterLifecycleEvent(lc: Lifecycle, idx: number): void;
  /** Schedules a request's arrival (cluster.ts); session follow-ups enter this way. */
  abstract inject(req: Request): void;

  protected sinkFor(i: number): EventSink {
    return { schedule: (time, kind, req) => this.queue.push(time, eventOrder(i, kind), kind, req) };
  }

  protected register(inst: Instance): number {
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

  // ---- a request's end --------------------------------------------------------------------------------

  protected requestDone(i: number, req: Request, tick: number): void {
    this.routerSeesDone(i, req, tick);
    this.afterDone(req, tick);
  }

  /** The router-side bookkeeping of a request that ended on instance `i`: in-flight counts, tenants, the gateway. */
  protected routerSeesDone(i: number, req: Request, tick: number): void {
    this.inFlight[i] = Math.max(0, (this.inFlight[i] as number) - 1);
    this.signals?.onDone(req, tick);
    this.policies.tenants?.onComplete(req.tenantId);
    this.flowController?.onRequestDone(req);
  }

  /** What follows a request's end: session follow-ups, P/D halves, the autoscaler's completion count. */
  protected afterDone(req: Request, tick: number): void {
    if (this.followUps !== null) this.pushFollowUps(req, tick);
    if (this.pd !== null && req.pdPart !== PdPart.None) this.pd.subDone(req, tick);
    if (this.autoscaler !== null && req.outcome === 'completed') this.autoscaler.onCompleted(req, tick);
  }

  /**
   * The reference pushes follow-ups straight onto its cluster queue as arrivals (after the tenant and gateway
   * bookkeeping of the finished request). Gateway-side losses are reported too, where the reference reports
   * nothing: a session then ends as cancelled instead of staying active forever, and still has no next round.
   */
  protected pushFollowUps(req: Request, tick: number): void {
    for (const next of (this.followUps as FollowUpHook)(req, tick)) this.inject(next);
  }

  /** A request that left the system at the gateway (rejected, shed, expired, evicted). */
  protected lost(req: Request): void {
    if (this.followUps !== null) this.pushFollowUps(req, this.clock);
  }

  protected shed(req: Request): void {
    const tier = req.sloClass === '' ? 'standard' : req.sloClass;
    this.shedByTier.set(tier, (this.shedByTier.get(tier) ?? 0) + 1);
  }

  /**
   * Installs the follow-up hook (see {@link FollowUpHook}); null removes it. Without one, terminal requests cost
   * a single null check.
   */
  setFollowUpHook(hook: FollowUpHook | null): void {
    this.followUps = hook;
  }
}
