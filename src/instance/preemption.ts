/**
 * The base of the batch former (preemption.ts -> admission.ts -> batch-formation.ts, one class each so the
 * step loop calls no wrapper): the state one step's formation shares — token budget, outcome, phase 1's
 * position — and recompute preemption: choosing a victim (a policy's hook, else the preemption policy),
 * evicting it back to the wait queue's front with its KV released, and allocating a running request's tokens
 * by evicting until they fit. How a victim restarts is here too: from scratch (the reference), or keeping its
 * produced tokens to re-prefill them with its prompt (vLLM, reference-differences E13).
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import type { KVStore } from '../kv/types.js';
import type { BatchLimits, BatchOutcome } from './batch-limits.js';
import { SchedulerDecisionError, type InstanceScheduler, type SchedulerContext } from './scheduler.js';
import type { RunningBatch } from './running-batch.js';
import type { WaitQueue } from './wait-queue.js';

export const EMPTY: readonly number[] = [];

export abstract class PreemptingFormer {
  protected budget = 0;
  protected preempted = false;
  /** vLLM's recompute preemption (BatchLimits.reprefillPreemption). */
  private readonly reprefill: boolean;
  /** Look-ahead mode: the token budget each decode took this step (K+1, more than it emits), for refunds. */
  protected readonly specDebits: Map<Request, number> | null;
  protected readonly outcome: BatchOutcome = { newlyScheduled: [], preemptions: 0, victims: [], neverFits: null };
  protected readonly result = { ok: false, adj: 0 };
  /** Phase 1's position when it started on the current request (victims after it hold last step's tokens). */
  protected visited = 0;

  constructor(
    protected readonly limits: BatchLimits,
    protected readonly kv: KVStore,
    protected readonly waitQ: WaitQueue,
    protected readonly run: RunningBatch,
    /** A policy scheduler with hooks; null for the built-in orderings (no hooks, nothing to call). */
    protected readonly scheduler: InstanceScheduler | null,
    /** Builds the scheduler's context on demand (only called when a hook runs; it syncs the batch). */
    protected readonly context: (() => SchedulerContext) | null,
  ) {
    this.reprefill = limits.reprefillPreemption === true;
    this.specDebits = limits.speculative?.lookahead === true ? new Map() : null;
  }

  /** The victim's slot: the policy's choice when it has a hook, else the preemption policy's. */
  protected victimIndex(): number {
    const reqs = this.run.reqs;
    const hook = this.scheduler?.selectPreemptionVictim;
    if (hook) {
      const victim = hook((this.context as () => SchedulerContext)());
      const i = reqs.indexOf(victim);
      if (i < 0) throw new SchedulerDecisionError((this.scheduler).name, 'selectPreemptionVictim', `chose ${(victim as Request | undefined)?.id ?? 'nothing'}, which is not running on this instance`);
      return i;
    }
    return this.limits.preemptionPolicy === 'priority' ? selectPriorityVictim(reqs) : reqs.length - 1;
  }

  /**
   * Allocates `n` tokens for the request phase 1 reached at slot `reqIndex`, evicting victims from the batch
   * until it fits or the request itself goes. `failedOnce`: the caller's own first attempt already failed (a
   * tiered cache counts every failed attempt). `adj` is how many slots before the request were freed.
   */
  protected preemptForTokens(reqIndex: number, n: number, failedOnce: boolean): { ok: boolean; adj: number } {
    const run = this.run;
    const res = this.result;
    res.adj = 0;
    const req = run.reqs[reqIndex] as Request;
    // The caller's failed attempt set the request's position; each attempt here sets it again.
    let end = req.progressIndex + n;
    for (let first = true; ; first = false) {
      if (!(first && failedOnce)) {
        const at = reqIndex - res.adj;
        run.commitKv(at);
        const p = run.pi[at] as number;
        req.progressIndex = p;
        end = p + n;
        if (this.kv.allocate(req, p, p + n, EMPTY)) {
          res.ok = true;
          return res;
        }
      }
      if (run.reqs.length === 0) {
        res.ok = false;
        return res;
      }
      const victim = this.evict(this.victimIndex(), reqIndex);
      if (victim === req) {
        if (end > this.kv.totalBlocks * this.kv.blockSize) this.outcome.neverFits = req;
        res.ok = false;
        return res;
      }
    }
  }

  /**
   * Preempts the request at slot `victimIdx` (back to the wait queue's front, its KV released); `res.adj` counts
   * the slots freed before `reqIndex`, the request phase 1 is working on.
   */
  protected evict(victimIdx: number, reqIndex: number): Request {
    const run = this.run;
    const res = this.result;
    this.preempted = true;
    // Only a request phase 1 has reached holds this step's tokens (the others' are last step's).
    const nn = run.nn[victimIdx] as number;
    const refund = victimIdx <= this.visited - res.adj ? (this.specDebits === null ? nn : (this.specDebits.get(run.reqs[victimIdx] as Request) ?? nn)) : 0;
    const victim = run.removeAt(victimIdx);
    if (victimIdx < reqIndex - res.adj) res.adj++;
    this.outcome.preemptions++;
    this.outcome.victims.push(victim);
    if (refund > 0) this.budget += refund;
    victim.numNewTokens = 0;
    victim.state = RequestState.Queued;
    if (this.reprefill && victim.pdPart !== PdPart.Decode) {
      // E13: the tokens produced so far stay produced (their TTFT and ITLs too) and are re-prefilled; mid-way
      // through an earlier re-prefill they are still the ones it was re-prefilling. A P/D decode half restarts
      // as in the reference (one token to admit): queued decode halves hold their transferred KV, so one needing
      // its whole re-prefill at the queue head can wait for blocks they never free (the pod deadlocks).
      const produced = victim.progressIndex - victim.inputLen + 1;
      if (produced > victim.replayTokens) victim.replayTokens = produced;
    } else {
      victim.itlRuns = null;
      victim.itlCount = 0;
      victim.itlSum = 0;
      victim.itlExtra = null;
      victim.ttftSet = false;
    }
    victim.progressIndex = 0;
    victim.stallTicks = 0;
    this.kv.release(victim);
    victim.computedTokens = 0;
    this.waitQ.prependFront(victim);
    return victim;
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
