/** The session pool's bookkeeping by hand: who starts, when, with which deadline. */
import { describe, expect, it } from 'vitest';
import { buildClosedLoopReplay } from '../replay-closed-loop.js';
import { emptyTraceHeader, emptyTraceRecord } from '../tracev2-types.js';
import { SessionManager } from './manager.js';
import { SessionPool } from './pool.js';

describe('SessionPool', () => {
  // Three one-round sessions: A at 0 (no deadline), B at 500 µs with deadline 2,500, C at 900 µs.
  const records = [['A', 0, 0], ['B', 500, 2500], ['C', 900, 0]].map(([s, t, d], i) => ({ ...emptyTraceRecord(), requestId: i, sessionId: s as string, inputTokens: 8, outputTokens: 2, arrivalTimeUs: t as number, deadlineUs: d as number }));
  const fresh = (): { pool: SessionPool; r0: ReturnType<typeof buildClosedLoopReplay>['requests'] } => {
    const built = buildClosedLoopReplay({ header: emptyTraceHeader(), records }, 1n, null, 0);
    return { pool: new SessionPool(new SessionManager(built.sessions), built.requests, 1), r0: built.requests };
  };

  it('starts the first N, then one session per ended session at the end tick, its deadline moved with it', () => {
    const { pool, r0 } = fresh();
    expect(pool.initial().map((r) => r.id)).toEqual(['request_0']);
    // A ends at 5,000 µs (a request never served counts as cancelled: the session ends all the same).
    const next = pool.hook(r0[0]!, 5000);
    expect(next.map((r) => [r.id, r.arrivalTime, r.deadline])).toEqual([['request_1', 5000, 2500 + (5000 - 500)]]);
    // A second report of A's end admits nothing.
    expect(pool.hook(r0[0]!, 6000)).toEqual([]);
    expect(pool.hook(r0[1]!, 8000).map((r) => [r.id, r.arrivalTime, r.deadline])).toEqual([['request_2', 8000, 0]]);
    expect(pool.hook(r0[2]!, 9000)).toEqual([]);
    expect([pool.unstarted, pool.peakActive, pool.admitted.map((r) => r.id)]).toEqual([0, 1, ['request_1', 'request_2']]);
  });

  it('refuses a pool smaller than 1', () => {
    const built = buildClosedLoopReplay({ header: emptyTraceHeader(), records }, 1n, null, 0);
    expect(() => new SessionPool(new SessionManager(built.sessions), built.requests, 0)).toThrow(/session pool size must be >= 1, got 0/);
  });
});
