/**
 * Golden: the reference's standalone-simulator dataset (blis-core.md §10), five cases, run through the
 * cluster engine with one instance (always-admit, round-robin, zero latencies), which behaves exactly like the
 * standalone Simulator.Run under an unbounded horizon (blis-core.md §1). Every run is also checked against
 * every invariant, with the per-event recorder attached.
 *
 * Model and hardware are the reference test's fake config whatever the case's label says:
 * rooflineModelConfig() = {L 32, d 4096, H 32, KVH 8, bpp 2, intermediate 0} and rooflineHWCalib() =
 * {TFlopsPeak 989.0, BwPeakTBs 3.35, mfuPrefill 0.55, mfuDecode 0.30}, roofline with the case's tp and α.
 */
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../src/domain/units.js';
import { BlockKVCache } from '../../src/kv/block-cache.js';
import { model } from '../../src/latency/test-fixtures.js';
import { createRooflineModel } from '../../src/latency/roofline.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import { buildReport } from '../../src/sim/report.js';
import { runChecked } from '../invariants/harness.js';
import { GOLDEN_CASES, type GoldenCase } from './golden-cases.js';
import { goldenRequests } from './golden-workload.js';

const FAKE_MODEL = model({ intermediateDim: 0, hiddenAct: '' });
const FAKE_HW = { TFlopsPeak: 989.0, TFlopsFP8: 0, BwPeakTBs: 3.35, mfuPrefill: 0.55, mfuDecode: 0.3, MemoryGiB: 0 };

const INTEGER_KEYS = ['completed_requests', 'total_input_tokens', 'total_output_tokens'];

/**
 * Block-level prefix-cache hits/misses, from blis-core.md §10 (an independent port's values; the reference
 * test does not assert them). Only cases 0 and 1 are documented.
 */
const CACHE_COUNTS: Readonly<Record<number, readonly [hits: number, misses: number]>> = {
  0: [5083, 5766],
  1: [0, 35072],
};

function setupFor(c: GoldenCase): EngineSetup {
  return {
    numInstances: 1,
    horizon: MAX_INT64,
    admissionLatency: 0,
    routingLatency: 0,
    maxNumSeqs: c.maxNumSeqs,
    maxNumBatchedTokens: c.maxNumBatchedTokens,
    longPrefillTokenThreshold: c.longPrefillTokenThreshold,
    maxModelLen: c.maxModelLen,
    scheduler: 'fcfs',
    preemptionPolicy: 'fcfs',
    kv: { totalBlocks: c.totalKvBlocks, blockSize: c.blockSize, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
    latency: createRooflineModel({ model: FAKE_MODEL, hardware: FAKE_HW, tp: c.tp, alpha: c.alpha }),
  };
}

function relErr(got: number, want: number): number {
  if (want === 0) return Math.abs(got);
  return Math.abs(got - want) / Math.abs(want);
}

describe('golden dataset (reference testdata/goldendataset.json)', () => {
  GOLDEN_CASES.forEach((c, i) => {
    it(`case ${i}: ${c.label} tp=${c.tp} n=${c.numRequests}`, () => {
      const requests = goldenRequests({
        seed: c.seed, rate: c.rate, numRequests: c.numRequests, prefixTokens: c.prefixTokens, prompt: c.prompt, output: c.output,
      });
      // The recorder's deep per-event checks walk the whole block table; case 2 has 1.28M blocks, so only the
      // small caches get them. The end-of-run checks run on every case.
      const { cs } = runChecked(setupFor(c), requests, { deep: c.totalKvBlocks <= 10_000 });
      const out = buildReport(cs).clusterOutput;
      const mismatches: string[] = [];
      for (const [key, want] of Object.entries(c.metrics)) {
        const got = out[key];
        if (typeof got !== 'number') {
          mismatches.push(`${key}: missing`);
        } else if (INTEGER_KEYS.includes(key) ? got !== want : relErr(got, want) > 1e-9) {
          mismatches.push(`${key}: got ${got}, want ${want} (rel ${relErr(got, want).toExponential(2)})`);
        }
      }
      expect(mismatches).toEqual([]);
      // Every request completes; nothing is preempted, dropped, capped or timed out.
      expect(out['completed_requests']).toBe(c.numRequests);
      expect(out['preemption_count']).toBe(0);
      expect(out['dropped_unservable']).toBe(0);
      expect(out['length_capped_requests']).toBe(0);
      expect(out['timed_out_requests']).toBe(0);
      const inst = cs.instances[0]!;
      expect(inst.kv.usedBlocks()).toBe(0);
      const counts = CACHE_COUNTS[i];
      if (counts) {
        const kv = inst.kv;
        expect(kv).toBeInstanceOf(BlockKVCache);
        const bk = kv as BlockKVCache;
        expect([bk.cacheHits, bk.cacheMisses]).toEqual(counts);
      }
    });
  });
});
