/**
 * vLLM-style continuous batch formation (reference blis-core.md §3): continuing requests first (chunked
 * prefill and one decode token each, preempting from the batch when KV runs out), then new requests from the
 * wait queue while seats, token budget and KV allow, and no preemption happened this step. It works on the
 * running batch's slots (running-batch.ts): a request's object is synced before the KV store or a policy reads it.
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import { speculativeTokens, type SpeculativeConfig } from './speculative.js';
import type { KVStore } from '../kv/types.js';
import { SchedulerDecisionError, type InstanceScheduler, type PreemptionPolicy, type SchedulerContext } from './scheduler.js';
import type { RunningBatch } from './running-batch.js';
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
  /** Speculative decoding (speculative.ts); absent/null = off (one token per decode step). */
  readonly speculative?: SpeculativeConfig | null;
  /**
   * Recompute preemption as vLLM does it (reference-differences E13; on under --semantics corrected and with
   * the corrected-physics latency model): a preempted request keeps the tokens it produced, TTFT and ITLs, and
   * is re-admitted to re-prefill its prompt and those outputs as one chunked prefill, re-emitting none of them.
   * Default false: the reference's restart from scratch, regenerating the outputs one decode step each.
   */
  readonly reprefillPreemption?: boolean;
}

export interface BatchOutcome {
  /** Requests admitted from the wait queue this step, in admission order. */
  readonly newlyScheduled: Request[];
  preemptions: number;
  /** The preempted requests of this step, in preemption order. */
  readonly victims: Request[];
  /**
   * A request that preempted itself for tokens ending past the whole cache: it restarts from scratch and comes
   * back to the same position, so it can never finish (null = none this step).
   */
  neverFits: Request | null;
}

const EMPTY: readonly number[] = [];

export class BatchFormer {
  private budget = 0;
  private preempted = false;
  private readonly corrected: boolean;
  private readonly reprefill: boolean;
  private readonly spec: SpeculativeConfig | null;
  /** Look-ahead mode: the token budget each decode took this step (K+1, more than it emits), for refunds. */
  private readonly specDebits: Map<Request, number> | null;
  private readonly outcome: BatchOutcome = { newlyScheduled: [], preemptions: 0, victims: [], neverFits: null };
  private readonly result = { ok: false, adj: 0 };
  /** Phase 1's position when it started on the current request (victims after it hold last step's tokens). */
  private visited = 0;
  /**
   * The LoRA cold-load gate: held(r) is true for a waiting request that may not be admitted yet (its adapter
   * is not resident). Admission stops there (head-of-line, as the reference). null = no gate.
   */
  gate: { held(r: Request): boolean } | null = null;
  /** The KV store's reload-before-sizing hook (storage-tier mode only); null = the reference's order. */
  private readonly prefixReload: ((r: Request) => void) | null;

  constructor(
    private readonly limits: BatchLimits,
    private readonly kv: KVStore,
    private readonly waitQ: WaitQueue,
    private readonly run: RunningBatch,
    /** A policy scheduler with hooks; null for the built-in orderings (no hooks, nothing to call). */
    private readonly scheduler: InstanceScheduler | null = null,
    /** Builds the scheduler's context on demand (only called when a hook runs; it syncs the batch). */
    private readonly context: (() => SchedulerContext) | null = null,
  ) {
    this.prefixReload = kv.prefixReload ?? null;
    this.corrected = limits.corrected === true;
    this.reprefill = limits.reprefillPreemption === true;
    this.spec = limits.speculative ?? null;
    this.specDebits = this.spec?.lookahead === true ? new Map() : null;
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

  /** Admission when the scheduler has not yet seen requests enqueued after `visibleUntil` (skipped, not blocking). */
  private admitVisible(stepCount: number, visibleUntil: number): void {
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
      const cached = this.kv.getCachedBlocks(next).length * this.kv.blockSize;
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

  /** Allocates and schedules `next` (chunk capped at `cap` when > 0); false when the KV cache cannot take it. */
  private admit(next: Request, stepCount: number, cap: number): boolean {
    // A P/D decode half arrives with its input KV allocated: it only needs its next token (unless a preemption
    // here freed that KV and it re-prefills its prompt and outputs, E13).
    if (next.pdPart === PdPart.Decode && next.replayTokens === 0) return this.admitDecodeHalf(next, stepCount);
    const lim = this.limits;
    if (this.prefixReload !== null) this.prefixReload(next);
    const cached = this.kv.getCachedBlocks(next);
    const start = cached.length * this.kv.blockSize;
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
  private admitChosen(stepCount: number, makeBatch: NonNullable<InstanceScheduler['makeBatch']>): void {
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

  /** The victim's slot: the policy's choice when it has a hook, else the preemption policy's. */
  private victimIndex(): number {
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
  private preemptForTokens(reqIndex: number, n: number, failedOnce: boolean): { ok: boolean; adj: number } {
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
  private evict(victimIdx: number, reqIndex: number): Request {
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
    if (this.reprefill) {
      // E13: the tokens produced so far stay produced (their TTFT and ITLs too) and are re-prefilled; mid-way
      // through an earlier re-prefill they are still the ones it was re-prefilling.
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
