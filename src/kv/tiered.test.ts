import { describe, expect, it } from 'vitest';
import { inputBlockHashes } from '../domain/block-hash.js';
import { Request } from '../domain/request.js';
import { BlockKVCache } from './block-cache.js';
import { createKVStore } from './index.js';
import { TieredKVCache } from './tiered.js';

function mk(id: string, input: ArrayLike<number>, output: ArrayLike<number> = []): Request {
  return new Request(id, Int32Array.from(input), Int32Array.from(output), 0);
}

function range<T>(n: number, f: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

function canon(req: Request, bs: number, i: number): number {
  return inputBlockHashes(req, bs)[i] as number;
}

/** Allocate single-block fillers through the tiered path until the GPU is full; returns them. */
function fillGpu(t: TieredKVCache, base: number): Request[] {
  const out: Request[] = [];
  for (let i = 0; t.gpu.freeCount > 0; i++) {
    const f = mk(`f${i}`, range(t.blockSize, (j) => base + i * t.blockSize + j));
    if (!t.allocate(f, 0, t.blockSize, [])) break;
    out.push(f);
  }
  return out;
}

describe('TieredKVCache reload', () => {
  it('reloads only the request prefix, at most as many blocks as were free, and charges latency per block', () => {
    const t = new TieredKVCache(8, 2, 10, 1, 10);
    const prefix = mk('prefix', [1, 2, 3, 4, 5, 6]);
    t.allocate(prefix, 0, 6, []);
    for (let i = 0; i < 3; i++) t.cpu.store(canon(prefix, 2, i));
    t.cpu.store(123456789);
    t.release(prefix);
    const fillers = fillGpu(t, 20);
    expect(fillers).toHaveLength(8);
    for (const f of fillers.slice(0, 3)) t.release(f);
    expect(t.getCachedBlocks(prefix)).toEqual([]);
    t.allocate(mk('extra', [80, 81]), 0, 2, []);
    expect(t.gpu.freeCount).toBe(2);

    const req = mk('new', [1, 2, 3, 4, 5, 6]);
    expect(t.allocate(req, 0, 6, [])).toBe(false);
    expect(t.cpuHitCount).toBe(2);
    expect(t.consumePendingTransferLatency()).toBe(2 * (10 + 2));
    expect(t.consumePendingTransferLatency()).toBe(0);
    expect(t.gpu.hasHash(123456789)).toBe(false);
    // The reloaded prefix was committed before the tail allocation failed.
    expect(t.blocksOf(req)).toBe(2);
    expect(t.getCachedBlocks(req)).toHaveLength(2);
    expect(t.cpuMissCount).toBe(0);
    expect(t.checkConservation()).toBeNull();
  });

  it('charges baseLatency + ceil(blockSize / bandwidth) per block', () => {
    const t = new TieredKVCache(6, 2, 10, 2, 100);
    const r1 = mk('r1', [1, 2, 3, 4]);
    t.allocate(r1, 0, 4, []);
    t.mirrorToCPU([r1]);
    t.release(r1);
    const fillers = fillGpu(t, 20);
    t.release(fillers[0] as Request);
    t.allocate(mk('new', [1, 2, 3, 4]), 0, 4, []);
    expect(t.pendingTransferLatency).toBe(101);
    expect(t.pendingTransferLatency).toBe(101);
    expect(t.consumePendingTransferLatency()).toBe(101);
    const odd = new TieredKVCache(6, 16, 10, 3, 0);
    const r = mk('r', range(32, (i) => i));
    odd.allocate(r, 0, 32, []);
    odd.mirrorToCPU([r]);
    odd.release(r);
    fillGpu(odd, 1000).slice(0, 2).forEach((f) => odd.release(f));
    odd.allocate(mk('again', range(32, (i) => i)), 0, 32, []);
    expect(odd.consumePendingTransferLatency()).toBe(2 * Math.ceil(16 / 3));
  });

  it('never overwrites an earlier reload (maxReloads guard)', () => {
    const t = new TieredKVCache(3, 2, 10, 1, 0);
    const r1 = mk('r1', [1, 2, 3, 4]);
    t.allocate(r1, 0, 4, []);
    t.mirrorToCPU([r1]);
    t.release(r1);
    const wipe = mk('wipe', [7, 7, 8, 8, 9, 9]);
    t.allocate(wipe, 0, 6, []);
    t.release(wipe);
    t.allocate(mk('f1', [10, 11, 12, 13]), 0, 4, []);
    expect(t.gpu.freeCount).toBe(1);
    const req = mk('new', [1, 2, 3, 4]);
    t.allocate(req, 0, 4, []);
    expect(t.cpuHitCount).toBe(1);
    const h0 = canon(req, 2, 0);
    expect(t.gpu.hasHash(h0)).toBe(true);
    expect(t.gpu.ownedList(req)?.toArray()).toEqual([t.gpu.blockForHash(h0)]);
  });

  it('consults the CPU tier even when the GPU has room (#1586)', () => {
    const t = new TieredKVCache(10, 2, 100, 1, 0);
    const prefix = [1, 2, 3, 4, 5, 6];
    const seed = mk('seed', prefix);
    expect(t.allocate(seed, 0, 6, [])).toBe(true);
    t.mirrorToCPU([seed]);
    t.release(seed);
    const churn = fillGpu(t, 500);
    expect(churn).toHaveLength(10);
    churn.forEach((f) => t.release(f));
    expect(t.gpu.freeCount).toBe(10);
    expect(t.getCachedBlocks(seed)).toEqual([]);
    const req = mk('new', prefix);
    const cached = t.getCachedBlocks(req);
    expect(t.allocate(req, cached.length * 2, 6, cached)).toBe(true);
    expect(t.cpuHitCount).toBe(3);
    expect(t.getCachedBlocks(req)).toHaveLength(3);
    expect(t.blocksOf(req)).toBe(3);
    expect(t.gpu.cacheHits).toBe(3);
  });

  it('commits all reloaded blocks of a new request when they cover the whole range', () => {
    const t = new TieredKVCache(10, 4, 5, 1, 0);
    const tokens = range(8, (i) => i + 1);
    const seed = mk('seed', tokens);
    t.allocate(seed, 0, 8, []);
    t.mirrorToCPU([seed]);
    t.release(seed);
    const fillers = fillGpu(t, 900);
    expect(fillers).toHaveLength(10);
    t.release(fillers[0] as Request);
    t.release(fillers[1] as Request);
    const req = mk('new', tokens);
    const missesBefore = t.gpu.cacheMisses;
    expect(t.allocate(req, 0, 8, [])).toBe(true);
    expect(t.blocksOf(req)).toBe(2);
    expect(t.gpu.cacheMisses).toBe(missesBefore);
    expect(t.consumePendingTransferLatency()).toBe(2 * 4);
    expect(t.checkConservation()).toBeNull();
  });

  it('running request: reload resumes past owned blocks and the range still completes (4 blocks)', () => {
    const t = new TieredKVCache(12, 4, 5, 1, 0);
    const tokens = range(16, (i) => i + 1);
    const seed = mk('seed', tokens);
    expect(t.allocate(seed, 0, 16, [])).toBe(true);
    t.mirrorToCPU([seed]);
    t.release(seed);
    const run = mk('run', tokens);
    expect(t.allocate(run, 0, 8, [])).toBe(true);
    const fillers = fillGpu(t, 800);
    t.release(fillers[0] as Request);
    t.release(fillers[1] as Request);
    expect(t.allocate(run, 8, 16, [])).toBe(true);
    const ids = t.gpu.ownedList(run)?.toArray() ?? [];
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect(t.cpuHitCount).toBe(2);
    expect(t.checkConservation()).toBeNull();
  });

  it('running request with a partial last block: no duplicate block ids (ceiling start block)', () => {
    const t = new TieredKVCache(12, 4, 5, 1, 0);
    const tokens = range(16, (i) => i + 1);
    const seed = mk('seed', tokens);
    t.allocate(seed, 0, 16, []);
    t.mirrorToCPU([seed]);
    t.release(seed);
    const run = mk('run', tokens);
    t.allocate(run, 0, 6, []);
    expect(t.blocksOf(run)).toBe(2);
    const fillers = fillGpu(t, 700);
    t.release(fillers[0] as Request);
    t.release(fillers[1] as Request);
    expect(t.allocate(run, 6, 16, [])).toBe(true);
    const ids = t.gpu.ownedList(run)?.toArray() ?? [];
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    // The partial last block seeds the chain with "no hash", so nothing matched on the CPU.
    expect(t.cpuHitCount).toBe(0);
    expect(t.checkConservation()).toBeNull();
  });

  it('running request partial reload: commits the reloaded block before the tail fails cleanly', () => {
    const t = new TieredKVCache(8, 4, 10, 1, 0);
    const gpu: BlockKVCache = t.gpu;
    const tokens = range(20, (i) => i + 10);
    const r1 = mk('req1', tokens);
    expect(gpu.allocate(r1, 0, 8, [])).toBe(true);
    expect(gpu.allocate(mk('req2', range(8, () => 0)), 0, 8, [])).toBe(true);
    expect(gpu.allocate(mk('req3', range(8, () => 0)), 0, 8, [])).toBe(true);
    const h8 = canon(r1, 4, 2);
    t.cpu.store(h8);
    const cached = gpu.getCachedBlocks(r1);
    expect(t.allocate(r1, 8, 20, cached)).toBe(false);
    expect(t.checkConservation()).toBeNull();
    expect(gpu.hasHash(h8)).toBe(true);
    const ids = gpu.ownedList(r1)?.toArray() ?? [];
    expect(ids).toHaveLength(3);
    const reloaded = ids[2] as number;
    expect(gpu.blockInUse(reloaded)).toBe(true);
    expect(gpu.blockRefCount(reloaded)).toBe(1);
    expect(gpu.getCachedBlocks(r1)).toHaveLength(3);
    expect(gpu.freeCount).toBe(1);
  });

  it('reference quirk: a reload may overwrite a caller-cached free block, which is then claimed anyway', () => {
    const t = new TieredKVCache(4, 2, 10, 1, 0);
    const seed = mk('seed', [1, 2, 3, 4]);
    t.allocate(seed, 0, 4, []);
    t.mirrorToCPU([seed]);
    t.release(seed); // free: 2 3 1 0
    const wipe = mk('wipe', [9, 9, 8, 8, 7, 7]);
    t.allocate(wipe, 0, 6, []); // reuses 2 3 1: block 1's identity is gone from the GPU
    t.release(wipe); // free: 0 1 3 2, with block 0 (prefix block 0) at the LRU head
    const req = mk('r', [1, 2, 3, 4, 5, 6]);
    const cached = [...t.getCachedBlocks(req)];
    expect(cached).toEqual([0]);
    // Reloading prefix block 1 pops the head, i.e. the caller's cached block 0, and gives it block 1's
    // identity; the prefix lookup then finds nothing, so the reference falls back to the caller's stale list.
    expect(t.allocate(req, 2, 6, cached)).toBe(true);
    expect(t.cpuHitCount).toBe(1);
    const ids = t.gpu.ownedList(req)?.toArray() ?? [];
    expect(ids).toEqual([0, 1, 3]);
    expect(t.gpu.blockHash(0)).toBe(canon(req, 2, 1));
    expect(t.gpu.blockHash(1)).not.toBe(canon(req, 2, 1));
    expect(t.checkConservation()).toBeNull();
  });

  it('new request partial reload: the committed block stays when the tail fails', () => {
    const t = new TieredKVCache(7, 4, 10, 1, 0);
    t.gpu.allocate(mk('f1', range(12, () => 0)), 0, 12, []);
    t.gpu.allocate(mk('f2', range(8, () => 0)), 0, 8, []);
    const req = mk('newreq', range(12, (i) => i + 100));
    const h0 = canon(req, 4, 0);
    t.cpu.store(h0);
    expect(t.allocate(req, 0, 12, [])).toBe(false);
    expect(t.checkConservation()).toBeNull();
    expect(t.gpu.hasHash(h0)).toBe(true);
    expect(t.gpu.ownedList(req)?.toArray()).toEqual([t.gpu.blockForHash(h0)]);
    expect(t.cpuMissCount).toBe(0);
  });
});

describe('TieredKVCache mirroring and metrics', () => {
  it('mirrors full hashed blocks, touching ones already present, without changing the GPU', () => {
    const t = new TieredKVCache(10, 2, 3, 1, 0);
    const r1 = mk('r1', [1, 2, 3, 4]);
    t.allocate(r1, 0, 4, []);
    const before = t.gpu.hashEntries();
    t.mirrorToCPU([r1]);
    expect(t.gpu.hashEntries()).toEqual(before);
    expect(t.cpu.used).toBe(2);
    expect(t.mirrorCount).toBe(2);
    const r2 = mk('r2', [10, 20]);
    t.allocate(r2, 0, 2, []);
    t.mirrorToCPU([r2]);
    t.mirrorToCPU([r1]);
    expect(t.mirrorCount).toBe(3);
    const r3 = mk('r3', [30, 40]);
    t.allocate(r3, 0, 2, []);
    t.mirrorToCPU([r3]);
    expect(t.cpu.has(canon(r1, 2, 0))).toBe(true);
    expect(t.cpu.has(canon(r2, 2, 0))).toBe(false);
    expect(t.cpu.lruOrder()).toEqual([canon(r1, 2, 0), canon(r1, 2, 1), canon(r3, 2, 0)]);
  });

  it('skips partial, unhashed and unknown-request blocks', () => {
    const t = new TieredKVCache(10, 4, 10, 1, 0);
    const r = mk('r1', [1, 2, 3]);
    t.allocate(r, 0, 3, []);
    t.mirrorToCPU([]);
    t.mirrorToCPU([r, mk('ghost', [1])]);
    expect(t.cpu.used).toBe(0);
    const one = new TieredKVCache(10, 1, 10, 1, 0);
    const d = mk('d', [5], [6, 7]);
    one.allocate(d, 0, 1, []);
    d.progressIndex = 1;
    one.allocate(d, 1, 2, []); // full but created in decode: unhashed
    one.mirrorToCPU([d]);
    expect(one.mirrorCount).toBe(1);
    expect(one.kvThrashingRate()).toBe(0);
  });

  it('keeps GPU hashes on release', () => {
    const t = new TieredKVCache(10, 2, 10, 1, 0);
    const r = mk('r1', [1, 2, 3, 4]);
    t.allocate(r, 0, 4, []);
    t.release(r);
    expect(t.getCachedBlocks(r)).toHaveLength(2);
    expect(t.cachedPrefixBlocks(r)).toBe(2);
  });

  it('thrashing rate is CPU evictions per mirrored block', () => {
    const t = new TieredKVCache(10, 2, 2, 1, 0);
    expect(t.kvThrashingRate()).toBe(0);
    const r = mk('r1', [1, 2, 3, 4, 5, 6]);
    t.allocate(r, 0, 6, []);
    t.mirrorToCPU([r]);
    expect(t.kvThrashingRate()).toBeCloseTo(1 / 3, 12);
  });

  it('counts a CPU miss only when nothing was reloaded and the GPU allocation fails', () => {
    const t = new TieredKVCache(2, 2, 10, 1, 0);
    const seed = mk('seed', [1, 2]);
    t.allocate(seed, 0, 2, []);
    t.release(seed);
    const r = mk('r', [1, 2, 3, 4]);
    const cached = [...t.getCachedBlocks(r)];
    expect(t.allocate(r, 2, 4, cached)).toBe(true); // 1 hit, misses: seed + 1
    expect(t.allocate(mk('x', [9, 9]), 0, 2, [])).toBe(false);
    expect(t.cpuMissCount).toBe(1);
    expect(t.cacheHitRate()).toBeCloseTo(1 / (1 + 2 + 1), 12);
    t.setClock(12345);
    expect(t.cacheHitRate()).toBeCloseTo(0.25, 12);
  });

  it('conserves GPU blocks through mirror and reload cycles', () => {
    const t = new TieredKVCache(6, 2, 10, 1, 0);
    const r = mk('r1', [1, 2, 3, 4]);
    t.allocate(r, 0, 4, []);
    expect(t.usedBlocks()).toBe(2);
    t.mirrorToCPU([r]);
    expect(t.usedBlocks()).toBe(2);
    t.release(r);
    expect(t.usedBlocks()).toBe(0);
    const fillers = fillGpu(t, 20);
    expect(t.checkConservation()).toBeNull();
    t.release(fillers[0] as Request);
    const again = mk('again', [1, 2, 3, 4]);
    t.allocate(again, 0, 4, []);
    expect(t.checkConservation()).toBeNull();
    expect(t.cpuHitCount).toBe(1);
    expect(t.cpu.used).toBe(2);
  });
});

function sharedPrefixHitRate(gpuBlocks: number): number {
  const bs = 2;
  const t = new TieredKVCache(gpuBlocks, bs, 100000, 1, 0);
  const prefixes = range(6, (k) => range(8, (i) => 1000 * (k + 1) + i));
  let seq = 0;
  for (let round = 0; round < 8; round++) {
    for (const p of prefixes) {
      seq++;
      const req = mk(`r${seq}`, [...p, 9000000 + seq * 10, 9000001 + seq * 10]);
      const cached = t.getCachedBlocks(req);
      if (!t.allocate(req, cached.length * bs, req.inputLen, cached)) continue;
      t.mirrorToCPU([req]);
      t.release(req);
    }
  }
  return t.cacheHitRate();
}

describe('TieredKVCache hit-rate properties (#1586)', () => {
  it('hit rate is flat across GPU capacity with a fixed CPU tier and workload', () => {
    const rates = [14, 22, 40, 80].map(sharedPrefixHitRate);
    expect(Math.max(...rates) - Math.min(...rates)).toBeLessThan(0.02);
    expect(Math.min(...rates)).toBeGreaterThan(0.5);
  });

  it('hit rate does not drop when a matching prefix is resident on the CPU tier', () => {
    const run = (seedCpu: boolean): number => {
      const t = new TieredKVCache(12, 2, 100, 1, 0);
      const prefix = [7, 8, 9, 10, 11, 12];
      if (seedCpu) {
        const s = mk('s', prefix);
        t.allocate(s, 0, 6, []);
        t.mirrorToCPU([s]);
        t.release(s);
        for (let i = 0; i < 6; i++) {
          const f = mk(`c${i}`, [400 + i * 2, 401 + i * 2]);
          t.allocate(f, 0, 2, []);
          t.release(f);
        }
        const g = t.gpu as unknown as { hits: number; misses: number };
        g.hits = 0;
        g.misses = 0;
        (t as unknown as { cpuMisses: number }).cpuMisses = 0;
      }
      for (let r = 0; r < 4; r++) {
        const req = mk(`w${r}`, [...prefix, 8000 + r * 2, 8001 + r * 2]);
        const cached = t.getCachedBlocks(req);
        if (!t.allocate(req, cached.length * 2, req.inputLen, cached)) continue;
        t.mirrorToCPU([req]);
        t.release(req);
      }
      return t.cacheHitRate();
    };
    expect(run(true)).toBeGreaterThanOrEqual(run(false));
  });
});

describe('createKVStore', () => {
  it('builds the tiered cache iff cpuBlocks > 0 and validates tier parameters', () => {
    const base = { totalBlocks: 16, blockSize: 4, transferBandwidth: 100, transferBaseLatency: 0 };
    expect(createKVStore({ ...base, cpuBlocks: 0 })).toBeInstanceOf(BlockKVCache);
    expect(createKVStore({ ...base, cpuBlocks: 8 })).toBeInstanceOf(TieredKVCache);
    expect(() => createKVStore({ ...base, cpuBlocks: 8, transferBandwidth: 0 })).toThrow();
    expect(() => createKVStore({ ...base, cpuBlocks: 8, transferBandwidth: Number.NaN })).toThrow();
    expect(() => createKVStore({ ...base, cpuBlocks: 8, transferBandwidth: Infinity })).toThrow();
    expect(() => createKVStore({ ...base, cpuBlocks: 8, transferBaseLatency: -1 })).toThrow();
    expect(() => createKVStore({ ...base, cpuBlocks: 0, transferBandwidth: 0 })).not.toThrow();
  });
});
