/**
 * `--semantics`: KV cache corrections (docs/reference-differences.md K1, K2, K3, K4, K8; K6/K7 are pinned in both modes by
 * test/invariants/tiered-quirks.test.ts and the property suites).
 */
import { describe, expect, it } from 'vitest';
import { BlockKVCache } from '../../src/kv/block-cache.js';
import { TieredKVCache } from '../../src/kv/tiered.js';
import { inputBlockHashes } from '../../src/domain/block-hash.js';
import type { Request } from '../../src/domain/request.js';
import type { Semantics } from '../../src/domain/semantics.js';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import type { LatencyModel } from '../../src/latency/types.js';
import { runEngine } from '../../src/sim/engine-setup.js';
import { kvTierViolations } from '../invariants/kv-tiers.js';
import { checkRun } from '../parity/invariant-hook.js';
import { engineSetup, MODES, req } from './helpers.js';

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

describe('K8: CPU-tier reloads and the prefill they save', () => {
  /** β0 = 1,000 µs per step plus 10 µs per prefill token; counts the prefill tokens it prices. */
  function countingModel(): { model: LatencyModel; prefillTokens: () => number } {
    const inner = createBlackboxModel({ alpha: [0, 0, 0], beta: [1000, 10, 0] });
    let n = 0;
    const model: LatencyModel = {
      ...inner,
      stepTime(b) {
        for (let i = 0; i < b.count; i++) if ((b.progress[i] as number) < (b.inputLen[i] as number)) n += b.newTokens[i] as number;
        return inner.stepTime(b);
      },
    };
    return { model, prefillTokens: () => n };
  }

  /** Runs `requests()` in `mode` with GPU `gpuBlocks` of 16 tokens and a 200-block CPU tier (a reloaded block costs 5 + 16/16 µs). */
  function run(mode: Semantics, gpuBlocks: number, requests: () => Request[]): { reqs: Request[]; prefillTokens: number; reloads: number } {
    const counter = countingModel();
    const setup = { ...engineSetup({ latency: counter.model, kv: { totalBlocks: gpuBlocks, blockSize: 16, cpuBlocks: 200, transferBandwidth: 16, transferBaseLatency: 5 } }), semantics: mode };
    const reqs = requests();
    const cs = runEngine(setup, reqs);
    // Every invariant, the KV-tier conservation included, holds in both modes.
    checkRun(cs, reqs, setup, null);
    for (const inst of cs.instances) expect(kvTierViolations(inst)).toEqual([]);
    expect(cs.instances[0]!.metrics.completedRequests).toBe(reqs.length);
    return { reqs, prefillTokens: counter.prefillTokens(), reloads: cs.instances[0]!.kv.tierStats().reloads };
  }

  it('one prompt whose prefix left the GPU: the reference recomputes all of it, corrected only the part the CPU tier lacks', () => {
    // GPU of 5 blocks. request_0 (48 tokens) is mirrored to the CPU tier; request_1 (64 other tokens) takes every
    // GPU block; request_2 (request_0's 48 tokens + 8) finds nothing on the GPU and 3 blocks on the CPU tier.
    const scenario = (): Request[] => [req(0, 48, 2, 0), req(1, 64, 2, 100_000, { base: 500 }), req(2, 56, 2, 200_000)];
    const ref = run('reference', 5, scenario);
    const cor = run('corrected', 5, scenario);
    // Both reload the 3 blocks (3 x 6 µs charged to the step), but the reference sized the prefill before: 56 tokens.
    expect(ref.reloads).toBe(3);
    expect(cor.reloads).toBe(3);
    expect(ref.reqs[2]!.ttft).toBe(1000 + 560 + 18);
    // Corrected: reloaded before sizing, so only the 8 tokens after the 48 reloaded ones are computed.
    expect(cor.reqs[2]!.ttft).toBe(1000 + 80 + 18);
    expect(ref.prefillTokens).toBe(48 + 64 + 56);
    expect(cor.prefillTokens).toBe(48 + 64 + 8);
  });

  /** 60 requests, one every 500 µs, each a 64-token prefix of one of 6 groups plus 16 tokens of its own. */
  const sharedPrefixes = (): Request[] =>
    Array.from({ length: 60 }, (_, k) => {
      const r = req(k, 80, 4, k * 500, { base: 1000 * (((k * 7) % 6) + 1) });
      for (let t = 64; t < 80; t++) r.inputTokens[t] = 900_000 + k * 100 + t;
      return r;
    });
  const ttftMean = (reqs: readonly Request[]): number => reqs.reduce((s, r) => s + r.ttft, 0) / reqs.length;

  it('prefix reuse under GPU pressure: corrected computes under a third of the prefill tokens and cuts the TTFT mean', () => {
    // 24 GPU blocks hold the running requests and few of the 6 x 4 prefix blocks; the CPU tier holds them all.
    const ref = run('reference', 24, sharedPrefixes);
    const cor = run('corrected', 24, sharedPrefixes);
    expect(ref.reloads).toBeGreaterThan(100);
    expect(cor.reloads).toBeGreaterThan(100);
    // Corrected computes each request's own 16 tokens and the prefix blocks no tier had (the first of each group):
    // 60 x 16 + 6 x 64 = 1,344; the reference recomputes most reloaded prefixes too.
    expect(cor.prefillTokens).toBe(60 * 16 + 6 * 64);
    expect(ref.prefillTokens).toBeGreaterThan(3 * cor.prefillTokens);
    expect(ttftMean(cor.reqs)).toBeLessThan(0.7 * ttftMean(ref.reqs));
  });

  it('the same workload on a GPU that holds every prefix: nothing is reloaded and both modes agree', () => {
    const out = MODES.map((m) => run(m, 40, sharedPrefixes));
    for (const x of out) {
      expect(x.reloads).toBe(0);
      expect(x.prefillTokens).toBe(60 * 16 + 6 * 64);
    }
    expect(out[0]!.reqs.map((r) => r.ttft)).toEqual(out[1]!.reqs.map((r) => r.ttft));
  });
});
