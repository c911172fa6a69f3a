import { describe, expect, it } from 'vitest';
import { Request } from '../domain/request.js';
import { BlockKVCache } from './block-cache.js';

function mk(id: string, input: ArrayLike<number>, output: ArrayLike<number> = []): Request {
  return new Request(id, Int32Array.from(input), Int32Array.from(output), 0);
}

function range(n: number, f: (i: number) => number): number[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

function expectConserved(kv: BlockKVCache): void {
  expect(kv.checkConservation()).toBeNull();
}

describe('prefill pre-check', () => {
  // #492/#502: tokens absorbed by the partial last block need no new block.
  const cases = [
    { name: 'partial fill saves a block', total: 2, bs: 4, first: 2, input: 7, free: 1, ok: true, used: 2 },
    { name: 'all tokens absorbed by the partial block', total: 1, bs: 4, first: 2, input: 4, free: 0, ok: true, used: 1 },
    { name: 'genuinely insufficient', total: 2, bs: 4, first: 2, input: 11, free: 1, ok: false, used: 1 },
    { name: 'block size 1 has no partial blocks', total: 5, bs: 1, first: 3, input: 5, free: 2, ok: true, used: 5 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const kv = new BlockKVCache(c.total, c.bs);
      const req = mk('r1', range(c.input, (i) => (i + 1) * 10));
      expect(kv.allocate(req, 0, c.first, [])).toBe(true);
      expect(kv.freeCount).toBe(c.free);
      req.progressIndex = c.first;
      expect(kv.allocate(req, c.first, c.input, [])).toBe(c.ok);
      expect(kv.usedBlocks()).toBe(c.used);
      expectConserved(kv);
    });
  }

  it('counts every block of a first allocation', () => {
    const kv = new BlockKVCache(2, 4);
    expect(kv.allocate(mk('r1', [10, 20, 30, 40, 50]), 0, 5, [])).toBe(true);
    expect(kv.usedBlocks()).toBe(2);
    const kv2 = new BlockKVCache(1, 4);
    expect(kv2.allocate(mk('r2', [10, 20, 30, 40, 50]), 0, 5, [])).toBe(false);
    expect(kv2.usedBlocks()).toBe(0);
    expectConserved(kv2);
  });

  it('counts cached blocks sitting on the free list against capacity, and mutates nothing on failure', () => {
    const kv = new BlockKVCache(4, 2);
    const r1 = mk('r1', [1, 2, 3, 4]);
    kv.allocate(r1, 0, 4, []);
    kv.release(r1);
    kv.allocate(mk('filler', [90, 91]), 0, 2, []);
    const rateBefore = kv.cacheHitRate();
    const r2 = mk('r2', [1, 2, 3, 4, 5, 6, 7, 8]);
    const cached = [...kv.getCachedBlocks(r2)];
    expect(cached).toHaveLength(2);
    // 2 new + 2 cached-from-free-list > 3 free.
    const freeBefore = kv.freeListOrder();
    expect(kv.allocate(r2, 4, 8, cached)).toBe(false);
    expect(kv.freeListOrder()).toEqual(freeBefore);
    expect(kv.blocksOf(r2)).toBe(0);
    expect(kv.cacheHitRate()).toBe(rateBefore);
    expectConserved(kv);
  });

  it('does not count cached blocks already in use by another request', () => {
    const kv = new BlockKVCache(3, 2);
    const a = mk('a', [1, 2, 3, 4]);
    kv.allocate(a, 0, 4, []);
    const b = mk('b', [1, 2, 3, 4, 5, 6]);
    const cached = [...kv.getCachedBlocks(b)];
    expect(kv.allocate(b, 4, 6, cached)).toBe(true);
    expect(kv.usedBlocks()).toBe(3);
    expectConserved(kv);
  });

  it('allocates exactly one new block after a 3-token partial block (no phantom blocks)', () => {
    const kv = new BlockKVCache(20, 4);
    const req = mk('p', [1, 2, 3, 4, 5, 6, 7, 8], [100]);
    kv.allocate(req, 0, 3, []);
    const before = kv.usedBlocks();
    req.progressIndex = 3;
    expect(kv.allocate(req, 3, 8, [])).toBe(true);
    expect(kv.usedBlocks() - before).toBe(1);
    for (const b of kv.ownedList(req)?.toArray() ?? []) expect(kv.blockFill(b)).toBeGreaterThan(0);
  });

  it('throws on an input range outside the prompt, like the reference slice accessor', () => {
    const kv = new BlockKVCache(4, 4);
    expect(() => kv.allocate(mk('r', [1, 2]), 0, 3, [])).toThrow(RangeError);
  });
});

describe('decode allocation', () => {
  it('fails without mutation when the last block is full and nothing is free, and keeps the blocks (#1061)', () => {
    const kv = new BlockKVCache(3, 4);
    const req = mk('r1', [1, 2, 3, 4, 5, 6, 7, 8], [100, 200]);
    kv.allocate(req, 0, 8, []);
    req.progressIndex = 8;
    kv.allocate(mk('filler', [90, 91, 92, 93]), 0, 4, []);
    expect(kv.freeCount).toBe(0);
    expect(kv.allocate(req, 8, 9, [])).toBe(false);
    expect(kv.blocksOf(req)).toBe(2);
    expectConserved(kv);
  });

  it('succeeds with nothing free when the last block has room', () => {
    const kv = new BlockKVCache(2, 4);
    const req = mk('r1', [1, 2, 3], [100]);
    kv.allocate(req, 0, 3, []);
    req.progressIndex = 3;
    kv.allocate(mk('filler', [90, 91, 92, 93]), 0, 4, []);
    expect(kv.freeCount).toBe(0);
    expect(kv.allocate(req, 3, 4, [])).toBe(true);
    expect(kv.blocksOf(req)).toBe(1);
    expectConserved(kv);
  });

  it('retries after an eviction and gets one more block', () => {
    const kv = new BlockKVCache(4, 4);
    const r1 = mk('r1', [1, 2, 3, 4, 5, 6, 7, 8], [100]);
    kv.allocate(r1, 0, 8, []);
    r1.progressIndex = 8;
    const r2 = mk('r2', [10, 20, 30, 40, 50, 60, 70, 80]);
    kv.allocate(r2, 0, 8, []);
    expect(kv.allocate(r1, 8, 9, [])).toBe(false);
    expect(kv.blocksOf(r1)).toBe(2);
    kv.release(r2);
    expect(kv.freeCount).toBe(2);
    expect(kv.allocate(r1, 8, 9, [])).toBe(true);
    expect(kv.blocksOf(r1)).toBe(3);
    expectConserved(kv);
  });

  it('needs one free block for a decode token of a request that owns none', () => {
    const full = new BlockKVCache(2, 4);
    full.allocate(mk('filler', [1, 2, 3, 4, 5, 6, 7, 8]), 0, 8, []);
    const req = mk('pre', [10, 20, 30, 40], [100]);
    req.progressIndex = 4;
    expect(full.allocate(req, 4, 5, [])).toBe(false);
    expect(full.blocksOf(req)).toBe(0);
    expectConserved(full);

    const roomy = new BlockKVCache(3, 4);
    roomy.allocate(mk('filler', [1, 2, 3, 4, 5, 6, 7, 8]), 0, 8, []);
    expect(roomy.allocate(req, 4, 5, [])).toBe(true);
    expect(roomy.blocksOf(req)).toBe(1);
    expectConserved(roomy);
  });
});

describe('hit accounting', () => {
  it('is a pure lookup: getCachedBlocks does not change the hit rate', () => {
    const kv = new BlockKVCache(4, 2);
    const req = mk('r1', [1, 2, 3, 4]);
    kv.allocate(req, 0, 4, []);
    kv.release(req);
    const before = kv.cacheHitRate();
    expect(kv.getCachedBlocks(req)).toHaveLength(2);
    kv.getCachedBlocks(req);
    expect(kv.cachedPrefixBlocks(req)).toBe(2);
    expect(kv.cacheHitRate()).toBe(before);
    expect(kv.freeListOrder()).toEqual([2, 3, 1, 0]);
  });

  it('counts claimed blocks as hits and fresh blocks as misses', () => {
    const kv = new BlockKVCache(8, 2);
    const r1 = mk('r1', [1, 2, 3, 4]);
    kv.allocate(r1, 0, 4, []);
    kv.release(r1);
    expect(kv.cacheHitRate()).toBe(0);
    const r2 = mk('r2', [1, 2, 3, 4, 5, 6]);
    const cached = [...kv.getCachedBlocks(r2)];
    expect(kv.allocate(r2, 4, 6, cached)).toBe(true);
    expect(kv.cacheHits).toBe(2);
    expect(kv.cacheMisses).toBe(3);
    expect(kv.cacheHitRate()).toBeCloseTo(0.4, 12);
  });

  it('counts decode blocks and the final-token block as misses', () => {
    const kv = new BlockKVCache(8, 2);
    const req = mk('r', [1, 2], [5, 6, 7]);
    kv.allocate(req, 0, 2, []);
    req.progressIndex = 2;
    kv.allocate(req, 2, 3, []); // new decode block: miss
    req.progressIndex = 3;
    kv.allocate(req, 3, 4, []); // fills it: no new block
    req.progressIndex = 4;
    kv.allocate(req, 4, 5, []); // final token: new block, miss
    expect(kv.cacheMisses).toBe(3);
    expect(kv.cacheHits).toBe(0);
  });
});

describe('full-prefix-hit edge case', () => {
  it('claims nothing for an empty range, then decode allocates a fresh block holding output tokens', () => {
    const kv = new BlockKVCache(8, 2);
    const seed = mk('seed', [1, 2, 3, 4]);
    kv.allocate(seed, 0, 4, []);
    kv.release(seed);
    const req = mk('r', [1, 2, 3, 4], [50, 60, 70]);
    const cached = [...kv.getCachedBlocks(req)];
    expect(cached).toHaveLength(2);
    const hits = kv.cacheHits;
    const free = kv.freeListOrder();
    expect(kv.allocate(req, 4, 4, cached)).toBe(true);
    expect(kv.blocksOf(req)).toBe(0);
    expect(kv.cacheHits).toBe(hits);
    expect(kv.freeListOrder()).toEqual(free);
    req.progressIndex = 4; // the engine jumps PI to inputLen
    expect(kv.allocate(req, 4, 5, [])).toBe(true);
    const ids = kv.ownedList(req)?.toArray() ?? [];
    expect(ids).toHaveLength(1);
    expect(cached).not.toContain(ids[0]);
    req.progressIndex = 5;
    kv.allocate(req, 5, 6, []); // fills the block with outputs [50, 60]: hashed, chained from nothing
    const b = ids[0] as number;
    expect(kv.blockFill(b)).toBe(2);
    expect(kv.getCachedBlocks(mk('q', [50, 60]))).toEqual([b]);
  });
});

describe('release', () => {
  it('is safe for unknown requests and for repeated calls', () => {
    const kv = new BlockKVCache(4, 2);
    const r = mk('r', [1, 2, 3]);
    kv.release(r);
    kv.allocate(r, 0, 3, []);
    kv.release(r);
    kv.release(r);
    expect(kv.usedBlocks()).toBe(0);
    expectConserved(kv);
  });

  it('conserves blocks across allocate/release cycles', () => {
    const kv = new BlockKVCache(10, 4);
    const reqs = range(5, (i) => i).map((i) => mk(`r${i}`, [i * 10 + 1, i * 10 + 2, i * 10 + 3, i * 10 + 4]));
    for (const r of reqs) expect(kv.allocate(r, 0, 4, [])).toBe(true);
    for (const r of reqs.slice(0, 3)) kv.release(r);
    expectConserved(kv);
    expect(kv.usedBlocks()).toBe(2);
  });

  it('checkConservation detects a drifted free counter', () => {
    const kv = new BlockKVCache(10, 4);
    kv.allocate(mk('r', [1, 2, 3, 4]), 0, 4, []);
    expectConserved(kv);
    (kv as unknown as { freeCnt: number }).freeCnt--;
    expect(kv.checkConservation()).toMatch(/drift/);
  });
});
