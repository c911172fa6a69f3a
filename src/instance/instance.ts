/**
 * One serving replica (reference blis-core.md §1–§5): wait queue, scheduler, batch formation, the four-phase
 * step, enqueue guards, client timeouts. The instance never touches the event queue directly: it asks its
 * {@link EventSink} to schedule events, and the cluster loop delivers them back through {@link handle}.
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import type { SloPriorityMap } from '../domain/slo.js';
import type { KVStore } from '../kv/types.js';
import type { LatencyModel, StepTimeWithDecodes } from '../latency/types.js';
import { BatchFormer, type BatchLimits } from './batch-formation.js';
import { EventKind } from './events.js';
import { InstanceMetrics } from './instance-metrics.js';
import { cacheCappedMaxModelLen, FutileSelfPreemptions, neverFitsError, spinsForever } from './never-fits.js';
import { InstanceAdapters, type AdapterCost } from './lora.js';
import { RunningBatch } from './running-batch.js';
import { SCHEDULERS, type InstanceScheduler, type SchedulerContext, type SchedulerName } from './scheduler.js';
import { WaitQueue } from './wait-queue.js';

export interface EventSink {
  schedule(time: number, kind: EventKind, req: Request | null): void;
}

export interface InstanceConfig extends BatchLimits {
  readonly id: string;
  /** The GPU and TP degree this instance was configured with (reports show them; the simulation never reads them). */
  readonly hardware?: { readonly gpu: string; readonly tp: number };
  readonly horizon: number;
  readonly scheduler: SchedulerName;
  /** A policy scheduler (orders, chooses, picks victims); absent/null = the built-in `scheduler`. */
  readonly schedulerPolicy?: InstanceScheduler | null;
  /** LoRA adapters (cost model and slot count); absent/null = off. */
  readonly lora?: AdapterCost | null;
  /**
   * This instance's LoRA placement schedule (--lora-placement-schedule): at each time, the adapters it is to
   * hold (loaded, charged, one at a time). Absent/empty = none (no event is scheduled).
   */
  readonly loraSchedule?: readonly { readonly atUs: number; readonly ids: readonly string[] }[] | null;
  /** P/D single KV ownership: a finished prefill half keeps its KV until the transfer releases it. */
  readonly holdPrefillKV?: boolean;
  /**
   * Lazy decode slots (running-batch.ts) where the configuration allows them; default true. They change no
   * result (tests compare both settings); false is for those tests.
   */
  readonly lazyDecode?: boolean;
}

/** How many recent requests the TTFT / TPOT signals average over. */
export const RECENT_LATENCY_WINDOW = 32;

/** A fixed-size mean over the last values pushed (deterministic, O(1) per push). */
class RecentMean {
  private readonly values = new Float64Array(RECENT_LATENCY_WINDOW);
  private next = 0;
  private count = 0;
  private sum = 0;
  push(v: number): void {
    if (this.count === RECENT_LATENCY_WINDOW) this.sum -= this.values[this.next] as number;
    else this.count++;
    this.values[this.next] = v;
    this.sum += v;
    this.next = (this.next + 1) % RECENT_LATENCY_WINDOW;
  }
  get mean(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }
}

/** Called when a request leaves the instance for good (completed, dropped, timed out). */
export type RequestDoneHook = (req: Request, tick: number) => void;

/** Called for each produced token with the absolute tick at which it is available. */
export type TokenHook = (req: Request, tick: number) => void;

/** What one step did (read during the call only: the arrays are reused). */
export interface StepInfo {
  readonly clock: number;
  readonly step: number;
  /** The batch as executed: each request's `numNewTokens` is what it computed this step. */
  readonly batch: readonly Request[];
  readonly newlyScheduled: readonly Request[];
  readonly preempted: readonly Request[];
  /** Duration of the step (µs). */
  readonly duration: number;
}

export type StepHook = (inst: Instance, info: StepInfo) => void;

/** How long (µs, about 285 years) an idle policy scheduler is asked again by backoff before it waits for a new request. */
const IDLE_GIVE_UP_US = 2 ** 53;

/** The one StepInfo of an instance: `batch` is synced from the running batch's slots when first read. */
class StepInfoImpl implements StepInfo {
  clock = 0;
  step = 0;
  newlyScheduled: readonly Request[] = [];
  preempted: readonly Request[] = [];
  duration = 0;
  raw: readonly Request[] = [];
  synced = false;
  constructor(private readonly run: RunningBatch) {}
  get batch(): readonly Request[] {
    if (!this.synced) {
      this.run.syncAll();
      this.synced = true;
    }
    return this.raw;
  }
}

export class Instance {
  readonly id: string;
  clock = 0;
  readonly metrics = new InstanceMetrics();
  readonly waitQ = new WaitQueue();
  /** The running batch: requests and their per-step fields (see running-batch.ts). */
  private readonly run: RunningBatch;
  /**
   * The batch as others see it: the running batch, except that from a step's execution until its completions
   * have run it still holds the requests finishing in that step. Empty stands for the reference's nil batch.
   */
  private batch: readonly Request[] = [];
  private stepPending = false;
  private stepCount = 0;
  private readonly former: BatchFormer;
  private readonly order: ((a: Request, b: Request) => number) | null;
  private readonly policy: InstanceScheduler | null;
  /** The requests finishing in the current step, in batch order: the first finishingCount entries (reused). */
  private readonly finishing: Request[] = [];
  /** Their slots in the running batch, in order (reused). */
  private readonly finishingSlots: number[] = [];
  private finishingCount = 0;
  /** LoRA adapters on this instance (resident slots, load in flight); null when LoRA is off. */
  readonly lora: InstanceAdapters | null;
  /** LoRA only: the step's scheduled requests, for the adapter overhead (reused). */
  private readonly loraScheduled: Request[] = [];
  /** Exponentially weighted mean step duration (µs), 0 before the first step. */
  private stepEwma = 0;
  /** Start and end ticks of the last executed step (async scheduling's visibility cutoff). */
  private lastStepStart = -1;
  private lastStepEnd = -1;
  private readonly asyncScheduling: boolean;
  private readonly prefillFirst: boolean;
  /** --semantics corrected: the engine corrections E3, E7, E8 (docs/reference-differences.md). */
  private readonly corrected: boolean;
  private readonly futile = new FutileSelfPreemptions();
  /** Whether steady decodes may be kept lazy (see running-batch.ts): fixed by the setup (observers sync what they read). */
  private readonly lazyDecode: boolean;
  private readonly recentTtft = new RecentMean();
  private readonly recentTpot = new RecentMean();
  onRequestDone: RequestDoneHook | null = null;
  /**
   * Optional observer of a completed request leaving at the end of the step that finished it (its RequestLeft
   * event, at the time `onRequestDone` was given): the cluster's corrected semantics count the completion
   * there. Unset, one null check per completion.
   */
  onRequestLeft: RequestDoneHook | null = null;
  /**
   * Optional observer of token production (a live server streams tokens at these times). Called once per
   * token, right after the step that produced it, with the absolute tick the token becomes available: the
   * first token at arrival + TTFT, each decode token at arrival + TTFT + the ITLs so far — the same clock the
   * request's TTFT/E2E metrics use. After a preemption the restarted attempt reports its tokens again
   * (consumers deduplicate by `1 + req.itlCount`), except where preemption re-prefills as vLLM does (E13), which
   * re-emits nothing. Unset, it costs one null check per step.
   */
  onToken: TokenHook | null = null;
  /** Optional observer of every executed step (traces, anomaly detectors); unset, one null check per step. */
  onStep: StepHook | null = null;
  /** Reused for every onStep call (read during the call only). */
  private readonly stepInfo: StepInfoImpl;

  private readonly cfg: InstanceConfig;

  constructor(
    config: InstanceConfig,
    readonly kv: KVStore,
    private readonly latency: LatencyModel,
    private readonly slo: SloPriorityMap,
    private readonly sink: EventSink,
  ) {
    const cfg = config.corrected === true ? { ...config, maxModelLen: cacheCappedMaxModelLen(config.maxModelLen, kv.totalBlocks, kv.blockSize) } : config;
    this.cfg = cfg;
    this.id = cfg.id;
    this.policy = cfg.schedulerPolicy ?? null;
    const hooks = this.policy !== null && (this.policy.makeBatch !== null || this.policy.selectPreemptionVictim !== null);
    this.run = new RunningBatch(kv, Math.min(Math.max(cfg.maxNumSeqs, 1), 256));
    this.batch = this.run.reqs;
    this.stepInfo = new StepInfoImpl(this.run);
    this.former = new BatchFormer(cfg, kv, this.waitQ, this.run, hooks ? this.policy : null, hooks ? () => this.schedulerContext() : null);
    this.order = this.policy !== null ? this.policy.order : SCHEDULERS[cfg.scheduler];
    const lora = cfg.lora ? new InstanceAdapters(cfg.lora, this.metrics.adapterLoads, this.metrics.adapterEvictions) : null;
    this.lora = lora;
    this.former.gate = lora;
    const first = lora === null ? undefined : cfg.loraSchedule?.[0];
    if (first !== undefined) this.sink.schedule(first.atUs, EventKind.AdapterPlace, null);
    this.asyncScheduling = cfg.schedulingMode === 'async';
    this.prefillFirst = cfg.schedulingMode === 'prefill-first';
    this.corrected = cfg.corrected === true;
    // Only where nothing reads every slot each step: a latency model that prices lazy decodes in aggregate, the
    // single-tier cache (whose allocations fail only for want of free blocks), no LoRA overhead, no policy hooks
    // in batch formation, and not prefill-first (which stalls decodes).
    this.lazyDecode = cfg.lazyDecode !== false && latency.stepTimeWithDecodes !== undefined && kv.lazyDecodeSafe === true && lora === null && !hooks && !this.prefillFirst && (cfg.speculative ?? null) === null;
  }

  /** The max-model-len this instance enforces (0 = none); corrected semantics cap it at the KV cache. */
  get maxModelLen(): number {
    return this.cfg.maxModelLen;
  }

  /** What a policy scheduler sees (built on demand; the running requests are synced first). */
  private schedulerContext(): SchedulerContext {
    this.run.syncAll();
    return {
      instanceId: this.id,
      clock: this.clock,
      waiting: this.waitQ.toArray(),
      running: this.run.reqs,
      maxBatchSize: this.cfg.maxNumSeqs,
      maxTokenBudget: this.cfg.maxNumBatchedTokens,
      kvFreeBlocks: this.kv.totalBlocks - this.kv.usedBlocks(),
      kvTotalBlocks: this.kv.totalBlocks,
      blockSize: this.kv.blockSize,
    };
  }

  /** Mean TTFT (µs) of the last requests that got their first token here; 0 before any. */
  get recentTtftUs(): number {
    return this.recentTtft.mean;
  }

  /** Mean ITL (µs) of the last requests completed here; 0 before any. */
  get recentTpotUs(): number {
    return this.recentTpot.mean;
  }

  /**
   * Estimated queueing delay of a new arrival (µs): the prefill tokens queued ahead, in steps of the token
   * budget, times the recent mean step duration.
   */
  get estimatedWaitUs(): number {
    return (this.waitQ.inputTokens / Math.max(this.cfg.maxNumBatchedTokens, 1)) * this.stepEwma;
  }

  /** Step time (µs) of a lone prefill of `tokens` tokens here: E/P/D prices encode work with it. */
  loneStepTimeUs(tokens: number): number {
    const one = (v: number): Int32Array => Int32Array.of(v);
    return this.latency.stepTime({ count: 1, progress: one(0), newTokens: one(tokens), inputLen: one(tokens), outputLen: one(0) });
  }

  /** The latency model's fixed per-request post-decode overhead (µs): P/D stamps it on parent completions. */
  postDecodeFixedOverhead(): number {
    return this.latency.postDecodeFixedOverhead();
  }

  /** GPU and TP degree as configured (absent: not given to the instance). */
  get hardware(): { readonly gpu: string; readonly tp: number } | undefined {
    return this.cfg.hardware;
  }

  /** Name of the latency model pricing this instance's steps (reports show it). */
  get latencyModelName(): string {
    return this.latency.name;
  }

  get maxBatchSize(): number {
    return this.cfg.maxNumSeqs;
  }

  get queueDepth(): number {
    return this.waitQ.length;
  }

  get batchSize(): number {
    return this.batch.length;
  }

  /** Read-only view of the running batch, synced (invariant checkers; do not mutate). */
  get runningBatch(): readonly Request[] {
    this.run.syncAll();
    return this.batch;
  }

  /**
   * Brings the running requests' objects up to date with the step loop's slots. Observers that read requests
   * between events (invariant checkers) call it first; everything inside the engine syncs as needed.
   */
  syncRunning(): void {
    this.run.syncAll();
  }

  /** Whether a StepEvent is scheduled and not yet executed (INV-8 work-conserving checks). */
  get isStepPending(): boolean {
    return this.stepPending;
  }

  /** The LoRA adapter being loaded ('' = none): its completion event is this instance's pending work. */
  get adapterLoading(): string {
    return this.lora?.loading ?? '';
  }

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

  /** Executes one instance event at `time` (the cluster has already advanced this instance's clock). */
  handle(kind: EventKind, req: Request | null, time: number): void {
    switch (kind) {
      case EventKind.Arrival:
        this.sink.schedule(time + this.latency.queueingTime(req as Request), EventKind.Queued, req);
        return;
      case EventKind.Queued:
        this.enqueue(req as Request);
        if (!this.stepPending && this.waitQ.length > 0) this.scheduleStep(time);
        return;
      case EventKind.Step:
        this.step(time);
        return;
      case EventKind.RequestLeft:
        this.onRequestLeft?.(req as Request, time);
        return;
      case EventKind.Timeout:
        this.timeout(req as Request, time);
        return;
      case EventKind.AdapterLoad:
        this.completeAdapterLoad(time);
        return;
      case EventKind.AdapterPlace:
        this.applyPlacement(time);
        return;
      default:
        throw new Error(`instance ${this.id}: unexpected event kind ${kind}`);
    }
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

  finalize(): void {
    this.run.syncAll();
    const m = this.metrics;
    m.stillQueued = this.waitQ.length;
    m.stillRunning = this.batch.length;
    m.simEndedTime = Math.min(this.clock, this.cfg.horizon);
    m.cacheHitRate = this.kv.cacheHitRate();
    m.kvThrashingRate = this.kv.kvThrashingRate();
  }

  private scheduleStep(time: number): void {
    this.stepPending = true;
    this.sink.schedule(time, EventKind.Step, null);
  }

  private drop(r: Request): void {
    this.metrics.droppedUnservable++;
    r.registered = false;
    r.outcome = 'dropped_unservable';
    this.onRequestDone?.(r, this.clock);
  }

  /** Enqueue guards, in the reference's order (blis-core.md §5). */
  private enqueue(r: Request): void {
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

  private timeout(r: Request, time: number): void {
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

  /** The current step admitted no request (see executeAndSplit). */
  private admittedNone = false;
  /** When a policy scheduler started admitting nothing with nothing running (-1: it is not idle). */
  private idleSince = -1;

  private step(now: number): void {
    if (this.run.length === 0 && this.waitQ.length === 0) {
      this.stepPending = false;
      if (this.lora !== null) this.startPlacementLoad(now);
      return;
    }
    // Phase 1: schedule the batch.
    this.stepCount++;
    this.kv.setClock(now);
    if (this.order !== null) this.waitQ.sort(this.order);
    if (this.lora !== null) {
      const ticks = this.lora.startLoad(this.waitQ.peekAt(0));
      if (ticks > 0) this.sink.schedule(now + ticks, EventKind.AdapterLoad, null);
    }
    // Async scheduling planned this step while the previous one ran: it has not seen later arrivals. After
    // an idle gap there was no previous step to overlap with.
    const visibleUntil = this.asyncScheduling && this.lastStepEnd >= now ? this.lastStepStart : Infinity;
    const outcome = this.former.form(this.stepCount, visibleUntil, this.lazyDecode);
    if (outcome.neverFits !== null && spinsForever(outcome.neverFits, this.cfg.horizon) && this.futile.note(outcome.neverFits)) {
      throw neverFitsError(outcome.neverFits, this.id, this.kv.totalBlocks, this.kv.blockSize, this.corrected);
    }
    const m = this.metrics;
    m.preemptionCount += outcome.preemptions;
    const ns = outcome.newlyScheduled;
    for (let i = 0; i < ns.length; i++) {
      const r = ns[i] as Request;
      if (this.corrected && r.pdPart !== PdPart.Decode) {
        // E7 (corrected): the wait in the queue (from enqueue, after the alpha queueing time) to the first
        // admission. P/D decode halves keep the reference's measure: the parent's projection uses it as an offset.
        if (!r.hasSchedulingDelay) {
          r.hasSchedulingDelay = true;
          r.schedulingDelay = now - r.enqueueTime;
        }
      } else {
        r.hasSchedulingDelay = true;
        r.schedulingDelay = now - r.arrivalTime;
      }
      this.lora?.pin(r);
    }
    m.waitQSamples.push(this.waitQ.length);
    m.runningSamples.push(this.run.length);

    // Phase 2: execute. One pass advances every request and picks out the finishing ones, which then leave the
    // running batch; the old batch array stays intact for the observers until the completions run.
    const adv = this.advance();
    this.lastStepStart = now;
    this.lastStepEnd = now + adv;
    const used = this.kv.usedBlocks();
    if (used > m.peakKVBlocksUsed) m.peakKVBlocksUsed = used;
    m.kvBlocksUsed += used * adv;
    this.admittedNone = ns.length === 0 && outcome.neverFits === null;
    const kept = this.executeAndSplit(now, adv);
    if (this.onStep !== null) {
      const info = this.stepInfo;
      info.clock = now;
      info.step = this.stepCount;
      info.raw = this.batch;
      info.synced = false;
      info.newlyScheduled = ns;
      info.preempted = outcome.victims;
      info.duration = adv;
      this.onStep(this, info);
    }
    if (this.onToken !== null) {
      this.run.syncAll();
      this.reportTokens(this.onToken, now, adv);
    }
    this.kv.mirrorToCPU(this.batch);
    // Phases 3 and 4: completions in batch order, next step.
    this.completeAndContinue(now, adv, kept);
  }

  /** The step's duration (µs) from the scheduled requests; records the step's ITL value. */
  private advance(): number {
    const run = this.run;
    let adv = run.lazyCount > 0 ? (this.latency.stepTimeWithDecodes as StepTimeWithDecodes)(run.scheduled(), run.lazyCount, run.lazyProgress()) : this.latency.stepTime(run.scheduled());
    if (this.lora !== null) adv = this.loraOverhead(adv);
    adv += this.kv.consumePendingTransferLatency();
    if (adv < 1) adv = 1;
    this.stepEwma = this.stepEwma === 0 ? adv : 0.8 * this.stepEwma + 0.2 * adv;
    this.metrics.stepItl.push(adv + this.latency.outputTokenProcessingTime());
    return adv;
  }

  /**
   * Advances every request of the batch by its scheduled tokens (progress, ITL, first token) and splits the
   * batch: the requests that go on keep their order in the running batch (returns how many); the ones that
   * finish this step (completed or length-capped) are synced and collected in `finishing`, in order. `batch`
   * keeps showing the whole pre-split batch until the completions have run. Lazy slots need nothing here (they
   * never finish while lazy); the others that go on in a steady decode become lazy.
   */
  private executeAndSplit(now: number, adv: number): number {
    const run = this.run;
    const reqs = run.reqs;
    const finishing = this.finishing;
    const pi = run.pi;
    const il = run.il;
    const ol = run.ol;
    const nn = run.nn;
    const ct = run.ct;
    const itc = run.itc;
    const itf = run.itf;
    const itl = run.itl;
    const its = run.its;
    let nf = 0;
    const otp = this.latency.outputTokenProcessingTime();
    const step = this.stepCount;
    const itlValue = adv + otp;
    const mml = this.cfg.maxModelLen;
    const stalls = this.prefillFirst;
    const gone = this.finishingSlots;
    // Lazy slots advance by this step through the running ITL sum (nothing to do here: they do not finish).
    run.psum += itlValue;
    run.done = step;
    for (let j = run.nextActive(0); j < reqs.length; j = run.nextActive(j + 1)) {
      const inLen = il[j] as number;
      let p = pi[j] as number;
      if (p < inLen) {
        p = ct[j] as number;
        pi[j] = p;
        // E13: a re-prefill after a recompute preemption ends with the next output token (an ITL, not a TTFT).
        if (p === inLen && (reqs[j] as Request).replayTokens > 0) this.endReprefill(j, now, itlValue);
      } else if ((nn[j] as number) > 0) {
        // One token, or 1 + accepted drafts under speculative decoding (then one ITL per token: recordSpeculativeItl).
        const k = nn[j] as number;
        p += k;
        pi[j] = p;
        const c = itc[j] as number;
        if (stalls && (reqs[j] as Request).stallTicks > 0) {
          this.recordStalledItl(j, itlValue);
        } else if (k > 1) {
          this.recordSpeculativeItl(j, itlValue, k, otp);
        } else {
          // One more ITL for the current attempt: this step's value, extending the current run of steps.
          if (c === 0) {
            itf[j] = step;
          } else if (itl[j] !== step - 1) {
            // A step passed this request by (token budget or a stall): the run closes and a new one starts.
            closeRun(reqs[j] as Request, itf[j] as number, itl[j] as number);
            itf[j] = step;
          }
          itl[j] = step;
          itc[j] = c + 1;
          its[j] = (its[j] as number) + itlValue;
        }
      } else if (stalls && (ol[j] as number) > 0) {
        // A decode that sat out a prefill-only step: the wait belongs to its next inter-token gap.
        (reqs[j] as Request).stallTicks += adv;
      }
      if (p === inLen) {
        const r = reqs[j] as Request;
        if (!r.ttftSet) {
          r.ttftSet = true;
          r.firstTokenTime = now + adv + otp - r.arrivalTime;
          r.hasTTFT = true;
          r.ttft = r.firstTokenTime;
          this.recentTtft.push(r.firstTokenTime);
        }
      }
      if (p >= inLen + Math.max(ol[j] as number, 1) - 1 || (mml > 0 && p >= mml - 1)) {
        finishing[nf] = run.sync(j);
        gone[nf++] = j;
      } else if (this.lazyDecode) {
        run.lazify(j, step, mml);
      }
    }
    this.finishingCount = nf;
    // The finishing slots leave; `batch` keeps the pre-split array until the completions have run.
    if (nf > 0) run.removeSlots(gone, nf);
    return run.reqs.length;
  }

  /** The LoRA per-step overhead on `base` from the scheduled requests' adapters, in batch order. */
  private loraOverhead(base: number): number {
    const run = this.run;
    const sched = this.loraScheduled;
    let count = 0;
    for (let j = 0; j < run.reqs.length; j++) if ((run.nn[j] as number) > 0) sched[count++] = run.reqs[j] as Request;
    const adv = (this.lora as InstanceAdapters).cost.applyOverhead(base, sched, count);
    sched.length = 0;
    return adv;
  }

  /**
   * Speculative decoding: slot j emitted k > 1 tokens in this verification step. Each token carries the
   * per-output-token overhead (as upstream), and the step's time is spread over them: k inter-token latencies
   * of (step + k·otp)/k each, kept by value in itlExtra, so ITL is per token (what a faster decode lowers) and
   * the ITL count is the request's decode tokens, as without speculation. The current run of step ITLs closes
   * as for a stall (the empty run [step + 1, step] keeps itlLast naming this step).
   */
  private recordSpeculativeItl(j: number, itlValue: number, k: number, otp: number): void {
    const run = this.run;
    const r = run.reqs[j] as Request;
    const step = this.stepCount;
    const total = itlValue + (k - 1) * otp;
    const each = total / k;
    const extra = (r.itlExtra ??= []);
    for (let t = 0; t < k; t++) extra.push(each);
    if ((run.itc[j] as number) > 0) closeRun(r, run.itf[j] as number, run.itl[j] as number);
    run.itf[j] = step + 1;
    run.itl[j] = step;
    run.itc[j] = (run.itc[j] as number) + k;
    run.its[j] = (run.its[j] as number) + total;
  }

  /**
   * E13: slot j finished re-prefilling its prompt and outputs after a recompute preemption, and this step's
   * token is its next one: its ITL is the whole gap since its last token (from that token's time to this
   * step's end plus the output-token overhead), kept by value as a stalled ITL.
   */
  private endReprefill(j: number, now: number, itlValue: number): void {
    const r = this.run.reqs[j] as Request;
    r.stallTicks = now - r.arrivalTime - r.firstTokenTime - (this.run.its[j] as number);
    this.recordStalledItl(j, itlValue);
  }

  /**
   * Prefill-first: slot j's token ended a stall, so its ITL is this step's value plus the stalled ticks, kept by
   * value in itlExtra. The current run of step ITLs closes and the empty run [step + 1, step] is left, so
   * itlLast still names the step of the last token (the token hook reads it) and a decode next step extends it.
   */
  private recordStalledItl(j: number, itlValue: number): void {
    const run = this.run;
    const r = run.reqs[j] as Request;
    const step = this.stepCount;
    const v = itlValue + r.stallTicks;
    r.stallTicks = 0;
    (r.itlExtra ??= []).push(v);
    if ((run.itc[j] as number) > 0) closeRun(r, run.itf[j] as number, run.itl[j] as number);
    run.itf[j] = step + 1;
    run.itl[j] = step;
    run.itc[j] = (run.itc[j] as number) + 1;
    run.its[j] = (run.its[j] as number) + v;
  }

  /**
   * Kept out of the step loop so it is untouched when nobody listens. A request decoded this step iff its last
   * ITL run ends at this step; it produced its first token this step iff its TTFT (computed with the very same
   * expression as in executeAndSplit) ends at this step's end.
   */
  private reportTokens(hook: TokenHook, now: number, adv: number): void {
    const otp = this.latency.outputTokenProcessingTime();
    const step = this.stepCount;
    const batch = this.batch;
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i] as Request;
      if (r.itlCount > 0) {
        if (r.itlLast === step) hook(r, r.arrivalTime + r.firstTokenTime + r.itlSum);
      } else if (r.ttftSet && r.firstTokenTime === now + adv + otp - r.arrivalTime) {
        hook(r, r.arrivalTime + r.firstTokenTime);
      }
    }
  }

  private completeAndContinue(now: number, adv: number, kept: number): void {
    const finishing = this.finishing;
    for (let i = 0; i < this.finishingCount; i++) {
      const r = finishing[i] as Request;
      if (r.progressIndex >= r.inputLen + Math.max(r.outputLen, 1) - 1) {
        r.state = RequestState.Completed;
        // E3 (corrected): the final token is never attended to, so it gets no KV.
        if (!this.corrected && r.outputLen > 0 && r.progressIndex < r.inputLen + r.outputLen) {
          // The final output token's KV: it can pop (and un-hash) an LRU free block; kept for parity.
          if (!this.kv.allocate(r, r.progressIndex, r.progressIndex + 1, EMPTY)) this.metrics.kvAllocationFailures++;
        }
        this.complete(r, now, adv);
      } else {
        this.metrics.lengthCappedRequests++;
        r.lengthCapped = true;
        r.state = RequestState.Completed;
        this.complete(r, now, adv);
      }
    }
    this.batch = this.run.reqs;
    if (kept > 0) {
      this.idleSince = -1;
      this.sink.schedule(now + adv, EventKind.Step, null);
      this.stepPending = true;
    } else {
      this.stepPending = false;
      // While an adapter load is in flight the head is held: its completion event re-forms a step. A policy
      // scheduler that admitted nothing while nothing runs is asked again with a backoff: after a tenth of the
      // time it has been idle (at least one step time), so a policy waiting on the clock (`waitUs` above a
      // threshold) is asked at most 10% late, and one that never admits costs tens of steps per decade of
      // simulated time instead of one every 1 us (an empty step's length); past IDLE_GIVE_UP_US idle it is
      // asked again only when a request is queued here. The built-in schedulers (reference parity) keep
      // stepping every step time.
      const idle = this.admittedNone && this.policy !== null && this.policy.makeBatch !== null;
      if (this.waitQ.length > 0 && (this.lora === null || this.lora.loading === '')) {
        if (!idle) {
          this.idleSince = -1;
          this.scheduleStep(now + adv);
        } else {
          if (this.idleSince < 0) this.idleSince = now;
          const idleFor = now - this.idleSince;
          if (idleFor <= IDLE_GIVE_UP_US) this.scheduleStep(now + Math.max(adv, Math.ceil(idleFor / 10)));
        }
      }
    }
  }

  private completeAdapterLoad(now: number): void {
    const lora = this.lora as InstanceAdapters;
    lora.finishLoad();
    if (!this.stepPending && this.waitQ.length > 0) this.scheduleStep(now);
    else if (!this.stepPending) this.startPlacementLoad(now);
  }

  /** The next entry of the placement schedule (index into cfg.loraSchedule). */
  private placeAt = 0;

  /** A placement-schedule entry takes force: its adapters are to be loaded here; the next entry is scheduled. */
  private applyPlacement(now: number): void {
    const sched = this.cfg.loraSchedule as readonly { readonly atUs: number; readonly ids: readonly string[] }[];
    const lora = this.lora as InstanceAdapters;
    lora.place((sched[this.placeAt] as { ids: readonly string[] }).ids);
    this.placeAt++;
    const next = sched[this.placeAt];
    if (next !== undefined) this.sink.schedule(next.atUs, EventKind.AdapterPlace, null);
    // A pending step starts the load itself (after its waiting head's own, if any).
    if (!this.stepPending) this.startPlacementLoad(now);
  }

  private startPlacementLoad(now: number): void {
    const ticks = (this.lora as InstanceAdapters).startPlacement();
    if (ticks > 0) this.sink.schedule(now + ticks, EventKind.AdapterLoad, null);
  }

  private complete(r: Request, now: number, adv: number): void {
    this.lora?.release(r);
    if (r.pdPart !== PdPart.Prefill || this.cfg.holdPrefillKV !== true) this.kv.release(r);
    r.finishedStepIdx = this.stepCount;
    this.recordCompletion(r);
    // E8 (corrected): the request leaves when its E2E says (output-token overheads and post-decode time
    // included), not at the step's end. P/D halves keep the step end: their E2E is not measured from arrival.
    const left = this.corrected && r.pdPart === PdPart.None ? Math.max(now + adv, r.arrivalTime + r.e2e) : now + adv;
    this.sink.schedule(left, EventKind.RequestLeft, r);
    this.onRequestDone?.(r, now + adv);
  }

  private recordCompletion(r: Request): void {
    const m = this.metrics;
    m.completedRequests++;
    m.ttftSum += r.firstTokenTime;
    let decode = r.progressIndex - r.inputLen;
    if (decode < r.outputLen) decode++;
    if (decode > 0) m.totalOutputTokens += decode;
    const sum = r.itlSum;
    const post = r.outputLen > 0 ? this.latency.postDecodeFixedOverhead() : 0;
    r.e2e = r.firstTokenTime + sum + post;
    r.hasE2E = true;
    r.outcome = 'completed';
    if (r.itlCount > 0) this.recentTpot.push(sum / r.itlCount);
    if (r.outputLen > 0) {
      // E4: the reference takes a capped request to have stopped one token early and divides by one ITL fewer
      // than it has; it stopped where vLLM does (input + output = max-model-len), so corrected divides by them all.
      const cappedGaps = this.corrected ? r.itlCount : r.itlCount - 1;
      r.itlMean = r.lengthCapped ? sum / Math.max(cappedGaps, 1) : sum / Math.max(r.outputLen - 1, 1);
    } else {
      r.itlMean = 0;
    }
    // The request's ITLs join the instance's ITL multiset (AllITLs) only now, at completion.
    const runs = r.itlRuns;
    if (runs !== null) for (let i = 0; i < runs.length; i += 2) m.stepItlUses.addRange(runs[i] as number, runs[i + 1] as number);
    if (r.itlCount > 0 && r.itlFirst <= r.itlLast) m.stepItlUses.addRange(r.itlFirst, r.itlLast);
    if (r.itlExtra !== null) m.extraItl.pushAll(r.itlExtra);
  }
}

const EMPTY: readonly number[] = [];

/** Files the closed run of step ITLs [first, last] in `r.itlRuns` (an empty run, first > last, is dropped). */
function closeRun(r: Request, first: number, last: number): void {
  if (first > last) return;
  if (r.itlRuns === null) r.itlRuns = [];
  r.itlRuns.push(first, last);
}
