import { describe, expect, it } from 'vitest';
import { inputBlockHashes } from '../domain/block-hash.js';
import { Request } from '../domain/request.js';
import { createKVStore } from './index.js';
import { StorageTier } from './storage-tier.js';
import { TieredKVCache } from './tiered.js';

// 1 GB/s = 1000 bytes/µs, so a 4000-byte block takes 4 µs on the channel, plus 10 µs access latency per job.
const CFG = { blocks: 4, bandwidthGBps: 1, latencyUs: 10, blockBytes: 4000, cycleWindowUs: 100 };

function mk(id: string, input: ArrayLike<number>): Request {
  return new Request(id, Int32Array.from(input), new Int32Array(0), 0);
}

describe('StorageTier', () => {
  it('writes an evicted block once, refreshes it afterwards, and times one channel job per flush', () => {
    const s = new StorageTier(CFG);
    s.setClock(100);
    s.offload(11);
    s.offload(12);
    s.offload(11); // already there: refreshed, not written again
    expect(s.storeCount).toBe(2);
    s.flushOffloads();
    s.flushOffloads(); // nothing pending: no job
    expect(s.records).toEqual([{ kind: 'offload', from: 'cpu', to: 'storage', blocks: 2, bytes: 8000, startUs: 100, endUs: 100 + 10 + 8 }]);
    expect(s.offloadedBlocks).toBe(2);
  });

  it('queues a reload behind a busy channel and makes the step wait for its end', () => {
    const s = new StorageTier(CFG);
    s.setClock(0);
    for (const h of [1, 2, 3]) s.offload(h);
    s.flushOffloads(); // busy until 0 + 10 + 12 = 22
    s.setClock(5);
    expect(s.lookup(2)).toBe(true);
    expect(s.lookup(99)).toBe(false);
    s.issueReload(1);
    const r = s.records[1];
    expect(r).toEqual({ kind: 'reload', from: 'storage', to: 'gpu', blocks: 1, bytes: 4000, startUs: 22, endUs: 22 + 10 + 4 });
    expect(s.consumeWait()).toBe(36 - 5);
    expect(s.consumeWait()).toBe(0);
    expect([s.lookups, s.hits, s.reloadedBlocks]).toEqual([2, 1, 1]);
  });

  it('evicts its least recently used block when full (a refreshed block survives)', () => {
    const s = new StorageTier(CFG);
    for (const h of [1, 2, 3, 4]) s.offload(h);
    s.offload(1); // refresh: 2 is now the oldest
    s.offload(5);
    expect(s.used).toBe(4);
    expect(s.evictions).toBe(1);
    expect(s.lookup(2)).toBe(false);
    expect(s.lookup(1)).toBe(true);
  });

  it('counts a reload cycle when a block comes back within the window of its previous reload, not after', () => {
    const s = new StorageTier(CFG);
    s.setClock(0);
    s.noteReload(7, 'storage');
    s.setClock(50);
    s.noteReload(7, 'cpu'); // 50 < 100: a cycle
    s.flushCycles();
    s.setClock(200);
    s.noteReload(7, 'storage'); // 150 after the previous: not a cycle
    s.flushCycles();
    expect(s.cycles).toEqual([{ timeUs: 50, cpu: 1, storage: 0 }]);
  });

  it('refuses bad settings', () => {
    expect(() => new StorageTier({ ...CFG, blocks: 0 })).toThrow(/capacity/);
    expect(() => new StorageTier({ ...CFG, bandwidthGBps: 0 })).toThrow(/bandwidth/);
    expect(() => new StorageTier({ ...CFG, latencyUs: -1 })).toThrow(/latency/);
    expect(() => createKVStore({ totalBlocks: 4, blockSize: 2, cpuBlocks: 0, transferBandwidth: 1, transferBaseLatency: 0, storage: CFG })).toThrow(/CPU tier/);
  });
});

describe('TieredKVCache with a storage tier', () => {
  /** GPU 4 blocks, CPU 2 blocks, storage 8 blocks; block size 2. */
  function cache(): TieredKVCache {
    return new TieredKVCache(4, 2, 2, 1, 0, false, new StorageTier({ ...CFG, blocks: 8 }));
  }

  it('offloads CPU evictions to storage and reloads a prefix from it before admission sizes the prefill', () => {
    const t = cache();
    t.setClock(1000);
    const a = mk('a', [1, 2, 3, 4, 5, 6, 7, 8]);
    expect(t.allocate(a, 0, 8, [])).toBe(true);
    t.mirrorToCPU([a]); // 4 blocks into a 2-block CPU tier: the 2 oldest go to storage
    const st = t.storage as StorageTier;
    expect(st.storeCount).toBe(2);
    t.release(a);
    // Another request takes the whole GPU: a's prefix is gone from it.
    const b = mk('b', [21, 22, 23, 24, 25, 26, 27, 28]);
    expect(t.allocate(b, 0, 8, [])).toBe(true);
    t.release(b);
    expect(t.getCachedBlocks(a)).toHaveLength(0);
    const hashes = inputBlockHashes(a, 2);
    expect(st.lru.has(hashes[0] as number) && st.lru.has(hashes[1] as number)).toBe(true);
    t.setClock(2000);
    expect(t.prefixReload).not.toBeNull();
    t.prefixReload?.(a);
    // Blocks 0-1 come from storage, 2-3 from the CPU tier: the whole prompt is cached again.
    expect(t.getCachedBlocks(a)).toHaveLength(4);
    const rep = t.tierReport();
    expect(rep?.storageToGpuBlocks).toBe(2);
    expect(rep?.cpuToGpuBlocks).toBe(2);
    // CPU reloads cost ceil(2 / 1) = 2 ticks each (the reference's formula); the storage job 10 + 8 ticks from 2000.
    expect(t.consumePendingTransferLatency()).toBe(2 * 2 + 18);
    expect(t.checkTierConservation()).toBeNull();
  });

  it('without a storage tier nothing changes: no pre-admission reload, no tier report', () => {
    const t = new TieredKVCache(4, 2, 2, 1, 0);
    expect(t.prefixReload).toBeNull();
    expect(t.tierReport()).toBeNull();
    expect(t.tierStats().storageTotalBlocks).toBeUndefined();
  });
});
