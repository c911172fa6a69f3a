import { describe, expect, it } from 'vitest';
import { createBlackboxModel } from '../../src/latency/blackbox.js';
import { bothModes, engineSetup, req } from './helpers.js';
const PREFILL_COST = createBlackboxModel({ alpha: [0, 0, 0], beta: [1000, 10, 0] });
describe('K8 probe', () => {
  it('x', () => {
    const r = bothModes(engineSetup({ latency: PREFILL_COST, kv: { totalBlocks: 5, blockSize: 16, cpuBlocks: 16, transferBandwidth: 16, transferBaseLatency: 5 } }), () => [
      req(0, 48, 2, 0), req(1, 64, 2, 100_000, { base: 500 }), req(2, 56, 2, 200_000)]);
    for (const m of ['reference', 'corrected'] as const) {
      const x = r[m];
      console.log(m, x.reqs.map((q) => [q.ttft, q.e2e]), x.cs.instances[0]!.kv.cacheHitRate(), x.cs.instances[0]!.kv.tierStats());
    }
  });
});
