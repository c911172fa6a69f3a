/**
 * Dispatching a workload to a server on the wall clock: each request leaves at its arrival time (µs since
 * start), at most `--max-concurrency` at once. Closed-loop sessions (multi-turn clients, `--concurrency` users)
 * continue through the session manager: when a round's response ends, its follow-up is due after the think
 * time and is merged with the pre-generated requests by arrival. Every dispatched request yields one
 * {@link ObservedRequest}; a stop (Ctrl-C) ends dispatching and aborts what is in flight, which is then
 * recorded as an error.
 */
import { Request, RequestState } from '../domain/request.js';
import type { SessionManager } from '../workload/sessions/manager.js';
import { sendRequest, type ClientConfig, type PendingRequest, type RequestStatus, type SendResult } from './client.js';

export interface ObservePlan {
  /** Pre-generated requests by arrival (for closed-loop sessions, their round 0). */
  readonly requests: readonly Request[];
  /** Continues closed-loop sessions (and `--concurrency` users) as their rounds end; null when none. */
  readonly sessions: SessionManager | null;
  readonly maxConcurrency: number;
  readonly toPending: (req: Request) => PendingRequest;
}

export interface ObservedRequest {
  /** Dispatch index (the trace's request_id). */
  readonly index: number;
  readonly req: Request;
  readonly pending: PendingRequest;
  /** Planned arrival, µs since start (a follow-up's: the previous round's end plus the think time). */
  readonly arrivalTimeUs: number;
  readonly result: SendResult;
}

export type StatusCounts = Record<RequestStatus, number>;

export interface ObserveHooks {
  /** After each request ends (progress display). */
  readonly onDone?: (o: ObservedRequest, counts: Readonly<StatusCounts>) => void;
  /** Replaces the HTTP client (tests). */
  readonly send?: (p: PendingRequest, cfg: ClientConfig, arrivalUs?: number) => Promise<SendResult>;
}

/** Resolves after `us` µs, or at once when `stop` fires. */
export function sleepUs(us: number, stop: AbortSignal): Promise<void> {
  if (us <= 0 || stop.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      stop.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, Math.max(1, Math.floor(us / 1000)));
    stop.addEventListener('abort', done, { once: true });
  });
}

/**
 * Resolves once `clock()` reaches `targetUs` (or at once when `stop` fires). Timers can fire early against
 * the monotonic clock and late by a millisecond, so it sleeps to just short of the target and then polls.
 */
export async function sleepUntil(targetUs: number, clock: () => number, stop: AbortSignal): Promise<void> {
  for (;;) {
    const rem = targetUs - clock();
    if (rem <= 0 || stop.aborted) return;
    if (rem > 2000) await sleepUs(rem - 1000, stop);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A counting semaphore whose waiters are released (with `false`) when `stop` fires. */
class Slots {
  private free: number;
  private readonly waiting: ((ok: boolean) => void)[] = [];

  constructor(n: number, stop: AbortSignal) {
    this.free = n;
    stop.addEventListener('abort', () => {
      for (const w of this.waiting.splice(0)) w(false);
    }, { once: true });
  }

  acquire(stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const w = this.waiting.shift();
    if (w !== undefined) w(true);
    else this.free++;
  }
}

/** Wakes sleepers when a session follow-up is queued (it may be due before what they are waiting for). */
class Bell {
  private current: Promise<void>;
  private ringer: () => void = () => undefined;

  constructor() {
    this.current = this.fresh();
  }

  private fresh(): Promise<void> {
    return new Promise((resolve) => {
      this.ringer = resolve;
    });
  }

  /** Resolves at the next ring. */
  next(): Promise<void> {
    return this.current;
  }

  ring(): void {
    this.ringer();
    this.current = this.fresh();
  }
}

/** Sleeps until `targetUs`; true when the bell rang first. */
async function sleepOrRing(targetUs: number, clock: () => number, stop: AbortSignal, bell: Bell): Promise<boolean> {
  let rang = false;
  const ring = bell.next().then(() => {
    rang = true;
  });
  for (;;) {
    const rem = targetUs - clock();
    if (rang) return true;
    if (rem <= 0 || stop.aborted) return false;
    if (rem <= 2000) {
      await Promise.race([ring, new Promise<void>((resolve) => setImmediate(resolve))]);
      continue;
    }
    // The timer is cancelled when the bell wins, so no stray timer keeps the process alive.
    const cancel = new AbortController();
    await Promise.race([ring, sleepUs(rem - 1000, AbortSignal.any([stop, cancel.signal]))]);
    cancel.abort();
  }
}

/**
 * What the session manager needs from a finished HTTP request: its state (ok = completed, anything else ends
 * the session) and the output actually produced, which accumulate-mode sessions append to the conversation.
 */
export function adaptForSessions(req: Request, r: SendResult): Request {
  const produced = Math.max(0, r.outputTokens);
  const out = new Int32Array(produced);
  out.set(req.outputTokens.subarray(0, Math.min(produced, req.outputLen)));
  for (let i = req.outputLen; i < produced; i++) out[i] = i + 1;
  const a = new Request(req.id, req.inputTokens, out, req.arrivalTime, req.maxOutputLen, req.deadline);
  req.ownsTokens = false; // the copy holds its prompt array: never given back for reuse
  a.sessionId = req.sessionId;
  a.roundIndex = req.roundIndex;
  a.state = r.status === 'ok' ? RequestState.Completed : RequestState.TimedOut;
  a.progressIndex = req.inputLen + produced;
  return a;
}

export async function runObservation(plan: ObservePlan, cfg: ClientConfig, hooks: ObserveHooks = {}): Promise<ObservedRequest[]> {
  const send = hooks.send ?? sendRequest;
  const stop = cfg.stop;
  const slots = new Slots(Math.max(1, plan.maxConcurrency), stop);
  const out: ObservedRequest[] = [];
  const counts: StatusCounts = { ok: 0, error: 0, timeout: 0 };
  const sessions = plan.sessions;
  const bell = new Bell();
  /** Session follow-ups not yet dispatched, by arrival (equal arrivals in generation order). */
  const followUps: Request[] = [];
  let sessionRequestsInFlight = 0;
  let dispatched = 0;

  const dispatch = async (req: Request): Promise<void> => {
    const index = dispatched++;
    const pending = plan.toPending(req);
    let result: SendResult;
    try {
      result = await send(pending, cfg, req.arrivalTime);
    } catch (e) {
      // The client never throws; this keeps a bug there from losing a request.
      result = { status: 'error', errorMessage: `client failure: ${(e as Error).message}`, xRequestId: '', sendTimeUs: 0, firstChunkTimeUs: 0, lastChunkTimeUs: 0, numChunks: 0, finishReason: '', outputTokens: 0, serverInputTokens: 0, chunkTimes: [] };
    }
    const o: ObservedRequest = { index, req, pending, arrivalTimeUs: req.arrivalTime, result };
    out.push(o);
    counts[result.status]++;
    hooks.onDone?.(o, counts);
    if (sessions !== null && req.sessionId !== '') {
      // The follow-up clock is observe's: µs since the start, when this response ended.
      for (const f of sessions.onComplete(adaptForSessions(req, result), cfg.clock())) {
        let i = followUps.length;
        while (i > 0 && (followUps[i - 1] as Request).arrivalTime > f.arrivalTime) i--;
        followUps.splice(i, 0, f);
      }
      sessionRequestsInFlight--;
      bell.ring();
    }
  };

  const inFlight = new Set<Promise<void>>();
  const track = (p: Promise<void>): void => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const stopped = new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    else stop.addEventListener('abort', () => resolve(), { once: true });
  });
  let next = 0;
  while (!stop.aborted) {
    const pre = plan.requests[next];
    const fu = followUps[0];
    // Ties go to the follow-up, as in the reference's merge.
    const req = fu !== undefined && (pre === undefined || fu.arrivalTime <= pre.arrivalTime) ? fu : pre;
    if (req === undefined) {
      if (sessionRequestsInFlight === 0) break;
      await Promise.race([bell.next(), stopped]);
      continue;
    }
    const sendAt = req.arrivalTime - (cfg.leadUs ?? 0);
    if (sessions === null) await sleepUntil(sendAt, cfg.clock, stop);
    else if (await sleepOrRing(sendAt, cfg.clock, stop, bell)) continue;
    if (stop.aborted || !(await slots.acquire(stop))) break;
    if (req === fu) followUps.shift();
    else next++;
    if (sessions !== null && req.sessionId !== '') sessionRequestsInFlight++;
    track(dispatch(req).finally(() => slots.release()));
  }
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  out.sort((a, b) => a.index - b.index);
  return out;
}
