/**
 * EP-aware KV capacity through the resolution the CLI and simulate() use: --enable-expert-parallel at
 * --dp 4 --tp 2 sizes the cache for tp/(tp·dp) of the routed experts per rank under --semantics corrected and
 * with corrected-physics; --semantics reference keeps the pinned reference's count.
 */
import { describe, expect, it } from 'vitest';
import { resolveLatency, type LatencyInput } from './resolve-latency.js';

const base: LatencyInput = {
  model: 'mistralai/mixtral-8x7b-v0.1', hardware: 'H100', tp: 2, dp: 4, backend: 'trained-physics', backendExplicit: true,
  alpha: [0, 0, 0], alphaExplicit: false, beta: [0, 0, 0], betaExplicit: false, totalKvBlocks: 1000000, totalKvBlocksExplicit: false,
  blockSize: 16, gpuMemoryUtilization: 0.9, maxModelLen: 0, maxModelLenExplicit: false, moeCommBackend: '', enableExpertParallel: false,
};
const kv = (over: Partial<LatencyInput>): number => resolveLatency({ ...base, ...over }).totalKvBlocks;

describe('--enable-expert-parallel KV capacity', () => {
  it('reference semantics: unchanged by EP (the pinned reference charges each rank every expert)', () => {
    expect(kv({ enableExpertParallel: true })).toBe(kv({}));
    expect(kv({})).toBe(48_956 * 4); // src/latency/kv-capacity-ep.test.ts writes the formula out
  });
  it('corrected semantics: each rank holds 2 of the 8 experts, so the cache grows (upstream #1656)', () => {
    expect(kv({ corrected: true, enableExpertParallel: true })).toBeGreaterThan(kv({ corrected: true }));
  });
  it('corrected-physics: its per-rank cache grows too', () => {
    const cp = { backend: 'corrected-physics' };
    expect(kv({ ...cp, enableExpertParallel: true })).toBeGreaterThan(kv(cp));
  });
});
