/**
 * Session invariants, checked after a run over the session requests and the SessionManager's log:
 *
 * - INV-10 (session causality): round N+1 of a closed-loop session arrives no earlier than round N's completion
 *   tick plus the delay the manager applied (the think time; plus the tool latency for agentic sessions). With
 *   think time 0 the bound is an equality.
 * - INV-11 (session completeness): every session either ended in exactly one terminal state consistent with its
 *   rounds, or is still active only because its last round has not finished (in flight, queued, or beyond the
 *   horizon) — no round lost, none skipped, no session abandoned after a terminal round.
 *
 * Pure functions: pass every request of the run that belongs to a session — the initial requests plus
 * `log.followUps` — after the simulation has finished.
 */
import type { Request } from '../../domain/request.js';
import type { SessionLog } from './manager.js';

export interface SessionViolation {
  readonly invariant: 'INV-10' | 'INV-11';
  readonly sessionId: string;
  readonly message: string;
}

/** The known sessions' requests, each list sorted by round index. */
function roundsBySession(requests: readonly Request[], log: SessionLog): Map<string, Request[]> {
  const out = new Map<string, Request[]>();
  for (const r of requests) {
    if (r.sessionId === '' || !log.sessions.has(r.sessionId)) continue;
    const list = out.get(r.sessionId);
    if (list === undefined) out.set(r.sessionId, [r]);
    else list.push(r);
  }
  for (const list of out.values()) list.sort((a, b) => a.roundIndex - b.roundIndex);
  return out;
}

/** INV-10 over every consecutive pair of rounds. */
export function checkSessionCausality(requests: readonly Request[], log: SessionLog): SessionViolation[] {
  const out: SessionViolation[] = [];
  const bad = (sessionId: string, message: string): void => void out.push({ invariant: 'INV-10', sessionId, message });
  for (const [id, rounds] of roundsBySession(requests, log)) {
    const think = log.sessions.get(id)!.thinkTimeUs;
    for (let i = 1; i < rounds.length; i++) {
      const prev = rounds[i - 1]!;
      const next = rounds[i]!;
      const done = log.doneTicks.get(prev);
      if (done === undefined) {
        bad(id, `round ${next.roundIndex} (${next.id}) exists but round ${prev.roundIndex} (${prev.id}) never finished`);
        continue;
      }
      if (done < prev.arrivalTime) bad(id, `round ${prev.roundIndex} (${prev.id}) finished at ${done}, before its arrival ${prev.arrivalTime}`);
      const delay = log.delays.get(next) ?? think;
      if (next.arrivalTime < done + delay) {
        bad(id, `round ${next.roundIndex} (${next.id}) arrives at ${next.arrivalTime} < completion ${done} of round ${prev.roundIndex} + delay ${delay}`);
      }
    }
  }
  return out;
}

/** INV-11 for every session of the log. */
export function checkSessionCompleteness(requests: readonly Request[], log: SessionLog): SessionViolation[] {
  const out: SessionViolation[] = [];
  const bad = (sessionId: string, message: string): void => void out.push({ invariant: 'INV-11', sessionId, message });
  const grouped = roundsBySession(requests, log);
  for (const [id, info] of log.sessions) {
    const rounds = grouped.get(id) ?? [];
    if (rounds.length === 0) {
      bad(id, 'no request of this session was given (pass the initial requests plus log.followUps)');
      continue;
    }
    let contiguous = true;
    rounds.forEach((r, i) => {
      if (r.roundIndex !== i) contiguous = false;
    });
    if (!contiguous) bad(id, `rounds are not 0..${rounds.length - 1}: ${rounds.map((r) => r.roundIndex).join(',')}`);
    if (rounds.length > info.maxRounds) bad(id, `${rounds.length} rounds exceed max_rounds ${info.maxRounds}`);
    // Only a completed round may have a successor.
    for (const r of rounds.slice(0, -1)) {
      if (r.outcome !== 'completed') bad(id, `round ${r.roundIndex} (${r.id}) ended '${r.outcome || 'in flight'}' yet has a next round`);
    }
    const last = rounds[rounds.length - 1]!;
    const ended = last.outcome;
    switch (info.state) {
      case 'active':
        if (ended !== '') bad(id, `still active although its last round ${last.roundIndex} (${last.id}) ended '${ended}': a round was lost`);
        break;
      case 'completed':
        if (ended !== 'completed' || rounds.length !== info.maxRounds) {
          bad(id, `completed with ${rounds.length}/${info.maxRounds} rounds, the last one '${ended || 'in flight'}'`);
        }
        break;
      case 'cancelled':
        if (ended === '') bad(id, `cancelled while its last round ${last.roundIndex} (${last.id}) is still in flight`);
        break;
      case 'horizon_interrupted':
      case 'budget_exhausted':
        if (ended !== 'completed') bad(id, `${info.state} but its last round ${last.roundIndex} (${last.id}) ended '${ended || 'in flight'}'`);
        break;
    }
  }
  return out;
}
