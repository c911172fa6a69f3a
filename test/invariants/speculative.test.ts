/**
 * Speculative decoding under every invariant checker (conservation, lifecycle, clock, KV, causality, work
 * conservation, token accounting with one ITL per verification step), with KV pressure and preemptions, in
 * both semantics (corrected: K+1 budget and look-ahead KV reservation), and INV-6 determinism.
 */
import { describe, expect, it } from 'vitest';
import { Request } from '../../src/domain/request.js';
import { MAX_INT64 } from '../../src/domain/units.js';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import { checkDeterminism, runChecked } from './harness.js';

function setup(corrected: boolean, over: Partial<EngineSetup> = {}): EngineSetup {
  return {
    numInstances: 1,
    horizon: MAX_INT64,
    admissionLatency: 0,
    routingLatency: 0,
    maxNumSeqs: 16,
    maxNumBatchedTokens: 96,
    longPrefillTokenThreshold: 0,
    maxModelLen: 0,
    scheduler: 'fcfs',
    preemptionPolicy: 'fcfs',
    kv: { totalBlocks: 60, blockSize: 4, cpuBlocks: 0, transferBandwidth: 100, transferBaseLatency: 0 },
    latency: createBlackboxModel({ alpha: [100, 0.5, 10], beta: [1000, 2, 5], verifyWidth: 4 }),
    speculative: { k: 3, accepted: 2.1, lookahead: corrected },
    ...(corrected ? { semantics: 'corrected' as const } : {}),
    ...over,
  };
}

function req(i: number): Request {
  const ids = (n: number, off: number): Int32Array => Int32Array.from({ length: n }, (_, k) => ((i + 1) * 1000 + off + k) % 128000);
  return new Request(`request_${i}`, ids(6 + ((i * 13) % 40), 0), ids(5 + ((i * 17) % 60), 500), Math.floor(i / 4) * 50);
}
const requests = (): Request[] => Array.from({ length: 40 }, (_, i) => req(i));

describe('speculative decoding keeps every invariant', () => {
  for (const corrected of [false, true]) {
    it(`${corrected ? 'corrected' : 'reference'} semantics, KV pressure and preemptions`, () => {
      const reqs = requests();
      const { cs, log } = runChecked(setup(corrected), reqs, { deep: true, maxEvents: 500_000 });
      const m = cs.instances[0]!.metrics;
      expect(m.completedRequests).toBe(reqs.length);
      expect(m.preemptionCount).toBeGreaterThan(0);
      expect(m.totalOutputTokens).toBe(reqs.reduce((s, r) => s + r.outputLen, 0));
      expect(log.violations).toEqual([]);
    });
  }

  it('INV-6: the same run twice renders the same bytes (lazy decode slots are off under speculation)', () => {
    expect(checkDeterminism(setup(false, { numInstances: 2 }), requests, 2)).toEqual([]);
    expect(checkDeterminism(setup(true, { numInstances: 2 }), requests, 2)).toEqual([]);
  });
});
