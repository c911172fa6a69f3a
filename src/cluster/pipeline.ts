/**
 * The cluster's request pipeline (ClusterSimulator's chain: core.ts -> router-view.ts -> pipeline.ts ->
 * cluster.ts): ClusterArrival(t) -> AdmissionDecision(t + admissionLatency, re-entered after a DELAY) ->
 * priority -> the gateway queue when flow control is on -> RoutingDecision(+ routingLatency) -> delivery to the
 * instance (an ArrivalEvent at the routing time; metrics still measure from the original arrival). Also the
 * hosts lent to the gateway queue (flowHost) and the P/D coordinator (pdHost), gateway eviction, and the
 * routing decision records.
 */
import type { RoutingRecord } from '../domain/decision-records.js';
import { RequestState, type Request } from '../domain/request.js';
import { EventKind, eventOrder } from '../instance/events.js';
import type { Instance } from '../instance/instance.js';
import { computeCounterfactual } from '../routing/counterfactual.js';
import type { RouterState, RoutingDecision, RoutingSnapshot } from '../routing/types.js';
import { inputBlockHashes } from '../domain/block-hash.js';
import type { FlowControlHost } from './flow-control/controller.js';
import type { PdHost } from './pd/host.js';
import { RouterViews } from './router-view.js';

export const DEFAULT_MAX_ADMISSION_DELAYS = 100;

export abstract class ClusterPipeline extends RouterViews {
  /** An AdmissionDecision event (arrival + admissionLatency, or a DELAY's end): admit, delay, or reject; then priority and the gateway queue or routing. */
  protected admit(req: Request, t: number): void {
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

  protected route(req: Request, t: number): void {
    this.flowController?.onRoutingDecision();
    if (this.pd !== null) {
      this.pd.route(req, t);
      return;
    }
    this.standardRoute(req, t);
  }

  protected standardRoute(req: Request, t: number): void {
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

  protected rejectAtRouting(req: Request): void {
    this.routingRejections++;
    req.outcome = 'rejected';
    this.lost(req);
  }

  /** Injects `req` into instance `index` as routing decision `d` over `state` chose (records, counters, tenants). */
  protected deliver(req: Request, t: number, state: RouterState, d: RoutingDecision, index: number): void {
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

  protected recordRouting(req: Request, d: RoutingDecision, snaps: readonly RoutingSnapshot[], expected: boolean | null, actual: boolean | null): void {
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

  protected pdHost(): PdHost {
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
  protected parentDone(parent: Request, state: RequestState, progressIndex: number, tick: number): void {
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

  /** What the flow controller schedules, pushed at once in the reference's order. */
  protected flowHost(): FlowControlHost {
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

  protected evict(req: Request): void {
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
}
