/**
 * vLLM-style continuous batch formation (reference blis-core.md §3): continuing requests first (chunked
 * prefill and one decode token each, preempting from the batch when KV runs out), then new requests from the
 * wait queue while seats, token budget and KV allow, and no preemption happened this step. It works on the
 * running batch's slots (running-batch.ts): a request's object is synced before the KV store or a policy reads it.
 *
 * The top of a class chain (one class per file, so the step loop calls no wrapper): preemption.ts holds the
 * step's shared state and recompute preemption, admission.ts admission from the wait queue; this file forms the
 * step — phase 1 over the running batch (speculative decodes, the lazy-slot shortcut), phase 2's dispatch, and
 * vLLM V0's prefill-first formation. The configuration types are in batch-limits.ts (re-exported here).
 */
import { PdPart } from '../domain/request.js';
import type { Request } from '../domain/request.js';
import type { KVStore } from '../kv/types.js';
import { AdmittingFormer } from './admission.js';
import type { BatchLimits, BatchOutcome } from './batch-limits.js';
import { EMPTY } from './preemption.js';
import type { InstanceScheduler, SchedulerContext } from './scheduler.js';
import { speculativeTokens, type SpeculativeConfig } from './speculative.js';
import type { RunningBatch } from './running-batch.js';
import type { WaitQueue } from './wait-queue.js';

export { SCHEDULING_MODES, type BatchLimits, type BatchOutcome, type SchedulingMode } from './batch-limits.js';

export class BatchFormer extends AdmittingFormer {
  private readonly spec: SpeculativeConfig | null;

  constructor(
    limits: BatchLimits,
    kv: KVStore,
    waitQ: WaitQueue,
    run: RunningBatch,
    /** A policy scheduler with hooks; null for the built-in orderings (no hooks, nothing to call). */
    scheduler: InstanceScheduler | null = null,
    /** Builds the scheduler's context on demand (only called when a hook runs; it syncs the batch). */
    context: (() => SchedulerContext) | null = null,
  ) {
    super(limits, kv, waitQ, run, scheduler, context);
    this.spec = limits.speculative ?? null;
  }


  /**
   * Forms the step's batch in place; the returned outcome object is reused between calls.
   * `visibleUntil`: only requests enqueued at or before this tick may be admitted (async scheduling).
   */
  form(stepCount: number, visibleUntil = Infinity, lazy = false): BatchOutcome {
    const lim = this.limits;
    const out = this.outcome;
    const run = this.run;
    const kv = this.kv;
    out.newlyScheduled.length = 0;
    out.preemptions = 0;
    out.victims.length = 0;
    out.neverFits = null;
    this.budget = lim.maxNumBatchedTokens;
    this.preempted = false;
    this.specDebits?.clear();
    if (lim.schedulingMode === 'prefill-first') {
      this.formPrefillFirst(stepCount);
      return out;
    }
    const mml = lim.maxModelLen;
    // Lazy decode slots (running-batch.ts) stay lazy only when this step cannot treat them differently from a
    // plain decode: then phase 1 visits the ordinary slots alone and takes one token of budget per lazy slot.
    if (run.lazyCount > 0 && !(lazy && this.lazyStepFits(stepCount))) run.materializeAll();
    this.budget -= run.lazyCount;
    // Phase 1 only removes slots (no growth), so the arrays stay the same objects.
    const pi = run.pi;
    const il = run.il;
    const ol = run.ol;
    const nn = run.nn;
    const ct = run.ct;
    const room = run.room;
    const pend = run.pend;

    // Phase 1: continuing requests. An index loop that re-reads the length: preemption shrinks the batch. Each
    // request's numNewTokens is cleared when the loop reaches it (and the rest's when it stops): the previous
    // step's values stay readable until this step forms (the invariant checkers read them).
    for (let i = run.nextActive(0); i < run.reqs.length; i = run.nextActive(i + 1)) {
      nn[i] = 0;
      this.visited = i;
      if (this.budget <= 0) {
        // With lazy slots left (each keeps its token: lazyStepFits), only this ordinary slot gets nothing.
        if (run.lazyCount > 0) continue;
        nn.fill(0, i + 1, run.reqs.length);
        break;
      }
      const p = pi[i] as number;
      const inLen = il[i] as number;
      let n = inLen - p;
      if (n > 0) {
        const th = lim.longPrefillTokenThreshold;
        if (th > 0 && th < n) n = th;
        if (this.budget < n) n = this.budget;
        if (mml > 0) n = Math.min(n, Math.max(mml - 1 - p, 0));
        const r = this.preemptForTokens(i, n, false);
        i -= r.adj;
        if (!r.ok) {
          // The request itself was preempted: position i now holds the first request not reached.
          nn.fill(0, i, run.reqs.length);
          break;
        }
        this.budget -= n;
        nn[i] = n;
        ct[i] = (ct[i] as number) + n;
      }
      if (p >= inLen && (ol[i] as number) > 0 && !(mml > 0 && p + 1 > mml - 1)) {
        if (this.spec !== null) {
          const handled = this.speculativeDecode(i, p);
          i -= this.result.adj;
          if (handled) continue;
        }
        // The decode token: almost always an append to the request's partial last block, counted here and
        // handed to the KV store in one call per block.
        if ((room[i] as number) > 0) {
          room[i] = (room[i] as number) - 1;
          pend[i] = (pend[i] as number) + 1;
        } else {
          run.commitKv(i);
          const req = run.reqs[i] as Request;
          req.progressIndex = p;
          if (!kv.allocate(req, p, p + 1, EMPTY)) {
            const r = this.preemptForTokens(i, 1, true);
            i -= r.adj;
            if (!r.ok) {
              nn.fill(0, i, run.reqs.length);
              break;
            }
          }
          room[i] = kv.decodeRoom(req, p + 1);
        }
        this.budget -= 1;
        nn[i] = 1;
        ct[i] = (ct[i] as number) + 1;
      }
    }

    // Phase 2: admit from the wait queue head (no skip-ahead: head-of-line blocking on KV failure).
    if (this.scheduler?.makeBatch) {
      this.admitChosen(stepCount, this.scheduler.makeBatch);
      return out;
    }
    if (visibleUntil !== Infinity) {
      this.admitVisible(stepCount, visibleUntil);
      return out;
    }
    while (run.reqs.length < lim.maxNumSeqs && this.waitQ.length > 0 && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(0) as Request;
      if (this.gate !== null && this.gate.held(next)) break;
      if (!this.admit(next, stepCount, 0)) break;
      this.waitQ.dequeue();
    }
    return out;
  }

  /**
   * Speculative decoding: the decode at slot i (progress p) emits g = 1 + its accepted drafts this step (at most
   * what it still needs, what the token budget allows and what fits the free KV blocks), appended token by token.
   * With look-ahead (corrected semantics) it takes K+1 tokens of budget and its K look-ahead slots must fit
   * beside the g tokens: other requests are preempted (the preemption policy's victims, never this one) until
   * one token plus the look-ahead fits, and g shrinks until g + K fits. Returns false when not even two tokens
   * fit: the caller's one-token path (with its preemption) takes over. `this.result.adj`: slots freed before i.
   */
  private speculativeDecode(i: number, p: number): boolean {
    const spec = this.spec as SpeculativeConfig;
    const run = this.run;
    const kv = this.kv;
    this.result.adj = 0;
    const req = run.reqs[i] as Request;
    const mml = this.limits.maxModelLen;
    let remaining = (run.il[i] as number) + (run.ol[i] as number) - 1 - p;
    if (mml > 0 && mml - 1 - p < remaining) remaining = mml - 1 - p;
    let g = speculativeTokens(req.specSteps + 1, spec.accepted, remaining);
    const ahead = spec.lookahead ? spec.k : 0;
    const debit = spec.lookahead ? Math.min(spec.k + 1, this.budget) : 0;
    if (g > this.budget) g = this.budget;
    run.commitKv(i);
    req.progressIndex = p;
    const bs = kv.blockSize;
    const fill = req.kvTailFill;
    const spare = fill > 0 && fill < bs ? bs - fill : 0;
    const blocksFor = (t: number): number => (t <= spare ? 0 : Math.ceil((t - spare) / bs));
    if (ahead > 0) {
      // vLLM reserves the look-ahead slots before acceptance is known (upstream's known gap #1627).
      while (blocksFor(1 + ahead) > kv.totalBlocks - kv.usedBlocks() && run.reqs.length > 1) {
        const v = this.victimIndex();
        if (run.reqs[v] === req) break;
        this.evict(v, i);
      }
    }
    const at = i - this.result.adj;
    const free = kv.totalBlocks - kv.usedBlocks();
    while (g > 1 && blocksFor(g + ahead) > free) g--;
    req.specSteps++;
    if (g <= 1) {
      // One token: the ordinary path (it still counts as a speculative step of the carry).
      if (debit > 1) {
        this.budget -= debit - 1;
        this.specDebits?.set(req, debit);
      }
      return false;
    }
    let t = 0;
    while (t < g && kv.allocate(req, p + t, p + t + 1, EMPTY)) t++;
    if (t === 0) {
      req.specSteps--;
      return false;
    }
    run.room[at] = kv.decodeRoom(req, p + t);
    this.budget -= debit > t ? debit : t;
    if (debit > t) this.specDebits?.set(req, debit);
    run.nn[at] = t;
    run.ct[at] = (run.ct[at] as number) + t;
    return true;
  }

  /**
   * Whether this step can keep the batch's lazy slots lazy: it materializes the ones due now, then checks that
   * phase 1 cannot run out of token budget (every slot gets all it asks for, whatever the order) nor of free KV
   * blocks (no allocation fails, so nothing is preempted). Counted conservatively: one block per decode whose
   * partial block is full, a chunk's blocks plus one per prefill.
   */
  private lazyStepFits(stepCount: number): boolean {
    const run = this.run;
    const lim = this.limits;
    const bs = this.kv.blockSize;
    const mml = lim.maxModelLen;
    const th = lim.longPrefillTokenThreshold;
    let tokens = 0;
    let blocks = 0;
    run.materializeDue(stepCount);
    const n = run.reqs.length;
    for (let i = run.nextActive(0); i < n; i = run.nextActive(i + 1)) {
      const p = run.pi[i] as number;
      const inLen = run.il[i] as number;
      let k = inLen - p;
      if (k > 0) {
        if (th > 0 && th < k) k = th;
        if (mml > 0) k = Math.min(k, Math.max(mml - 1 - p, 0));
        tokens += k;
        blocks += Math.ceil(k / bs) + 1;
      } else if ((run.ol[i] as number) > 0 && !(mml > 0 && p + 1 > mml - 1)) {
        tokens += 1;
        if ((run.room[i] as number) <= 0) blocks += 1;
      }
    }
    return tokens + run.lazyCount <= lim.maxNumBatchedTokens && blocks <= this.kv.totalBlocks - this.kv.usedBlocks();
  }

  /**
   * vLLM V0 without chunked prefill: while prompts wait and fit, the step runs prefills only (whole prompts;
   * a prompt longer than the token budget is split over consecutive prefill-only steps) and the running
   * decodes get no token; otherwise every running request decodes one token and nothing is admitted. Every
   * slot's new tokens are cleared first, so a victim always refunds what it holds (as if phase 1 reached it).
   */
  private formPrefillFirst(stepCount: number): void {
    const lim = this.limits;
    const run = this.run;
    const mml = lim.maxModelLen;
    run.nn.fill(0, 0, run.reqs.length);
    this.visited = Number.MAX_SAFE_INTEGER;
    let prefillTokens = 0;
    for (let i = 0; i < run.reqs.length; i++) {
      if (this.budget <= 0) break;
      const p = run.pi[i] as number;
      let n = (run.il[i] as number) - p;
      if (n <= 0) continue;
      if (this.budget < n) n = this.budget;
      if (mml > 0) n = Math.min(n, Math.max(mml - 1 - p, 0));
      const r = this.preemptForTokens(i, n, false);
      i -= r.adj;
      if (!r.ok) break;
      this.budget -= n;
      run.nn[i] = n;
      run.ct[i] = (run.ct[i] as number) + n;
      prefillTokens += n;
    }
    while (run.reqs.length < lim.maxNumSeqs && this.waitQ.length > 0 && this.budget > 0 && !this.preempted) {
      const next = this.waitQ.peekAt(0) as Request;
      const cached = this.cachedBlocksOf(next).length * this.kv.blockSize;
      // Whole prompts only, unless nothing else is scheduled (then the prompt is split over steps).
      if (prefillTokens > 0 && next.inputLen + next.replayTokens - cached > this.budget) break;
      if (next.pdPart !== PdPart.Decode && !this.wholePromptFits(next)) break;
      const before = this.budget;
      if (!this.admit(next, stepCount, 0)) break;
      this.waitQ.dequeue();
      prefillTokens += before - this.budget;
    }
    if (prefillTokens > 0 || this.preempted) return;
    for (let i = 0; i < run.reqs.length; i++) {
      if (this.budget <= 0) break;
      const p = run.pi[i] as number;
      if (p < (run.il[i] as number) || (run.ol[i] as number) <= 0) continue;
      if (mml > 0 && p + 1 > mml - 1) continue;
      // The decode token as in phase 1 of form: counted against the partial KV block when it has room.
      if ((run.room[i] as number) > 0) {
        run.room[i] = (run.room[i] as number) - 1;
        run.pend[i] = (run.pend[i] as number) + 1;
      } else {
        run.commitKv(i);
        const req = run.reqs[i] as Request;
        req.progressIndex = p;
        if (!this.kv.allocate(req, p, p + 1, EMPTY)) {
          const r = this.preemptForTokens(i, 1, true);
          i -= r.adj;
          if (!r.ok) break;
        }
        run.room[i] = this.kv.decodeRoom(req, p + 1);
      }
      this.budget -= 1;
      run.nn[i] = 1;
      run.ct[i] = (run.ct[i] as number) + 1;
    }
  }

  /**
   * vLLM V0's can_allocate: a prompt is admitted only when the KV for all of it is free now, after what the
   * prompts already running still need (counted without their prefix-cache hits, to stay on the safe side).
   * Admitting on the first chunk alone livelocks: a prompt split over steps runs out of KV midway, preempts
   * itself, is readmitted first, and the decodes holding the blocks stall behind it forever.
   */
  private wholePromptFits(next: Request): boolean {
    const bs = this.kv.blockSize;
    const run = this.run;
    let need = Math.ceil((next.inputLen + next.replayTokens) / bs);
    for (let i = 0; i < run.reqs.length; i++) {
      const il = run.il[i] as number;
      const done = (run.pi[i] as number) + (run.nn[i] as number);
      if (done < il) need += Math.ceil(il / bs) - Math.ceil(done / bs);
    }
    return need <= this.kv.totalBlocks - this.kv.usedBlocks();
  }
}
