/** `blis queue status|clean`: what the queue holds, and clearing it. Bounded like every queue operation. */
import { Queue } from 'bullmq';
import { BlisError } from '../domain/errors.js';
import { closeWithin, connectionOptions, DeadlineError, QUEUE_UNAVAILABLE, RedisHealth, tlsHint, withDeadline, type QueueTarget, type TlsFiles } from './connection.js';

export const CLEANABLE = ['waiting', 'delayed', 'completed', 'failed'] as const;
export type CleanableState = (typeof CLEANABLE)[number];

export interface QueueStatus {
  readonly queue: string;
  readonly redis: string;
  readonly counts: Readonly<Record<string, number>>;
  /** Workers connected now, by name (host:pid). */
  readonly workers: readonly string[];
}

async function withQueue<T>(target: QueueTarget, tls: TlsFiles, name: string, timeoutMs: number, fn: (q: Queue) => Promise<T>): Promise<T> {
  const control = { stopped: false };
  const q = new Queue(name, { connection: connectionOptions(target, tls, control) });
  const health = new RedisHealth(target);
  q.on('error', (e: Error) => health.down(e.message));
  try {
    return await withDeadline(fn(q), timeoutMs, 'queue');
  } catch (e) {
    if (e instanceof BlisError) throw e;
    health.down(e instanceof DeadlineError ? '' : (e as Error).message);
    throw health.refused() ?? new BlisError(QUEUE_UNAVAILABLE, `cannot reach Redis at ${target.display} within ${Math.round(timeoutMs / 1000)} s (${health.error || (e as Error).message})${tlsHint(health.error)}; start it or check --queue`);
  } finally {
    control.stopped = true;
    await closeWithin(() => q.close(), 3000);
  }
}

/** A worker's name (host:pid) from its Redis client name (`bull:<queue>:w:<name>`), else its address. */
function workerName(w: Record<string, string | undefined>): string {
  const raw = w['rawname'] ?? '';
  const i = raw.indexOf(':w:');
  return i >= 0 ? raw.slice(i + 3) : (w['addr'] ?? '?');
}

export function queueStatus(target: QueueTarget, tls: TlsFiles, name: string, timeoutMs: number): Promise<QueueStatus> {
  return withQueue(target, tls, name, timeoutMs, async (q) => {
    const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    const workers = (await q.getWorkers()).map((w) => workerName(w as Record<string, string | undefined>)).sort();
    return { queue: name, redis: target.display, counts, workers };
  });
}

/** Removes the jobs in `states` (active jobs are left to finish on their workers). */
export function queueClean(target: QueueTarget, tls: TlsFiles, name: string, timeoutMs: number, states: readonly CleanableState[]): Promise<{ queue: string; redis: string; removed: Record<string, number>; active_left: number }> {
  return withQueue(target, tls, name, timeoutMs, async (q) => {
    const removed: Record<string, number> = {};
    for (const s of states) {
      let n = 0;
      // In batches, so a huge queue does not block Redis in one script.
      for (;;) {
        const ids = await q.clean(0, 1000, s === 'waiting' ? 'wait' : s);
        n += ids.length;
        if (ids.length < 1000) break;
      }
      if (s === 'waiting') {
        for (;;) {
          const ids = await q.clean(0, 1000, 'prioritized');
          n += ids.length;
          if (ids.length < 1000) break;
        }
      }
      removed[s] = n;
    }
    const active = (await q.getJobCounts('active'))['active'] ?? 0;
    return { queue: name, redis: target.display, removed, active_left: active };
  });
}
