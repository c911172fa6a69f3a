/**
 * Headroom for fast-engine code in a worker thread with a heap limit (the evaluation and sweep pools, `blis
 * worker`'s job threads). Node ends such a thread cleanly when it reaches its limit through many small
 * allocations, but one large allocation near the limit (a few-megabyte array, say) aborts the whole process
 * instead ("FATAL ERROR: Reached heap limit", exit 134: nodejs/node#47224). A fast-engine program that keeps
 * what it allocates across calls (the per-call memory account does not see it) gets there: it took down
 * `sweep --workers 2` and the queue worker in the poison-job fuzz suite (test/fuzz/poison-jobs.fuzz.test.ts).
 *
 * So the fast engine reports the bytes each call charged to its memory account here; every
 * {@link HEAP_GUARD_STEP_BYTES} charged in a worker thread, the thread's heap is measured, and when what is left
 * could not hold the next calls' allocations (one step plus twice the per-call cap, at most a quarter of the
 * heap) the thread exits at once — the pool records `EVAL_WORKER_DIED`, exactly as if the heap limit had ended
 * it, and its host goes on. The main thread is not guarded (a process that runs out there dies either way, and
 * its results must not depend on when a garbage collection ran). Cost: an addition per call; a heap reading
 * (about 0.6 µs) per 8 MiB charged.
 */
import { getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

export const HEAP_GUARD_STEP_BYTES = 8 * 1024 * 1024;

/** The exit code of a thread the guard ended (the pool reports it as EVAL_WORKER_DIED). */
export const HEAP_GUARD_EXIT_CODE = 87;

const guarded = !isMainThread;
let charged = 0;

/** Whether a heap with `used` of `limit` bytes has room for the next calls of a program capped at `capBytes` per call. */
export function hasHeadroom(used: number, limit: number, capBytes: number): boolean {
  return used + HEAP_GUARD_STEP_BYTES + Math.min(2 * capBytes, limit / 4) <= limit;
}

/** Records one call's charged bytes; ends this worker thread when its heap has no room left for more. */
export function noteCharged(bytes: number, capBytes: number): void {
  if (!guarded) return;
  charged += bytes;
  if (charged < HEAP_GUARD_STEP_BYTES) return;
  charged = 0;
  const h = getHeapStatistics();
  if (hasHeadroom(h.used_heap_size, h.heap_size_limit, capBytes)) return;
  // process.exit in a worker thread stops that thread only; nothing after this line runs in it.
  process.exit(HEAP_GUARD_EXIT_CODE);
}
