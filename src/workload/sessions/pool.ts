/**
 * A session pool (`blis replay --concurrent-sessions N`, upstream PR #1486's SessionPoolDriver, after
 * inference-perf's `concurrent_sessions` load): at most N sessions in flight. The first N sessions (trace order)
 * start at their recorded round-0 times; whenever a session ends — completed, cancelled, out of budget or past
 * the horizon — the next queued session's round 0 is injected at that tick (its deadline moved with it, so the
 * recorded deadline-after-arrival is kept). Rounds within a session follow as in closed-loop replay.
 */
import type { Request } from '../../domain/request.js';
import type { SessionManager } from './manager.js';

export class SessionPool {
  private next: number;
  private active = 0;
  private peak = 0;
  /** Round-0 requests admitted after the start, in admission order. */
  readonly admitted: Request[] = [];

  /**
   * @param roundZeros every session's round-0 request, in admission order.
   * @throws RangeError for a pool size below 1.
   */
  constructor(
    private readonly mgr: SessionManager,
    private readonly roundZeros: readonly Request[],
    readonly size: number,
  ) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`session pool size must be >= 1, got ${size}`);
    this.next = Math.min(size, roundZeros.length);
    this.active = this.next;
    this.peak = this.active;
  }

  /** The round-0 requests injected at the start: the first `size` sessions. */
  initial(): Request[] {
    return this.roundZeros.slice(0, this.next);
  }

  /** Sessions never started (a --horizon cut the run short, or a session never ended). */
  get unstarted(): number {
    return this.roundZeros.length - this.next;
  }

  /** Most sessions in flight at once (never above {@link size}). */
  get peakActive(): number {
    return this.peak;
  }

  /** The manager's follow-up hook, refilling the pool when a session ends. */
  readonly hook = (req: Request, tick: number): Request[] => {
    const was = req.sessionId === '' ? undefined : this.mgr.state(req.sessionId);
    const follow = this.mgr.onComplete(req, tick);
    if (was !== 'active' || this.mgr.state(req.sessionId) === 'active') return follow;
    this.active--;
    if (this.next >= this.roundZeros.length) return follow;
    const r0 = this.roundZeros[this.next++]!;
    if (r0.deadline > 0) r0.deadline += tick - r0.arrivalTime;
    r0.arrivalTime = tick;
    this.admitted.push(r0);
    this.active++;
    if (this.active > this.peak) this.peak = this.active;
    return [...follow, r0];
  };
}
