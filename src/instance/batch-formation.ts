/**
 * vLLM-style continuous batch formation (reference blis-core.md §3): continuing requests first (chunked
 * prefill and one decode token each, preempting from the batch when KV runs out), then new requests from the
 * wait queue while seats, token budget and KV allow, and no preemption happened this step.
 */
import { RequestState, type Request } from '../domain/request.js';
import type { KVStore } from '../kv/types.js';
import { SchedulerDecisionError, type InstanceScheduler, type PreemptionPolicy, type SchedulerContext } from './scheduler.js';
import type { WaitQueue } from './wait-queue.js';

export interface BatchLimits {
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  /** 0 = disabled. */
  readonly longPrefillTokenThreshold: number;
  /** 0 = unlimited. */
  readonly maxModelLen: number;
  readonly preemptionPolicy: PreemptionPolicy;
}

export interface BatchOutcome {
  /** Requests admitted from the wait queue this step, in admission order. */
  readonly newlyScheduled: Request[];
  preemptions: number;
  /** The preempted requests of this step, in preemption order. */
  readonly victims: Request[];
}

const EMPTY: readonly number[] = [];

export class BatchFormer {
  private budget = 0;
  private preempted = false;
  private readonly outcome: BatchOutcome = { newlyScheduled: [], preemptions: 0, victims: [] };

  constructor(
    private readonly limits: BatchLimits,
    private readonly kv: KVStore,
    private readonly waitQ: WaitQueue,
    /** A policy scheduler with hooks; null for the built-in orderings (no hooks, nothing to call). */
    private readonly scheduler: InstanceScheduler | null = null,
    /** Builds the scheduler's context on demand (only called when a hook runs). */
    private readonly context: ((batch: readonly Request[]) => SchedulerContext) | null = null,
  ) {}

  /** Forms the step's batch in place in `batch`; the returned outcome object is reused between calls. */
  form(batch: Request[], stepCount: number): BatchOutcome {
    const lim = this.limits;
    const out = this.outcome;
    out.newlyScheduled.length = 0;
    out.preemptions = 0;
    out.victims.length = 0;
    this.budget = lim.maxNumBatchedTokens;
    this.preempted = false;

    // Phase 1: continuing requests. An index loop that re-reads the length: preemption shrinks the batch. Each
    // request's numNewTokens is cleared when the loop reaches it (and the rest's when it stops): the previous
    // step's values stay readable until this step forms (the invariant checkers read them).
    for (let i = 0; i < batch.length; i++) {
      const req = batch[i] as Request;
      req.numNewTokens = 0;
      this.visited = i;
      if (this.budget <= 0) {
        this.clearFrom(batch, i + 1);
        break;
      }
      let n = req.inputLen - req.progressIndex;
      if (n > 0) {
        const th = lim.longPrefillTokenThreshold;
        if (th > 0 && th < n) n = th;
        if (this.budget < n) n = this.budget;
        if (lim.maxModelLen > 0) n = Math.min(n, Math.max(lim.maxModelLen - 1 - req.progressIndex, 0));
        const r = this.preemptForTokens(batch, req, n, i);
        i -= r.adj;
        if (!r.ok) {
          // `req` itself was preempted: position i now holds the first request not reached.
          this.clearFrom(batch, i);
          break;
        }
        this.budget -= n;
        req.numNewTokens = n;
        req.computedTokens += n;
      }
      if (req.progressIndex >= req.inputLen && req.outputLen > 0) {
        const d = lim.maxModelLen > 0 && req.progressIndex + 1 > lim.maxModelLen - 1 ? 0 : 1;
        if (d > 0) {
          // The decode token: almost always an append to the request's partial last block (no preemption).
          if (!this.kv.allocate(req, req.progressIndex, req.progressIndex + 1, EMPTY)) {
            const r = this.preemptForTokens(batch, req, 1, i, true);
            i -= r.adj;
            if (!r.ok) {
              this.clearFrom(batch, i);
              break;
            }
          }
          this.budget -= 1;
          req.numNewTokens = 1;
          req.computedTokens += 1;
        }
      }
    }

    // Phase 2: admit from the wait queue head (no skip-ahead: head-of-line blocking on KV failure).
    if (this.scheduler?.makeBatch) {
      this.admitChosen(batch, stepCount, this.scheduler.makeBatch);
      return out;
    }
    while (batch.length < lim.maxNumSeqs && this.waitQ.length > 0 && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(0) as Request;
      if (!this.admit(batch, next, stepCount, 0)) break;
      this.waitQ.dequeue();
    }
    return out;
  }

  /** Allocates and schedules `next` (chunk capped at `cap` when > 0); false when the KV cache cannot take it. */
  private admit(batch: Request[], next: Request, stepCount: number, cap: number): boolean {
    const lim = this.limits;
    const cached = this.kv.getCachedBlocks(next);
    const start = cached.length * this.kv.blockSize;
    let n = next.inputLen - start;
    const th = lim.longPrefillTokenThreshold;
    if (th > 0 && th < n) n = th;
    if (cap > 0 && cap < n) n = cap;
    if (this.budget < n) n = this.budget;
    if (lim.maxModelLen > 0) n = Math.min(n, Math.max(lim.maxModelLen - 1 - start, 0));
    if (!this.kv.allocate(next, start, start + n, cached)) return false;
    batch.push(next);
    next.scheduledStepIdx = stepCount;
    this.outcome.newlyScheduled.push(next);
    this.budget -= n;
    next.state = RequestState.Running;
    next.numNewTokens = n;
    next.computedTokens = n + start;
    return true;
  }

  /** Phase 2 under a policy's {@link InstanceScheduler.makeBatch}: its choice, checked, in its order. */
  private admitChosen(batch: Request[], stepCount: number, makeBatch: NonNullable<InstanceScheduler['makeBatch']>): void {
    const lim = this.limits;
    const name = (this.scheduler as InstanceScheduler).name;
    if (this.waitQ.length === 0) return;
    const choice = makeBatch((this.context as (b: readonly Request[]) => SchedulerContext)(batch));
    const seats = lim.maxNumSeqs - batch.length;
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
      if (!this.admit(batch, next, stepCount, choice.chunks?.[i] ?? 0)) break;
      this.waitQ.remove(next);
    }
  }

  /** The victim's index in `batch`: the policy's choice when it has a hook, else the preemption policy's. */
  private victimIndex(batch: Request[]): number {
    const hook = this.scheduler?.selectPreemptionVictim;
    if (hook) {
      const victim = hook((this.context as (b: readonly Request[]) => SchedulerContext)(batch));
      const i = batch.indexOf(victim);
      if (i < 0) throw new SchedulerDecisionError((this.scheduler).name, 'selectPreemptionVictim', `chose ${(victim as Request | undefined)?.id ?? 'nothing'}, which is not running on this instance`);
      return i;
    }
    return this.limits.preemptionPolicy === 'priority' ? selectPriorityVictim(batch) : batch.length - 1;
  }

  private readonly result = { ok: false, adj: 0 };
  /** Position (in the batch as it is now) of the request phase 1 is at: requests after it hold last step's numNewTokens. */
  private visited = 0;

  private clearFrom(batch: readonly Request[], from: number): void {
    for (let k = from; k < batch.length; k++) (batch[k] as Request).numNewTokens = 0;
  }

  /**
   * Allocates `n` tokens for `req`, evicting victims from the batch until it fits or `req` itself goes.
   * `failedOnce`: the caller's own first attempt already failed (a tiered cache counts every failed attempt).
   */
  private preemptForTokens(batch: Request[], req: Request, n: number, reqIndex: number, failedOnce = false): { ok: boolean; adj: number } {
    const res = this.result;
    res.adj = 0;
    for (let first = true; ; first = false) {
      if (!(first && failedOnce) && this.kv.allocate(req, req.progressIndex, req.progressIndex + n, EMPTY)) {
        res.ok = true;
        return res;
      }
      if (batch.length === 0) {
        res.ok = false;
        return res;
      }
      this.preempted = true;
      const victimIdx = this.victimIndex(batch);
      const victim = batch[victimIdx] as Request;
      batch.splice(victimIdx, 1);
      // Only a request phase 1 has reached holds this step's tokens (the others' are last step's).
      const reached = victimIdx <= this.visited - res.adj;
      if (victimIdx < reqIndex - res.adj) res.adj++;
      this.outcome.preemptions++;
      this.outcome.victims.push(victim);
      if (!reached) {
        victim.numNewTokens = 0;
      } else if (victim.numNewTokens > 0) {
        this.budget += victim.numNewTokens;
        victim.numNewTokens = 0;
      }
      victim.state = RequestState.Queued;
      victim.progressIndex = 0;
      victim.itlRuns = null;
      victim.itlCount = 0;
      victim.itlSum = 0;
      victim.ttftSet = false;
      this.kv.release(victim);
      victim.computedTokens = 0;
      this.waitQ.prependFront(victim);
      if (victim === req) {
        res.ok = false;
        return res;
      }
    }
  }
}

/** Highest priority value (least urgent) wins; ties go to the later arrival; scanned from the tail. */
function selectPriorityVictim(batch: readonly Request[]): number {
  let idx = batch.length - 1;
  let pri = (batch[idx] as Request).priority;
  let arr = (batch[idx] as Request).arrivalTime;
  for (let i = batch.length - 2; i >= 0; i--) {
    const r = batch[i] as Request;
    if (r.priority > pri || (r.priority === pri && r.arrivalTime > arr)) {
      idx = i;
      pri = r.priority;
      arr = r.arrivalTime;
    }
  }
  return idx;
}
