/**
 * Per-event invariant observation through `ClusterSimulator.onEvent`, which the cluster calls just before it
 * executes each event (a pinned contract, see invariants.test.ts). The state after an instance event is
 * therefore inspected when the next event is announced, and after the last one by {@link finish}. Records the
 * time of every executed event (INV-3) and, in deep mode, checks after each instance event:
 *   - INV-2 lifecycle transitions (terminal states never change; each transition only on the event kind
 *     that can cause it),
 *   - INV-4 KV block conservation,
 *   - INV-8 work-conserving (work present => exactly one step pending; a Step only fires when one was),
 *   - queue/batch integrity (no request both waiting and running, states match the container),
 *   - INV-12 Phase-1 completeness: among the requests of the pre-step batch that were not preempted, those
 *     that received tokens form a prefix of the requests that wanted tokens (the loop may only stop, never
 *     skip a request, e.g. through index drift after a non-tail eviction).
 * A livelock guard aborts runs that exceed `maxEvents`.
 */
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { PdPart, RequestState, type Request, type RequestOutcome } from '../../src/domain/request.js';
import { loraViolations } from './lora.js';
import { EventKind } from '../../src/instance/events.js';
import type { Instance } from '../../src/instance/instance.js';
import type { LockstepGroup } from '../../src/instance/lockstep.js';
import { kvUsage } from './checkers.js';
import { kvTierViolations } from './kv-tiers.js';
import { TieredKVCache } from '../../src/kv/tiered.js';
import { STATE_NAMES, waitingBlockAllowance } from './context.js';

export interface RecorderOptions {
  /** Run the per-event structural checks (costs O(batch + queue + KV blocks) per event). */
  readonly deep?: boolean;
  /** Abort the run (throw) after this many events: a livelock guard. */
  readonly maxEvents?: number;
  /** Stop collecting after this many violations (the first ones are the informative ones). */
  readonly maxViolations?: number;
}

interface Snapshot {
  batch: Request[];
  pi: Map<Request, number>;
  busy: boolean;
  stepPending: boolean;
}

/** Thrown by the livelock guard; the run was aborted mid-flight (the engine state is as it was then). */
export class LivelockError extends Error {
  constructor(readonly events: number, readonly clock: number) {
    super(`livelock guard: more than ${events} events (clock ${clock})`);
    this.name = 'LivelockError';
  }
}

const KIND_NAMES = Object.fromEntries(Object.entries(EventKind).map(([k, v]) => [v, k])) as Record<number, string>;

export class EventRecorder {
  readonly times: number[] = [];
  readonly kinds: number[] = [];
  readonly instanceIndexes: number[] = [];
  /** Time of the last executed event per instance (0 if none). */
  readonly lastInstanceTime: number[];
  readonly violations: string[] = [];
  /**
   * Known reference quirks of the tiered KV cache seen during the run (first example of each), which are kept
   * for parity and are not violations by themselves; see context.ts {@link waitingBlockAllowance}.
   */
  readonly tieredQuirks = new Map<'waiting-holder' | 'over-commit', string>();
  private readonly snaps: Snapshot[];
  private readonly state = new Map<Request, { s: RequestState; o: RequestOutcome }>();
  /** Each request's client budget before the run (the engine auto-fills it in place at enqueue). */
  readonly initialMaxOutputLen = new Map<Request, number>();
  private readonly deep: boolean;
  private readonly maxEvents: number;
  private readonly maxViolations: number;
  private readonly mml: number;
  /** The announced event whose effects are not inspected yet. */
  private pending: { t: number; kind: EventKind; idx: number } | null = null;

  constructor(
    private readonly cs: ClusterSimulator,
    requests: readonly Request[],
    maxModelLen: number,
    opts: RecorderOptions = {},
  ) {
    this.deep = opts.deep ?? false;
    this.maxEvents = opts.maxEvents ?? Number.POSITIVE_INFINITY;
    this.maxViolations = opts.maxViolations ?? 50;
    this.mml = maxModelLen;
    this.lastInstanceTime = cs.instances.map(() => 0);
    this.snaps = cs.instances.map(() => ({ batch: [], pi: new Map(), busy: false, stepPending: false }));
    for (const r of requests) {
      this.state.set(r, { s: r.state, o: r.outcome });
      this.initialMaxOutputLen.set(r, r.maxOutputLen);
    }
    cs.onEvent = (t, kind, idx) => this.onEvent(t, kind, idx);
  }

  /** INV-3: event times never decrease. */
  clockViolations(): string[] {
    const v: string[] = [];
    for (let i = 1; i < this.times.length; i++) {
      if ((this.times[i] as number) < (this.times[i - 1] as number)) v.push(`INV-3: event #${i} at ${this.times[i]} after #${i - 1} at ${this.times[i - 1]}`);
    }
    return v;
  }

  private fail(msg: string): void {
    if (this.violations.length < this.maxViolations) this.violations.push(msg);
  }

  /** Inspects the effects of the last event; call after `run()` returns (idempotent). */
  finish(): void {
    const p = this.pending;
    this.pending = null;
    if (p === null || !this.deep) return;
    if (p.idx >= 0) {
      for (const i of this.actedOn(p.idx, p.kind)) this.afterInstanceEvent(p.t, p.kind, i);
      // A lockstep group's step is pending on all its ranks at once, whichever rank's event scheduled it.
      const group = (this.cs.instances[p.idx] as Instance).lockstep as LockstepGroup | null;
      if (group !== null) for (const r of group.ranks) (this.snaps[this.cs.instances.indexOf(r)] as Snapshot).stepPending = r.isStepPending;
    }
    // Cluster events can reach into instances (evictions, drains, P/D KV reservations): resynchronise.
    else {
      this.grow();
      this.cs.instances.forEach((inst, i) => this.snapshot(inst, this.snaps[i] as Snapshot));
    }
  }

  /** Instances the autoscaler added since the last look: start their per-instance records. */
  private grow(): void {
    while (this.snaps.length < this.cs.instances.length) {
      this.snaps.push({ batch: [], pi: new Map(), busy: false, stepPending: false });
      this.lastInstanceTime.push(0);
    }
  }

  private onEvent(t: number, kind: EventKind, idx: number): void {
    this.finish();
    this.times.push(t);
    this.kinds.push(kind);
    this.instanceIndexes.push(idx);
    if (this.times.length > this.maxEvents) throw new LivelockError(this.maxEvents, t);
    this.grow();
    if (idx >= 0) for (const i of this.actedOn(idx, kind)) this.lastInstanceTime[i] = t;
    this.pending = { t, kind, idx };
  }

  /** The instances an instance event acts on: a lockstep group's step (an event on its first rank) steps every rank. */
  private actedOn(idx: number, kind: EventKind): number[] {
    const group = (this.cs.instances[idx] as Instance).lockstep as LockstepGroup | null;
    if (kind !== EventKind.Step || group === null) return [idx];
    return group.ranks.map((r) => this.cs.instances.indexOf(r));
  }

  private afterInstanceEvent(t: number, kind: EventKind, idx: number): void {
    const inst = this.cs.instances[idx] as Instance;
    const at = `t=${t} ${KIND_NAMES[kind] ?? kind}@${inst.id}`;
    const snap = this.snaps[idx] as Snapshot;
    if (kind === EventKind.Step) {
      if (!snap.stepPending) this.fail(`INV-8 ${at}: a Step fired while none was pending (duplicate step)`);
      if (snap.busy) this.checkPhase1(snap, at, inst);
    }
    this.checkTransitions(inst, kind, at);
    this.checkContainers(inst, at);
    const kv = inst.kv.checkConservation();
    if (kv) this.fail(`INV-4 ${at}: ${kv}`);
    for (const e of kvUsage(inst, this.reservedOn(idx))) this.fail(`${e} (${at})`);
    for (const e of kvTierViolations(inst, false)) this.fail(`${e} (${at})`);
    const busy = inst.waitQ.length > 0 || inst.runningBatch.length > 0;
    if (busy && !inst.isStepPending && inst.adapterLoading === '') this.fail(`INV-8 ${at}: ${inst.waitQ.length} queued / ${inst.runningBatch.length} running but no step pending`);
    for (const e of loraViolations(inst)) this.fail(`${e} (${at})`);
    this.snapshot(inst, snap);
  }

  /** P/D requests holding KV here outside the queue and batch (reserved decode halves, held prefill halves). */
  private reservedOn(idx: number): Request[] {
    const out: Request[] = [];
    for (const p of this.cs.pd?.parents ?? []) {
      if (p.decode !== null && p.decodeIndex === idx && p.decodeEnqueueTime === 0) out.push(p.decode);
      if (p.heldOnPrefill && p.prefillIndex === idx) out.push(p.prefill);
    }
    return out;
  }

  private snapshot(inst: Instance, snap: Snapshot): void {
    snap.busy = inst.waitQ.length > 0 || inst.runningBatch.length > 0;
    snap.stepPending = inst.isStepPending;
    snap.batch = inst.runningBatch.slice();
    snap.pi.clear();
    for (const r of snap.batch) snap.pi.set(r, r.progressIndex);
  }

  private checkPhase1(snap: Snapshot, at: string, inst?: Instance): void {
    // As the instance enforces it (corrected semantics cap it at the KV cache).
    const mml = inst?.maxModelLen ?? this.mml;
    let stoppedAt: Request | null = null;
    for (const r of snap.batch) {
      if (r.state === RequestState.Queued || r.state === RequestState.TimedOut) continue; // preempted victim
      const pi = snap.pi.get(r) as number;
      const wanted = pi < r.inputLen || (r.outputLen > 0 && !(mml > 0 && pi + 1 > mml - 1));
      const got = r.numNewTokens > 0;
      if (wanted && !got) stoppedAt ??= r;
      else if (got && stoppedAt !== null) {
        this.fail(`INV-12 ${at}: ${stoppedAt.id} was skipped in Phase 1 (no tokens) but later ${r.id} got ${r.numNewTokens}`);
        return;
      }
    }
  }

  private checkTransitions(inst: Instance, kind: EventKind, at: string): void {
    for (const r of inst.metrics.requests) {
      let prev = this.state.get(r);
      if (!prev && r.pdPart !== PdPart.None) {
        // A P/D half first seen here (created by the cluster during the run).
        prev = { s: RequestState.Queued, o: '' };
        this.state.set(r, prev);
      }
      if (!prev) {
        this.fail(`INV-2 ${at}: unknown request ${r.id}`);
        continue;
      }
      const s = r.state;
      const o = r.outcome;
      if (s === prev.s && o === prev.o) continue;
      if (o.startsWith('gateway_') || o === 'drain_killed') {
        // Changed by a cluster-side eviction, not by this event.
        prev.s = s;
        prev.o = o;
        continue;
      }
      const name = `${STATE_NAMES[prev.s]}->${STATE_NAMES[s]}`;
      if (prev.o !== '' && o !== prev.o) this.fail(`INV-2 ${at}: ${r.id} outcome changed ${prev.o} -> ${o}`);
      if (prev.s === RequestState.Completed || prev.s === RequestState.TimedOut) {
        if (s !== prev.s) this.fail(`INV-2 ${at}: ${r.id} left terminal state (${name})`);
      } else if (s === RequestState.Running || s === RequestState.Completed || (prev.s === RequestState.Running && s === RequestState.Queued)) {
        if (kind !== EventKind.Step) this.fail(`INV-2 ${at}: ${r.id} ${name} outside a Step`);
      } else if (s === RequestState.TimedOut) {
        if (kind !== EventKind.Timeout && kind !== EventKind.Queued) this.fail(`INV-2 ${at}: ${r.id} timed out on a non-timeout event`);
      }
      const terminal = s === RequestState.Completed || s === RequestState.TimedOut;
      if (terminal && o === '') this.fail(`INV-2 ${at}: ${r.id} is ${STATE_NAMES[s]} without an outcome`);
      prev.s = s;
      prev.o = o;
    }
  }

  private checkContainers(inst: Instance, at: string): void {
    const seen = new Set<Request>();
    // Corrected semantics fix both tiered quirks: there they are violations like any other.
    const tiered = inst.kv instanceof TieredKVCache && !inst.kv.corrected;
    const bs = inst.kv.blockSize;
    for (const r of inst.runningBatch) {
      if (seen.has(r)) this.fail(`INV-12 ${at}: ${r.id} twice in the batch`);
      seen.add(r);
      if (r.state !== RequestState.Running) this.fail(`INV-2 ${at}: ${r.id} in the batch with state ${STATE_NAMES[r.state]}`);
      // A request's blocks hold its computed tokens contiguously: never more blocks than those tokens need.
      const blocks = inst.kv.blocksOf(r);
      const need = Math.ceil(r.computedTokens / bs);
      if (blocks > need) {
        const msg = `${at}: ${r.id} holds ${blocks} KV blocks for ${r.computedTokens} computed tokens (${need} needed)`;
        // Tiered quirk: a CPU reload that covers the requested range commits whole blocks past its end, and the
        // next chunk then starts a fresh block (reference sim/kv/tiered.go, "entire requested range is cached").
        if (tiered) {
          if (!this.tieredQuirks.has('over-commit')) this.tieredQuirks.set('over-commit', msg);
        } else {
          this.fail(`INV-4 ${msg}`);
        }
      }
    }
    const waiting = inst.waitQ.toArray();
    for (const r of waiting) {
      if (seen.has(r)) this.fail(`INV-12 ${at}: ${r.id} is both waiting and running (or queued twice)`);
      seen.add(r);
      if (r.state !== RequestState.Queued) this.fail(`INV-2 ${at}: ${r.id} in the wait queue with state ${STATE_NAMES[r.state]}`);
      const blocks = inst.kv.blocksOf(r);
      // A decode half waits with its transferred prompt's KV (PI at the input's end) unless a preemption reset it.
      if (r.pdPart === PdPart.Decode) {
        if ((r.progressIndex !== r.inputLen && r.progressIndex !== 0) || blocks > Math.ceil(r.inputLen / bs)) this.fail(`INV-2 ${at}: decode half ${r.id} waiting with PI=${r.progressIndex}, ${blocks} KV blocks`);
        continue;
      }
      if (r.progressIndex !== 0 || blocks > waitingBlockAllowance(inst, r)) this.fail(`INV-2 ${at}: ${r.id} waiting with PI=${r.progressIndex}, ${blocks} KV blocks`);
      if (blocks > 0 && !this.tieredQuirks.has('waiting-holder')) this.tieredQuirks.set('waiting-holder', `${at}: ${r.id} waits holding ${blocks} KV blocks`);
    }
  }
}
