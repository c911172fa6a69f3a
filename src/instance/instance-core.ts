/**
 * One serving replica (reference blis-core.md §1–§5), the bottom of Instance's class chain, a file per part:
 * instance-core.ts (state, construction, what others read) -> instance-intake.ts (requests in and out: arrival,
 * enqueue guards, timeouts, P/D injection, eviction, drain redirect) -> step-execute.ts (step phase 2: price the
 * step, advance every request, split off the finishing ones) -> step-complete.ts (phases 3 and 4: completions
 * and their metrics, the next step) -> instance.ts (event dispatch, step phase 1: schedule the batch, and the
 * step's order; LoRA adapter events). One class chain, not objects calling each other, so the step reads one
 * object's fields and makes only monomorphic calls. The instance never touches the event queue directly: it
 * asks its {@link EventSink} to schedule events, and the cluster loop delivers them back through `handle`.
 *
 * This file owns the instance's configuration and hook types, all of its fields (the running batch, the wait
 * queue, the batch former, the step counters, the LoRA slots, the recent-latency means, the observers), the
 * constructor that wires them (including the lazy-decode decision), the read-only views the router, reports
 * and invariant checkers use, scheduling a step event, and the end-of-run metrics (finalize).
 */
import type { Request } from '../domain/request.js';
import type { SloPriorityMap } from '../domain/slo.js';
import type { KVStore } from '../kv/types.js';
import type { LatencyModel } from '../latency/types.js';
import { BatchFormer, type BatchLimits } from './batch-formation.js';
import { EventKind } from './events.js';
import { InstanceMetrics } from './instance-metrics.js';
import { cacheCappedMaxModelLen, FutileSelfPreemptions } from './never-fits.js';
import { InstanceAdapters, type AdapterCost } from './lora.js';
import { RunningBatch } from './running-batch.js';
import { SCHEDULERS, type InstanceScheduler, type SchedulerContext, type SchedulerName } from './scheduler.js';
import { WaitQueue } from './wait-queue.js';

/** What a lockstep rank asks of its group (instance/lockstep.ts implements it). */
export interface LockstepHook {
  /** A rank wants a step at `time` (its next step, or a new arrival while the group is idle). */
  want(time: number): void;
  /** The group's step event fired (on its first rank) at `now`. */
  step(now: number): void;
}

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
  /**
   * E14 (corrected, and with corrected-physics): a step starts no earlier than the previous step's end. The
   * reference clears its pending step when the last running request finishes, at that step's start, so an
   * arrival during that final step starts a new one at once, beside it on the same GPU. Default false.
   */
  readonly serialSteps?: boolean;
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

export abstract class InstanceCore {
  readonly id: string;
  clock = 0;
  readonly metrics = new InstanceMetrics();
  readonly waitQ = new WaitQueue();
  /** The running batch: requests and their per-step fields (see running-batch.ts). */
  protected readonly run: RunningBatch;
  /**
   * The batch as others see it: the running batch, except that from a step's execution until its completions
   * have run it still holds the requests finishing in that step. Empty stands for the reference's nil batch.
   */
  protected batch: readonly Request[] = [];
  protected stepPending = false;
  protected stepCount = 0;
  protected readonly former: BatchFormer;
  protected readonly order: ((a: Request, b: Request) => number) | null;
  protected readonly policy: InstanceScheduler | null;
  /** The requests finishing in the current step, in batch order: the first finishingCount entries (reused). */
  protected readonly finishing: Request[] = [];
  /** Their slots in the running batch, in order (reused). */
  protected readonly finishingSlots: number[] = [];
  protected finishingCount = 0;
  /** LoRA adapters on this instance (resident slots, load in flight); null when LoRA is off. */
  readonly lora: InstanceAdapters | null;
  /** LoRA only: the step's scheduled requests, for the adapter overhead (reused). */
  protected readonly loraScheduled: Request[] = [];
  /** Exponentially weighted mean step duration (µs), 0 before the first step. */
  protected stepEwma = 0;
  /** Start and end ticks of the last executed step (async scheduling's visibility cutoff). */
  protected lastStepStart = -1;
  protected lastStepEnd = -1;
  protected readonly asyncScheduling: boolean;
  protected readonly prefillFirst: boolean;
  /** --semantics corrected: the engine corrections E3, E7, E8 (docs/reference-differences.md). */
  protected readonly corrected: boolean;
  protected readonly futile = new FutileSelfPreemptions();
  /** Whether steady decodes may be kept lazy (see running-batch.ts): fixed by the setup (observers sync what they read). */
  protected readonly lazyDecode: boolean;
  protected readonly recentTtft = new RecentMean();
  protected readonly recentTpot = new RecentMean();
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
  /**
   * Optional observer of every executed step (traces, anomaly detectors); unset, one null check per step. Typed
   * with `this` so an Instance's observer receives the Instance (instance.ts's StepHook).
   */
  onStep: ((inst: this, info: StepInfo) => void) | null = null;
  /** Reused for every onStep call (read during the call only). */
  protected readonly stepInfo: StepInfoImpl;
  /** The current step admitted no request (see executeAndSplit). */
  protected admittedNone = false;
  /** When a policy scheduler started admitting nothing with nothing running (-1: it is not idle). */
  protected idleSince = -1;
  /** The next entry of the placement schedule (index into cfg.loraSchedule). */
  protected placeAt = 0;
  /**
   * The lockstep DP group this instance is a rank of (instance/lockstep.ts: the DP ranks of a MoE model under
   * corrected-physics); null otherwise, and then nothing of the step changes.
   */
  lockstep: LockstepHook | null = null;

  protected readonly cfg: InstanceConfig;

  constructor(
    config: InstanceConfig,
    readonly kv: KVStore,
    protected readonly latency: LatencyModel,
    protected readonly slo: SloPriorityMap,
    protected readonly sink: EventSink,
  ) {
    const cfg = config.corrected === true ? { ...config, maxModelLen: cacheCappedMaxModelLen(config.maxModelLen, kv.totalBlocks, kv.blockSize) } : config;
    this.cfg = cfg;
    this.id = cfg.id;
    this.policy = cfg.schedulerPolicy ?? null;
    const hooks = this.policy !== null && (this.policy.makeBatch !== null || this.policy.selectPreemptionVictim !== null);
    // Slot arrays for 16 requests at first (they double as the batch grows): sized for max-num-seqs up front, they
    // were 20 KB of each idle instance of a large cluster (issue 27).
    this.run = new RunningBatch(kv, Math.min(Math.max(cfg.maxNumSeqs, 1), 16));
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
  protected schedulerContext(): SchedulerContext {
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

  /**
   * Schedules this instance's next StepEvent at `time` and marks it pending; a lockstep rank asks its group
   * instead (the group's step is one event on its first rank).
   */
  protected scheduleStep(time: number): void {
    if (this.lockstep !== null) {
      this.lockstep.want(time);
      return;
    }
    this.stepPending = true;
    this.sink.schedule(this.cfg.serialSteps === true && this.lastStepEnd > time ? this.lastStepEnd : time, EventKind.Step, null);
  }

  /** Lockstep group only: schedules the group's step event on this (its first) rank at `time`. */
  scheduleGroupStep(time: number): void {
    this.sink.schedule(time, EventKind.Step, null);
  }

  /** Lockstep group only: the group's step is pending (or not) on every rank (INV-8 reads it per instance). */
  setStepPending(pending: boolean): void {
    this.stepPending = pending;
  }

  /** Whether this instance has work: a running or a waiting request. */
  get hasWork(): boolean {
    return this.run.length > 0 || this.waitQ.length > 0;
  }

  /** End of run: the instance's last counters into its metrics (still queued and running, cache rates). */
  finalize(): void {
    this.run.syncAll();
    const m = this.metrics;
    m.stillQueued = this.waitQ.length;
    m.stillRunning = this.batch.length;
    m.simEndedTime = Math.min(this.clock, this.cfg.horizon);
    m.cacheHitRate = this.kv.cacheHitRate();
    m.kvThrashingRate = this.kv.kvThrashingRate();
  }
}

/** No block hashes (KV allocations that hash nothing). */
export const EMPTY: readonly number[] = [];
