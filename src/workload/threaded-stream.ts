/**
 * The distribution workload generated on a second thread. Generating a long run's token ids and hashing its
 * prompts is a fifth of a single-instance run's time; a worker thread (stream-worker.ts) does it while this
 * thread simulates. The first requests are generated here (the simulation starts at once, while the worker
 * boots); the worker replays them, drops them, and posts the rest in packed chunks, from which this side only
 * rebuilds the Request objects. Both run the same generator (distribution.ts), so the requests — and every
 * output — are the same as {@link distributionWorkloadStream}'s in one thread.
 *
 * A worker that cannot start or fails part-way changes nothing but speed: this thread then generates the rest
 * itself, replaying the stream up to where the worker stopped.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SharedPrefix } from '../domain/block-hash.js';
import { Request } from '../domain/request.js';
import { DISTRIBUTION_CLIENT_ID, SHARED_PREFIX_GROUP, distributionWorkloadStream, type DistributionWorkloadOptions } from './distribution.js';
import type { PackedChunk, StreamWorkerData, StreamWorkerMessage } from './stream-worker.js';
import { iterableChunks, type RequestChunks } from './chunks.js';

/** Requests generated on this thread before the worker's (they cover its start-up). */
export const HEAD = 1024;
/** Requests per chunk the worker posts. */
const CHUNK = 256;

/** dist/workload/stream-worker.js: this code may sit in any bundle chunk under dist/, or in src/ under tests. */
function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return here.replace(/\/src\/workload\/threaded-stream\.ts$/, '/dist/workload/stream-worker.js');
  return `${here.slice(0, here.lastIndexOf('/dist/') + '/dist/'.length)}workload/stream-worker.js`;
}

export class ThreadedDistributionStream implements RequestChunks {
  /** Requests handed out so far (the next one's index). */
  private index = 0;
  private readonly head: Request[] = [];
  /** The whole workload fits in {@link head}: no worker is needed. */
  private readonly headOnly: boolean;
  private readonly shared: SharedPrefix | null;
  private worker: Worker | null = null;
  /** Chunks taken, shared with the worker (its flow control). */
  private readonly taken = new Int32Array(new SharedArrayBuffer(4));
  private readonly ready: PackedChunk[] = [];
  /** The worker has posted its last chunk. */
  private workerDone = false;
  private closed = false;
  private waiting: ((c: readonly Request[] | null) => void) | null = null;
  /** This thread's generator after a worker failure, positioned at {@link index}. */
  private fallback: RequestChunks | null = null;

  /** @param workerPath the worker module (tests substitute one that fails); default dist/workload/stream-worker.js. */
  constructor(private readonly opts: DistributionWorkloadOptions, private readonly blockSize: number, workerPath: string = workerFile()) {
    const own = distributionWorkloadStream(opts)[Symbol.iterator]();
    this.startWorker(workerPath);
    for (let r = own.next(); r.done !== true; r = own.next()) {
      this.head.push(r.value);
      if (this.head.length === HEAD) break;
    }
    this.shared = this.head[0]?.sharedPrefix ?? null;
    this.headOnly = this.head.length < HEAD || own.next().done === true;
    if (this.headOnly) this.stopWorker();
  }

  /** Whether the worker failed (could not start or stopped early) and this thread generated the rest. */
  get fellBack(): boolean {
    return this.fallback !== null;
  }

  private startWorker(path: string): void {
    try {
      const data: StreamWorkerData = { opts: this.opts, skip: HEAD, blockSize: this.blockSize, chunk: CHUNK, taken: this.taken.buffer };
      const w = new Worker(path, { workerData: data });
      w.unref();
      w.on('message', (m: StreamWorkerMessage) => this.receive(m));
      w.on('error', () => this.fail());
      w.on('exit', () => {
        if (!this.workerDone) this.fail();
      });
      this.worker = w;
    } catch {
      // Could not start: next() falls back once the head is handed out.
      this.worker = null;
    }
  }

  private stopWorker(): void {
    const w = this.worker;
    this.worker = null;
    if (w !== null) {
      w.removeAllListeners();
      void w.terminate();
    }
  }

  private receive(m: StreamWorkerMessage): void {
    if (m.kind === 'end') this.workerDone = true;
    else this.ready.push(m);
    const wake = this.waiting;
    if (wake !== null) {
      this.waiting = null;
      this.worker?.unref();
      wake(this.take());
    }
  }

  /** The worker is gone before its end: this thread generates from {@link index} on. */
  private fail(): void {
    if (this.workerDone || this.fallback !== null || this.closed) return;
    this.stopWorker();
    this.ready.length = 0;
    const it = distributionWorkloadStream(this.opts)[Symbol.iterator]();
    for (let i = 0; i < this.index; i++) it.next();
    this.fallback = iterableChunks({ [Symbol.iterator]: () => it }, CHUNK);
    const wake = this.waiting;
    if (wake !== null) {
      this.waiting = null;
      wake(this.fallback.next() as readonly Request[] | null);
    }
  }

  next(): readonly Request[] | null | Promise<readonly Request[] | null> {
    if (this.index < this.head.length) {
      this.index = this.head.length;
      return this.head;
    }
    if (this.headOnly || this.closed) return null;
    if (this.fallback === null && this.worker === null && !this.workerDone) this.fail();
    if (this.fallback !== null) return this.fallback.next();
    if (this.ready.length > 0 || this.workerDone) return this.take();
    const w = this.worker as Worker;
    // Waiting on the worker keeps the process alive (it is unreferenced otherwise, so it never holds an exit).
    w.ref();
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** The oldest received chunk as requests (counted as taken: the worker may post one more), or null after the worker's last. */
  private take(): readonly Request[] | null {
    const c = this.ready.shift();
    if (c === undefined) {
      this.stopWorker();
      return null;
    }
    Atomics.add(this.taken, 0, 1);
    Atomics.notify(this.taken, 0);
    return this.unpack(c);
  }
  private unpack(c: PackedChunk): Request[] {
    const out = new Array<Request>(c.count);
    const bs = this.blockSize;
    let t = 0;
    let h = 0;
    for (let i = 0; i < c.count; i++) {
      const il = c.inputLen[i] as number;
      const ol = c.outputLen[i] as number;
      const input = c.tokens.subarray(t, t + il);
      const output = c.tokens.subarray(t + il, t + il + ol);
      t += il + ol;
      const req = new Request(`request_${this.index++}`, input, output, c.arrival[i] as number, ol, c.deadline[i]);
      req.clientId = DISTRIBUTION_CLIENT_ID;
      const pl = c.prefixLen[i] as number;
      if (pl > 0) {
        req.prefixGroup = SHARED_PREFIX_GROUP;
        req.prefixLength = pl;
        req.sharedPrefix = this.shared;
      }
      const nh = Math.floor(il / bs);
      req.inputBlockHashes = c.hashes.subarray(h, h + nh);
      req.inputHashBlockSize = bs;
      h += nh;
      out[i] = req;
    }
    return out;
  }

  close(): void {
    this.closed = true;
    this.stopWorker();
    this.fallback?.close();
  }
}
