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
 * it, and its host goes on. On the main thread (`blis run`, `evaluate --workers 1`, the library) the same
 * reading fails the call instead, with `memory` naming the program, so the run ends with one error line rather
 * than V8's abort (exit 134). Where the line falls depends on when V8 last collected garbage, so the guard only
 * decides between that error and the crash that was coming anyway; a run that keeps its heap well below the
 * limit never meets it. Cost: an addition per call; a heap reading (about 0.6 µs) per 8 MiB charged.
 */
import { getHeapStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

export const HEAP_GUARD_STEP_BYTES = 8 * 1024 * 1024;

/** The exit code of a thread the guard ended (the pool reports it as EVAL_WORKER_DIED). */
export const HEAP_GUARD_EXIT_CODE = 87;

const inWorker = !isMainThread;
let charged = 0;

/** Whether a heap with `used` of `limit` bytes has room for the next calls of a program capped at `capBytes` per call. */
export function hasHeadroom(used: number, limit: number, capBytes: number): boolean {
  return used + HEAP_GUARD_STEP_BYTES + Math.min(2 * capBytes, limit / 4) <= limit;
}

/**
 * Records one call's charged bytes. When the heap has no room left for more: in a worker thread, ends the
 * thread; on the main thread, returns the reason (the caller fails the call with `memory`). Else null.
 */
export function noteCharged(bytes: number, capBytes: number): string | null {
  charged += bytes;
  if (charged < HEAP_GUARD_STEP_BYTES) return null;
  charged = 0;
  const h = getHeapStatistics();
  if (hasHeadroom(h.used_heap_size, h.heap_size_limit, capBytes)) return null;
  // process.exit in a worker thread stops that thread only; nothing after this line runs in it.
  if (inWorker) process.exit(HEAP_GUARD_EXIT_CODE);
  const mb = (n: number): string => `${Math.round(n / (1024 * 1024))} MB`;
  return `the process heap has no room left for this program's next calls (${mb(h.used_heap_size)} of ${mb(h.heap_size_limit)} used): it keeps what it allocates across calls; keep less between calls, or run it in the strict engine (engine: strict), whose heap is capped`;
}
