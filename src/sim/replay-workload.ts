/**
 * The requests a `blis replay` injects: one per trace row (`--session-mode fixed`), or round 0 of each session
 * plus the rows outside sessions, with a SessionManager regenerating later rounds (`closed-loop`). The flag
 * checks are the reference's (cmd/replay.go), made before anything is simulated.
 */
import type { Request } from '../domain/request.js';
import { buildClosedLoopReplay, closedLoopFollowUpHorizon } from '../workload/replay-closed-loop.js';
import { buildReplayRequests, recordedReplayHorizon } from '../workload/replay.js';
import { SessionManager } from '../workload/sessions/manager.js';
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
  const mode = f.str('session-mode');
  if (mode !== 'fixed' && mode !== 'closed-loop') throw new ConfigError('bad-flag', `--session-mode must be "fixed" or "closed-loop", got "${mode}"`);
  const think = thinkTimeSampler(f, mode === 'closed-loop');
  if (mode === 'fixed') return { requests: buildReplayRequests(trace.records, seed, dataPath, semanticsFlag(f) === 'corrected'), sessions: null };
  const corrected = semanticsFlag(f) === 'corrected';
  const followUpHorizon = f.changed('horizon') ? horizonFlag(f) : corrected ? recordedReplayHorizon(trace.records) : closedLoopFollowUpHorizon(trace.records);
  const built = buildClosedLoopReplay(trace, seed, think, followUpHorizon, dataPath, corrected);
  if (built.sessions.length === 0) {
    env.warn('--session-mode closed-loop: no session records found in the trace; every request is injected at its recorded time');
    return { requests: built.requests, sessions: null };
  }
  return { requests: built.requests, sessions: new SessionManager(built.sessions) };
}
