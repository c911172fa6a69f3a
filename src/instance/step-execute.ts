/**
 * Step phase 2, execution (reference blis-core.md §4), the third link of Instance's class chain (instance-core.ts
 * describes the chain). This file owns the hot loop of a step: its duration from the latency model (with the
 * LoRA overhead and pending KV-transfer latency), then one pass over the running batch that advances every
 * request by its scheduled tokens, records its inter-token latencies (step runs, stalls under prefill-first,
 * speculative tokens) and first token, and splits off the requests that finish; plus the token observer's
 * report, kept out of that loop.
 */
import type { Request } from '../domain/request.js';
import type { LockstepPricing, StepTimeWithDecodes } from '../latency/types.js';
import type { TokenHook } from './instance-core.js';
import { InstanceIntake } from './instance-intake.js';
import type { InstanceAdapters } from './lora.js';

export abstract class InstanceExecution extends InstanceIntake {
  /** The step's duration (µs) from the scheduled requests; records the step's ITL value. */
  protected advance(): number {
    const run = this.run;
    let adv = run.lazyCount > 0 ? (this.latency.stepTimeWithDecodes as StepTimeWithDecodes)(run.scheduled(), run.lazyCount, run.lazyProgress()) : this.latency.stepTime(run.scheduled());
    if (this.lora !== null) adv = this.loraOverhead(adv);
    adv += this.kv.consumePendingTransferLatency();
    if (adv < 1) adv = 1;
    return this.noteAdvance(adv);
  }

  /** Records a step of `adv` µs (the step-time mean, the step's ITL value); returns it. */
  protected noteAdvance(adv: number): number {
    this.stepEwma = this.stepEwma === 0 ? adv : 0.8 * this.stepEwma + 0.2 * adv;
    this.metrics.stepItl.push(adv + this.latency.outputTokenProcessingTime());
    return adv;
  }

  /**
   * A lockstep rank's own step time (µs, at least 1) for its formed batch with the forward pass padded to
   * `padTo` tokens (instance/lockstep.ts), pending KV-transfer latency included; the group's step takes the
   * slowest rank's. Lockstep ranks have no LoRA and no lazy decode slots (corrected-physics prices every slot).
   */
  lockstepPrice(padTo: number): number {
    if (this.run.lazyCount > 0 || this.lora !== null) throw new Error(`instance ${this.id}: a lockstep rank with lazy decode slots or LoRA`);
    let adv = (this.latency.lockstep as LockstepPricing).stepTime(this.run.scheduled(), padTo);
    adv += this.kv.consumePendingTransferLatency();
    return adv < 1 ? 1 : adv;
  }

  /** Prices this rank's batch again (no state changes): a recording latency model then holds its gradient. */
  lockstepPriceAgain(padTo: number): void {
    (this.latency.lockstep as LockstepPricing).stepTime(this.run.scheduled(), padTo);
  }

  /** Tokens of the forward pass this rank formed (what the lockstep group pads every rank to, at most). */
  lockstepTokens(): number {
    return (this.latency.lockstep as LockstepPricing).tokens(this.run.scheduled());
  }

  /**
   * Advances every request of the batch by its scheduled tokens (progress, ITL, first token) and splits the
   * batch: the requests that go on keep their order in the running batch (returns how many); the ones that
   * finish this step (completed or length-capped) are synced and collected in `finishing`, in order. `batch`
   * keeps showing the whole pre-split batch until the completions have run. Lazy slots need nothing here (they
   * never finish while lazy); the others that go on in a steady decode become lazy.
   */
  protected executeAndSplit(now: number, adv: number): number {
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
  protected reportTokens(hook: TokenHook, now: number, adv: number): void {
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
}

/** Files the closed run of step ITLs [first, last] in `r.itlRuns` (an empty run, first > last, is dropped). */
function closeRun(r: Request, first: number, last: number): void {
  if (first > last) return;
  if (r.itlRuns === null) r.itlRuns = [];
  r.itlRuns.push(first, last);
}
