/**
 * One serving replica (reference blis-core.md §1–§5): wait queue, scheduler, batch formation, the four-phase
 * step, enqueue guards, client timeouts. Instance is the top of a class chain, a file per part (instance-core.ts
 * describes it): instance-core.ts (state, construction, read-only views) -> instance-intake.ts (requests in and
 * out) -> step-execute.ts (phase 2) -> step-complete.ts (phases 3 and 4) -> this file. The instance never
 * touches the event queue directly: it asks its EventSink (instance-core.ts) to schedule events, and the cluster loop
 * delivers them back through {@link Instance.handle}.
 *
 * This file owns the dispatch of instance events (handle), the step itself (phase 1: sort the wait queue, start
 * a LoRA load, form the batch, stamp scheduling delays; then phases 2-4 in order, with the step and token
 * observers) and the LoRA adapter events (load completion, placement schedule). Its configuration and hook
 * types live in instance-core.ts and are re-exported here.
 */
import { PdPart, type Request } from '../domain/request.js';
import { EventKind } from './events.js';
import type { BatchOutcome } from './batch-formation.js';
import type { StepInfo } from './instance-core.js';
import type { InstanceAdapters } from './lora.js';
import { neverFitsError, spinsForever } from './never-fits.js';
import { InstanceCompletion } from './step-complete.js';

export { RECENT_LATENCY_WINDOW } from './instance-core.js';
export type { EventSink, InstanceConfig, RequestDoneHook, StepInfo, TokenHook } from './instance-core.js';

/** Observer of every executed step (traces, anomaly detectors): the instance and what the step did. */
export type StepHook = (inst: Instance, info: StepInfo) => void;

export class Instance extends InstanceCompletion {
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

  private step(now: number): void {
    if (this.lockstep !== null) {
      this.lockstep.step(now);
      return;
    }
    if (this.run.length === 0 && this.waitQ.length === 0) {
      this.stepPending = false;
      if (this.lora !== null) this.startPlacementLoad(now);
      return;
    }
    const outcome = this.formStep(now);
    this.runStep(now, this.advance(), outcome);
  }

  /**
   * A lockstep rank's part of its group's step at `now` (instance/lockstep.ts): phase 1, forming its own
   * batch. The group then prices every rank ({@link lockstepPrice}) and runs each with the slowest rank's time.
   */
  lockstepForm(now: number): BatchOutcome {
    this.clock = now;
    return this.formStep(now);
  }

  /** A lockstep rank's phases 2-4 with the group's step time `adv` (the slowest rank's). */
  lockstepRun(now: number, adv: number, outcome: BatchOutcome): void {
    this.runStep(now, this.noteAdvance(adv), outcome);
  }

  /** Phase 1: sorts the wait queue, starts an adapter load, forms the batch, stamps scheduling delays. */
  private formStep(now: number): BatchOutcome {
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
    return outcome;
  }

  /** Phases 2-4 of a step of `adv` µs (priced by the caller) over the batch phase 1 formed. */
  private runStep(now: number, adv: number, outcome: BatchOutcome): void {
    const m = this.metrics;
    const ns = outcome.newlyScheduled;
    // Phase 2: execute. One pass advances every request and picks out the finishing ones, which then leave the
    // running batch; the old batch array stays intact for the observers until the completions run.
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

  private completeAdapterLoad(now: number): void {
    const lora = this.lora as InstanceAdapters;
    lora.finishLoad();
    if (!this.stepPending && this.waitQ.length > 0) this.scheduleStep(now);
    else if (!this.stepPending) this.startPlacementLoad(now);
  }

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
}
