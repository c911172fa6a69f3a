/**
 * `--semantics`: engine corrections (docs/reference-differences.md E1, E2, E3, E4, E7, E8). Each test runs a small
 * fixed scenario in both modes and checks the reference's figure and the corrected one, computed by hand from the
 * blackbox step costs in helpers.ts.
 */
import { describe, expect, it } from 'vitest';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import { createRooflineModel } from '../../src/latency/roofline.js';
import { stepBatchOf } from '../../src/latency/types.js';
import { model } from '../../src/latency/test-fixtures.js';
import type { Request } from '../../src/domain/request.js';
import { bothModes, engineSetup, req } from './helpers.js';

/** β0 = 1,000 µs per step plus 10 µs per prefill token: a prefill's size shows in its step time. */
const PREFILL_COST = createBlackboxModel({ alpha: [0, 0, 0], beta: [1000, 10, 0] });

describe('E1: a fully cached prompt', () => {
  /** A 32-token prompt (two 16-token blocks) computed, then the same prompt again once the first has left. */
  const run = (): ReturnType<typeof bothModes> =>
    bothModes(engineSetup({ latency: PREFILL_COST }), () => [req(0, 32, 2, 0), req(1, 32, 2, 10_000)]);

  it('reference: claims no block and its prefill costs nothing; corrected: claims the first block and recomputes the last', () => {
    const { reference: ref, corrected: cor } = run();
    const second = (x: { reqs: Request[] }): Request => x.reqs[1] as Request;
    // First request: a 32-token prefill (1,000 + 320 µs) in both modes.
    expect(ref.reqs[0]!.ttft).toBe(1320);
    expect(cor.reqs[0]!.ttft).toBe(1320);
    // Reference: zero new tokens, so the step prices no prefill at all (β0 only).
    expect(second(ref).ttft).toBe(1000);
    // Corrected: the last 16-token block is recomputed (1,000 + 160 µs), the first is a hit.
    expect(second(cor).ttft).toBe(1160);
    // Block-level hits / (hits + misses). The first request misses 3 blocks (2 prompt, 1 decode). Reference: the
    // second claims nothing and misses its decode block, 0 / 4. Corrected: 1 hit, the recomputed block and the
    // decode block missed, 1 / 6.
    const hr = (x: { cs: ReturnType<typeof bothModes>['reference']['cs'] }): number => x.cs.instances[0]!.kv.cacheHitRate();
    expect(hr(ref)).toBe(0);
    expect(hr(cor)).toBeCloseTo(1 / 6, 12);
  });
});

describe('E3: the final output token', () => {
  /**
   * Cache of 2 blocks, requests with one output token (done right after their prefill). Y (16 tokens) leaves its
   * prompt block cached; Z (16 other tokens) runs; then C (Y's prompt plus one token) looks Y's block up.
   */
  const run = (): ReturnType<typeof bothModes> =>
    bothModes(engineSetup({ kv: { totalBlocks: 2, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 } }), () => [
      req(0, 16, 1, 0),
      req(1, 16, 1, 100_000, { base: 500 }),
      req(2, 17, 1, 200_000),
    ]);

  it('reference: allocates KV for it at completion, evicting a cached prefix; corrected: allocates nothing', () => {
    const { reference: ref, corrected: cor } = run();
    const hitRate = (x: { cs: ReturnType<typeof bothModes>['reference']['cs'] }): number => x.cs.instances[0]!.kv.cacheHitRate();
    // Reference: Y's final token takes the second block; Z's prompt takes the LRU head (that block) and Z's final
    // token takes Y's prompt block, so C finds nothing: 0 hits over 2 + 2 + 2 misses.
    expect(hitRate(ref)).toBe(0);
    // Corrected: Y and Z miss one block each and Y's survives; C hits it and misses its 17th token's block: 1 / 4.
    expect(hitRate(cor)).toBe(1 / 4);
    expect(ref.cs.instances[0]!.metrics.completedRequests).toBe(3);
    expect(cor.cs.instances[0]!.metrics.completedRequests).toBe(3);
  });
});

describe('E3 and a request larger than the cache', () => {
  // 100 blocks of 16 = 1,600 tokens. A 1,600-token prompt with 2 output tokens must store position 1,600 for its
  // last decode step: 101 blocks.
  it('reference: completes (the failing allocation is the final token\'s, only counted); corrected: dropped as unservable, not a self-preemption livelock', () => {
    const { reference: ref, corrected: cor } = bothModes(engineSetup(), () => [req(0, 1600, 2, 0), req(1, 16, 2, 0)]);
    expect(ref.reqs.map((r) => r.outcome)).toEqual(['completed', 'completed']);
    expect(cor.reqs[0]!.outcome).toBe('dropped_unservable');
    expect(cor.reqs[1]!.outcome).toBe('completed');
    // One token fewer fits: stored KV is 1,599 + 1 = 1,600 tokens, exactly the cache.
    const fits = bothModes(engineSetup(), () => [req(0, 1599, 2, 0)]);
    expect(fits.corrected.reqs[0]!.outcome).toBe('completed');
  });
});

describe('E8: when a completed request leaves', () => {
  /** Steps of 1,000 µs, 500 µs of output-token processing per token; one request, 16 tokens in, 3 out, at 0. */
  const run = (): ReturnType<typeof bothModes> =>
    bothModes(engineSetup({ latency: createBlackboxModel({ alpha: [0, 0, 500], beta: [1000, 0, 0] }) }), () => [req(0, 16, 3, 0)]);

  it('reference: at the end of its last step (3 ms), short of its E2E; corrected: at arrival + E2E (4.5 ms)', () => {
    const { reference: ref, corrected: cor } = run();
    // TTFT 1,000 + 500; two decode steps of 1,000 + 500 each.
    expect(ref.reqs[0]!.e2e).toBe(4500);
    expect(cor.reqs[0]!.e2e).toBe(4500);
    // The last event sets the simulated duration (vllm_estimated_duration_s).
    expect(ref.cs.instances[0]!.metrics.simEndedTime).toBe(3000);
    expect(cor.cs.instances[0]!.metrics.simEndedTime).toBe(4500);
  });
});

describe('E7: scheduling delay', () => {
  /**
   * 300 µs of alpha queueing per request, 1,000 µs steps, 4 blocks of 16 tokens. A and B (10 tokens in, 30 out)
   * arrive at 0, are enqueued at 300 and admitted together. When A's 33rd position needs a third block (the step
   * at 1,300 + 22 × 1,000 = 23,300) none is free and B, the batch's tail, is preempted; it is admitted again in
   * the next step, at 24,300.
   */
  const run = (): ReturnType<typeof bothModes> =>
    bothModes(
      engineSetup({
        latency: createBlackboxModel({ alpha: [300, 0, 0], beta: [1000, 0, 0] }),
        kv: { totalBlocks: 4, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
      }),
      () => [req(0, 10, 30, 0), req(1, 10, 30, 0, { base: 500 })],
    );

  it('reference: last admission minus arrival (alpha included); corrected: first admission minus enqueue', () => {
    const { reference: ref, corrected: cor } = run();
    expect(ref.cs.instances[0]!.metrics.preemptionCount).toBe(1);
    expect(cor.cs.instances[0]!.metrics.preemptionCount).toBe(1);
    expect(ref.reqs.map((r) => r.schedulingDelay)).toEqual([300, 24_300]);
    expect(cor.reqs.map((r) => r.schedulingDelay)).toEqual([0, 0]);
    // The reference stamps the restarted B's TTFT after its re-admission step; corrected keeps the first token
    // the client saw, at the end of the first step (E13: B re-prefills its prompt and outputs, re-emitting none).
    expect(ref.reqs.map((r) => r.ttft)).toEqual([1300, 25_300]);
    expect(cor.reqs.map((r) => r.ttft)).toEqual([1300, 1300]);
  });
});

describe('E2: a cached prefix in the first step', () => {
  const hw = { TFlopsPeak: 989.0, TFlopsFP8: 0, BwPeakTBs: 3.35, mfuPrefill: 0.55, mfuDecode: 0.3, MemoryGiB: 80 };
  /** Roofline, llama-8B shape. A computes a 4,096-token prompt; B (the same 4,096 tokens + 16 more) hits 256 blocks. */
  const run = (): ReturnType<typeof bothModes> =>
    bothModes(
      engineSetup({ latency: createRooflineModel({ model: model({ vocabSize: 128256 }), hardware: hw, tp: 1, alpha: [0, 0, 0] }), kv: { totalBlocks: 1000, blockSize: 16, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 } }),
      () => [req(0, 4096, 1, 0), req(1, 4112, 1, 1_000_000)],
    );

  it('reference: the 16-token prefill of B is priced at position 0; corrected: after its 4,096 cached tokens', () => {
    const { reference: ref, corrected: cor } = run();
    expect(cor.reqs[0]!.ttft).toBe(ref.reqs[0]!.ttft);
    // The same step priced by hand: 16 new tokens at position 0 (reference) or 4,096 (corrected).
    const step = (pi: number): number => {
      const r = req(9, 4112, 1, 0);
      r.progressIndex = pi;
      r.numNewTokens = 16;
      return createRooflineModel({ model: model({ vocabSize: 128256 }), hardware: hw, tp: 1, alpha: [0, 0, 0] }).stepTime(stepBatchOf([r]));
    };
    expect(ref.reqs[1]!.ttft).toBe(step(0));
    expect(cor.reqs[1]!.ttft).toBe(step(4096));
    expect(step(4096)).toBeGreaterThan(step(0));
  });
});

describe('E4: a request stopped by max-model-len', () => {
  /** max-model-len 20; a 10-token prompt with 100 planned output tokens (library: no max_output_len). */
  const run = (): ReturnType<typeof bothModes> => bothModes(engineSetup({ maxModelLen: 20 }), () => [req(0, 10, 100, 0)]);

  it('stops where vLLM does in both modes; its ITL mean divides by one gap fewer (reference) or by all 9 (corrected)', () => {
    const { reference: ref, corrected: cor } = run();
    for (const x of [ref, cor]) {
      const r = x.reqs[0]!;
      expect(r.lengthCapped).toBe(true);
      // vLLM: prompt + output reaches max-model-len, 10 output tokens: the first token and 9 decode steps.
      expect(x.cs.instances[0]!.metrics.totalOutputTokens).toBe(10);
      expect(r.itlCount).toBe(9);
      expect(r.itlSum).toBe(9000);
      expect(r.e2e).toBe(10_000);
    }
    expect(ref.reqs[0]!.itlMean).toBe(1125);
    expect(cor.reqs[0]!.itlMean).toBe(1000);
  });
});
