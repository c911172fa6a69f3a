/**
 * The requests a `blis replay` injects: one per trace row (`--session-mode fixed`), or round 0 of each session
 * plus the rows outside sessions, with a SessionManager regenerating later rounds (`closed-loop`). The flag
 * checks are the reference's (cmd/replay.go), made before anything is simulated. Past the pinned reference
 * (upstream #1696, #1486): `fixed-accumulate` (every row at its recorded time, prompts accumulated) and
 * `--concurrent-sessions N` (closed loop through a pool of N sessions).
 */
import type { Request } from '../domain/request.js';
import { buildClosedLoopReplay, closedLoopFollowUpHorizon } from '../workload/replay-closed-loop.js';
import { buildReplayRequests, recordedReplayHorizon } from '../workload/replay.js';
import { SessionManager } from '../workload/sessions/manager.js';
import { SessionPool } from '../workload/sessions/pool.js';
import { buildFixedAccumulateReplay } from '../workload/replay-fixed-accumulate.js';
import { expandSessionCorpus } from '../workload/replay-session-corpus.js';
import type { LengthSampler } from '../workload/spec/length.js';
import { parseThinkTimeDist } from '../workload/think-time.js';
import type { TraceV2 } from '../workload/tracev2-types.js';
import { ConfigError } from './config-error.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';
import { horizonFlag, semanticsFlag } from './resolve-engine.js';

export interface ReplayWorkload {
  readonly requests: Request[];
  /** Closed loop with at least one session; null otherwise. */
  readonly sessions: SessionManager | null;
  /** `--concurrent-sessions`: the pool whose hook drives the run (its initial sessions are in `requests`); null otherwise. */
  readonly pool: SessionPool | null;
}

/** `--concurrent-sessions` (0 = off), checked against `--session-mode`. */
export function poolSize(f: FlagValues): number {
  const n = f.int('concurrent-sessions');
  if (n < 0) throw new ConfigError('bad-flag', `--concurrent-sessions must be >= 0 (0 = no pool), got ${n}`);
  if (n > 0 && f.changed('session-mode') && f.str('session-mode') !== 'closed-loop') {
    // The pool starts sessions when others end: it needs sessions whose later rounds follow their ends.
    throw new ConfigError('bad-flag', `--concurrent-sessions starts each session when another ends, so it needs --session-mode closed-loop (the mode it implies), got --session-mode ${f.str('session-mode')}`);
  }
  if (n > 0 && f.str('trace-output') !== '') throw new ConfigError('bad-flag', '--trace-output cannot record a --concurrent-sessions replay (the pool moves sessions off their recorded times); export without the pool');
  return n;
}

/** `--think-time-dist` / `--think-time-ms` as a sampler (null = think times from the trace). */
function thinkTimeSampler(f: FlagValues, closedLoop: boolean): LengthSampler | null {
  const ms = f.int('think-time-ms');
  if (ms < 0) throw new ConfigError('bad-flag', `--think-time-ms must be non-negative, got ${ms}`);
  if (ms > 0 && !closedLoop) throw new ConfigError('bad-flag', '--think-time-ms requires --session-mode closed-loop');
  const dist = f.str('think-time-dist');
  if (dist !== '' && !closedLoop) throw new ConfigError('bad-flag', '--think-time-dist requires --session-mode closed-loop');
  if (f.changed('think-time-ms') && f.changed('think-time-dist')) throw new ConfigError('bad-flag', '--think-time-ms and --think-time-dist are mutually exclusive; give one');
  if (f.changed('think-time-dist')) return parseThinkTimeDist(dist);
  return ms > 0 ? parseThinkTimeDist(`constant:value=${ms}ms`, '--think-time-ms') : null;
}

export function buildReplayWorkload(f: FlagValues, env: SimEnv, trace: TraceV2, seed: bigint, dataPath: string): ReplayWorkload {
  const pool = poolSize(f);
  totalSessions(f, pool);
  const mode = pool > 0 ? 'closed-loop' : f.str('session-mode');
  if (mode !== 'fixed' && mode !== 'closed-loop' && mode !== 'fixed-accumulate') throw new ConfigError('bad-flag', `--session-mode must be "fixed", "closed-loop" or "fixed-accumulate", got "${mode}"`);
  const think = thinkTimeSampler(f, mode === 'closed-loop');
  if (mode === 'fixed') return { requests: buildReplayRequests(trace.records, seed, dataPath, semanticsFlag(f) === 'corrected'), sessions: null, pool: null };
  if (mode === 'fixed-accumulate') return { requests: buildFixedAccumulateReplay(trace, seed, dataPath), sessions: null, pool: null };
  const corrected = semanticsFlag(f) === 'corrected';
  // A pool runs until every session has ended: no follow-up bound unless --horizon gives one.
  const followUpHorizon = f.changed('horizon') ? horizonFlag(f) : pool > 0 ? 0 : corrected ? recordedReplayHorizon(trace.records) : closedLoopFollowUpHorizon(trace.records);
  const built = buildClosedLoopReplay(trace, seed, think, followUpHorizon, dataPath, corrected);
  if (built.sessions.length === 0) {
    env.warn(`${pool > 0 ? '--concurrent-sessions' : '--session-mode closed-loop'}: no session records found in the trace; every request is injected at its recorded time`);
    return { requests: built.requests, sessions: null, pool: null };
  }
  if (pool === 0) return { requests: built.requests, sessions: new SessionManager(built.sessions), pool: null };
  // buildClosedLoopReplay lists one round 0 per session first, then the rows outside sessions.
  const n = built.sessions.length;
  const total = f.int('total-sessions');
  const corpus = total > 0 ? expandSessionCorpus(built.sessions, built.requests.slice(0, n), total, seed) : { blueprints: built.sessions, roundZeros: built.requests.slice(0, n) };
  const sessions = new SessionManager(corpus.blueprints);
  const p = new SessionPool(sessions, corpus.roundZeros, pool);
  return { requests: [...p.initial(), ...built.requests.slice(n)], sessions, pool: p };
}

/** `--total-sessions` (0 = the corpus once): only with a pool, and at least its size. */
function totalSessions(f: FlagValues, pool: number): void {
  const total = f.int('total-sessions');
  if (total < 0) throw new ConfigError('bad-flag', `--total-sessions must be >= 0 (0 = every session of the trace once), got ${total}`);
  if (total > 0 && pool === 0) throw new ConfigError('bad-flag', '--total-sessions sizes a session pool; give --concurrent-sessions too');
  if (total > 0 && total < pool) throw new ConfigError('bad-flag', `--total-sessions ${total} is below --concurrent-sessions ${pool}; a pool cannot hold more sessions than it replays`);
}
