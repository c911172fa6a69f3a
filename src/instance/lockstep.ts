/**
 * The data-parallel ranks of a MoE model stepping in lockstep (vLLM's behaviour, docs.vllm.ai "Data Parallel
 * Deployment": the expert layers of every rank synchronize in every forward pass, and a rank with nothing
 * scheduled runs a dummy forward pass while any rank has work). Used under corrected-physics for a MoE model at
 * --dp > 1; docs/fidelity.md ("DP ranks in lockstep") states what is modelled.
 *
 * A group is D instances (its ranks), each with its own wait queue, scheduler and KV cache. It keeps one step
 * event, on its first rank: at that time every rank with work forms its own batch; the forward pass of every
 * rank is padded to the largest rank's token count (vLLM's DP padding, v1/worker/dp_utils.py) and its MoE layers
 * see D times that; every rank's step ends at the slowest rank's time; a rank with no work runs a dummy forward
 * pass (priced, never the only work: its padded terms are the working ranks' too). The next group step is the
 * earliest any rank asks for; with none the group is idle and the next arrival at any rank starts one (a request
 * that arrives while a step is pending waits for that step). Ranks are visited in rank order, so the group's
 * order of events is the ranks' own, deterministic.
 */
import type { BatchOutcome } from './batch-formation.js';
import type { LockstepHook } from './instance-core.js';
import type { Instance } from './instance.js';
import type { LockstepPricing, StepBatch } from '../latency/types.js';

const NO_REQUESTS: StepBatch = { count: 0, progress: new Int32Array(0), newTokens: new Int32Array(0), inputLen: new Int32Array(0), outputLen: new Int32Array(0) };

/** What one group step did (tests and observers read it during the call only). */
export interface LockstepStepInfo {
  readonly clock: number;
  /** The tokens every rank's forward pass was padded to (the largest rank's count). */
  readonly padTo: number;
  /** The group's step time (µs): the slowest rank's. */
  readonly duration: number;
  /** Each rank's own step time (µs) at that padding; a rank without work: its dummy forward pass. */
  readonly rankTimes: readonly number[];
  /** Which ranks had work (formed a batch); the others ran a dummy forward pass. */
  readonly working: readonly boolean[];
}

export class LockstepGroup implements LockstepHook {
  private pending = false;
  private inStep = false;
  /** The earliest step a rank asked for during the current group step. */
  private next = Infinity;
  /** When the last group step ends: a step wanted before then waits for it (E14; lockstep is corrected-physics only). */
  private lastEnd = -1;
  private readonly outcomes: (BatchOutcome | null)[];
  private readonly times: number[];
  private readonly working: boolean[];
  /** Observer of every group step; null = none (one check per group step). */
  onGroupStep: ((info: LockstepStepInfo) => void) | null = null;

  constructor(readonly ranks: readonly Instance[], private readonly pricing: LockstepPricing) {
    if (ranks.length < 2) throw new Error(`a lockstep group needs at least 2 ranks, got ${ranks.length}`);
    this.outcomes = ranks.map(() => null);
    this.times = ranks.map(() => 0);
    this.working = ranks.map(() => false);
    for (const r of ranks) {
      if (r.lockstep !== null) throw new Error(`instance ${r.id} is already a rank of a lockstep group`);
      r.lockstep = this;
    }
  }

  want(time: number): void {
    if (this.inStep) {
      if (time < this.next) this.next = time;
      return;
    }
    if (this.pending) return;
    this.setPending(true);
    (this.ranks[0] as Instance).scheduleGroupStep(time < this.lastEnd ? this.lastEnd : time);
  }

  step(now: number): void {
    const ranks = this.ranks;
    const n = ranks.length;
    this.inStep = true;
    this.next = Infinity;
    let any = false;
    let padTo = 0;
    for (let i = 0; i < n; i++) {
      const r = ranks[i] as Instance;
      r.clock = now;
      if (r.hasWork) {
        this.outcomes[i] = r.lockstepForm(now);
        this.working[i] = true;
        any = true;
        const t = r.lockstepTokens();
        if (t > padTo) padTo = t;
      } else {
        this.outcomes[i] = null;
        this.working[i] = false;
      }
    }
    if (!any) {
      // Nothing on any rank: the group is idle until an arrival.
      this.inStep = false;
      this.setPending(false);
      return;
    }
    let adv = 1;
    let slow = -1;
    let last = -1;
    for (let i = 0; i < n; i++) {
      const t = this.working[i] ? (ranks[i] as Instance).lockstepPrice(padTo) : this.pricing.stepTime(NO_REQUESTS, padTo);
      this.times[i] = t;
      last = i;
      if (t > adv) {
        adv = t;
        slow = i;
      }
    }
    // Price the slowest working rank last, so a recording model (the latency fit) holds its gradient.
    if (slow >= 0 && slow !== last && this.working[slow]) (ranks[slow] as Instance).lockstepPriceAgain(padTo);
    this.lastEnd = now + adv;
    if (this.onGroupStep !== null) this.onGroupStep({ clock: now, padTo, duration: adv, rankTimes: this.times, working: this.working });
    for (let i = 0; i < n; i++) {
      const o = this.outcomes[i];
      if (o === null || o === undefined) continue;
      this.outcomes[i] = null;
      (ranks[i] as Instance).lockstepRun(now, adv, o);
    }
    this.inStep = false;
    if (this.next === Infinity) {
      this.setPending(false);
      return;
    }
    this.setPending(true);
    (ranks[0] as Instance).scheduleGroupStep(this.next);
  }

  private setPending(p: boolean): void {
    this.pending = p;
    for (const r of this.ranks) r.setStepPending(p);
  }
}
