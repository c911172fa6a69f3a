import { describe, expect, it } from 'vitest';
import type { AutoScaleContext } from './autoscale.js';
import { makeAutoscalePolicy, replicaUtilization, TARGET_UTILIZATION_DEFAULTS, targetUtilizationPolicy, thresholdPolicy, THRESHOLD_DEFAULTS } from './autoscale-policies.js';

/** `n` replicas, each with the given KV utilization, running batch (of 256 seats) and queue. */
function ctx(n: number, o: { kv?: number; batch?: number; queue?: number; since?: number; min?: number; max?: number }): AutoScaleContext {
  const kv = o.kv ?? 0;
  const queue = o.queue ?? 0;
  return {
    configId: 'd', currentReplicas: n, minReplicas: o.min ?? 1, maxReplicas: o.max ?? 20,
    metrics: { avgQueueDepth: queue, avgUtilization: kv, requestRate: 0, sloAttainment: {}, avgLatencyMs: 0, p99LatencyMs: 0 },
    loadHistory: [], pendingRequests: queue * n, clock: 1e9, timeSinceLastScaleUs: o.since ?? 1e9,
    replicas: Array.from({ length: n }, (_, k) => ({
      instanceId: `i${k}`, variant: { gpuType: 'H100', tp: 1 }, kvUtilization: kv, queueDepth: queue, inFlight: (o.batch ?? 0) + queue,
      batchSize: o.batch ?? 0, maxBatchSize: 256, costPerHour: 0, totalKvCapacityTokens: 100_000, kvTokensInUse: kv * 100_000,
    })),
    pendingReplicas: 0, pendingCapacityTokens: 0,
  };
}

describe('built-in autoscaling policies', () => {
  it('utilization is per replica the larger of KV utilization and batch occupancy', () => {
    expect(replicaUtilization(ctx(2, { kv: 0.05, batch: 128 }))).toBe(0.5);
    expect(replicaUtilization(ctx(2, { kv: 0.7, batch: 64 }))).toBe(0.7);
  });

  it('target-utilization: ceil(current x utilization / target), tolerance band, at most half removed per decision', () => {
    const p = targetUtilizationPolicy();
    expect(TARGET_UTILIZATION_DEFAULTS.target).toBe(0.4);
    // 4 replicas at occupancy 0.5 (+0.05 per queued request x 2): 0.6 / 0.4 -> 6.
    expect(p.evaluate(ctx(4, { batch: 128, queue: 2 })).targetReplicas).toBe(6);
    // 0.42 / 0.4 is within 10 %: no change.
    expect(p.evaluate(ctx(4, { kv: 0.42 })).action).toBe('none');
    // 10 replicas nearly idle would want 1; the scale-down limit keeps 5.
    const d = p.evaluate(ctx(10, { batch: 10 }));
    expect(d).toMatchObject({ action: 'down', targetReplicas: 5 });
    const unlimited = targetUtilizationPolicy({ ...TARGET_UTILIZATION_DEFAULTS, maxScaleDownFraction: 1 });
    expect(unlimited.evaluate(ctx(10, { batch: 10 })).targetReplicas).toBe(1);
    // Bounds clamp the answer.
    expect(p.evaluate(ctx(4, { batch: 256, queue: 40, max: 6 })).targetReplicas).toBe(6);
  });

  it('threshold: one step up above a high mark, one step down below both low marks, nothing while cooling down', () => {
    const p = thresholdPolicy();
    expect(p.evaluate(ctx(3, { queue: 9 })).targetReplicas).toBe(4);
    expect(p.evaluate(ctx(3, { batch: 220 })).targetReplicas).toBe(4);
    // KV nearly empty but batches 60 % full: busy, not scaled down.
    expect(p.evaluate(ctx(3, { kv: 0.02, batch: 154 })).action).toBe('none');
    expect(p.evaluate(ctx(3, { kv: 0.02, batch: 20 })).targetReplicas).toBe(2);
    expect(p.evaluate(ctx(3, { queue: 9, since: THRESHOLD_DEFAULTS.cooldownUs - 1 })).action).toBe('none');
  });

  it('parameters override the defaults by name', () => {
    const p = makeAutoscalePolicy('target-utilization', {}, { target: 0.25 });
    // occupancy 0.5 against 0.25 -> twice the replicas.
    expect(p.evaluate(ctx(3, { batch: 128 })).targetReplicas).toBe(6);
    const t = makeAutoscalePolicy('threshold', {}, { step: 3, scaleUpQueueDepth: 2 });
    expect(t.evaluate(ctx(3, { queue: 3 })).targetReplicas).toBe(6);
  });
});
