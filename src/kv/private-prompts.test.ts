/**
 * Private prompts (KVStoreConfig.privatePrompts): when no two requests' prompts share a full block, a prompt
 * block's identity enters the prefix index only if its request is released while queued (preempted). A seeded
 * engine-like driver (admissions with prefix lookups, chunked prefill, decode, preemption, completion) runs a
 * cache with and one without, on prompts of independent uniform token ids, and compares every decision and the
 * whole observable state after every operation: only the index's contents may differ, and never for a lookup.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN_ID } from '../domain/units.js';
import { Request, RequestState } from '../domain/request.js';
import { BlockKVCache, PRIVATE_MIN_BLOCK } from './block-cache.js';
import { mulberry32 } from '../engine/test-helpers.js';

/**
 * Everything observable. Prefix lookups are made for requests that hold no blocks, as the engine makes them
 * (routing, admission): a running request's own prompt is never looked up, and it is the one lookup whose
 * answer differs (its blocks are not indexed yet). A policy that could look it up turns private prompts off
 * (engine-setup.ts).
 */
function observable(kv: BlockKVCache, reqs: readonly Request[], running: ReadonlySet<Request>): number[] {
  const out = [kv.usedBlocks(), kv.cacheHits, kv.cacheMisses, -1, ...kv.freeListOrder(), -1];
  for (let b = 0; b < kv.totalBlocks; b++) out.push(kv.blockHash(b), kv.blockFill(b), kv.blockRefCount(b), kv.blockInUse(b) ? 1 : 0);
  for (const r of reqs) {
    out.push(-1, ...(kv.ownedList(r)?.toArray() ?? []));
    if (!running.has(r)) out.push(-2, ...kv.getCachedBlocks(r), -3, kv.cachedPrefixBlocks(r));
  }
  return out;
}

function run(seed: number, bs: number, total: number, ops: number): { preemptions: number; readmitHits: number } {
  const rand = mulberry32(seed);
  const int = (k: number): number => Math.floor(rand() * k);
  // Each cache keeps its block list on the request (kvOwner), so each gets its own copy of every request. A
  // request that completes or times out leaves for good (the engine never looks it up again): a new one, with a
  // fresh prompt, takes its place.
  const reqs: Request[] = [];
  const twins: Request[] = [];
  const twin = new Map<Request, Request>();
  let made = 0;
  const fresh = (slot: number): void => {
    const input = Int32Array.from({ length: 1 + int(5 * bs) }, () => int(MAX_TOKEN_ID));
    const output = Int32Array.from({ length: int(3 * bs + 1) }, () => int(MAX_TOKEN_ID));
    const r = new Request(`r${made}`, input, output, 0);
    const t = new Request(`r${made++}`, input, output, 0);
    reqs[slot] = r;
    twins[slot] = t;
    twin.set(r, t);
  };
  for (let i = 0; i < 16; i++) fresh(i);
  const plain = new BlockKVCache(total, bs, false, false, false);
  const priv = new BlockKVCache(total, bs, false, false, true);
  const running = new Set<Request>();
  const runningTwins = new Set<Request>();
  let preemptions = 0;
  let readmitHits = 0;
  const preempted = new Set<Request>();
  const alloc = (r: Request, s: number, e: number, a: readonly number[], b: readonly number[]): boolean => {
    const x = plain.allocate(r, s, e, a);
    const y = priv.allocate(twin.get(r) as Request, s, e, b);
    expect(y, `allocate(${r.id}, ${s}, ${e})`).toBe(x);
    return x;
  };
  const setState = (r: Request, state: RequestState, progress: number): void => {
    const t = twin.get(r) as Request;
    r.state = t.state = state;
    r.progressIndex = t.progressIndex = progress;
  };
  const release = (r: Request, state: RequestState): void => {
    if (state === RequestState.Queued && running.has(r)) {
      preemptions++;
      preempted.add(r);
    }
    setState(r, state, r.progressIndex);
    plain.release(r);
    priv.release(twin.get(r) as Request);
    running.delete(r);
    runningTwins.delete(twin.get(r) as Request);
    setState(r, state, 0);
  };
  for (let op = 0; op < ops; op++) {
    const slot = int(reqs.length);
    const r = reqs[slot] as Request;
    const chunk = 1 + int(2 * bs + 1);
    const il = r.inputLen;
    if (rand() < 0.05) {
      release(r, RequestState.Queued); // preemption (or nothing held)
    } else if (!running.has(r)) {
      const a = [...plain.getCachedBlocks(r)];
      const b = [...priv.getCachedBlocks(twin.get(r) as Request)];
      expect(b, `getCachedBlocks(${r.id}) at op ${op}`).toEqual(a);
      if (preempted.has(r)) readmitHits += a.length;
      const start = a.length * bs;
      const n = Math.min(il - start, chunk);
      if (n > 0 && alloc(r, start, start + n, a, b)) {
        running.add(r);
        runningTwins.add(twin.get(r) as Request);
        setState(r, RequestState.Running, start + n);
      }
    } else if (r.progressIndex < il) {
      const n = Math.min(il - r.progressIndex, chunk);
      if (alloc(r, r.progressIndex, r.progressIndex + n, [], [])) setState(r, RequestState.Running, r.progressIndex + n);
      else release(r, RequestState.Queued);
    } else if (r.progressIndex >= il + Math.max(r.outputLen, 1) - 1) {
      release(r, rand() < 0.5 ? RequestState.Completed : RequestState.TimedOut);
      fresh(slot);
    } else if (alloc(r, r.progressIndex, r.progressIndex + 1, [], [])) {
      setState(r, RequestState.Running, r.progressIndex + 1);
    } else {
      release(r, RequestState.Queued);
    }
    const x = observable(plain, reqs, running);
    const y = observable(priv, twins, runningTwins);
    if (x.length !== y.length || x.some((v, i) => v !== y[i])) expect(y, `state diverged at op ${op}`).toEqual(x);
    // What the private cache indexed, the plain one indexed too.
    for (const [h, blk] of priv.hashEntries()) expect(plain.blockForHash(h)).toBe(blk);
  }
  return { preemptions, readmitHits };
}

describe('private prompts: prompt identities indexed only on preemption', () => {
  for (const [seed, bs, total] of [
    [1, 8, 40],
    [2, 8, 24],
    [3, 16, 30],
    [4, 16, 60],
  ] as const) {
    it(`gives the same decisions and lookups as indexing every identity (bs=${bs}, ${total} blocks, seed ${seed})`, () => {
      const s = run(seed, bs, total, 4000);
      // The driver must preempt, and readmissions must find their own blocks again.
      expect(s.preemptions).toBeGreaterThan(20);
      expect(s.readmitHits).toBeGreaterThan(5);
    });
  }

  it('does not apply to blocks smaller than PRIVATE_MIN_BLOCK (short blocks of different prompts can match)', () => {
    const small = new BlockKVCache(10, PRIVATE_MIN_BLOCK - 1, false, true, true);
    const r = new Request('a', Int32Array.from({ length: PRIVATE_MIN_BLOCK - 1 }, (_, i) => i), new Int32Array(1), 0);
    expect(small.allocate(r, 0, PRIVATE_MIN_BLOCK - 1, [])).toBe(true);
    expect(small.hashEntries().length).toBe(1);
  });
});
