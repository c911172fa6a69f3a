/**
 * The cluster orchestrator (reference blis-cluster.md §1): N instances on one shared clock, driven by ONE
 * event queue for both layers. The reference keeps a cluster heap plus one heap per instance and always takes
 * the cluster event on a time tie, then the lowest-index instance; encoding (layer, instance index, event
 * priority) in the queue's order key reproduces exactly that pop sequence with a single heap.
 *
 * Pipeline: ClusterArrival(t) -> AdmissionDecision(t + admissionLatency) -> RoutingDecision(+ routingLatency)
 * -> instance ArrivalEvent at the routing time (metrics still measure from the original arrival).
 */
import type { AdmissionRecord, PriorityRecord, RoutingRecord } from '../domain/decision-records.js';
import { RequestState, type Request } from '../domain/request.js';
import { EventQueue } from '../engine/event-queue.js';
import { EventKind, eventOrder, orderInstance } from '../instance/events.js';
import type { EventSink, Instance } from '../instance/instance.js';
import { computeCounterfactual } from '../routing/counterfactual.js';
import type { TenantTracker } from '../routing/tenant.js';
import type { SloPriorityMap } from '../domain/slo.js';
import type { AdmissionPolicy, PriorityPolicy, RouterState, RoutingDecision, RoutingPolicy, RoutingSnapshot } from '../routing/types.js';
import { inputBlockHashes } from '../domain/block-hash.js';
import { FlowController, type FlowControlConfig, type FlowControlHost } from './flow-control/controller.js';
import { DEFAULT_SIGNALS_CONFIG, RouterSignalsTracker, type SignalsConfig } from './signals.js';
import { SnapshotProvider } from './snapshot.js';
import type { ClusterSampler } from './timeseries.js';

export interface ClusterConfig {
  readonly horizon: number;
  readonly admissionLatency: number;
  readonly routingLatency: number;
  /** Periodic refresh of queue/batch/KV signals (µs); 0 = always live. */
  readonly snapshotRefreshInterval: number;
  /** Staleness of the prefix-cache view (µs); 0 = live. */
  readonly cacheSignalDelay: number;
  /** Record admission and routing decisions (`--trace-level decisions`). */
  readonly traceDecisions: boolean;
  /** Top-k counterfactual candidates per routing record (0 = none). */
  readonly counterfactualK: number;
  /** Static per-instance facts the router sees. */
  readonly model: string;
  readonly gpuType: string;
  readonly tpDegree: number;
  readonly maxBatchSize: number;
  /** Gateway queue / flow control (`--flow-control`); null = off. */
  readonly flowControl: FlowControlConfig | null;
  /**
   * Keep the router state of policy-search-design §3 (tenants, rates, history, ObservedKV, ShadowKV) and
   * hand it to policies as `RouterState.signals`; also records expected/actual cache hits on routing
   * records. Off by default (the built-in policies never read it).
   */
  readonly routerSignals?: SignalsConfig | boolean;
  /** DELAYs one request may wait out before its next DELAY counts as a rejection (default 100). */
  readonly maxAdmissionDelays?: number;
}

export const DEFAULT_MAX_ADMISSION_DELAYS = 100;

const ARRIVAL_ORDER = eventOrder(-1, EventKind.ClusterArrival);

function sortedByArrival(requests: readonly Request[]): boolean {
  for (let i = 1; i < requests.length; i++) if ((requests[i] as Request).arrivalTime < (requests[i - 1] as Request).arrivalTime) return false;
  return true;
}

/** A routing decision about to be applied, for observers (anomaly detectors, traces). */
export interface RoutingObservation {
  readonly req: Request;
  readonly clock: number;
  readonly decision: RoutingDecision;
  /** Instance index of the target. */
  readonly instanceIndex: number;
  /** ShadowKV predicted a hit there (null when the router keeps no ShadowKV). */
  readonly expectedCacheHit: boolean | null;
  /** The target held at least one leading block of the request at routing time (null without ShadowKV). */
  readonly cacheHit: boolean | null;
}

export interface ClusterPolicies {
  readonly admission: AdmissionPolicy;
  readonly routing: RoutingPolicy;
  /** Priority policy (after admission, before routing); null = the SLO class decides. */
  readonly priority?: PriorityPolicy | null;
  /** Tenant in-flight accounting for budgets; null when no budgets are configured. */
  readonly tenants: TenantTracker | null;
}

export type InstanceFactory = (index: number, sink: EventSink) => Instance;

/**
 * Called once for every request that reaches a terminal state — completed, timed out or dropped on an instance
 * (`tick` = the instance's completion tick: the end of the step for completions), or rejected, shed, expired or
 * evicted at the gateway (`tick` = the cluster clock). The requests it returns enter the cluster as fresh
 * arrivals at their own arrival time (>= tick), through admission and routing like any other: this is how
 * closed-loop session follow-ups are produced (the SessionManager's `hook`).
 */
export type FollowUpHook = (req: Request, tick: number) => readonly Request[];

/** Builds the policies once the cluster exists (cache-aware scorers query its instances). */
export type PolicyFactory = (cluster: ClusterSimulator) => ClusterPolicies;

export class ClusterSimulator {
  readonly instances: Instance[] = [];
  // Client timeouts (one per request, almost all cancelled lazily) wait in a heap of their own.
  private readonly queue = new EventQueue<Request>(4096, EventKind.Timeout);
  clock = 0;
  /** Fresh arrivals in the order their ClusterArrival events executed (the trace export order). */
  readonly arrivals: Request[] = [];
  readonly inFlight: number[] = [];
  rejectedRequests = 0;
  routingRejections = 0;
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

  constructor(
    private readonly cfg: ClusterConfig,
    numInstances: number,
    makeInstance: InstanceFactory,
    makePolicies: PolicyFactory,
    priorities: SloPriorityMap,
  ) {
    if (numInstances < 1) throw new RangeError('numInstances must be >= 1');
    for (let i = 0; i < numInstances; i++) {
      const sink: EventSink = { schedule: (time, kind, req) => this.queue.push(time, eventOrder(i, kind), kind, req) };
      const inst = makeInstance(i, sink);
      inst.onRequestDone = (req, tick) => this.requestDone(i, req, tick);
      this.instances.push(inst);
      this.inFlight.push(0);
      this.indexById.set(inst.id, i);
    }
    this.snapshots = new SnapshotProvider(this.instances, cfg.snapshotRefreshInterval, cfg.cacheSignalDelay, cfg);
    this.flowController = cfg.flowControl === null ? null : new FlowController(cfg.flowControl, priorities, this.flowHost());
    const sig = cfg.routerSignals ?? false;
    this.signals = sig === false ? null : new RouterSignalsTracker(this.instances, (i, req) => this.snapshots.cachedBlocks(i, req), sig === true ? DEFAULT_SIGNALS_CONFIG : sig);
    this.policies = makePolicies(this);
  }

  /** Consecutive cached prefix blocks of `req` on the instance `id` as the router sees it (0 if unknown). */
  cachedBlocksFor(id: string, req: Request): number {
    const i = this.indexById.get(id);
    return i === undefined ? 0 : this.snapshots.cachedBlocks(i, req);
  }

  /** Runs the simulation over `requests` (non-decreasing arrival times) to the end. Single use. */
  run(requests: readonly Request[]): void {
    if (this.queue.length > 0 || this.finished || !sortedByArrival(requests)) {
      for (const r of requests) this.inject(r);
    } else {
      // The arrivals are not pushed onto the event queue: they are merged in from the sorted list as the run
      // reaches them, which keeps the queue as small as the in-flight work instead of the whole workload.
      this.pending = requests;
      this.pendingAt = 0;
      this.nextArrival = requests.length > 0 ? (requests[0] as Request).arrivalTime : Infinity;
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
    if (this.clock > 0 && req.arrivalTime < this.clock) {
      throw new RangeError(`ClusterSimulator.inject: ${req.id} arrives at ${req.arrivalTime}, before the clock ${this.clock}`);
    }
    this.queue.push(req.arrivalTime, eventOrder(-1, EventKind.ClusterArrival), EventKind.ClusterArrival, req);
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
      if (t > horizon) {
        this.pastHorizon = true;
        return false;
      }
      if (t > until || budget-- <= 0) return true;
      if (this.sampler !== null && t >= this.sampler.next) this.sampler.sampleUpTo(t);
      const order = q.peekOrder();
      const kind = q.peekKind() as EventKind;
      const req = q.peekPayload();
      q.pop();
      const idx = orderInstance(order);
      if (idx < 0) {
        this.clock = t;
        if (this.onEvent !== null) this.announce(t, kind, -1);
        this.executeCluster(kind, req as Request, t);
        continue;
      }
      // A timeout for a request that already completed is cancelled lazily without moving any clock.
      if (kind === EventKind.Timeout && (req as Request).state === RequestState.Completed) continue;
      this.clock = t;
      const inst = this.instances[idx] as Instance;
      inst.clock = t;
      if (this.onEvent !== null) this.announce(t, kind, idx);
      inst.handle(kind, req, t);
    }
    return false;
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
  }

  private requestDone(i: number, req: Request, tick: number): void {
    this.inFlight[i] = Math.max(0, (this.inFlight[i] as number) - 1);
    this.signals?.onDone(req, tick);
    this.policies.tenants?.onComplete(req.tenantId);
    this.flowController?.onRequestDone(req);
    if (this.followUps !== null) this.pushFollowUps(req, tick);
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
    if (index === undefined || !(this.instances[index] as Instance).evictRequest(req)) return;
    this.inFlight[index] = Math.max(0, (this.inFlight[index] as number) - 1);
    this.signals?.onDone(req, this.clock);
    this.policies.tenants?.onComplete(req.tenantId);
    this.flowController?.onEvicted(req);
    req.outcome = 'gateway_evicted';
    this.shed(req);
    this.lost(req);
  }

  private executeCluster(kind: EventKind, req: Request, t: number): void {
    switch (kind) {
      case EventKind.ClusterArrival:
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
      default:
        throw new Error(`cluster: unexpected event kind ${kind}`);
    }
  }

  private admit(req: Request, t: number): void {
    const sig = this.signals;
    if (this.delayedNow.delete(req)) sig?.onDelayEnd();
    else sig?.onArrival(req, t);
    const d = this.policies.admission.admit(req, this.routerState(req));
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
    const state = this.routerState(req);
    if (state.snapshots.length === 0) {
      this.routingRejections++;
      req.outcome = 'rejected';
      this.lost(req);
      return;
    }
    const d = this.policies.routing.route(req, state);
    const index = this.indexById.get(d.targetId);
    if (index === undefined) throw new Error(`routing policy ${this.policies.routing.name} chose unknown instance ${d.targetId}`);
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
    const cf = computeCounterfactual(d.targetId, d.scores, snaps, this.cfg.counterfactualK);
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

  /** Gateway queue counters (all zero until flow control is enabled). */
  gatewayCounters(): { queueDepth: number; queueShed: number; queueRejected: number; evicted: number; expired: number } {
    return this.flowController?.counters() ?? { queueDepth: 0, queueShed: 0, queueRejected: 0, evicted: 0, expired: 0 };
  }

  /**
   * The router's view for one decision (reference buildRouterState): refreshes the stale cache view if due,
   * then one snapshot per routable instance serving the request's model (all when the request names none or
   * when there is no request: the gateway's saturation read).
   */
  private routerState(req: Request | null): RouterState {
    this.snapshots.refreshCacheIfNeeded(this.clock);
    const cfg = this.cfg;
    const out: RoutingSnapshot[] = [];
    const sig = this.signals;
    const positions: number[] | null = sig === null ? null : [];
    for (let i = 0; i < this.instances.length; i++) {
      if (req !== null && req.model !== '' && req.model !== cfg.model) continue;
      out.push(this.snapshots.snapshot(i, this.clock, this.inFlight[i] as number));
      positions?.push(i);
    }
    if (sig === null) return { snapshots: out, clock: this.clock };
    sig.beginDecision(this.clock, out, positions as number[]);
    return { snapshots: out, clock: this.clock, signals: sig };
  }
}
