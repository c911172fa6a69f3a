import { describe, expect, it } from 'vitest';
import { NO_HASH, hashBlock, inputBlockHashes } from '../domain/block-hash.js';
import { Request } from '../domain/request.js';
import { BlockKVCache } from './block-cache.js';

function mk(id: string, input: ArrayLike<number>, output: ArrayLike<number> = []): Request {
  return new Request(id, Int32Array.from(input), Int32Array.from(output), 0);
}

function range(n: number, f: (i: number) => number): number[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

function h(parent: number, tokens: number[]): number {
  return hashBlock(parent, tokens, 0, tokens.length);
}

function blocks(kv: BlockKVCache, req: Request): number[] {
  return kv.ownedList(req)?.toArray() ?? [];
}

function expectConserved(kv: BlockKVCache): void {
  expect(kv.checkConservation()).toBeNull();
}

describe('BlockKVCache construction', () => {
  it('rejects non-positive sizes and starts with every block free in id order', () => {
    expect(() => new BlockKVCache(0, 16)).toThrow();
    expect(() => new BlockKVCache(-1, 16)).toThrow();
    expect(() => new BlockKVCache(10, 0)).toThrow();
    const kv = new BlockKVCache(5, 4);
    expect(kv.freeListOrder()).toEqual([0, 1, 2, 3, 4]);
    expect(kv.usedBlocks()).toBe(0);
    expect(kv.cacheHitRate()).toBe(0);
    expect(kv.kvThrashingRate()).toBe(0);
    expect(kv.consumePendingTransferLatency()).toBe(0);
    expectConserved(kv);
  });
});

describe('block state grows with use', () => {
  it('a large cache keeps every block through its first use, reuse and release, and reads never-used blocks as free', () => {
    const kv = new BlockKVCache(20_000, 2);
    // 9,000 requests of two blocks each take blocks far past the state allocated at first (2,048 blocks).
    const reqs = Array.from({ length: 9000 }, (_, i) => mk(`r${i}`, [i, i + 1, i + 2, i + 3]));
    for (const r of reqs) expect(kv.allocate(r, 0, 4, [])).toBe(true);
    expect(kv.usedBlocks()).toBe(18_000);
    expectConserved(kv);
    const last = blocks(kv, reqs[8999] as Request);
    expect(last).toEqual([17_998, 17_999]);
    expect([kv.blockFill(17_999), kv.blockRefCount(17_999), kv.blockInUse(17_999)]).toEqual([2, 1, true]);
    expect([kv.blockFill(19_999), kv.blockRefCount(19_999), kv.blockInUse(19_999)]).toEqual([0, 0, false]);
    for (const r of reqs.slice(0, 4000)) kv.release(r);
    expectConserved(kv);
    // Never-used blocks go first, then the released ones in release order (LRU; a request's tail block first),
    // each still a prefix hit until reused.
    const again = mk('again', [0, 1, 2, 3]);
    expect(kv.getCachedBlocks(again)).toEqual([0, 1]);
    const big = mk('big', range(4200 * 2, (i) => 1_000_000 + i));
    expect(kv.allocate(big, 0, 4200 * 2, [])).toBe(true);
    expect(blocks(kv, big).slice(0, 2)).toEqual([18_000, 18_001]);
    expect(blocks(kv, big).slice(2000, 2004)).toEqual([1, 0, 3, 2]);
    expect(kv.getCachedBlocks(again)).toEqual([]);
    expectConserved(kv);
  });
});

describe('hashing and chaining', () => {
  it('hashes a partial block when it fills, chained from nothing when it is the first block', () => {
    const kv = new BlockKVCache(10, 4);
    const req = mk('r1', [10, 20, 30, 40, 50, 60]);
    expect(kv.allocate(req, 0, 2, [])).toBe(true);
    const [b] = blocks(kv, req) as [number];
    expect(kv.blockFill(b)).toBe(2);
    expect(kv.blockHash(b)).toBe(NO_HASH);
    req.progressIndex = 2;
    expect(kv.allocate(req, 2, 4, [])).toBe(true);
    expect(blocks(kv, req)).toEqual([b]);
    expect(kv.blockFill(b)).toBe(4);
    expect(kv.blockHash(b)).toBe(h(NO_HASH, [10, 20, 30, 40]));
    kv.release(req);
    expect(kv.getCachedBlocks(mk('q', [10, 20, 30, 40]))).toEqual([b]);
  });

  it('chains a filled partial block from the previous block and matches inputBlockHashes', () => {
    const kv = new BlockKVCache(10, 4);
    const req = mk('r1', [10, 20, 30, 40, 50, 60, 70, 80]);
    expect(kv.allocate(req, 0, 5, [])).toBe(true);
    expect(blocks(kv, req)).toHaveLength(2);
    req.progressIndex = 5;
    expect(kv.allocate(req, 5, 8, [])).toBe(true);
    const ids = blocks(kv, req);
    const h0 = h(NO_HASH, [10, 20, 30, 40]);
    expect(kv.blockHash(ids[0] as number)).toBe(h0);
    expect(kv.blockHash(ids[1] as number)).toBe(h(h0, [50, 60, 70, 80]));
    expect(ids.map((b) => kv.blockHash(b))).toEqual(Array.from(inputBlockHashes(req, 4)));
    kv.release(req);
    expect(kv.getCachedBlocks(mk('q', [10, 20, 30, 40, 50, 60, 70, 80]))).toHaveLength(2);
  });

  it('chains new blocks after a claimed cached prefix', () => {
    const kv = new BlockKVCache(8, 2);
    const r1 = mk('r1', [1, 2, 3, 4]);
    kv.allocate(r1, 0, 4, []);
    kv.release(r1);
    const r2 = mk('r2', [1, 2, 3, 4, 5, 6, 7, 8]);
    const cached = [...kv.getCachedBlocks(r2)];
    expect(cached).toHaveLength(2);
    expect(kv.allocate(r2, 4, 8, cached)).toBe(true);
    expect(blocks(kv, r2).slice(0, 2)).toEqual(cached);
    kv.release(r2);
    const full = [...kv.getCachedBlocks(r2)];
    expect(full).toHaveLength(4);
    expect(full.map((b) => kv.blockHash(b))).toEqual(Array.from(inputBlockHashes(r2, 2)));
  });

  it('chains across chunked prefill', () => {
    const kv = new BlockKVCache(10, 4);
    const req = mk('r1', [10, 20, 30, 40, 50, 60, 70, 80]);
    kv.allocate(req, 0, 4, []);
    req.progressIndex = 4;
    kv.allocate(req, 4, 8, []);
    expect(blocks(kv, req).map((b) => kv.blockHash(b))).toEqual(Array.from(inputBlockHashes(req, 4)));
  });

  it('hashes a block that fills during decode over input and output tokens, but never a decode-created block', () => {
    const kv = new BlockKVCache(10, 4);
    const req = mk('r', [1, 2, 3, 4, 5, 6], [70, 80, 90, 100, 110, 120]);
    kv.allocate(req, 0, 6, []);
    req.progressIndex = 6;
    kv.allocate(req, 6, 7, []); // block 1: [5, 6, 70]
    req.progressIndex = 7;
    const ids = blocks(kv, req);
    expect(kv.blockHash(ids[1] as number)).toBe(NO_HASH);
    kv.allocate(req, 7, 8, []); // fills block 1 in decode
    req.progressIndex = 8;
    const h0 = h(NO_HASH, [1, 2, 3, 4]);
    const h1 = h(h0, [5, 6, 70, 80]);
    expect(kv.blockHash(ids[1] as number)).toBe(h1);
    for (let p = 8; p < 12; p++) {
      kv.allocate(req, p, p + 1, []);
      req.progressIndex = p + 1;
    }
    const all = blocks(kv, req);
    expect(all).toHaveLength(3);
    // The decode-created block filled through the partial path, so it IS hashed (chained from block 1).
    expect(kv.blockHash(all[2] as number)).toBe(h(h1, [90, 100, 110, 120]));
    // A follow-up prompt extending the whole conversation hits all three blocks.
    kv.release(req);
    expect(kv.getCachedBlocks(mk('next', [1, 2, 3, 4, 5, 6, 70, 80, 90, 100, 110, 120, 7]))).toEqual(all);
  });

  it('leaves a decode-created full block unhashed with block size 1', () => {
    const kv = new BlockKVCache(20, 1);
    const req = mk('r1', [10, 20, 30, 40], [100, 200]);
    kv.allocate(req, 0, 4, []);
    req.progressIndex = 4;
    expect(kv.allocate(req, 4, 5, [])).toBe(true);
    const ids = blocks(kv, req);
    expect(ids).toHaveLength(5);
    expect(kv.blockHash(ids[4] as number)).toBe(NO_HASH);
    expect(kv.blockFill(ids[4] as number)).toBe(1);
  });

  it('hashes the tokens actually placed when a partial block is appended non-contiguously', () => {
    const kv = new BlockKVCache(4, 4);
    const req = mk('r', [1, 2, 3, 4, 5, 6, 7, 8]);
    kv.allocate(req, 0, 2, []);
    req.progressIndex = 2;
    kv.allocate(req, 3, 5, []); // skips position 2: the block holds [1, 2, 4, 5]
    const [b] = blocks(kv, req) as [number];
    expect(kv.blockHash(b)).toBe(h(NO_HASH, [1, 2, 4, 5]));
    // Same through two non-contiguous appends that leave the block partial in between.
    const r2 = mk('r2', [9, 8, 7, 6, 5, 4]);
    kv.allocate(r2, 0, 1, []);
    r2.progressIndex = 1;
    kv.allocate(r2, 2, 3, []);
    kv.allocate(r2, 4, 6, []);
    expect(kv.blockHash(blocks(kv, r2)[0] as number)).toBe(h(NO_HASH, [9, 7, 5, 4]));
  });

  it('re-places tokens from position 0 after claimed blocks when the caller passes start 0 with a cached prefix', () => {
    const kv = new BlockKVCache(10, 2);
    const seed = mk('s', [1, 2, 3, 4]);
    kv.allocate(seed, 0, 4, []);
    kv.release(seed);
    const req = mk('r', [1, 2, 3, 4, 5, 6]);
    const cached = [...kv.getCachedBlocks(req)];
    kv.allocate(req, 0, 2, cached);
    const ids = blocks(kv, req);
    expect(ids).toHaveLength(3);
    expect(kv.blockHash(ids[2] as number)).toBe(h(inputBlockHashes(req, 2)[1] as number, [1, 2]));
  });

  it('deletes a hash entry by value when an older duplicate block is reused (reference quirk)', () => {
    const kv = new BlockKVCache(2, 4);
    const a = mk('a', [1, 2, 3, 4]);
    const b = mk('b', [1, 2, 3, 4]);
    kv.allocate(a, 0, 4, []);
    kv.allocate(b, 0, 4, []); // same identity, registered last, so it owns the map entry
    const hb = blocks(kv, b)[0] as number;
    expect(kv.getCachedBlocks(a)).toEqual([hb]);
    kv.release(a);
    kv.allocate(mk('c', [9, 9, 9, 9]), 0, 4, []); // pops a's block and drops the shared hash
    expect(kv.getCachedBlocks(a)).toEqual([]);
    expect(kv.blockHash(hb)).toBe(inputBlockHashes(a, 4)[0]);
  });
});

describe('free list and lazy hash deletion', () => {
  it('appends released blocks to the tail in reverse order and pops from the head', () => {
    const kv = new BlockKVCache(6, 2);
    const r = mk('r', [1, 2, 3, 4, 5, 6]);
    kv.allocate(r, 0, 6, []);
    expect(blocks(kv, r)).toEqual([0, 1, 2]);
    expect(kv.freeListOrder()).toEqual([3, 4, 5]);
    kv.release(r);
    expect(kv.freeListOrder()).toEqual([3, 4, 5, 2, 1, 0]);
    const q = mk('q', range(8, (i) => 100 + i));
    kv.allocate(q, 0, 8, []);
    expect(blocks(kv, q)).toEqual([3, 4, 5, 2]);
    // r's last block was reused; its first two stay hittable.
    expect(kv.getCachedBlocks(r)).toEqual([0, 1]);
    expectConserved(kv);
  });

  it('forgets a released request at once: a re-allocation takes the new-request path and claims its prefix', () => {
    const kv = new BlockKVCache(6, 2);
    const r = mk('r', [1, 2, 3, 4, 5]);
    kv.allocate(r, 0, 5, []);
    expect(kv.blocksOf(r)).toBe(3);
    kv.release(r);
    expect(kv.blocksOf(r)).toBe(0);
    expect(kv.ownedList(r)).toBeUndefined();
    kv.release(r);
    const cached = [...kv.getCachedBlocks(r)];
    expect(cached).toEqual([0, 1]);
    expect(kv.allocate(r, 4, 5, cached)).toBe(true);
    expect(kv.ownedList(r)?.toArray()).toEqual([0, 1, 3]);
    expect(kv.cacheHits).toBe(2);
    expectConserved(kv);
  });

  it('shares a block between requests and frees it only when the last holder releases', () => {
    const kv = new BlockKVCache(4, 2);
    const a = mk('a', [1, 2, 3]);
    kv.allocate(a, 0, 3, []);
    const b = mk('b', [1, 2, 9]);
    const cached = [...kv.getCachedBlocks(b)];
    expect(cached).toEqual([0]);
    kv.allocate(b, 2, 3, cached);
    expect(kv.blockRefCount(0)).toBe(2);
    kv.release(a);
    expect(kv.blockInUse(0)).toBe(true);
    expect(kv.freeListOrder()).toEqual([3, 1]);
    kv.release(b);
    expect(kv.freeListOrder()).toEqual([3, 1, 2, 0]);
    expectConserved(kv);
  });

  it('keeps a preempted request prefix hittable except the blocks reused since (1024-block scenario)', () => {
    const kv = new BlockKVCache(1024, 16);
    const r1 = mk('r1', range(16384, (i) => i + 1));
    expect(kv.allocate(r1, 0, 16384, [])).toBe(true);
    expect(kv.blocksOf(r1)).toBe(1024);
    kv.release(r1);
    expect(kv.usedBlocks()).toBe(0);
    expect(kv.getCachedBlocks(r1)).toHaveLength(1024);
    const r2 = mk('r2', range(128 * 16, (i) => 90000 + i));
    expect(kv.allocate(r2, 0, 2048, [])).toBe(true);
    const cached = kv.getCachedBlocks(r1);
    expect(cached).toHaveLength(896);
    expect(kv.cachedPrefixBlocks(r1)).toBe(896);
    expectConserved(kv);
  });

  it('drops both hashes when a two-block cache is fully reused', () => {
    const kv = new BlockKVCache(2, 4);
    const a = mk('a', [1, 2, 3, 4, 5, 6, 7, 8]);
    kv.allocate(a, 0, 8, []);
    const [ha0, ha1] = Array.from(inputBlockHashes(a, 4)) as [number, number];
    kv.release(a);
    expect(kv.hasHash(ha0) && kv.hasHash(ha1)).toBe(true);
    const b = mk('b', [100, 200, 300, 400, 500, 600, 700, 800]);
    kv.allocate(b, 0, 8, []);
    expect(kv.getCachedBlocks(a)).toEqual([]);
    expect(kv.hasHash(ha0) || kv.hasHash(ha1)).toBe(false);
    for (const hb of inputBlockHashes(b, 4)) expect(kv.hasHash(hb)).toBe(true);
    expectConserved(kv);
  });

  it('leaves the first half of a prefix hittable after half the cache is reused', () => {
    const kv = new BlockKVCache(1024, 16);
    const a = mk('a', range(16384, (i) => i + 1000));
    kv.allocate(a, 0, 16384, []);
    kv.release(a);
    const b = mk('b', range(8192, (i) => i + 50000));
    kv.allocate(b, 0, 8192, []);
    expect(kv.usedBlocks()).toBe(512);
    expect(kv.getCachedBlocks(mk('c', a.inputTokens))).toHaveLength(512);
    expectConserved(kv);
  });
});

describe('decode-block identities', () => {
  /** A 6-token prompt and 6 output tokens on 4-token blocks: block 0 fills in prefill, blocks 1 and 2 in decode. */
  function decodeAll(kv: BlockKVCache): Request {
    const req = mk('r', [1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]);
    expect(kv.allocate(req, 0, 6, [])).toBe(true);
    for (let p = 6; p < 12; p++) {
      req.progressIndex = p;
      expect(kv.allocate(req, p, p + 1, [])).toBe(true);
    }
    return req;
  }

  it('are registered by default (as the reference does) and can be switched off; prompt blocks keep theirs', () => {
    const on = new BlockKVCache(10, 4);
    const off = new BlockKVCache(10, 4, false, false);
    const a = blocks(on, decodeAll(on));
    const b = blocks(off, decodeAll(off));
    expect(a).toEqual(b);
    const prompt = h(NO_HASH, [1, 2, 3, 4]);
    expect(on.blockHash(a[0] as number)).toBe(prompt);
    expect(off.blockHash(b[0] as number)).toBe(prompt);
    expect(on.blockHash(a[1] as number)).toBe(h(prompt, [5, 6, 7, 8]));
    expect(on.blockHash(a[2] as number)).toBe(h(h(prompt, [5, 6, 7, 8]), [9, 10, 11, 12]));
    expect(off.blockHash(b[1] as number)).toBe(NO_HASH);
    expect(off.blockHash(b[2] as number)).toBe(NO_HASH);
    expect(off.hashEntries().map(([k]) => k)).toEqual([prompt]);
    for (const kv of [on, off]) expect(kv.blockFill(a[2] as number)).toBe(4);
  });

  it('counted decode appends (decodeRoom, commitDecodeAppends) leave the same state as one allocate per token', () => {
    const direct = new BlockKVCache(10, 4);
    const counted = new BlockKVCache(10, 4);
    const r1 = mk('r', [1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]);
    const r2 = mk('r', [1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]);
    for (const [kv, r] of [[direct, r1], [counted, r2]] as const) expect(kv.allocate(r, 0, 5, [])).toBe(true);
    // Position 5 goes through allocate; the room after it is the rest of block 1 short of filling it.
    r1.progressIndex = r2.progressIndex = 5;
    expect(direct.allocate(r1, 5, 6, [])).toBe(true);
    expect(counted.allocate(r2, 5, 6, [])).toBe(true);
    expect(counted.decodeRoom(r2, 6)).toBe(1);
    expect(counted.decodeRoom(r2, 7)).toBe(0);
    r1.progressIndex = 6;
    expect(direct.allocate(r1, 6, 7, [])).toBe(true);
    counted.commitDecodeAppends(r2, 1);
    expect(blocks(counted, r2)).toEqual(blocks(direct, r1));
    for (const b of blocks(direct, r1)) expect(counted.blockFill(b)).toBe(direct.blockFill(b));
    // The token that fills the block goes through allocate in both, and gives the block its identity.
    r1.progressIndex = r2.progressIndex = 7;
    expect(direct.allocate(r1, 7, 8, [])).toBe(true);
    expect(counted.allocate(r2, 7, 8, [])).toBe(true);
    expect(counted.hashEntries().sort()).toEqual(direct.hashEntries().sort());
    expectConserved(counted);
  });
});
