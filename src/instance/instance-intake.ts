/**
 * Requests into and out of an instance (reference blis-core.md §5), the second link of Instance's class chain
 * (instance-core.ts describes the chain). This file owns what the cluster calls to hand a request over
 * (injectArrivalAt, the P/D decode-half injection and KV reservation), the enqueue guards in the reference's
 * order and the drops they make, client timeouts, gateway eviction and the drain redirect (takeQueued): every
 * way a request enters the wait queue or leaves the instance other than completing.
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import { EventKind } from './events.js';
import { EMPTY, InstanceCore } from './instance-core.js';

export abstract class InstanceIntake extends InstanceCore {
  /** Registers `req` here and schedules its instance ArrivalEvent at `time` (the routing time). */
  injectArrivalAt(req: Request, time: number): void {
    req.registered = true;
    this.metrics.requests.push(req);
    this.sink.schedule(time, EventKind.Arrival, req);
  }

  /**
   * P/D: reserves KV for the whole input of a decode half whose KV is being transferred here (reference
   * ReserveTransferredKV): the blocks count against this cache for the whole transfer window, and the request
   * is then decode-ready. False, with nothing allocated, when the cache cannot hold it.
   */
  reserveTransferredKV(r: Request): boolean {
    if (r.inputLen === 0) {
      r.progressIndex = 0;
      return true;
    }
    if (!this.kv.allocate(r, 0, r.inputLen, EMPTY)) return false;
    r.progressIndex = r.inputLen;
    return true;
  }

  /** P/D single ownership: the held KV of a finished prefill half moved to its decode instance. */
  releaseTransferredKV(r: Request): void {
    this.kv.releaseTransferred(r);
  }

  /** P/D: frees a reservation made by {@link reserveTransferredKV} (the transfer was abandoned). */
  releaseReservedKV(r: Request): void {
    this.kv.release(r);
  }

  /**
   * P/D: enqueues a decode half whose KV arrived (reference EnqueueDecodeSubRequest): registered here, straight
   * into the wait queue — no arrival event, no enqueue guards, its input tokens not counted again — and a step
   * at max(instance clock, `clusterTime`) if the instance is idle. With `expirePast` a deadline already past
   * times it out at once.
   */
  injectDecodeOnline(r: Request, clusterTime: number, expirePast = false): void {
    r.registered = true;
    this.metrics.requests.push(r);
    r.priority = r.hasPolicyPriority ? -r.policyPriority : this.slo.invertForVllm(r.sloClass);
    this.waitQ.enqueue(r);
    if (this.policy?.onRequestArrival) this.policy.onRequestArrival(r, this.schedulerContext());
    // Corrected semantics: a deadline that passed during the transfer times the half out on arrival, before
    // any step at this tick can schedule it.
    if (expirePast && r.deadline > 0 && r.deadline <= clusterTime) {
      this.timeout(r, Math.max(this.clock, clusterTime));
      return;
    }
    // A deadline already past fires now: the reference would schedule it in the past (its clock would step back).
    if (r.deadline > 0 && r.deadline <= this.cfg.horizon) this.sink.schedule(Math.max(r.deadline, clusterTime), EventKind.Timeout, r);
    if (this.run.length === 0 && !this.stepPending) this.scheduleStep(Math.max(this.clock, clusterTime));
  }

  /**
   * Gateway in-flight eviction (reference InstanceSimulator.EvictRequest): removes `r` from the wait queue or
   * the running batch and frees its KV. The request ends here without any completion accounting; the cluster
   * counts it as evicted. False when `r` is in neither (already finished).
   */
  evictRequest(r: Request): boolean {
    this.lora?.release(r);
    if (this.waitQ.remove(r)) {
      this.kv.release(r);
      r.state = RequestState.Completed;
      return true;
    }
    const i = this.run.indexOf(r);
    if (i < 0) return false;
    this.run.removeAt(i);
    this.kv.release(r);
    r.state = RequestState.Completed;
    if (this.run.length === 0 && !this.stepPending && this.waitQ.length > 0) this.scheduleStep(this.clock);
    return true;
  }

  /**
   * Drain redirect: takes every waiting request except P/D decode halves (their KV lives here) out of this
   * instance, as if it had never been routed here, so the cluster can route it again.
   */
  takeQueued(): Request[] {
    const out: Request[] = [];
    for (const r of this.waitQ.toArray()) {
      if (r.pdPart === PdPart.Decode) continue;
      this.waitQ.remove(r);
      // A preempted request keeps its adapter pin while it waits; the pin stays with this instance.
      this.lora?.release(r);
      this.kv.release(r);
      r.progressIndex = 0;
      r.computedTokens = 0;
      r.registered = false;
      const k = this.metrics.requests.lastIndexOf(r);
      if (k >= 0) this.metrics.requests.splice(k, 1);
      this.metrics.totalInputTokens -= r.inputLen;
      out.push(r);
    }
    return out;
  }

  private drop(r: Request): void {
    this.metrics.droppedUnservable++;
    r.registered = false;
    r.outcome = 'dropped_unservable';
    this.onRequestDone?.(r, this.clock);
  }

  /** Enqueue guards, in the reference's order (blis-core.md §5). */
  protected enqueue(r: Request): void {
    if (r.state === RequestState.TimedOut) return;
    const mml = this.cfg.maxModelLen;
    if (r.maxOutputLen === 0 && mml > 0 && r.inputLen < mml) r.maxOutputLen = mml - r.inputLen;
    if (r.maxOutputLen < 0) return this.drop(r);
    if (mml > 0) {
      if (r.inputLen >= mml) return this.drop(r);
      if (r.maxOutputLen > 0 && r.inputLen + r.maxOutputLen > mml) return this.drop(r);
    }
    const bs = this.kv.blockSize;
    if (Math.floor((r.inputLen + bs - 1) / bs) > this.kv.totalBlocks) return this.drop(r);
    this.metrics.totalInputTokens += r.inputLen;
    if (r.deadline > 0 && r.deadline <= this.clock) {
      r.state = RequestState.TimedOut;
      r.outcome = 'timed_out';
      this.metrics.timedOutRequests++;
      this.onRequestDone?.(r, this.clock);
      return;
    }
    r.priority = r.hasPolicyPriority ? -r.policyPriority : this.slo.invertForVllm(r.sloClass);
    r.enqueueTime = this.clock;
    this.waitQ.enqueue(r);
    if (this.policy?.onRequestArrival) this.policy.onRequestArrival(r, this.schedulerContext());
    if (r.deadline > 0 && r.deadline <= this.cfg.horizon) this.sink.schedule(r.deadline, EventKind.Timeout, r);
  }

  /** A client timeout fires: `r` leaves the wait queue or the running batch, timed out, and frees its KV. */
  protected timeout(r: Request, time: number): void {
    if (r.state === RequestState.Completed || r.state === RequestState.TimedOut) return;
    const wasRunning = r.state === RequestState.Running;
    const i = wasRunning ? this.run.indexOf(r) : -1;
    // A request no longer here (moved by a drain redirect) left this instance's timeout behind.
    if (wasRunning ? i < 0 : !this.waitQ.remove(r)) return;
    // Out of the batch first: that syncs the request (and its KV) before the release below.
    if (wasRunning) this.run.removeAt(i);
    r.state = RequestState.TimedOut;
    r.outcome = 'timed_out';
    this.metrics.timedOutRequests++;
    this.lora?.release(r);
    this.kv.release(r);
    r.computedTokens = 0;
    // A running request's pending step stays scheduled: it finds the empty batch and clears itself (the orphan guard).
    if (this.run.length === 0 && !this.stepPending && this.waitQ.length > 0) this.scheduleStep(time);
    this.onRequestDone?.(r, time);
  }
}
