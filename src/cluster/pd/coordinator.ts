/**
 * Prefill/decode disaggregation on the cluster's one event queue (reference blis-cluster.md §8, pd_events.go):
 *
 *   RoutingDecision -> decode pod chosen first -> decider -> local: injected into that decode pod like any
 *   request | split: PrefillRouting (prio 4, same tick) -> prefill pod -> ... prefill half completes (seen
 *   after the instance event, at the step's start) -> KVTransferStarted (prio 5): KV reserved on the decode
 *   pod, duration from bandwidth, base latency and fair-share contention -> KVTransferCompleted (prio 6):
 *   decode half enqueued on the decode pod -> completes: parent done at clock + post-decode overhead.
 *
 * The parent request never runs anywhere; its halves do, and at the end of the run the cluster's counts are
 * corrected and the per-request values projected onto the parent (see project.ts).
 */
import type { KVTransferRecord, PrefillRoutingRecord, DisaggregationRecord } from '../../domain/decision-records.js';
import { PdPart, RequestState, type Request } from '../../domain/request.js';
import { EventKind } from '../../instance/events.js';
import type { Instance } from '../../instance/instance.js';
import { computeCounterfactual } from '../../routing/counterfactual.js';
import type { DisaggregationDecider } from '../../routing/disaggregation.js';
import type { EncodeDecider } from '../../routing/encode-decider.js';
import { EncodeStage } from './encode.js';
import { amendDecision } from '../../routing/policies.js';
import type { RouterState, RoutingDecision, RoutingPolicy } from '../../routing/types.js';
import { PdParent } from './parent.js';
import { hasRole, PoolRole } from './pools.js';
import { transferDurationUs, type TransferConfig } from './transfer.js';
import { isReferencePd, PdBeyond, type PdBeyondConfig } from './beyond.js';
import type { PdHost } from './host.js';

export interface PdPolicies {
  readonly decider: DisaggregationDecider;
  /** Pool-specific weighted policies; null = the main routing policy (one shared object, as the reference). */
  readonly prefillRouting: RoutingPolicy | null;
  readonly decodeRouting: RoutingPolicy | null;
  /** E/P/D encode decider; null = no encode pool (the stage is skipped). */
  readonly encode?: EncodeDecider | null;
  /** The encode pool's own routing policy; null/absent = the main routing policy (shared, as the reference). */
  readonly encodeRouting?: RoutingPolicy | null;
}

export interface PdSetup {
  /** Role of each startup instance. */
  readonly roles: readonly number[];
  readonly transfer: TransferConfig;
  readonly blockSize: number;
  /** Models served by P/D pools (a deployment with several models); null = every request, unfiltered (reference). */
  readonly models?: readonly string[] | null;
  /** KV bytes per token of the prefill instance's configuration, by its scaling target. */
  readonly kvBytesPerTokenOf?: (target: string | undefined) => number;
  /** Ownership, pipelining, granularity, backpressure (absent = the reference's behaviour). */
  readonly beyond?: PdBeyondConfig;
  /** --semantics corrected: the P/D corrections of docs/reference-differences.md (D3, D4, D7). */
  readonly corrected?: boolean;
}

export class PdCoordinator {
  readonly parents: PdParent[] = [];
  private readonly byReq = new Map<Request, PdParent>();
  private readonly roles: number[];
  // Sub-requests finished during the current instance event, processed after it as the reference does.
  private readonly doneP: Request[] = [];
  private readonly doneD: Request[] = [];
  private readonly doneT: Request[] = [];
  /** Decode halves enqueued and not finished (the reference's pendingDecodeCompletions). */
  pendingDecode = 0;
  transfersInitiated = 0;
  transfersCompleted = 0;
  prefillCompleted = 0;
  decodeCompleted = 0;
  decodeTimedOut = 0;
  droppedAtDecodeKV = 0;
  /** Decode halves killed by an immediate drain (beyond the reference). */
  decodeKilled = 0;
  activeTransfers = 0;
  peakConcurrentTransfers = 0;
  private transferDepthSum = 0;
  private transferStartCount = 0;
  contentionCorrupted = false;
  readonly disaggregationRecords: DisaggregationRecord[] = [];
  readonly prefillRoutingRecords: PrefillRoutingRecord[] = [];
  /** E/P/D: the encode stage; null without an encode pool. */
  readonly encode: EncodeStage | null;
  readonly kvTransferRecords: KVTransferRecord[] = [];
  /** Corrected semantics: requests served whole waiting for their encode job, with their routing decision. */
  private readonly encodedLocal = new Map<Request, { state: RouterState; d: RoutingDecision; index: number; encodeIndex: number }>();
  /** Beyond-reference behaviour; null when every option has the reference's value. */
  readonly beyond: PdBeyond | null;

  constructor(
    private readonly host: PdHost,
    private readonly setup: PdSetup,
    private readonly policies: PdPolicies,
    private readonly mainRouting: () => RoutingPolicy,
  ) {
    this.roles = [...setup.roles];
    const encodeRouting = policies.encodeRouting ?? null;
    this.encode = policies.encode ? new EncodeStage(host, policies.encode, encodeRouting === null ? mainRouting : () => encodeRouting) : null;
    this.beyond = setup.beyond && !isReferencePd(setup.beyond) ? new PdBeyond(setup.beyond, setup.transfer) : null;
    if (this.beyond?.cfg.mode === 'pipelined') host.instances.forEach((inst, i) => this.watchSteps(inst, i));
  }

  /** Pipelined transfers ship blocks as prefill steps fill them: observe the steps of prefill pods. */
  private watchSteps(inst: Instance, index: number): void {
    const b = this.beyond;
    if (b === null || !hasRole(this.role(index), PoolRole.Prefill)) return;
    const prev = inst.onStep;
    const bytes = this.bytesPerToken(index);
    inst.onStep = (i, info) => {
      prev?.(i, info);
      b.observeStep(info, (r) => this.byReq.get(r), bytes);
    };
  }

  private bytesPerToken(prefillIndex: number): number {
    const of = this.setup.kvBytesPerTokenOf;
    return of === undefined ? this.setup.transfer.kvBytesPerToken : of(this.host.targetOf(prefillIndex));
  }

  role(index: number): number {
    return this.roles[index] ?? PoolRole.None;
  }

  /** Role of an instance added during the run (autoscaler). */
  addInstance(role: number): void {
    this.roles.push(role);
    const i = this.roles.length - 1;
    if (this.beyond?.cfg.mode === 'pipelined') this.watchSteps(this.host.instances[i] as Instance, i);
  }

  get corrected(): boolean {
    return this.setup.corrected === true;
  }

  get contentionEnabled(): boolean {
    return this.setup.transfer.contention;
  }

  get meanTransferQueueDepth(): number {
    return this.transferStartCount === 0 ? 0 : this.transferDepthSum / this.transferStartCount;
  }

  /** Whether `req` (served whole) waits for its encode job to end (corrected semantics). */
  encoding(req: Request): boolean {
    return this.encodedLocal.has(req);
  }

  /**
   * Whether split request `req` completed: its decode half did (a drop or a timeout is not a completion). The
   * parent's own outcome stays unset (its halves ran; the reference leaves it so), so whatever judges requests
   * by outcome asks this for split ones.
   */
  completedParent(req: Request): boolean {
    const p = this.byReq.get(req);
    return p !== undefined && p.req === req && !p.dropped && p.finalState === RequestState.Completed;
  }

  /** The parent of a sub-request or of an original request, if split. */
  parentOf(req: Request): PdParent | undefined {
    return this.byReq.get(req);
  }

  /** RoutingDecision when pools exist: decode pod first, then the decider (reference executeDisaggregatedRouting). */
  route(req: Request, t: number): void {
    const h = this.host;
    const models = this.setup.models ?? null;
    if (models !== null && !models.includes(req.model)) {
      h.standardRoute(req, t);
      return;
    }
    const state = h.poolState(PoolRole.Decode, models === null ? null : req.model);
    if (state.snapshots.length === 0) {
      h.rejectAtRouting(req);
      return;
    }
    const decodePolicy = this.policies.decodeRouting ?? this.mainRouting();
    let d = decodePolicy.route(req, state);
    const dec = this.policies.decider.decide(req, {
      state,
      selected: d.target,
      cachedBlocks: (id) => h.cachedBlocks(h.instanceIndex(id), req),
      blockSize: this.setup.blockSize,
      prefillState: () => h.poolState(PoolRole.Prefill, models === null ? null : req.model),
    });
    if (dec.decodeOverride !== undefined && dec.decodeOverride !== d.targetId) {
      const k = state.snapshots.findIndex((s) => s.id === dec.decodeOverride);
      if (k < 0) throw new RangeError(`PD decider ${this.policies.decider.name} moved ${req.id} to ${dec.decodeOverride}, which is not a routable decode pod`);
      d = amendDecision(d, { target: k, targetId: dec.decodeOverride });
    }
    if (h.traceDecisions) this.disaggregationRecords.push({ requestId: req.id, clock: h.clock, disaggregate: dec.disaggregate, decodeInstance: d.targetId, reason: dec.reason });
    const index = h.instanceIndex(d.targetId);
    if (index < 0) throw new RangeError(`decode routing chose unknown instance ${d.targetId}`);
    const encodeIndex = this.encode === null ? -1 : this.encode.route(req, d.targetId, models === null ? null : req.model);
    if (encodeIndex === null) return;
    // Corrected semantics (D10): the encode job runs first; the request moves on when it ends.
    const encodeEnd = this.corrected && encodeIndex >= 0 ? (this.encode as EncodeStage).run(req, encodeIndex, t) : t;
    if (!dec.disaggregate) {
      if (encodeEnd > t) {
        this.encodedLocal.set(req, { state, d, index, encodeIndex });
        h.scheduleCluster(encodeEnd, EventKind.PrefillRouting, req);
        return;
      }
      h.deliver(req, t, state, d, index);
      return;
    }
    if (h.traceDecisions && this.corrected) h.recordSplit(req, state, d);
    const parent = new PdParent(req, this.setup.blockSize, index, this.corrected);
    parent.encodeIndex = encodeIndex;
    parent.encodePending = encodeEnd > t;
    this.parents.push(parent);
    this.byReq.set(req, parent);
    this.byReq.set(parent.prefill, parent);
    h.scheduleCluster(encodeEnd, EventKind.PrefillRouting, parent.prefill);
  }

  /** PrefillRouting: the prefill half to a prefill-capable pod (or, after its encode job, a request served whole). */
  routePrefill(sub: Request, t: number): void {
    const h = this.host;
    const local = this.encodedLocal.get(sub);
    if (local !== undefined) {
      this.encodedLocal.delete(sub);
      (this.encode as EncodeStage).finish(local.encodeIndex);
      if (h.routable(local.index)) h.deliver(sub, t, local.state, local.d, local.index);
      else h.rejectAtRouting(sub);
      return;
    }
    const parent = this.byReq.get(sub) as PdParent;
    if (parent.encodePending) {
      parent.encodePending = false;
      (this.encode as EncodeStage).finish(parent.encodeIndex);
    }
    const b = this.beyond;
    if (b !== null && !b.admits(parent.decodeIndex)) {
      // Backpressure: the decode pod's queue is full; hold this prefill and look again shortly.
      b.held(parent.decodeIndex, h.clock, parent.req);
      h.scheduleCluster(t + b.cfg.retryUs, EventKind.PrefillRouting, sub);
      return;
    }
    const state = h.poolState(PoolRole.Prefill, this.setup.models ? parent.req.model : null);
    if (state.snapshots.length === 0) {
      h.rejectAtRouting(parent.req);
      return;
    }
    const d = (this.policies.prefillRouting ?? this.mainRouting()).route(sub, state);
    const index = h.instanceIndex(d.targetId);
    if (index < 0) throw new RangeError(`prefill routing chose unknown instance ${d.targetId}`);
    sub.assignedInstance = d.targetId;
    parent.prefillIndex = index;
    parent.prefillEnqueueTime = t;
    if (h.traceDecisions) {
      const cf = computeCounterfactual(d.targetId, d.scores, state.snapshots, h.counterfactualK);
      this.prefillRoutingRecords.push({
        parentRequestId: parent.id, clock: h.clock, chosenInstance: d.targetId,
        scores: d.scores === null ? null : new Map(d.scores), candidates: cf.candidates, regret: cf.regret,
      });
    }
    h.startSub(sub, index);
    b?.enter(parent.decodeIndex);
    (h.instances[index] as Instance).injectArrivalAt(sub, t);
  }

  /** A redirect drain took a queued prefill half off its pod: route it again among the prefill pods, now. */
  redirectPrefill(sub: Request, t: number): void {
    const parent = this.byReq.get(sub) as PdParent;
    this.beyond?.leave(parent.decodeIndex, t);
    this.host.scheduleCluster(t, EventKind.PrefillRouting, sub);
  }

  /** A sub-request reached a terminal state (collected; handled after the instance event). */
  subDone(req: Request, tick: number): void {
    if (req.pdPart === PdPart.Prefill) {
      if (req.outcome === 'completed') {
        this.doneP.push(req);
        if (this.corrected) (this.byReq.get(req) as PdParent).prefillStepEnd = tick;
      }
      else {
        const parent = this.byReq.get(req) as PdParent;
        if (req.state === RequestState.TimedOut) parent.finalState = RequestState.TimedOut;
        this.beyond?.leave(parent.decodeIndex, this.host.clock);
      }
    } else if (req.outcome === 'completed') this.doneD.push(req);
    else if (req.state === RequestState.TimedOut) this.doneT.push(req);
  }

  /** A half was killed by an immediate drain: its parent ends there (sessions are told it was cut off). */
  subKilled(req: Request): void {
    const parent = this.byReq.get(req);
    if (parent === undefined) return;
    if (req.pdPart === PdPart.Decode) {
      parent.finalState = RequestState.TimedOut;
      this.pendingDecode--;
      this.decodeKilled++;
    } else {
      parent.finalState = RequestState.TimedOut;
      this.beyond?.leave(parent.decodeIndex, this.host.clock);
    }
    this.host.parentDone(parent.req, RequestState.TimedOut, req.progressIndex, this.host.clock);
  }

  /** After an instance event: prefill completions start transfers, decode completions finish parents, in id order. */
  afterInstanceEvent(index: number): void {
    const h = this.host;
    const clock = h.clock;
    if (this.doneP.length > 0) {
      const done = sortById(this.doneP);
      this.doneP.length = 0;
      for (const sub of done) {
        const parent = this.byReq.get(sub) as PdParent;
        // The reference stamps the prefill's completion, and starts its transfer, at the start of the step that
        // computes it (reference-differences D13); corrected semantics wait for the step's end.
        const t = this.corrected ? Math.max(parent.prefillStepEnd, clock) : clock;
        parent.prefillCompleteTime = t;
        this.prefillCompleted++;
        if (this.beyond?.cfg.ownership === 'single') parent.heldOnPrefill = true;
        h.scheduleCluster(t, EventKind.KVTransferStarted, parent.req);
      }
    }
    if (this.doneD.length > 0) {
      const done = sortById(this.doneD);
      this.doneD.length = 0;
      const overhead = (h.instances[index] as Instance).postDecodeFixedOverhead();
      for (const sub of done) {
        const parent = this.byReq.get(sub) as PdParent;
        parent.completionTime = clock + overhead;
        this.pendingDecode--;
        this.decodeCompleted++;
        parent.finalState = RequestState.Completed;
        h.parentDone(parent.req, RequestState.Completed, sub.progressIndex, parent.completionTime);
      }
    }
    if (this.doneT.length > 0) {
      const done = sortById(this.doneT);
      this.doneT.length = 0;
      for (const sub of done) {
        const parent = this.byReq.get(sub) as PdParent;
        parent.completionTime = clock;
        this.pendingDecode--;
        this.decodeTimedOut++;
        parent.finalState = RequestState.TimedOut;
        h.parentDone(parent.req, RequestState.TimedOut, sub.progressIndex, parent.completionTime);
      }
    }
  }

  /** Whether any sub-request finished during the current event (cheap check for the cluster loop). */
  get hasPending(): boolean {
    return this.doneP.length > 0 || this.doneD.length > 0 || this.doneT.length > 0;
  }

  /** KVTransferStarted: reserve KV on the decode pod, or drop the request there and then. */
  startTransfer(req: Request, t: number): void {
    const h = this.host;
    const parent = this.byReq.get(req) as PdParent;
    const dsub = parent.makeDecode();
    this.byReq.set(dsub, parent);
    const inst = h.instances[parent.decodeIndex] as Instance;
    if (!h.routable(parent.decodeIndex) || !inst.reserveTransferredKV(dsub)) {
      this.droppedAtDecodeKV++;
      this.transfersInitiated++;
      parent.transferStartTime = t;
      parent.completionTime = t;
      parent.dropped = true;
      this.releasePrefill(parent, false);
      this.beyond?.leave(parent.decodeIndex, t);
      h.scheduleCluster(t, EventKind.KVTransferCompleted, req);
      return;
    }
    parent.decode = dsub;
    this.transfersInitiated++;
    parent.transferStartTime = t;
    if (this.setup.transfer.contention) {
      this.activeTransfers++;
      if (this.activeTransfers > this.peakConcurrentTransfers) this.peakConcurrentTransfers = this.activeTransfers;
      this.transferDepthSum += this.activeTransfers;
      this.transferStartCount++;
    }
    const bytes = this.bytesPerToken(parent.prefillIndex);
    const b = this.beyond;
    const duration = b === null
      ? transferDurationUs({ ...this.setup.transfer, kvBytesPerToken: bytes }, parent.numKVBlocks, this.activeTransfers)
      : b.cfg.mode === 'pipelined' ? b.pipelinedRemainingUs(parent, t, bytes) : b.wholeDurationUs(parent.numKVBlocks, this.activeTransfers, bytes);
    h.scheduleCluster(t + duration, EventKind.KVTransferCompleted, req);
  }

  /** KVTransferCompleted: the decode half joins its pod's wait queue (or is dropped if the pod went away). */
  completeTransfer(req: Request, t: number): void {
    const h = this.host;
    this.transfersCompleted++;
    const parent = this.byReq.get(req) as PdParent;
    const dsub = parent.decode;
    if (dsub === null) return;
    parent.transferCompleteTime = t;
    if (this.setup.transfer.contention) {
      this.activeTransfers--;
      if (this.activeTransfers < 0) {
        this.activeTransfers = 0;
        this.contentionCorrupted = true;
      }
    }
    const inst = h.instances[parent.decodeIndex] as Instance;
    this.beyond?.leave(parent.decodeIndex, t);
    if (!h.routable(parent.decodeIndex)) {
      this.releasePrefill(parent, false);
      inst.releaseReservedKV(dsub);
      this.droppedAtDecodeKV++;
      parent.completionTime = t;
      parent.decode = null;
      parent.dropped = true;
      return;
    }
    parent.decodeEnqueueTime = t;
    dsub.assignedInstance = inst.id;
    this.releasePrefill(parent, true);
    if (h.traceDecisions) {
      this.kvTransferRecords.push({
        parentRequestId: parent.id, transferStartTime: parent.transferStartTime, transferDuration: Math.max(0, t - parent.transferStartTime),
        numKVBlocks: parent.numKVBlocks, prefillInstanceId: (h.instances[parent.prefillIndex] as Instance).id, decodeInstanceId: inst.id,
      });
    }
    h.startSub(dsub, parent.decodeIndex);
    this.pendingDecode++;
    inst.injectDecodeOnline(dsub, t, this.corrected);
    // Corrected semantics (D7): a half timed out on arrival ends its parent now, at the transfer's end.
    if (this.corrected && this.hasPending) this.afterInstanceEvent(parent.decodeIndex);
  }

  /** Single ownership: the prefill pod lets go of the blocks it held for the transfer (moved, or not). */
  private releasePrefill(p: PdParent, moved: boolean): void {
    if (!p.heldOnPrefill) return;
    p.heldOnPrefill = false;
    const inst = this.host.instances[p.prefillIndex] as Instance;
    if (moved) inst.releaseTransferredKV(p.prefill);
    else inst.releaseReservedKV(p.prefill);
  }

  /** Reference pdInTransfer: prefills done whose decode half is neither running, finished nor dropped. */
  get inTransfer(): number {
    return this.prefillCompleted - this.decodeCompleted - this.decodeTimedOut - this.droppedAtDecodeKV - this.decodeKilled - this.pendingDecode;
  }

  /** Instances whose role includes prefill / decode (for the PD metrics' pool throughput). */
  inPool(index: number, role: number): boolean {
    return hasRole(this.role(index), role);
  }
}

function sortById(reqs: Request[]): Request[] {
  return reqs.length < 2 ? reqs.slice() : reqs.slice().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
