import { describe, expect, it } from 'vitest';
import type { ClusterSimulator } from './cluster.js';
import { TimeSeriesSampler } from './timeseries.js';

/** The few fields the sampler reads, for a cluster whose instance set changes during the run. */
function fakeInstance(id: string): { id: string; queueDepth: number; batchSize: number; kv: object; metrics: { completedRequests: number; timedOutRequests: number; droppedUnservable: number; preemptionCount: number; totalOutputTokens: number; stepItl: { length: number; toArray(): Float64Array } }; steps: number[] } {
  const steps: number[] = [];
  return {
    id,
    queueDepth: 0,
    batchSize: 0,
    kv: { totalBlocks: 100, usedBlocks: () => 25, tierStats: () => ({ cpuTotalBlocks: 0, cpuUsedBlocks: 0, offloads: 0, reloads: 0 }) },
    metrics: {
      completedRequests: 0, timedOutRequests: 0, droppedUnservable: 0, preemptionCount: 0, totalOutputTokens: 0,
      stepItl: { get length() { return steps.length; }, toArray: () => Float64Array.from(steps) },
    },
    steps,
  };
}

function fakeCluster(): { cs: ClusterSimulator; instances: ReturnType<typeof fakeInstance>[]; arrivals: unknown[] } {
  const instances: ReturnType<typeof fakeInstance>[] = [];
  const arrivals: unknown[] = [];
  const cs = {
    instances, arrivals, inFlight: [] as number[], rejectedRequests: 0, admissionDelays: 0, routingRejections: 0,
    gatewayCounters: () => ({ queueDepth: 0, queueShed: 0, queueRejected: 0, evicted: 0, expired: 0 }),
  };
  return { cs: cs as unknown as ClusterSimulator, instances, arrivals };
}

describe('TimeSeriesSampler', () => {
  it('follows instances that join and leave, and keeps totals exact through coarsening', () => {
    const { cs, instances, arrivals } = fakeCluster();
    instances.push(fakeInstance('a'));
    const s = new TimeSeriesSampler(cs, { intervalUs: 10, maxRows: 4, outputTokenProcessingUs: 1 });
    let completedB = 0;
    // Ticks 10..90: each tick, one arrival and one completion on every present instance; b joins at t=35,
    // a leaves at t=65.
    for (let t = 1; t <= 95; t++) {
      s.sampleUpTo(t);
      if (t % 10 === 5) {
        arrivals.push(t);
        for (const i of instances) {
          i.metrics.completedRequests++;
          i.steps.push(11);
          if (i.id === 'b') completedB++;
        }
      }
      if (t === 35) instances.push(fakeInstance('b'));
      if (t === 65) instances.shift();
    }
    s.finish(95);
    const d = s.data();
    // 9 ticks with maxRows 4: the interval doubled twice (10 -> 20 -> 40).
    expect(d.intervalUs).toBe(40);
    expect(d.times).toEqual([40, 80, 95]);
    expect(d.cluster['arrivals']).toEqual([4, 4, 2]);
    const a = d.instances.find((x) => x.id === 'a');
    const b = d.instances.find((x) => x.id === 'b');
    expect(a?.firstRow).toBe(0);
    expect(b?.firstRow).toBe(0);
    // a completed 7 (t=5..65), b completed 6 (t=45..95); the columns sum to that.
    expect((a?.values['completed'] ?? []).reduce((x, y) => x + y, 0)).toBe(7);
    expect((b?.values['completed'] ?? []).reduce((x, y) => x + y, 0)).toBe(completedB);
    expect((d.cluster['completed'] ?? []).reduce((x, y) => x + y, 0)).toBe(7 + completedB);
    // After a left, it shows no load and no new completions.
    expect(a?.values['kv_gpu_utilization']).toEqual([0.25, 0, 0]);
    expect(a?.values['completed']?.slice(1)).toEqual([3, 0]);
    // Step time = ITL minus the output-token overhead.
    expect(b?.values['step_time_us']).toEqual([0, 10, 10]);
    expect(d.cluster['replicas']).toBeUndefined();
  });

  it('rejects an interval that is not a whole number of µs >= 1', () => {
    const { cs } = fakeCluster();
    expect(() => new TimeSeriesSampler(cs, { intervalUs: 0.5, maxRows: 10, outputTokenProcessingUs: 0 })).toThrow(RangeError);
    expect(() => new TimeSeriesSampler(cs, { intervalUs: 10, maxRows: 1, outputTokenProcessingUs: 0 })).toThrow(RangeError);
  });
});
