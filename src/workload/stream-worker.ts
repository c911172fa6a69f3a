/**
 * Worker-thread half of {@link ThreadedDistributionStream} (threaded-stream.ts): generates the distribution
 * workload from request `skip` on, with each prompt's block hashes, and posts it in packed chunks (typed arrays,
 * transferred, not copied). It runs the very generator the main thread runs (distribution.ts), so the requests
 * are the same values in the same order; the main thread only rebuilds Request objects around the arrays.
 *
 * Flow control: at most {@link AHEAD} chunks are posted and not yet taken; the main thread counts the chunks it
 * takes in shared memory (no message back: a postMessage from a busy main thread costs far more than an atomic
 * add), and this side blocks on that count, so a long run never holds more than a few chunks of token ids.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import { distributionWorkloadStream, type DistributionWorkloadOptions } from './distribution.js';

/** What the main thread passes (structured-cloned: the seed stays a bigint). */
export interface StreamWorkerData {
  readonly opts: DistributionWorkloadOptions;
  /** Requests the main thread generates itself (the worker replays and drops them). */
  readonly skip: number;
  /** KV block size the prompts' block hashes are computed for. */
  readonly blockSize: number;
  /** Requests per chunk. */
  readonly chunk: number;
  /** One Int32: how many chunks the main thread has taken (it adds and notifies; this side waits on it). */
  readonly taken: SharedArrayBuffer;
}

/** One posted chunk: request i's fields at index i, its tokens and hashes at running offsets. */
export interface PackedChunk {
  readonly kind: 'chunk';
  readonly count: number;
  readonly arrival: Float64Array;
  readonly deadline: Float64Array;
  readonly inputLen: Int32Array;
  readonly outputLen: Int32Array;
  readonly prefixLen: Int32Array;
  /** Per request: its input tokens, then its output tokens. */
  readonly tokens: Int32Array;
  /** Per request: floor(inputLen / blockSize) chained block hashes. */
  readonly hashes: Float64Array;
}

export type StreamWorkerMessage = PackedChunk | { readonly kind: 'end' };

/** Chunks posted ahead of the main thread's credits. */
export const AHEAD = 6;

function pack(reqs: readonly Request[], blockSize: number): PackedChunk {
  const n = reqs.length;
  const arrival = new Float64Array(n);
  const deadline = new Float64Array(n);
  const inputLen = new Int32Array(n);
  const outputLen = new Int32Array(n);
  const prefixLen = new Int32Array(n);
  let tokenCount = 0;
  let hashCount = 0;
  for (const r of reqs) {
    tokenCount += r.inputLen + r.outputLen;
    hashCount += Math.floor(r.inputLen / blockSize);
  }
  const tokens = new Int32Array(tokenCount);
  const hashes = new Float64Array(hashCount);
  let t = 0;
  let h = 0;
  for (let i = 0; i < n; i++) {
    const r = reqs[i] as Request;
    arrival[i] = r.arrivalTime;
    deadline[i] = r.deadline;
    inputLen[i] = r.inputLen;
    outputLen[i] = r.outputLen;
    prefixLen[i] = r.prefixLength;
    tokens.set(r.inputTokens, t);
    t += r.inputLen;
    tokens.set(r.outputTokens, t);
    t += r.outputLen;
    const hs = inputBlockHashes(r, blockSize);
    hashes.set(hs, h);
    h += hs.length;
  }
  return { kind: 'chunk', count: n, arrival, deadline, inputLen, outputLen, prefixLen, tokens, hashes };
}

function main(): void {
  const port = parentPort;
  if (port === null) return;
  const data = workerData as StreamWorkerData;
  const taken = new Int32Array(data.taken);
  let posted = 0;
  const it = distributionWorkloadStream(data.opts)[Symbol.iterator]();
  let next = it.next();
  for (let i = 0; i < data.skip && !next.done; i++) next = it.next();
  const batch: Request[] = [];
  while (!next.done) {
    batch.length = 0;
    while (!next.done && batch.length < data.chunk) {
      batch.push(next.value);
      next = it.next();
    }
    for (let t = Atomics.load(taken, 0); posted - t >= AHEAD; t = Atomics.load(taken, 0)) Atomics.wait(taken, 0, t);
    const msg = pack(batch, data.blockSize);
    const arrays = [msg.arrival, msg.deadline, msg.inputLen, msg.outputLen, msg.prefixLen, msg.tokens, msg.hashes];
    port.postMessage(msg, arrays.map((a) => a.buffer as ArrayBuffer));
    posted++;
  }
  port.postMessage({ kind: 'end' } satisfies StreamWorkerMessage);
  port.close();
}

main();
