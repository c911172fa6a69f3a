/**
 * `--semantics`: KV auto-capacity over the TP group (docs/reference-differences.md E10) and the L40S FP8 peak
 * (L1), in both modes.
 */
import { describe, expect, it } from 'vitest';
import { Request } from '../../src/domain/request.js';
import { findGpu } from '../../src/config/catalog/hardware.js';
import { MODEL_CATALOG } from '../../src/config/catalog/models.js';
import { extractKVCapacityParams, parseHFConfig } from '../../src/latency/hf-config.js';
import { calculateKVBlocks } from '../../src/latency/kv-capacity.js';
import { resolveLatency, type LatencyInput } from '../../src/sim/resolve-latency.js';
import { stepBatchOf } from '../../src/latency/types.js';

const GIB = 2 ** 30;
const cfg = MODEL_CATALOG['llama-3.1-8b-instruct'].config;
const h100 = findGpu('H100')!;

function blocks(tp: number, corrected: boolean): number {
  return calculateKVBlocks(parseHFConfig(cfg), h100, extractKVCapacityParams(cfg), { tp, blockSize: 16, gpuMemoryUtilization: 0.9, corrected });
}

describe('E10: KV auto-capacity at TP > 1', () => {
  it('reference: pooled memory over per-GPU block bytes, so blocks grow ~tp² (26,312 / 125,278 / 543,011)', () => {
    expect([1, 2, 4].map((tp) => blocks(tp, false))).toEqual([26312, 125278, 543011]);
  });

  it('corrected: pooled memory over pooled block bytes; TP 1 unchanged, TP 4 about 4x TP 1 (less the extra overhead)', () => {
    expect(blocks(1, true)).toBe(26312);
    // llama-3.1-8b: 32 layers x 2 x 8 KV heads x 128 x 2 bytes = 128 KiB per token over the group, 2 MiB a block.
    const pooledBlock = 32 * 2 * 8 * 128 * 2 * 16;
    const tp4 = blocks(4, true);
    // 4 x 72 GiB usable, minus about 15 GiB of weights, 5.5 activation, 4 x 0.6 non-torch: ~265 GiB.
    expect(tp4).toBeGreaterThan(Math.floor((264 * GIB) / pooledBlock));
    expect(tp4).toBeLessThan(Math.floor((266 * GIB) / pooledBlock));
    expect(tp4).toBeLessThan(blocks(4, false) / 3.9);
  });

  it('the run path: resolveLatency sizes the cache by the mode', () => {
    const inp: LatencyInput = {
      model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 4, dp: 1, backend: 'roofline', backendExplicit: true,
      alpha: [0, 0, 0], alphaExplicit: false, beta: [0, 0, 0], betaExplicit: false, totalKvBlocks: 1000000, totalKvBlocksExplicit: false,
      blockSize: 16, gpuMemoryUtilization: 0.9, maxModelLen: 0, maxModelLenExplicit: false, moeCommBackend: '', enableExpertParallel: false,
    };
    expect(resolveLatency(inp).totalKvBlocks).toBe(543011);
    expect(resolveLatency({ ...inp, corrected: true }).totalKvBlocks).toBe(blocks(4, true));
  });
});

describe('L1: L40S FP8 peak', () => {
  it('reference: the with-sparsity 1466 TFLOPS; corrected: the dense 733 (half, like its dense BF16 figure)', () => {
    expect(findGpu('L40S')!.TFlopsFP8).toBe(1466);
    expect(findGpu('L40S', true)!.TFlopsFP8).toBe(733);
    expect(findGpu('L40S', true)!.TFlopsPeak).toBe(findGpu('L40S')!.TFlopsPeak);
    expect(findGpu('H100', true)).toEqual(findGpu('H100'));
  });

  it('an FP8 model on L40S: roofline prefill takes longer under corrected semantics', () => {
    const inp: LatencyInput = {
      model: 'redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic', hardware: 'L40S', tp: 1, dp: 1, backend: 'roofline', backendExplicit: true,
      alpha: [0, 0, 0], alphaExplicit: false, beta: [0, 0, 0], betaExplicit: false, totalKvBlocks: 1000, totalKvBlocksExplicit: true,
      blockSize: 16, gpuMemoryUtilization: 0.9, maxModelLen: 0, maxModelLenExplicit: false, moeCommBackend: '', enableExpertParallel: false,
    };
    const ref = resolveLatency(inp);
    const cor = resolveLatency({ ...inp, corrected: true });
    expect(ref.hardwareConfig?.TFlopsFP8).toBe(1466);
    expect(cor.hardwareConfig?.TFlopsFP8).toBe(733);
    // A 4,096-token prefill is compute-bound: the step takes longer at half the peak.
    const step = (m: typeof ref): number => {
      const r = new Request('r', Int32Array.from({ length: 4096 }, (_, i) => i + 1), new Int32Array(8), 0, 0, 0);
      r.numNewTokens = 4096;
      return m.latency.stepTime(stepBatchOf([r]));
    };
    expect(step(cor)).toBeGreaterThan(step(ref) * 1.3);
  });
});
