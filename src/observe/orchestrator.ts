/**
 * Dispatching a workload to a server on the wall clock. Open loop: each request leaves at its arrival time
 * (µs since start), subject to the `--max-concurrency` bound. Closed loop: N virtual users each send their next
 * request when the previous one ends, after the think time. Every dispatched request yields one
 * {@link ObservedRequest}; a stop (Ctrl-C) ends dispatching and aborts what is in flight, which is then
 * recorded as an error.
 */
import type { Request } from '../domain/request.js';
import { sendRequest, type ClientConfig, type PendingRequest, type RequestStatus, type SendResult } from './client.js';

export interface ObservePlan {
  readonly requests: readonly Request[];
  readonly closedLoop: { readonly users: number; readonly thinkTimeUs: number } | null;
  readonly maxConcurrency: number;
  /** Closed loop: no new request after this many µs (0 = no limit). */
  readonly horizonUs: number;
  readonly toPending: (req: Request) => PendingRequest;
}

export interface ObservedRequest {
  /** Dispatch index (the trace's request_id). */
  readonly index: number;
  readonly req: Request;
  readonly pending: PendingRequest;
  /** Planned arrival (open loop) or dispatch decision time (closed loop), µs since start. */
  readonly arrivalTimeUs: number;
  readonly result: SendResult;
}

export type StatusCounts = Record<RequestStatus, number>;

export interface ObserveHooks {
  /** After each request ends (progress display). */
  readonly onDone?: (o: ObservedRequest, counts: Readonly<StatusCounts>) => void;
  /** Replaces the HTTP client (tests). */
  readonly send?: (p: PendingRequest, cfg: ClientConfig) => Promise<SendResult>;
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

export async function runObservation(plan: ObservePlan, cfg: ClientConfig, hooks: ObserveHooks = {}): Promise<ObservedRequest[]> {
  const send = hooks.send ?? sendRequest;
  const stop = cfg.stop;
  const slots = new Slots(Math.max(1, plan.maxConcurrency), stop);
  const out: ObservedRequest[] = [];
  const counts: StatusCounts = { ok: 0, error: 0, timeout: 0 };
  let dispatched = 0;

  const dispatch = async (req: Request, arrivalTimeUs: number): Promise<void> => {
    const index = dispatched++;
    const pending = plan.toPending(req);
    let result: SendResult;
    try {
      result = await send(pending, cfg);
    } catch (e) {
      // The client never throws; this keeps a bug there from losing a request.
      result = { status: 'error', errorMessage: `client failure: ${(e as Error).message}`, xRequestId: '', sendTimeUs: 0, firstChunkTimeUs: 0, lastChunkTimeUs: 0, numChunks: 0, finishReason: '', outputTokens: 0, serverInputTokens: 0, chunkTimes: [] };
    }
    const o: ObservedRequest = { index, req, pending, arrivalTimeUs, result };
    out.push(o);
    counts[result.status]++;
    hooks.onDone?.(o, counts);
  };

  const inFlight = new Set<Promise<void>>();
  const track = (p: Promise<void>): void => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  if (plan.closedLoop === null) {
    for (const req of plan.requests) {
      await sleepUntil(req.arrivalTime, cfg.clock, stop);
      if (stop.aborted || !(await slots.acquire(stop))) break;
      track(dispatch(req, req.arrivalTime).finally(() => slots.release()));
    }
  } else {
    const { users, thinkTimeUs } = plan.closedLoop;
    let next = 0;
    const user = async (): Promise<void> => {
      while (!stop.aborted) {
        const req = plan.requests[next];
        if (req === undefined) return;
        if (plan.horizonUs > 0 && cfg.clock() > plan.horizonUs) return;
        next++;
        if (!(await slots.acquire(stop))) return;
        try {
          await dispatch(req, cfg.clock());
        } finally {
          slots.release();
        }
        await sleepUs(thinkTimeUs, stop);
      }
    };
    for (let i = 0; i < users; i++) track(user());
  }
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  out.sort((a, b) => a.index - b.index);
  return out;
}
