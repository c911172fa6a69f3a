/**
 * `--semantics`: KV cache corrections (docs/reference-differences.md K1, K2, K3, K4; K6/K7 are pinned in both modes by
 * test/invariants/tiered-quirks.test.ts and the property suites).
 */
import { describe, expect, it } from 'vitest';
import { BlockKVCache } from '../../src/kv/block-cache.js';
import { TieredKVCache } from '../../src/kv/tiered.js';
import { inputBlockHashes } from '../../src/domain/block-hash.js';
import { req } from './helpers.js';

describe('K1: reusing a block drops its identity', () => {
  /** Two copies of the same 16-token block; the older copy is then reused for other content. */
  function afterReuse(corrected: boolean): number {
    const kv = new BlockKVCache(3, 16, corrected);
    const a = req(1, 16, 1, 0);
    expect(kv.allocate(a, 0, 16, [])).toBe(true); // block 0, identity h
    kv.release(a); // free list: 1, 2, 0 (block 0 still findable)
    const b = req(2, 16, 1, 0);
    expect(kv.allocate(b, 0, 16, [])).toBe(true); // a second copy of h in block 1, now the indexed one
    const other = req(3, 32, 1, 0, { base: 500 });
    expect(kv.allocate(other, 0, 32, [])).toBe(true); // takes blocks 2 and 0: the old copy is reused
    // A 17-token prompt starting with that block (a hit never covers a prompt's last token under corrected E1).
    return kv.getCachedBlocks(req(4, 17, 1, 0)).length;
  }

  it('reference: the index entry is deleted by identity, so the live copy in block 1 becomes unfindable', () => {
    expect(afterReuse(false)).toBe(0);
  });

  it('corrected: only an entry that names the reused block is deleted; the live copy stays a prefix hit', () => {
    expect(afterReuse(true)).toBe(1);
  });
});

describe('K4: failed allocations and the tiered hit rate', () => {
  /** 2 GPU blocks: A's prompt block stays cached; C (A's prompt + 1 token) hits it and fills the cache; B fails 3 times. */
  function hitRate(corrected: boolean): number {
    const kv = new TieredKVCache(2, 16, 4, 100, 0, corrected);
    const a = req(1, 16, 1, 0);
    expect(kv.allocate(a, 0, 16, [])).toBe(true); // miss
    kv.release(a);
    const c = req(2, 17, 1, 0);
    const cached = [...kv.getCachedBlocks(c)];
    expect(cached).toHaveLength(1);
    expect(kv.allocate(c, 16, 17, cached)).toBe(true); // hit, miss
    const b = req(3, 16, 1, 0, { base: 500 });
    for (let i = 0; i < 3; i++) expect(kv.allocate(b, 0, 16, [])).toBe(false);
    return kv.cacheHitRate();
  }

  it('reference: each of the 3 failures counts a CPU miss: 1 hit / (2 misses + 3)', () => {
    expect(hitRate(false)).toBe(1 / 6);
  });

  it('corrected: failures count nothing; the hit rate is over the blocks allocated: 1 hit / (1 + 2 misses)', () => {
    expect(hitRate(true)).toBe(1 / 3);
  });
});

describe('K3: a reload and the caller\'s looked-up prefix', () => {
  /**
   * Tiered cache, 5 GPU blocks of 4 tokens. X computes blocks A, AB, ABC (all mirrored to the CPU tier) and
   * leaves; Y's 12 other tokens push ABC off the GPU and leave too, so the free list is [AB, A, Y's 3 blocks].
   * Q (X's 12 tokens + 1) looks up [A, AB] and allocates its tail, which reloads ABC from the CPU tier.
   */
  function scenario(corrected: boolean): { qChain: boolean; zHits: number } {
    const kv = new TieredKVCache(5, 4, 8, 100, 0, corrected);
    const x = req(1, 12, 1, 0);
    expect(kv.allocate(x, 0, 12, [])).toBe(true);
    kv.mirrorToCPU([x]);
    kv.release(x);
    const y = req(2, 12, 1, 0, { base: 500 });
    expect(kv.allocate(y, 0, 12, [])).toBe(true);
    kv.release(y);
    const q = req(3, 13, 1, 0);
    const cached = [...kv.getCachedBlocks(q)];
    expect(cached).toHaveLength(2);
    expect(kv.allocate(q, 8, 13, cached)).toBe(true);
    const hashes = inputBlockHashes(q, 4);
    const own = kv.gpu.ownedList(q)!;
    // Q's first three blocks should carry the identities A, AB, ABC of its prompt.
    const qChain = [0, 1, 2].every((i) => kv.gpu.blockHash(own.at(i)) === hashes[i]);
    kv.release(q);
    return { qChain, zHits: kv.getCachedBlocks(req(4, 13, 1, 0)).length };
  }

  it('reference: the reload overwrites AB, the fallback claims it anyway: Q\'s chain is wrong and AB is lost', () => {
    expect(scenario(false)).toEqual({ qChain: false, zHits: 1 });
  });

  it('corrected: A and AB are pinned during the reload; Q holds A, AB, ABC and all three stay cached', () => {
    expect(scenario(true)).toEqual({ qChain: true, zHits: 3 });
  });
});

describe('K2: a partial last block and the CPU reload chain', () => {
  /**
   * Tiered cache, 10 GPU blocks of 4 tokens. Q (17 tokens) computes a first chunk of 6 tokens: block A and a
   * partial block. X (Q's first 16 tokens) then computes A, AB, ABC, ABCD, is mirrored to the CPU tier and
   * leaves, and Y's 32 other tokens push X's copies off the GPU. Q's next chunk is tokens [6, 12).
   */
  function scenario(corrected: boolean): { reloads: number; hits: number; blocks: number; chainOk: boolean } {
    const kv = new TieredKVCache(10, 4, 16, 100, 0, corrected);
    const q = req(1, 17, 1, 0);
    expect(kv.allocate(q, 0, 6, [])).toBe(true);
    q.progressIndex = 6;
    const x = req(2, 16, 1, 0);
    expect(kv.allocate(x, 0, 16, [])).toBe(true);
    kv.mirrorToCPU([x]);
    kv.release(x);
    const y = req(3, 32, 1, 0, { base: 500 });
    expect(kv.allocate(y, 0, 32, [])).toBe(true);
    kv.release(y);
    const hitsBefore = kv.gpu.cacheHits;
    expect(kv.allocate(q, 6, 12, [])).toBe(true);
    const own = kv.gpu.ownedList(q)!;
    const hashes = inputBlockHashes(q, 4);
    return {
      reloads: kv.tierStats().reloads,
      hits: kv.gpu.cacheHits - hitsBefore,
      blocks: own.len,
      chainOk: [0, 1, 2].every((i) => kv.gpu.blockHash(own.at(i)) === hashes[i]),
    };
  }

  it('reference: the chain is seeded with the partial block\'s empty hash, so nothing is reloaded and ABC is recomputed', () => {
    expect(scenario(false)).toEqual({ reloads: 0, hits: 0, blocks: 3, chainOk: true });
  });

  it('corrected: the chain continues from AB; ABC and ABCD come back from the CPU tier and ABC is a hit', () => {
    expect(scenario(true)).toEqual({ reloads: 2, hits: 1, blocks: 3, chainOk: true });
  });
});
