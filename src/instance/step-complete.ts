/**
 * Step phases 3 and 4, completion and the next step (reference blis-core.md §4), the fourth link of Instance's
 * class chain (instance-core.ts describes the chain). This file owns what happens to the requests a step
 * finished, in batch order: the final token's KV (reference parity), length caps, KV and adapter release, the
 * completion metrics (E2E, ITL mean, the ITL multiset, recent TPOT) and the RequestLeft event; then whether and
 * when the next step runs, including the backoff for an idle policy scheduler.
 */
import { PdPart, RequestState, type Request } from '../domain/request.js';
import { EventKind } from './events.js';
import { EMPTY } from './instance-core.js';
import { InstanceExecution } from './step-execute.js';

/** How long (µs, about 285 years) an idle policy scheduler is asked again by backoff before it waits for a new request. */
const IDLE_GIVE_UP_US = 2 ** 53;

export abstract class InstanceCompletion extends InstanceExecution {
  /**
   * Phases 3 and 4: completes the `finishingCount` requests executeAndSplit collected, in batch order; the
   * batch others see becomes the running batch; then the next step is scheduled (`kept` requests go on) or
   * the instance goes idle, or an idle policy scheduler is asked again after its backoff.
   */
  protected completeAndContinue(now: number, adv: number, kept: number): void {
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
      this.scheduleStep(now + adv);
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
