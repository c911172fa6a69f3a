/**
 * The flow controller: the gateway queue, its saturation gate, TTL expiry and in-flight eviction behind the
 * narrow API the cluster drives (reference FlowControlAdmission, tryDispatchFromGatewayQueue, tryEvictOne and
 * the Gateway* cluster events). It owns no event queue: whatever it must schedule goes through the
 * {@link FlowControlHost} the cluster implements, in the same order the reference pushes its events.
 * See index.ts for the integration notes.
 */
import type { Request } from '../../domain/request.js';
import type { SloPriorityMap } from '../../domain/slo.js';
import type { AdmissionDecision, AdmissionPolicy, RouterState } from '../../routing/types.js';
import { makeFairnessPolicy, type FairnessPolicyName } from './bands.js';
import { EvictionTracker } from './eviction-tracker.js';
import { GatewayQueue, type DispatchOrder, type EnqueueResult } from './gateway-queue.js';
import { makeSaturationDetector, type SaturationDetector, type SaturationDetectorName } from './saturation.js';

/** Resolved flow-control settings (the reference's DeploymentConfig.FlowControl* fields). */
export interface FlowControlConfig {
  readonly detector: SaturationDetectorName | '';
  readonly dispatchOrder: DispatchOrder;
  /** Per-class TTFT targets (µs) for slo-deadline; null = none. */
  readonly sloTargets: ReadonlyMap<string, number> | null;
  /** 0 = unlimited. */
  readonly maxQueueDepth: number;
  readonly queueDepthThreshold: number;
  readonly kvCacheUtilThreshold: number;
  readonly maxConcurrency: number;
  /** 0 = unlimited. */
  readonly perBandCapacity: number;
  /** Lowest band's ceiling; applied only when in (0, 1), else 1.0 (no head-of-line gating). */
  readonly usageLimitThreshold: number;
  readonly fairnessPolicy: FairnessPolicyName | '';
  /** µs; 0 = requests never expire. */
  readonly requestTtl: number;
  readonly queueShedding: boolean;
  /** µs between dispatch ticks; 0 selects {@link DEFAULT_DISPATCH_TICK_INTERVAL}. */
  readonly dispatchTickInterval: number;
  readonly inFlightEviction: boolean;
}

export const DEFAULT_DISPATCH_TICK_INTERVAL = 1000;

/** The CLI defaults of every flow-control flag. */
export const DEFAULT_FLOW_CONTROL_CONFIG: FlowControlConfig = {
  detector: 'never',
  dispatchOrder: 'fifo',
  sloTargets: null,
  maxQueueDepth: 0,
  queueDepthThreshold: 5,
  kvCacheUtilThreshold: 0.8,
  maxConcurrency: 100,
  perBandCapacity: 0,
  usageLimitThreshold: 1.0,
  fairnessPolicy: 'global-strict',
  requestTtl: 0,
  queueShedding: false,
  dispatchTickInterval: DEFAULT_DISPATCH_TICK_INTERVAL,
  inFlightEviction: false,
};

/** What the controller needs from the cluster. Every `schedule*` call must push one cluster event, at once. */
export interface FlowControlHost {
  /** A fresh router state over all routable instances with no model filter (reference buildRouterState(cs, nil)). */
  routerState(): RouterState;
  /** GatewayDispatchTickEvent (priority 7) at `at`; then call {@link FlowController.onDispatchTick}(at). */
  scheduleDispatchTick(at: number): void;
  /** GatewayQueueTTLEvent (priority 6) at `at`; then call {@link FlowController.onTtlExpiry}(req). */
  scheduleTtl(at: number, req: Request): void;
  /** GatewayEvictionEvent (priority 5) at `at` (= now) terminating `req` on `instanceId`. */
  scheduleEviction(at: number, req: Request, instanceId: string): void;
  /** RoutingDecisionEvent (priority 2) at `dispatchedAt + routingLatency`, routing on a fresh state then. */
  scheduleRouting(req: Request, dispatchedAt: number): void;
}

/** The gateway counters for RawMetrics / Anomaly Counters (same shape as metrics' GatewayCounters). */
export interface FlowControlCounters {
  readonly queueDepth: number;
  readonly queueShed: number;
  readonly queueRejected: number;
  readonly evicted: number;
  readonly expired: number;
}

export const FLOW_CONTROL_ENQUEUED_REASON = 'flow-control-enqueued';
export const FLOW_CONTROL_REJECTED_REASON = 'flow-control-queue-rejected';
const ENQUEUED_DECISION: AdmissionDecision = { admitted: true, reason: FLOW_CONTROL_ENQUEUED_REASON };
const REJECTED_DECISION: AdmissionDecision = { admitted: true, reason: FLOW_CONTROL_REJECTED_REASON };

export class FlowController {
  readonly queue: GatewayQueue;
  readonly detector: SaturationDetector;
  /** Null unless in-flight eviction is enabled. */
  readonly tracker: EvictionTracker | null;
  /**
   * Replaces the configured admission policy (wrap it in tenantBudget like any other). It enqueues and always
   * admits, so queue rejections are never admission rejections; the outcome is read by {@link onAdmitted}.
   */
  readonly admission: AdmissionPolicy;
  readonly tickInterval: number;
  private readonly ttl: number;
  private readonly host: FlowControlHost;
  private seq = 0;
  private last: { req: Request; result: EnqueueResult } | null = null;
  private tickPending = false;
  private expired = 0;
  private evicted = 0;
  /** Released to routing and not yet routed (counted only under corrected semantics). */
  private pending = 0;

  /**
   * `corrected` (--semantics corrected): rejected requests create no band, "fifo" dispatches in arrival order
   * under gating, round-robin fairness resumes after a vanished tenant, one attempt releases every request the
   * gate lets through (the reference releases one per enqueue and one per tick), and a failed in-flight
   * eviction keeps its candidate.
   */
  constructor(cfg: FlowControlConfig, priorities: SloPriorityMap, host: FlowControlHost, private readonly corrected = false) {
    if (!(cfg.requestTtl >= 0)) throw new RangeError(`flow control: request TTL must be >= 0, got ${cfg.requestTtl}`);
    if (!(cfg.dispatchTickInterval >= 0)) throw new RangeError(`flow control: dispatch tick interval must be >= 0, got ${cfg.dispatchTickInterval}`);
    const q = new GatewayQueue(cfg.dispatchOrder, cfg.maxQueueDepth, priorities, corrected);
    if (cfg.sloTargets !== null) q.setSloTargets(cfg.sloTargets);
    if (cfg.perBandCapacity > 0) q.setPerBandCapacity(cfg.perBandCapacity);
    if (cfg.usageLimitThreshold > 0 && cfg.usageLimitThreshold < 1.0) q.setUsageLimitThreshold(cfg.usageLimitThreshold);
    q.setFairnessPolicy(makeFairnessPolicy(cfg.fairnessPolicy, corrected));
    q.setSheddingEnabled(cfg.queueShedding);
    this.queue = q;
    this.detector = makeSaturationDetector(cfg.detector, cfg);
    this.tracker = cfg.inFlightEviction ? new EvictionTracker(priorities) : null;
    this.ttl = cfg.requestTtl;
    this.tickInterval = cfg.dispatchTickInterval === 0 ? DEFAULT_DISPATCH_TICK_INTERVAL : cfg.dispatchTickInterval;
    this.host = host;
    this.admission = { name: 'flow-control', admit: (req, state) => this.enqueue(req, state.clock) };
  }

  private enqueue(req: Request, now: number): AdmissionDecision {
    req.gatewayEnqueueTime = now;
    const result = this.queue.enqueue(req, ++this.seq);
    this.last = { req, result };
    if (result.outcome === 'rejected') {
      req.gatewayEnqueueTime = 0;
      return REJECTED_DECISION;
    }
    if (result.victim !== null) result.victim.gatewayEnqueueTime = 0;
    return ENQUEUED_DECISION;
  }

  /**
   * Call after `admission` (possibly through tenantBudget) admitted `req`. Returns the enqueue outcome; for
   * 'shed-victim' the cluster counts the victim's class in shedByTier. Unless rejected, schedules the request's
   * TTL event (when a TTL is set) and makes one dispatch attempt.
   */
  onAdmitted(req: Request, now: number): EnqueueResult {
    const last = this.last;
    if (last === null || last.req !== req) throw new Error(`flow control: ${req.id} was admitted without passing through the gateway queue`);
    this.last = null;
    if (last.result.outcome === 'rejected') return last.result;
    if (this.ttl > 0) this.host.scheduleTtl(now + this.ttl, req);
    this.tryDispatch(now);
    return last.result;
  }

  /**
   * One dispatch attempt (reference tryDispatchFromGatewayQueue): nothing when the queue is empty; otherwise
   * keeps one dispatch tick pending, reads saturation on a fresh state, and either schedules one in-flight
   * eviction (without dispatching) or releases at most one request to routing — under corrected semantics,
   * every request the gate lets through, re-reading saturation (pending releases included) after each. True
   * when one was released.
   */
  tryDispatch(now: number): boolean {
    if (this.queue.length === 0) return false;
    if (!this.tickPending) {
      this.tickPending = true;
      this.host.scheduleDispatchTick(now + this.tickInterval);
    }
    let released = false;
    do {
      const state = this.host.routerState();
      let sat = this.detector.saturation(state);
      if (this.corrected && this.pending > 0) sat += this.detector.pendingShare(this.pending, state.snapshots.length);
      if (!Number.isFinite(sat)) throw new Error(`flow control: saturation ${sat} is not finite (detector ${this.detector.name})`);
      const tracker = this.tracker;
      if (sat >= 1.0 && tracker !== null && tracker.length > 0 && this.queue.hasNonSheddableWaiting()) {
        const victim = tracker.pop();
        if (victim !== null) this.host.scheduleEviction(now, victim.request, victim.instanceId);
        return released;
      }
      const req = this.queue.dequeueGated(sat);
      if (req === null) return released;
      req.gatewayDispatchTime = now;
      this.pending++;
      this.host.scheduleRouting(req, now);
      released = true;
    } while (this.corrected && this.queue.length > 0);
    return released;
  }

  /** A request released by the gateway reached its routing decision (routed or rejected there). */
  onRoutingDecision(): void {
    if (this.pending > 0) this.pending--;
  }

  /** GatewayDispatchTickEvent at `at`: one attempt, then the next tick while requests remain queued. */
  onDispatchTick(at: number): void {
    if (this.queue.length > 0) this.tryDispatch(at);
    if (this.queue.length > 0) this.host.scheduleDispatchTick(at + this.tickInterval);
    else this.tickPending = false;
  }

  /** GatewayQueueTTLEvent: true when `req` was still queued and has now expired (count its class in shedByTier). */
  onTtlExpiry(req: Request): boolean {
    if (this.queue.remove(req.id) === null) return false;
    this.expired++;
    return true;
  }

  /** After routing injected `req` on `instanceId`: makes a sheddable request an eviction candidate. */
  onRouted(req: Request, instanceId: string): void {
    this.tracker?.track(req, instanceId);
  }

  /** From the instances' request-done hook (every terminal state): it is no longer evictable. */
  onRequestDone(req: Request): void {
    this.tracker?.untrack(req.id);
  }

  /** After a GatewayEvictionEvent actually removed its request from the instance. */
  onEvicted(_req: Request): void {
    this.evicted++;
  }

  /**
   * A GatewayEvictionEvent found its request on neither queue nor batch (e.g. still in its instance's queueing
   * delay). The reference has already popped the candidate and forgets it; under corrected semantics a request
   * still in flight becomes a candidate again.
   */
  onEvictionFailed(req: Request, instanceId: string): void {
    if (this.corrected && req.outcome === '') this.tracker?.track(req, instanceId);
  }

  get depth(): number {
    return this.queue.length;
  }

  /** Whether a dispatch tick is scheduled and not yet executed. */
  get isTickPending(): boolean {
    return this.tickPending;
  }

  counters(): FlowControlCounters {
    return { queueDepth: this.queue.length, queueShed: this.queue.shedCount, queueRejected: this.queue.rejectedCount, evicted: this.evicted, expired: this.expired };
  }
}
