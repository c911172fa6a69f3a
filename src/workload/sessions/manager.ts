/**
 * The SessionManager (the reference's `sim/workload/session.go`): turns each finished round of a closed-loop
 * session into the session's next round, or into the session's terminal state.
 *
 * On every terminal request of a known session (the cluster calls {@link SessionManager.onComplete} with the
 * tick the instance observed it — for a completion, the end of the step that produced the last token):
 *   timed out, dropped at enqueue (still Queued) or lost at the gateway → cancelled;
 *   the last of `max_rounds` → completed; follow-up budget used up → budget_exhausted;
 *   next arrival = tick + think time (+ tool latency, agentic extension) beyond the horizon → horizon_interrupted;
 *   otherwise round r+1, id `session_<sessionId>_round_<r+1>_<n>` (n counts every follow-up of the run) — or,
 *   for a blueprint with recorded rounds (closed-loop replay, --semantics corrected), the recorded row's id,
 *   deadline offset and attributes —
 *   drawn from the session's stream: [think time], [tool latency], input length, output length, input ids,
 *   output ids.
 * With `accumulate` the new input is the conversation so far — prefix, round 0's conversation, then for each
 * round the output tokens it actually produced (`progressIndex − inputLen`, which is one short of the oracle
 * length for a normal completion: the reference completes a request one token before the end of its KV) and
 * the next input — kept in one shared buffer per session.
 */
import { Request, RequestState } from '../../domain/request.js';
import { computeDeadline } from '../spec/draft.js';
import { TokenBuffer } from '../spec/reasoning.js';
import { concatTokens, randomTokenIds } from '../tokens.js';
import type { RecordedRound, SessionBlueprint, SessionState } from './types.js';

interface ActiveSession {
  readonly bp: SessionBlueprint;
  round: number;
  state: SessionState;
  /** Accumulate mode only; seeded from round 0 on the first completion. */
  buf: TokenBuffer | null;
  seeded: boolean;
}

/** What the manager observed, for the session invariants (invariants.ts). */
export interface SessionLog {
  /** Every session with its final state and round limit (Infinity = unlimited). */
  readonly sessions: ReadonlyMap<string, { readonly state: SessionState; readonly maxRounds: number; readonly thinkTimeUs: number }>;
  /** Tick at which each reported request of a session was seen terminal. */
  readonly doneTicks: ReadonlyMap<Request, number>;
  /** Delay (think time + tool latency) the manager put before each follow-up it generated. */
  readonly delays: ReadonlyMap<Request, number>;
  /** Every follow-up, in generation order. */
  readonly followUps: readonly Request[];
}

/** Outcomes that end a request before any instance served it (the reference never reports these). */
function lostAtGateway(req: Request): boolean {
  return req.outcome === 'rejected' || req.outcome === 'encode_rejected' || req.outcome.startsWith('gateway_');
}

/** A recorded round's own attributes, and the group prefix the session prepends (corrected closed-loop replay). */
function recordedAttributes(next: Request, rec: RecordedRound, bp: SessionBlueprint): void {
  next.sloTargetUs = rec.sloTargetUs;
  next.tenantId = rec.tenantId;
  next.sloClass = rec.sloClass;
  next.model = rec.model;
  next.clientId = rec.clientId;
  next.adapter = rec.adapter;
  next.streaming = rec.streaming;
  next.reasonRatio = rec.reasonRatio;
  withGroupPrefix(next, bp);
}

/** Names the group prefix the session prepends (the reference leaves follow-ups without group and length). */
function withGroupPrefix(next: Request, bp: SessionBlueprint): void {
  if (bp.prefix !== null && bp.prefix.length > 0 && bp.prefixGroup !== undefined && bp.prefixGroup !== '') {
    next.prefixGroup = bp.prefixGroup;
    next.prefixLength = bp.prefix.length;
  }
}

export class SessionManager {
  private readonly sessions = new Map<string, ActiveSession>();
  private idCounter = 0;
  private budget = -1;
  private followUpCount = 0;
  private readonly doneTicks = new Map<Request, number>();
  private readonly delays = new Map<Request, number>();
  private readonly created: Request[] = [];

  /** @throws RangeError for a limited session with fewer than one round. */
  constructor(blueprints: readonly SessionBlueprint[]) {
    for (const bp of blueprints) {
      if (bp.maxRounds < 1 && !bp.unlimitedRounds) throw new RangeError(`session ${bp.sessionId} has max_rounds ${bp.maxRounds}; it must be >= 1`);
      this.sessions.set(bp.sessionId, { bp, round: 0, state: 'active', buf: bp.contextGrowth === 'accumulate' ? new TokenBuffer() : null, seeded: false });
    }
  }

  /** Caps the follow-ups generated from now on (0 = none); without a call there is no cap. */
  setFollowUpBudget(budget: number): void {
    this.budget = Math.max(0, budget);
  }

  /** The current state of a session (undefined for unknown ids). */
  state(sessionId: string): SessionState | undefined {
    return this.sessions.get(sessionId)?.state;
  }

  /** {@link onComplete} bound to this manager, for the cluster's follow-up hook. */
  readonly hook = (req: Request, tick: number): Request[] => this.onComplete(req, tick);

  /** The follow-ups `req`'s end produces (none or one). Requests of no known session are ignored. */
  onComplete(req: Request, tick: number): Request[] {
    if (req.sessionId === '') return [];
    const s = this.sessions.get(req.sessionId);
    if (s === undefined) return [];
    if (!this.doneTicks.has(req)) this.doneTicks.set(req, tick);
    if (s.state !== 'active') return [];
    if (req.state === RequestState.TimedOut || req.state === RequestState.Queued || lostAtGateway(req)) {
      s.state = 'cancelled';
      return [];
    }
    const bp = s.bp;
    if (!bp.unlimitedRounds && s.round >= bp.maxRounds - 1) {
      s.state = 'completed';
      return [];
    }
    if (this.budget >= 0 && this.followUpCount >= this.budget) {
      s.state = 'budget_exhausted';
      return [];
    }
    let delay = bp.thinkTimeSampler === null ? bp.thinkTimeUs : bp.thinkTimeSampler.sample(bp.rng);
    if (bp.toolCall !== null) delay += bp.toolCall.latency.sample(bp.rng);
    const arrival = tick + delay;
    if (arrival > bp.horizon) {
      s.state = 'horizon_interrupted';
      return [];
    }
    const inLen = bp.inputSampler.sample(bp.rng);
    const outLen = bp.outputSampler.sample(bp.rng);
    const fresh = randomTokenIds(bp.rng, inLen);
    const output = randomTokenIds(bp.rng, outLen);
    const input = s.buf === null ? concatTokens(bp.prefix ?? new Int32Array(0), fresh) : this.accumulate(s, req, fresh);
    if (input === null) return [];
    s.round++;
    this.idCounter++;
    const rec = bp.recordedRounds?.[s.round - 1];
    const next = rec === undefined
      ? new Request(`session_${bp.sessionId}_round_${s.round}_${this.idCounter}`, input, output, arrival, output.length, computeDeadline(arrival, bp.timeout, true))
      : new Request(rec.id, input, output, arrival, output.length, rec.timeoutUs > 0 ? arrival + rec.timeoutUs : 0);
    next.sloTargetUs = bp.sloTargetUs;
    next.tenantId = bp.tenantId;
    next.sloClass = bp.sloClass;
    next.model = bp.model;
    next.clientId = bp.clientId;
    next.sessionId = bp.sessionId;
    next.roundIndex = s.round;
    next.adapter = bp.adapter;
    if (rec !== undefined) recordedAttributes(next, rec, bp);
    else if (bp.followUpTags !== undefined) {
      next.streaming = bp.followUpTags.streaming;
      next.reasonRatio = bp.followUpTags.reasonRatios[s.round] ?? bp.followUpTags.reasonRatios[0] ?? 0;
      withGroupPrefix(next, bp);
    }
    if (this.budget >= 0) this.followUpCount++;
    this.delays.set(next, delay);
    this.created.push(next);
    return [next];
  }

  /** Appends `req`'s actual output and the new input to the session buffer; null when the session had to be cancelled. */
  private accumulate(s: ActiveSession, req: Request, fresh: Int32Array): Int32Array | null {
    const buf = s.buf!;
    const prefix = s.bp.prefix ?? new Int32Array(0);
    if (!s.seeded) {
      if (prefix.length > 0) buf.append(prefix);
      // A round 0 shorter than the prefix (a malformed trace) counts wholly as conversation, as in the reference.
      buf.append(prefix.length <= req.inputLen ? req.inputTokens.subarray(prefix.length) : req.inputTokens);
      s.seeded = true;
    } else if (req.inputLen !== buf.length) {
      throw new Error(`SessionManager: session ${req.sessionId} round ${req.roundIndex} has ${req.inputLen} input tokens, but the session buffer holds ${buf.length}`);
    }
    const produced = Math.max(0, req.progressIndex - req.inputLen);
    if (produced > 0 && req.outputLen > 0) {
      // More output than the oracle has means the progress accounting drifted: stop the session, as the reference does.
      if (produced > req.outputLen) {
        s.state = 'cancelled';
        return null;
      }
      buf.append(produced < req.outputLen ? req.outputTokens.subarray(0, produced) : req.outputTokens);
    }
    return buf.head(buf.append(fresh));
  }

  /** Snapshot of what the manager observed (for {@link checkSessionCausality} / {@link checkSessionCompleteness}). */
  log(): SessionLog {
    const sessions = new Map<string, { state: SessionState; maxRounds: number; thinkTimeUs: number }>();
    for (const [id, s] of this.sessions) {
      sessions.set(id, { state: s.state, maxRounds: s.bp.unlimitedRounds ? Infinity : s.bp.maxRounds, thinkTimeUs: s.bp.thinkTimeUs });
    }
    return { sessions, doneTicks: this.doneTicks, delays: this.delays, followUps: this.created };
  }
}
