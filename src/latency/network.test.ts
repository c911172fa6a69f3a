/**
 * Inter-node network cost (--gpus-per-node, --inter-node-bandwidth, --inter-node-latency): each backend's
 * arithmetic against a hand calculation written out here, and the within-one-node case byte-identical to no
 * network at all.
 */
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from '../config/catalog/hardware.js';
import { GPU_PHYSICS } from '../config/catalog/gpu-physics.js';
import { createCorrectedPhysicsModel } from './corrected-physics.js';
import { LatencyConfigError } from './errors.js';
import { crossNodeFraction, nodesSpanned, type InterNodeNetwork } from './network.js';
import { createRooflineModel } from './roofline.js';
import { createTrainedPhysicsModel } from './trained-physics.js';
import { model, req, times } from './test-fixtures.js';
import { stepBatchOf, type HardwareConfig } from './types.js';

/** Llama-8B-shaped but with 32 KV heads, so that TP 16 divides them: d = 4096, L = 32, 2-byte activations. */
const mha = model({ numKVHeads: 32 });
const moe = model({ numLocalExperts: 8, numExpertsPerTok: 2, moeExpertFFNDim: 14336 });
const h100: HardwareConfig = { ...GPU_CATALOG.H100 };
/** One prefill request of 1000 new tokens. */
const prefill1000 = stepBatchOf([req(1000, 0, 0, 1000)]);
const net = (gpusPerNode: number, latencyUs = 0, bandwidthGBs = 50): InterNodeNetwork => ({ gpusPerNode, bandwidthGBs, latencyUs });

describe('nodes spanned and the cross-node share', () => {
  it('a group inside one node spans 1 node and has no cross-node share', () => {
    expect(nodesSpanned(undefined, 64)).toBe(1);
    expect(nodesSpanned(net(8), 8)).toBe(1);
    expect(crossNodeFraction(1)).toBe(0);
  });
  it('TP 16 over 8-GPU nodes spans 2 nodes, half of the bytes cross; 32 over 8 spans 4, three quarters cross', () => {
    expect(nodesSpanned(net(8), 16)).toBe(2);
    expect(crossNodeFraction(2)).toBe(0.5);
    expect(nodesSpanned(net(8), 32)).toBe(4);
    expect(crossNodeFraction(4)).toBe(0.75);
  });
});

describe('trained-physics', () => {
  // Only β3 (the TP all-reduce term) is non-zero, so the step time is the all-reduce time alone.
  const beta = [0, 0, 0, 1, 0, 0, 0];
  const tp16 = (network?: InterNodeNetwork): number =>
    createTrainedPhysicsModel({ model: mha, hardware: h100, tp: 16, alpha: [0, 0, 0], beta, ...(network ? { network } : {}) }).stepTime(prefill1000);

  it('TP 16 on 8-GPU nodes: the cross-node half of the ring all-reduce bytes moves at 50 GB/s (hand calculation)', () => {
    // One all-reduce moves T·d·bytes·2·(tp−1)/tp = 1000·4096·2·2·15/16 = 15,360,000 bytes per GPU; a dense
    // model runs 2 per layer (attention, MLP): 64 × 15,360,000 = 983,040,000 bytes.
    // One node: all at HBM, 983,040,000 / 3.35e6 bytes/µs = 293.445 µs.
    expect(tp16()).toBe(Math.trunc(983_040_000 / 3.35e6));
    expect(tp16()).toBe(293);
    // Two nodes: half at HBM (146.72 µs) + half at 50 GB/s = 5e4 bytes/µs (9830.4 µs) = 9977.12 µs.
    expect(tp16(net(8))).toBe(Math.trunc(491_520_000 / 3.35e6 + 491_520_000 / 5e4));
    expect(tp16(net(8))).toBe(9977);
  });

  it('adds the inter-node latency once per crossing collective (64 all-reduces)', () => {
    // 9977.12 µs + 64 × 10 µs = 10617.12 µs.
    expect(tp16(net(8, 10))).toBe(10617);
  });

  it('a TP group inside one node (--gpus-per-node 16) is byte-identical to no network', () => {
    const full = [0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444, 126.024825];
    const mixed = stepBatchOf([...times(3, () => req(128, 0, 0, 128)), ...times(5, () => req(256, 10, 266, 1))]);
    const m = (network?: InterNodeNetwork): number =>
      createTrainedPhysicsModel({ model: mha, hardware: h100, tp: 16, alpha: [0, 0, 0], beta: full, ...(network ? { network } : {}) }).stepTime(mixed);
    expect(m(net(16, 1000))).toBe(m());
    expect(m(net(8))).toBeGreaterThan(m());
  });

  it('MoE at DP 8 × TP 2: the expert all-to-all over 16 GPUs on 8-GPU nodes pays the cross-node half', () => {
    // Only β10 (dispatch) is non-zero. all-to-all family: per MoE layer (T/dp)·k·(G−1)/G·2 tokens of d·2 bytes =
    // 125·2·15/16·2 · 4096·2 = 3,840,000 bytes; 32 MoE layers.
    const b = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const m = (network?: InterNodeNetwork): number =>
      createTrainedPhysicsModel({ model: moe, hardware: h100, tp: 2, dp: 8, moeCommBackend: 'deepep_high_throughput', alpha: [0, 0, 0], beta: b, ...(network ? { network } : {}) }).stepTime(prefill1000);
    expect(m()).toBe(Math.trunc(32 * (3_840_000 / 3.35e6))); // 36.68 µs
    // 32 × (1,920,000 / 3.35e6 + 1,920,000 / 5e4) = 32 × 38.9731 = 1247.14 µs; + 2 × 32 collectives × 5 µs.
    expect(m(net(8))).toBe(1247);
    expect(m(net(8, 5))).toBe(1247 + 320);
  });

  it('refuses a TP group larger than a node that is not a multiple of it', () => {
    expect(() => createTrainedPhysicsModel({ model: mha, hardware: h100, tp: 16, alpha: [0, 0, 0], beta, network: net(6) })).toThrow(LatencyConfigError);
    expect(() => createTrainedPhysicsModel({ model: mha, hardware: h100, tp: 16, alpha: [0, 0, 0], beta, network: net(6) })).toThrow(/not a multiple of gpus per node/);
    expect(() => createTrainedPhysicsModel({ model: mha, hardware: h100, tp: 8, alpha: [0, 0, 0], beta, network: net(8, 0, 0) })).toThrow(/inter-node bandwidth must be/);
  });
});

describe('roofline (beyond upstream, #1663)', () => {
  const roof = (network?: InterNodeNetwork): number =>
    createRooflineModel({ model: mha, hardware: h100, tp: 16, alpha: [0, 0, 0], ...(network ? { network } : {}) }).stepTime(prefill1000);

  it('adds the cross-node share of 2 ring all-reduces per layer and their latency (hand calculation)', () => {
    // Per token: 2·L·d·bytes·2(tp−1)/tp·½ = 2·32·4096·2·(30/16)·0.5 = 491,520 bytes; 1000 tokens at 5e4 bytes/µs
    // = 9830.4 µs; + 64 all-reduces × 10 µs = 10,470.4 µs on top of the roofline time.
    const extra = roof(net(8, 10)) - roof();
    expect(Math.abs(extra - 10_470.4)).toBeLessThanOrEqual(1);
  });

  it('inside one node the roofline is unchanged', () => {
    expect(roof(net(16, 10))).toBe(roof());
  });
});

describe('corrected-physics', () => {
  const hw: HardwareConfig = { ...GPU_CATALOG.H100, physics: GPU_PHYSICS.H100! };
  const comm = (network?: InterNodeNetwork): number => {
    const m = createCorrectedPhysicsModel({ model: mha, hardware: hw, tp: 16, ...(network ? { network } : {}) });
    const g = new Float64Array(m.linear!.names.length);
    m.linear!.stepGradient(prefill1000, g);
    return g[m.linear!.names.indexOf('comm')]!;
  };

  it('TP 16 on 8-GPU nodes: 1/2 of the ring bytes on NVLink, 1/2 at the inter-node bandwidth, + latency (hand calculation)', () => {
    // Ring bytes per GPU: 1000·4096·2 · 2·15/16 = 15,360,000; half = 7,680,000. NVLink part over 16 GPUs
    // (hops (1 + log2 16)/2 = 2.5): the cheaper of 8.5·2.5 + 7.68e6/57e3 = 155.99 and 13.5·2.5 + 7.68e6/360e3
    // = 55.083 µs; inter-node part 7.68e6 / 5e4 = 153.6 µs; latency 10 µs. Two all-reduces per layer × 32.
    const perCollective = 13.5 * 2.5 + 7.68e6 / 360e3 + 7.68e6 / 5e4 + 10;
    expect(comm(net(8, 10))).toBeCloseTo(64 * perCollective, 6);
  });

  it('a TP group inside one node (--gpus-per-node 16) runs on the intra-node link alone', () => {
    // 64 × the cheaper of 8.5·2.5 + 15.36e6/57e3 and 13.5·2.5 + 15.36e6/360e3 = 76.417 µs.
    expect(comm(net(16, 10))).toBeCloseTo(64 * (13.5 * 2.5 + 15.36e6 / 360e3), 6);
    // Without the flags the GPU's own interconnect entry decides (H100: 8 per node, TP 16 wholly on InfiniBand).
    expect(comm()).toBeGreaterThan(comm(net(16, 10)));
  });
});
