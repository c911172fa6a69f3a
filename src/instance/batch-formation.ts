/**
 * vLLM-style continuous batch formation (reference blis-core.md §3): continuing requests first (chunked
 * prefill and one decode token each, preempting from the batch when KV runs out), then new requests from the
 * wait queue while seats, token budget and KV allow, and no preemption happened this step.
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import type { KVStore } from '../kv/types.js';
import { SchedulerDecisionError, type InstanceScheduler, type PreemptionPolicy, type SchedulerContext } from './scheduler.js';
import type { WaitQueue } from './wait-queue.js';

/**
 * How the vLLM scheduler forms steps:
 * - `sync` (the reference): a request enqueued before a step starts can join it;
 * - `async` (vLLM V1's default async scheduling): step k+1 is planned while step k runs, so a request enqueued
 *   after step k started first joins step k+2;
 * - `prefill-first` (vLLM V0 without chunked prefill): a step with waiting prompts runs only prefills, and
 *   running decodes stall until no prompt can be admitted.
 */
export type SchedulingMode = 'sync' | 'async' | 'prefill-first';
export const SCHEDULING_MODES: readonly SchedulingMode[] = ['sync', 'async', 'prefill-first'];

export interface BatchLimits {
  /** Default `sync`. */
  readonly schedulingMode?: SchedulingMode;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  /** 0 = disabled. */
  readonly longPrefillTokenThreshold: number;
  /** 0 = unlimited. */
  readonly maxModelLen: number;
  readonly preemptionPolicy: PreemptionPolicy;
  /** --semantics corrected (docs/reference-differences.md E-rows); read once at construction. Default false. */
  readonly corrected?: boolean;
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
  private readonly corrected: boolean;
  private readonly outcome: BatchOutcome = { newlyScheduled: [], preemptions: 0, victims: [] };
  /**
   * The LoRA cold-load gate: true for a waiting request that may not be admitted yet (its adapter is not
   * resident). Admission stops there (head-of-line, as the reference). null = no gate.
   */
  gate: ((r: Request) => boolean) | null = null;

  constructor(
    private readonly limits: BatchLimits,
    private readonly kv: KVStore,
    private readonly waitQ: WaitQueue,
    /** A policy scheduler with hooks; null for the built-in orderings (no hooks, nothing to call). */
    private readonly scheduler: InstanceScheduler | null = null,
    /** Builds the scheduler's context on demand (only called when a hook runs). */
    private readonly context: ((batch: readonly Request[]) => SchedulerContext) | null = null,
  ) {
    this.corrected = limits.corrected === true;
  }

  /**
   * Forms the step's batch in place in `batch`; the returned outcome object is reused between calls.
   * `visibleUntil`: only requests enqueued at or before this tick may be admitted (async scheduling).
   */
  form(batch: Request[], stepCount: number, visibleUntil = Infinity): BatchOutcome {
    const lim = this.limits;
    const out = this.outcome;
    out.newlyScheduled.length = 0;
    out.preemptions = 0;
    out.victims.length = 0;
    this.budget = lim.maxNumBatchedTokens;
    this.preempted = false;
    for (let i = 0; i < batch.length; i++) (batch[i] as Request).numNewTokens = 0;
    if (lim.schedulingMode === 'prefill-first') {
      this.formPrefillFirst(batch, stepCount);
      return out;
    }

    // Phase 1: continuing requests. An index loop that re-reads the length: preemption shrinks the batch.
    for (let i = 0; i < batch.length; i++) {
      if (this.budget <= 0) break;
      const req = batch[i] as Request;
      let n = req.inputLen - req.progressIndex;
      if (n > 0) {
        const th = lim.longPrefillTokenThreshold;
        if (th > 0 && th < n) n = th;
        if (this.budget < n) n = this.budget;
        if (lim.maxModelLen > 0) n = Math.min(n, Math.max(lim.maxModelLen - 1 - req.progressIndex, 0));
        const r = this.preemptForTokens(batch, req, n, i);
        i -= r.adj;
        if (!r.ok) break;
        this.budget -= n;
        req.numNewTokens = n;
        req.computedTokens += n;
      }
      if (req.progressIndex >= req.inputLen && req.outputLen > 0) {
        const d = lim.maxModelLen > 0 && req.progressIndex + 1 > lim.maxModelLen - 1 ? 0 : 1;
        if (d > 0) {
          const r = this.preemptForTokens(batch, req, 1, i);
          i -= r.adj;
          if (!r.ok) break;
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
    if (visibleUntil !== Infinity) {
      this.admitVisible(batch, stepCount, visibleUntil);
      return out;
    }
    while (batch.length < lim.maxNumSeqs && this.waitQ.length > 0 && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(0) as Request;
      if (this.gate !== null && this.gate(next)) break;
      if (!this.admit(batch, next, stepCount, 0)) break;
      this.waitQ.dequeue();
    }
    return out;
  }

  /** Admission when the scheduler has not yet seen requests enqueued after `visibleUntil` (skipped, not blocking). */
  private admitVisible(batch: Request[], stepCount: number, visibleUntil: number): void {
    const lim = this.limits;
    let i = 0;
    while (batch.length < lim.maxNumSeqs && i < this.waitQ.length && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(i) as Request;
      if (next.enqueueTime > visibleUntil) {
        i++;
        continue;
      }
      if (!this.admit(batch, next, stepCount, 0)) break;
      if (i === 0) this.waitQ.dequeue();
      else this.waitQ.remove(next);
    }
  }

  /**
   * vLLM V0 without chunked prefill: while prompts wait and fit, the step runs prefills only (whole prompts;
   * a prompt longer than the token budget is split over consecutive prefill-only steps) and the running
   * decodes get no token; otherwise every running request decodes one token and nothing is admitted.
   */
  private formPrefillFirst(batch: Request[], stepCount: number): void {
    const lim = this.limits;
    let prefillTokens = 0;
    for (let i = 0; i < batch.length; i++) {
      if (this.budget <= 0) break;
      const req = batch[i] as Request;
      let n = req.inputLen - req.progressIndex;
      if (n <= 0) continue;
      if (this.budget < n) n = this.budget;
      if (lim.maxModelLen > 0) n = Math.min(n, Math.max(lim.maxModelLen - 1 - req.progressIndex, 0));
      const r = this.preemptForTokens(batch, req, n, i);
      i -= r.adj;
      if (!r.ok) break;
      this.budget -= n;
      req.numNewTokens = n;
      req.computedTokens += n;
      prefillTokens += n;
    }
    while (batch.length < lim.maxNumSeqs && this.waitQ.length > 0 && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(0) as Request;
      const cached = this.kv.getCachedBlocks(next).length * this.kv.blockSize;
      // Whole prompts only, unless nothing else is scheduled (then the prompt is split over steps).
      if (prefillTokens > 0 && next.inputLen - cached > this.budget) break;
      const before = this.budget;
      if (!this.admit(batch, next, stepCount, 0)) break;
      this.waitQ.dequeue();
      prefillTokens += before - this.budget;
    }
    if (prefillTokens > 0 || this.preempted) return;
    for (let i = 0; i < batch.length; i++) {
      if (this.budget <= 0) break;
      const req = batch[i] as Request;
      if (req.progressIndex < req.inputLen || req.outputLen <= 0) continue;
      if (lim.maxModelLen > 0 && req.progressIndex + 1 > lim.maxModelLen - 1) continue;
      const r = this.preemptForTokens(batch, req, 1, i);
      i -= r.adj;
      if (!r.ok) break;
      this.budget -= 1;
      req.numNewTokens = 1;
      req.computedTokens += 1;
    }
  }

  /** Allocates and schedules `next` (chunk capped at `cap` when > 0); false when the KV cache cannot take it. */
  private admit(batch: Request[], next: Request, stepCount: number, cap: number): boolean {
    // A P/D decode half arrives with its input KV allocated: it only needs its next token.
    if (next.pdPart === PdPart.Decode) return this.admitDecodeHalf(batch, next, stepCount);
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
    // E2 (corrected): the cached prefix is context the first step attends to; the reference leaves progress at
    // 0, so roofline (and corrected-physics) price that step as if nothing were cached.
    if (this.corrected) next.progressIndex = start;
    return true;
  }

  private admitDecodeHalf(batch: Request[], next: Request, stepCount: number): boolean {
    const pi = next.progressIndex;
    if (!this.kv.allocate(next, pi, pi + 1, EMPTY)) return false;
    batch.push(next);
    next.scheduledStepIdx = stepCount;
    this.outcome.newlyScheduled.push(next);
    this.budget -= 1;
    next.state = RequestState.Running;
    next.numNewTokens = 1;
    next.computedTokens = pi + 1;
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
      if (this.gate !== null && this.gate(next)) break;
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

  /** Allocates `n` tokens for `req`, evicting victims from the batch until it fits or `req` itself goes. */
  private preemptForTokens(batch: Request[], req: Request, n: number, reqIndex: number): { ok: boolean; adj: number } {
    const res = this.result;
    res.adj = 0;
    for (;;) {
      if (this.kv.allocate(req, req.progressIndex, req.progressIndex + n, EMPTY)) {
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
      if (victimIdx < reqIndex - res.adj) res.adj++;
      this.outcome.preemptions++;
      this.outcome.victims.push(victim);
      if (victim.numNewTokens > 0) {
        this.budget += victim.numNewTokens;
        victim.numNewTokens = 0;
      }
      victim.state = RequestState.Queued;
      victim.progressIndex = 0;
      victim.itlRuns.length = 0;
      victim.itlCount = 0;
      victim.itlSum = 0;
      victim.itlExtra = null;
      victim.stallTicks = 0;
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
