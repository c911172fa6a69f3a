/**
 * Admission from the wait queue (the middle of the batch former: preemption.ts -> admission.ts ->
 * batch-formation.ts): sizing and allocating a waiting request's first chunk after its prefix-cache hits (or a
 * P/D decode half's next token), in queue order, past requests async scheduling has not seen yet, or in a
 * policy's own order and chunks (InstanceScheduler.makeBatch, checked), behind the LoRA cold-load gate.
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import type { KVStore } from '../kv/types.js';
import type { BatchLimits } from './batch-limits.js';
import { EMPTY, PreemptingFormer } from './preemption.js';
import { SchedulerDecisionError, type InstanceScheduler, type SchedulerContext } from './scheduler.js';
import type { RunningBatch } from './running-batch.js';
import type { WaitQueue } from './wait-queue.js';

export abstract class AdmittingFormer extends PreemptingFormer {
  /**
   * The LoRA cold-load gate: held(r) is true for a waiting request that may not be admitted yet (its adapter
   * is not resident). Admission stops there (head-of-line, as the reference). null = no gate.
   */
  gate: { held(r: Request): boolean } | null = null;
  /** The KV store's reload-before-sizing hook (storage-tier mode only); null = the reference's order. */
  private readonly prefixReload: ((r: Request) => void) | null;
  /** --semantics corrected (docs/reference-differences.md E-rows). */
  private readonly corrected: boolean;

  constructor(limits: BatchLimits, kv: KVStore, waitQ: WaitQueue, run: RunningBatch, scheduler: InstanceScheduler | null, context: (() => SchedulerContext) | null) {
    super(limits, kv, waitQ, run, scheduler, context);
    this.prefixReload = kv.prefixReload ?? null;
    this.corrected = limits.corrected === true;
  }

  /** Admission when the scheduler has not yet seen requests enqueued after `visibleUntil` (skipped, not blocking). */
  protected admitVisible(stepCount: number, visibleUntil: number): void {
    const lim = this.limits;
    let i = 0;
    while (this.run.reqs.length < lim.maxNumSeqs && i < this.waitQ.length && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(i) as Request;
      if (next.enqueueTime > visibleUntil) {
        i++;
        continue;
      }
      if (!this.admit(next, stepCount, 0)) break;
      if (i === 0) this.waitQ.dequeue();
      else this.waitQ.remove(next);
    }
  }

  /** The blocks of `req`'s prompt the prefix cache holds (none with prefix caching off: BatchLimits.prefixCaching). */
  protected cachedBlocksOf(req: Request): readonly number[] {
    return this.limits.prefixCaching === false ? EMPTY : this.kv.getCachedBlocks(req);
  }

  /**
   * vLLM's full-ISL admission check (`allocate_slots(..., full_sequence_must_fit=True)`, BatchLimits.reserveFullIsl):
   * the blocks the request's whole known sequence needs beyond its prefix-cache hits must all be free now.
   */
  private wholeSequenceFits(next: Request, cachedBlocks: number): boolean {
    const need = Math.ceil((next.inputLen + next.replayTokens) / this.kv.blockSize) - cachedBlocks;
    return need <= this.kv.totalBlocks - this.kv.usedBlocks();
  }

  /** Allocates and schedules `next` (chunk capped at `cap` when > 0); false when the KV cache cannot take it. */
  protected admit(next: Request, stepCount: number, cap: number): boolean {
    // A P/D decode half arrives with its input KV allocated: it only needs its next token.
    if (next.pdPart === PdPart.Decode) return this.admitDecodeHalf(next, stepCount);
    const lim = this.limits;
    if (this.prefixReload !== null) this.prefixReload(next);
    const cached = this.cachedBlocksOf(next);
    const start = cached.length * this.kv.blockSize;
    if (lim.reserveFullIsl === true && !this.wholeSequenceFits(next, cached.length)) return false;
    let n = next.inputLen + next.replayTokens - start;
    const th = lim.longPrefillTokenThreshold;
    if (th > 0 && th < n) n = th;
    if (cap > 0 && cap < n) n = cap;
    if (this.budget < n) n = this.budget;
    if (lim.maxModelLen > 0) n = Math.min(n, Math.max(lim.maxModelLen - 1 - start, 0));
    if (!this.kv.allocate(next, start, start + n, cached)) return false;
    next.scheduledStepIdx = stepCount;
    this.outcome.newlyScheduled.push(next);
    this.budget -= n;
    next.state = RequestState.Running;
    next.numNewTokens = n;
    next.computedTokens = n + start;
    // E2 (corrected): the cached prefix is context the first step attends to; the reference leaves progress at
    // 0, so roofline (and corrected-physics) price that step as if nothing were cached. Set before the push,
    // which copies the request's fields into its slot.
    if (this.corrected) next.progressIndex = start;
    this.run.push(next);
    return true;
  }

  private admitDecodeHalf(next: Request, stepCount: number): boolean {
    const pi = next.progressIndex;
    if (!this.kv.allocate(next, pi, pi + 1, EMPTY)) return false;
    next.scheduledStepIdx = stepCount;
    this.outcome.newlyScheduled.push(next);
    this.budget -= 1;
    next.state = RequestState.Running;
    next.numNewTokens = 1;
    next.computedTokens = pi + 1;
    // Into the batch's slots last: push copies the fields set above.
    this.run.push(next);
    return true;
  }

  /** Phase 2 under a policy's {@link InstanceScheduler.makeBatch}: its choice, checked, in its order. */
  protected admitChosen(stepCount: number, makeBatch: NonNullable<InstanceScheduler['makeBatch']>): void {
    const lim = this.limits;
    const name = (this.scheduler as InstanceScheduler).name;
    if (this.waitQ.length === 0) return;
    const choice = makeBatch((this.context as () => SchedulerContext)());
    const seats = lim.maxNumSeqs - this.run.reqs.length;
    if (choice.requests.length > Math.max(seats, 0)) {
      throw new SchedulerDecisionError(name, 'makeBatch', `chose ${choice.requests.length} requests but only ${Math.max(seats, 0)} seats are free (max running requests ${lim.maxNumSeqs})`);
    }
    const waiting = new Set(this.waitQ.toArray());
    const seen = new Set<Request>();
    choice.requests.forEach((r, i) => {
      if (!waiting.has(r)) throw new SchedulerDecisionError(name, 'makeBatch', `request ${r.id} is not waiting on this instance`);
      if (seen.has(r)) throw new SchedulerDecisionError(name, 'makeBatch', `request ${r.id} chosen twice`);
      seen.add(r);
      const cap = choice.chunks?.[i] ?? 0;
      if (!Number.isInteger(cap) || cap < 0 || cap > lim.maxNumBatchedTokens) {
        throw new SchedulerDecisionError(name, 'makeBatch', `chunk ${String(cap)} for ${r.id} must be an integer in [0, ${lim.maxNumBatchedTokens}] (0 = as many as allowed)`);
      }
    });
    for (let i = 0; i < choice.requests.length; i++) {
      if (this.budget <= 0 || this.preempted) break;
      const next = choice.requests[i] as Request;
      if (this.gate !== null && this.gate.held(next)) break;
      if (!this.admit(next, stepCount, choice.chunks?.[i] ?? 0)) break;
      this.waitQ.remove(next);
    }
  }
}
