import { describe, expect, it } from 'vitest';
import { analyzeSaturation, collectModelSignals, effectiveSaturationConfig, saturationConfigError, unlimitedEngine, type ReplicaSignal } from './autoscale-saturation.js';
import { routingSnapshot } from './types.js';

const C = effectiveSaturationConfig({});
const rep = (id: string, cap: number, used: number, queue: number, gpu = 'H100', tp = 1, cost = 0): ReplicaSignal => ({
  instanceId: id, variant: { gpuType: gpu, tp }, kvUtilization: used / cap, queueDepth: queue, inFlight: queue, batchSize: 0, maxBatchSize: 256, costPerHour: cost, totalKvCapacityTokens: cap, kvTokensInUse: used,
});

describe('V2 saturation analyzer and unlimited engine (reference saturation_analyzer.go, engine.go)', () => {
  it('defaults and validation', () => {
    expect(C).toEqual({ kvCacheThreshold: 0.8, scaleUpThreshold: 0.8, scaleDownBoundary: 0.4, avgInputTokens: 512 });
    expect(saturationConfigError(C)).toBeNull();
    expect(saturationConfigError({ ...C, scaleDownBoundary: 0.8 })).toMatch(/must be < scale_up_threshold/);
    expect(saturationConfigError({ ...C, kvCacheThreshold: 1.5 })).toMatch(/kv_cache_threshold/);
  });
  it('scale up: required = demand / upThreshold - (supply + pending x kvThreshold), replicas = ceil(required / per-replica supply)', () => {
    // supply = 2 x 10000 x 0.8 = 16000; demand = 2 x (9000 + 2 x 512) = 20048; required = 25060 - 16000 = 9060.
    const r = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 9000, 2), rep('b', 10000, 9000, 2)], pendingReplicas: 0, pendingCapacityTokens: 0 }, C);
    expect(r.totalSupply).toBe(16000);
    expect(r.totalDemand).toBe(20048);
    expect(r.requiredCapacity).toBe(20048 / 0.8 - 16000);
    expect(unlimitedEngine([r])).toEqual([{ model: 'm', variant: { gpuType: 'H100', tp: 1 }, delta: Math.ceil((20048 / 0.8 - 16000) / 8000) }]);
    // Pending (loading) capacity counts as supply for scale-up.
    const p = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 9000, 2), rep('b', 10000, 9000, 2)], pendingReplicas: 2, pendingCapacityTokens: 20000 }, C);
    expect(p.requiredCapacity).toBe(0);
  });
  it('scale down only with more than one replica and when removing the largest still leaves supply above demand / boundary', () => {
    const idle = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 0, 0), rep('b', 10000, 0, 0), rep('c', 10000, 100, 0)], pendingReplicas: 0, pendingCapacityTokens: 0 }, C);
    expect(idle.spareCapacity).toBe(24000 - 100 / 0.4);
    expect(unlimitedEngine([idle])).toEqual([{ model: 'm', variant: { gpuType: 'H100', tp: 1 }, delta: -2 }]);
    const one = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 0, 0)], pendingReplicas: 0, pendingCapacityTokens: 0 }, C);
    expect(one.spareCapacity).toBe(0);
    // Spare exists but removing a replica would cross the boundary: no scale-down.
    const tight = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 3500, 0), rep('b', 10000, 3500, 0)], pendingReplicas: 0, pendingCapacityTokens: 0 }, C);
    expect(16000 - 7000 / 0.4).toBeLessThan(0);
    expect(tight.spareCapacity).toBe(0);
  });
  it('scales up the cheapest variant and down the most expensive one', () => {
    const r = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 9900, 9, 'A100', 1, 2), rep('b', 10000, 9900, 9, 'H100', 1, 5)], pendingReplicas: 0, pendingCapacityTokens: 0 }, C);
    expect(unlimitedEngine([r])[0]?.variant.gpuType).toBe('A100');
    const d = analyzeSaturation({ model: 'm', replicas: [rep('a', 10000, 0, 0, 'A100', 1, 2), rep('b', 10000, 0, 0, 'H100', 1, 5), rep('c', 10000, 0, 0, 'A100', 1, 2)], pendingReplicas: 0, pendingCapacityTokens: 0 }, C);
    expect(unlimitedEngine([d])[0]?.variant.gpuType).toBe('H100');
    expect(unlimitedEngine([d])[0]?.delta).toBe(-1);
  });
  it('collects routable snapshots by model (skipping unknown model or GPU), loading ones as pending, models sorted', () => {
    const s = collectModelSignals({
      clock: 0,
      snapshots: [routingSnapshot('i1', { model: 'z', gpuType: 'H100' }), routingSnapshot('i2', { model: 'a', gpuType: 'H100', tpDegree: 2 }), routingSnapshot('i3', { model: 'a', gpuType: '' }), routingSnapshot('i4', { model: '', gpuType: 'H100' })],
      loadingSnapshots: [routingSnapshot('i5', { model: 'b', gpuType: 'H100', totalKvCapacityTokens: 500 }), routingSnapshot('i6', { model: 'b', gpuType: 'H100', totalKvCapacityTokens: 0 })],
    });
    expect(s.map((m) => [m.model, m.replicas.map((r) => r.instanceId), m.pendingReplicas, m.pendingCapacityTokens])).toEqual([['a', ['i2'], 0, 0], ['b', [], 1, 500], ['z', ['i1'], 0, 0]]);
    expect(s[0]?.replicas[0]?.variant).toEqual({ gpuType: 'H100', tp: 2 });
  });
});
