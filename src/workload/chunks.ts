/**
 * A workload source read a chunk at a time, where a chunk may still be coming (threaded-stream.ts generates
 * on a worker thread); the streaming engine driver (sim/engine-setup.ts) reads every workload this way.
 */
import type { Request } from '../domain/request.js';

/** Below this many requests a workload thread's start-up (tens of ms) costs more than it saves. */
export const THREADED_MIN_REQUESTS = 4096;

/**
 * Requests in arrival order, a chunk at a time; a chunk may come later (a promise). The consumer calls
 * {@link close} when it stops, at the end or not.
 */
export interface RequestChunks {
  /** The next requests (at least one), or null when there are no more. */
  next(): readonly Request[] | null | Promise<readonly Request[] | null>;
  close(): void;
}

/** Requests from an iterator, `size` at a time, synchronously. */
export function iterableChunks(source: Iterable<Request>, size = 256): RequestChunks {
  const it = source[Symbol.iterator]();
  return {
    next(): readonly Request[] | null {
      const out: Request[] = [];
      while (out.length < size) {
        const r = it.next();
        if (r.done === true) break;
        out.push(r.value);
      }
      return out.length > 0 ? out : null;
    },
    close(): void {
      it.return?.();
    },
  };
}
