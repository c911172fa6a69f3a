// Scenarios and numbers from the reference's sim/cluster/gateway_queue_test.go.
import { describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../../domain/slo.js';
import type { Request } from '../../domain/request.js';
import { roundRobinPolicy } from './bands.js';
import { GatewayQueue, type DispatchOrder } from './gateway-queue.js';
import { req } from './test-helpers.js';

const PM = new SloPriorityMap();

function queue(order: DispatchOrder, maxDepth = 0, pm = PM): GatewayQueue {
  return new GatewayQueue(order, maxDepth, pm);
}

function drain(q: GatewayQueue, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((q.dequeue() as Request).id);
  return out;
}

describe('GatewayQueue dequeue order', () => {
  it('fifo: global seq order regardless of priority', () => {
    const q = queue('fifo');
    q.enqueue(req('r1', { slo: 'critical' }), 1);
    q.enqueue(req('r2', { slo: 'background' }), 2);
    q.enqueue(req('r3', { slo: 'standard' }), 3);
    expect(drain(q, 3)).toEqual(['r1', 'r2', 'r3']);
    expect(q.length).toBe(0);
  });

  it('priority: highest band first', () => {
    const q = queue('priority');
    q.enqueue(req('r1', { slo: 'background' }), 1);
    q.enqueue(req('r2', { slo: 'critical' }), 2);
    q.enqueue(req('r3', { slo: 'standard' }), 3);
    expect(drain(q, 3)).toEqual(['r2', 'r3', 'r1']);
  });

  it('priority: FIFO within one priority', () => {
    const q = queue('priority');
    q.enqueue(req('r1', { slo: 'standard' }), 10);
    q.enqueue(req('r2', { slo: 'standard' }), 20);
    q.enqueue(req('r3', { slo: 'standard' }), 30);
    expect(drain(q, 3)).toEqual(['r1', 'r2', 'r3']);
  });

  it('empty queue dequeues null', () => {
    expect(queue('fifo').dequeue()).toBeNull();
    expect(queue('slo-deadline').dequeue()).toBeNull();
    expect(queue('priority').dequeueGated(0)).toBeNull();
  });

  it('rejects an unknown dispatch order and a negative depth', () => {
    expect(() => queue('bogus' as DispatchOrder)).toThrow(/dispatch order/);
    expect(() => queue('fifo', -1)).toThrow(/max depth/);
  });

  it('bands by priority, tenants as flows, default tenant for ""', () => {
    const q = queue('priority');
    q.enqueue(req('r1', { tenant: 'tenant-A', slo: 'standard' }), 1);
    q.enqueue(req('r2', { tenant: 'tenant-B', slo: 'standard' }), 2);
    q.enqueue(req('r3', { slo: 'critical' }), 3);
    expect(drain(q, 3)).toEqual(['r3', 'r1', 'r2']);
    const q2 = queue('priority');
    q2.enqueue(req('r1', { slo: 'standard' }), 1);
    q2.enqueue(req('r2', { tenant: 'default', slo: 'standard' }), 2);
    expect(q2.lengthOfBand(3)).toBe(2);
    expect(drain(q2, 2)).toEqual(['r1', 'r2']);
  });

  it('band dispatch order a, b, c, d', () => {
    const q = queue('priority');
    q.enqueue(req('d', { slo: 'batch' }), 1);
    q.enqueue(req('b', { slo: 'standard' }), 2);
    q.enqueue(req('a', { slo: 'critical' }), 3);
    q.enqueue(req('c', { slo: 'standard' }), 4);
    expect(drain(q, 4)).toEqual(['a', 'b', 'c', 'd']);
    expect(q.dequeue()).toBeNull();
  });

  it('global-strict picks the earliest head; it is the default', () => {
    const q = queue('priority');
    q.enqueue(req('b1', { tenant: 'B', slo: 'standard' }), 10);
    q.enqueue(req('b2', { tenant: 'B', slo: 'standard' }), 20);
    q.enqueue(req('c1', { tenant: 'C', slo: 'standard' }), 5);
    expect(drain(q, 3)).toEqual(['c1', 'b1', 'b2']);
  });

  it('lengthOfBand and custom priorities', () => {
    const q = queue('priority');
    q.enqueue(req('r1', { slo: 'critical' }), 1);
    q.enqueue(req('r2', { slo: 'standard' }), 2);
    q.enqueue(req('r3', { slo: 'standard' }), 3);
    q.enqueue(req('r4', { slo: 'background' }), 4);
    expect([q.lengthOfBand(4), q.lengthOfBand(3), q.lengthOfBand(-3), q.lengthOfBand(99), q.length]).toEqual([1, 2, 1, 0, 4]);
    const c = queue('priority', 0, new SloPriorityMap({ batch: 0 }));
    c.enqueue(req('r1', { slo: 'batch' }), 1);
    c.enqueue(req('r2', { slo: 'standard' }), 2);
    expect(drain(c, 2)).toEqual(['r2', 'r1']);
  });
});

describe('GatewayQueue capacity, shedding, rejection', () => {
  it('full queue of non-sheddables rejects everything', () => {
    const q = queue('priority', 2);
    q.enqueue(req('r1', { slo: 'standard' }), 1);
    q.enqueue(req('r2', { slo: 'critical' }), 2);
    expect(q.enqueue(req('r3', { slo: 'sheddable' }), 3)).toEqual({ outcome: 'rejected', victim: null });
    expect(q.rejectedCount).toBe(1);
    expect(q.enqueue(req('r4', { slo: 'critical' }), 4).outcome).toBe('rejected');
    expect(q.rejectedCount).toBe(2);
    expect(drain(q, 2)).toEqual(['r2', 'r1']);
  });

  it('shedding: a standard arrival displaces a queued batch request', () => {
    const q = queue('priority', 2);
    q.setSheddingEnabled(true);
    q.enqueue(req('r1', { slo: 'batch' }), 1);
    q.enqueue(req('r2', { slo: 'standard' }), 2);
    const r = q.enqueue(req('r3', { slo: 'standard' }), 3);
    expect(r.outcome).toBe('shed-victim');
    expect(r.victim?.id).toBe('r1');
    expect([q.length, q.shedCount]).toEqual([2, 1]);
  });

  it('lower sheddable never displaces a higher one; higher displaces lower', () => {
    const q = queue('priority', 2);
    q.enqueue(req('r1', { slo: 'batch' }), 1);
    q.enqueue(req('r2', { slo: 'standard' }), 2);
    expect(q.enqueue(req('r3', { slo: 'background' }), 3).outcome).toBe('rejected');
    expect([q.rejectedCount, q.length]).toEqual([1, 2]);
    const q2 = queue('priority', 2);
    q2.setSheddingEnabled(true);
    q2.enqueue(req('r1', { slo: 'background' }), 1);
    q2.enqueue(req('r2', { slo: 'standard' }), 2);
    const r = q2.enqueue(req('r3', { slo: 'batch' }), 3);
    expect([r.outcome, r.victim?.id, q2.length, q2.shedCount]).toEqual(['shed-victim', 'r1', 2, 1]);
  });

  it('equal priority: only an earlier seq displaces, and the victim is the newest', () => {
    const q = queue('priority', 2);
    q.setSheddingEnabled(true);
    q.enqueue(req('r1', { slo: 'batch' }), 10);
    q.enqueue(req('r2', { slo: 'batch' }), 20);
    const r = q.enqueue(req('r3', { slo: 'batch' }), 5);
    expect([r.outcome, r.victim?.id]).toEqual(['shed-victim', 'r2']);
    expect(q.enqueue(req('r4', { slo: 'batch' }), 25)).toEqual({ outcome: 'rejected', victim: null });
  });

  it('shedding is off by default', () => {
    const q = queue('priority', 2);
    q.enqueue(req('r1', { slo: 'standard' }), 1);
    q.enqueue(req('r2', { slo: 'sheddable' }), 2);
    expect(q.enqueue(req('r3', { slo: 'critical' }), 3).outcome).toBe('rejected');
    expect([q.shedCount, q.rejectedCount]).toEqual([0, 1]);
    const q2 = queue('fifo', 10);
    for (let i = 0; i < 10; i++) q2.enqueue(req(`r${i}`, { slo: 'sheddable' }), i);
    expect(q2.enqueue(req('overflow', { slo: 'critical' }), 100).outcome).toBe('rejected');
    const q3 = queue('priority', 2);
    q3.setSheddingEnabled(true);
    q3.enqueue(req('r1', { slo: 'standard' }), 1);
    q3.enqueue(req('r2', { slo: 'sheddable' }), 2);
    const r = q3.enqueue(req('r3', { slo: 'critical' }), 3);
    expect([r.outcome, r.victim?.id, q3.shedCount]).toEqual(['shed-victim', 'r2', 1]);
  });

  it('per-band capacity rejects within the band only, before the global check', () => {
    const q = queue('priority');
    q.setPerBandCapacity(2);
    q.enqueue(req('r1', { slo: 'standard' }), 1);
    q.enqueue(req('r2', { slo: 'standard' }), 2);
    expect(q.enqueue(req('r3', { slo: 'standard' }), 3)).toEqual({ outcome: 'rejected', victim: null });
    expect(q.enqueue(req('r4', { slo: 'batch' }), 4).outcome).toBe('enqueued');
    const q2 = queue('priority');
    q2.setPerBandCapacity(2);
    q2.enqueue(req('r1', { tenant: 'A', slo: 'batch' }), 1);
    q2.enqueue(req('r2', { tenant: 'B', slo: 'batch' }), 2);
    expect(q2.enqueue(req('r3', { tenant: 'C', slo: 'batch' }), 3).outcome).toBe('rejected');
    const q3 = queue('priority', 100);
    q3.setPerBandCapacity(2);
    q3.enqueue(req('r1', { slo: 'standard' }), 1);
    q3.enqueue(req('r2', { slo: 'standard' }), 2);
    expect(q3.enqueue(req('r3', { slo: 'standard' }), 3).outcome).toBe('rejected');
  });

  it('a rejected request still creates its band (which lowers the other ceilings)', () => {
    const q = queue('priority', 1);
    q.setUsageLimitThreshold(0.5);
    q.enqueue(req('s1', { slo: 'standard' }), 1);
    expect(q.enqueue(req('b1', { slo: 'batch' }), 2).outcome).toBe('rejected');
    expect(q.bandPriorities()).toEqual([3, -1]);
    // Two bands now: the standard band keeps ceiling 1.0, so 0.9 still dispatches it.
    expect(q.dequeueGated(0.9)?.id).toBe('s1');
  });
});

describe('GatewayQueue.dequeueGated (usage-limit ceilings)', () => {
  it('two bands [1.0, 0.5]: ceilings by position, empty bands still gate', () => {
    const q = queue('priority');
    q.setUsageLimitThreshold(0.5);
    q.enqueue(req('critical1', { slo: 'critical' }), 1);
    q.enqueue(req('batch1', { slo: 'batch' }), 2);
    expect(q.dequeueGated(0.3)?.id).toBe('critical1');
    q.enqueue(req('critical2', { slo: 'critical' }), 3);
    expect(q.dequeueGated(1.0)).toBeNull();
    expect(q.length).toBe(2);
    expect(q.dequeueGated(0.3)?.id).toBe('critical2');
    expect(q.dequeueGated(0.6)).toBeNull();
    expect(q.length).toBe(1);
    expect(q.dequeueGated(0.4)?.id).toBe('batch1');
  });

  it('three bands [1.0, 0.75, 0.5]', () => {
    const q = queue('priority');
    q.setUsageLimitThreshold(0.5);
    q.enqueue(req('c1', { slo: 'critical' }), 1);
    q.enqueue(req('s1', { slo: 'standard' }), 2);
    q.enqueue(req('b1', { slo: 'batch' }), 3);
    expect(q.dequeueGated(0.76)?.id).toBe('c1');
    expect(q.dequeueGated(0.76)).toBeNull();
    expect(q.length).toBe(2);
    expect(q.dequeueGated(0.4)?.id).toBe('s1');
    expect(q.dequeueGated(0.4)?.id).toBe('b1');
  });

  it('sustained saturation starves the low band', () => {
    const q = queue('priority');
    q.setUsageLimitThreshold(0.5);
    q.enqueue(req('s1', { slo: 'standard' }), 1);
    q.enqueue(req('b1', { slo: 'batch' }), 2);
    expect(q.dequeueGated(0.6)?.id).toBe('s1');
    q.enqueue(req('s2', { slo: 'standard' }), 3);
    expect(q.dequeueGated(0.6)?.id).toBe('s2');
    expect(q.dequeueGated(0.6)).toBeNull();
    expect(q.dequeueGated(0.4)?.id).toBe('b1');
  });

  it('a single band always has ceiling 1.0; default threshold gates nothing below 1.0', () => {
    const q = queue('priority');
    q.setUsageLimitThreshold(0.5);
    q.enqueue(req('r1', { slo: 'critical' }), 1);
    expect(q.dequeueGated(0.9)?.id).toBe('r1');
    const d = queue('priority');
    d.enqueue(req('critical1', { slo: 'critical' }), 1);
    d.enqueue(req('batch1', { slo: 'batch' }), 2);
    expect(d.dequeueGated(0.99)?.id).toBe('critical1');
    expect(d.dequeueGated(0.99)?.id).toBe('batch1');
  });

  it('p11b ceilings with threshold 0.8 over three bands: 1.0, 0.9, 0.8', () => {
    const q = queue('priority');
    q.setUsageLimitThreshold(0.8);
    q.enqueue(req('c', { slo: 'critical' }), 1);
    q.enqueue(req('s', { slo: 'standard' }), 2);
    q.enqueue(req('x', { slo: 'sheddable' }), 3);
    expect(q.dequeueGated(0.95)?.id).toBe('c');
    expect(q.dequeueGated(0.9)).toBeNull();
    expect(q.dequeueGated(0.85)?.id).toBe('s');
    expect(q.dequeueGated(0.8)).toBeNull();
    expect(q.dequeueGated(0.7999)?.id).toBe('x');
  });

  it('"fifo" gated dispatch is still band-priority ordered', () => {
    const q = queue('fifo');
    q.enqueue(req('b', { slo: 'batch' }), 1);
    q.enqueue(req('c', { slo: 'critical' }), 2);
    expect(q.dequeueGated(0)?.id).toBe('c');
    expect(q.dequeueGated(0)?.id).toBe('b');
  });
});

describe('GatewayQueue fairness', () => {
  it('round-robin cycles tenants in sorted order', () => {
    const q = queue('priority');
    q.setFairnessPolicy(roundRobinPolicy());
    let seq = 0;
    for (const t of ['A', 'B', 'C']) for (let i = 1; i <= 3; i++) q.enqueue(req(`${t.toLowerCase()}${i}`, { slo: 'standard', tenant: t }), ++seq);
    expect(drain(q, 9)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3', 'b3', 'c3']);
    expect(q.length).toBe(0);
  });

  it('round-robin skips missing tenants and restarts after a vanished cursor', () => {
    const q = queue('priority');
    q.setFairnessPolicy(roundRobinPolicy());
    q.enqueue(req('a1', { slo: 'standard', tenant: 'A' }), 1);
    q.enqueue(req('c1', { slo: 'standard', tenant: 'C' }), 2);
    expect(drain(q, 2)).toEqual(['a1', 'c1']);
    const q2 = queue('priority');
    q2.setFairnessPolicy(roundRobinPolicy());
    q2.enqueue(req('a1', { slo: 'standard', tenant: 'A' }), 1);
    q2.enqueue(req('b1', { slo: 'standard', tenant: 'B' }), 2);
    expect(drain(q2, 2)).toEqual(['a1', 'b1']);
    q2.enqueue(req('c1', { slo: 'standard', tenant: 'C' }), 3);
    q2.enqueue(req('d1', { slo: 'standard', tenant: 'D' }), 4);
    expect(drain(q2, 2)).toEqual(['c1', 'd1']);
  });

  it('a vanished cursor restarts at the first tenant, not at its successor', () => {
    const q = queue('priority');
    q.setFairnessPolicy(roundRobinPolicy());
    q.enqueue(req('a1', { slo: 'standard', tenant: 'A' }), 1);
    q.enqueue(req('b1', { slo: 'standard', tenant: 'B' }), 2);
    q.enqueue(req('c1', { slo: 'standard', tenant: 'C' }), 3);
    q.enqueue(req('a2', { slo: 'standard', tenant: 'A' }), 4);
    expect(drain(q, 2)).toEqual(['a1', 'b1']); // cursor at B, whose flow is now gone
    expect(drain(q, 2)).toEqual(['a2', 'c1']);
  });

  it('round-robin: single tenant is FIFO; fifo ungated ignores fairness', () => {
    const q = queue('priority');
    q.setFairnessPolicy(roundRobinPolicy());
    for (let i = 1; i <= 3; i++) q.enqueue(req(`r${i}`, { slo: 'standard', tenant: 'A' }), i);
    expect(drain(q, 3)).toEqual(['r1', 'r2', 'r3']);
    const f = queue('fifo');
    f.setFairnessPolicy(roundRobinPolicy());
    f.enqueue(req('a1', { slo: 'standard', tenant: 'A' }), 1);
    f.enqueue(req('a2', { slo: 'standard', tenant: 'A' }), 2);
    f.enqueue(req('b1', { slo: 'standard', tenant: 'B' }), 3);
    f.enqueue(req('b2', { slo: 'standard', tenant: 'B' }), 4);
    expect(drain(f, 4)).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('round-robin keeps one cursor per band', () => {
    const q = queue('priority');
    q.setFairnessPolicy(roundRobinPolicy());
    q.enqueue(req('cA1', { slo: 'critical', tenant: 'A' }), 1);
    q.enqueue(req('sA1', { slo: 'standard', tenant: 'A' }), 2);
    q.enqueue(req('sB1', { slo: 'standard', tenant: 'B' }), 3);
    expect(drain(q, 3)).toEqual(['cA1', 'sA1', 'sB1']);
  });

  it('round-robin through gated dispatch', () => {
    const q = queue('priority');
    q.setFairnessPolicy(roundRobinPolicy());
    q.enqueue(req('cA', { slo: 'critical', tenant: 'A' }), 1);
    q.enqueue(req('cB', { slo: 'critical', tenant: 'B' }), 2);
    q.enqueue(req('sA', { slo: 'standard', tenant: 'A' }), 3);
    q.enqueue(req('sB', { slo: 'standard', tenant: 'B' }), 4);
    expect([0, 0, 0, 0].map((s) => q.dequeueGated(s)?.id)).toEqual(['cA', 'cB', 'sA', 'sB']);
  });
});

describe('GatewayQueue removal (TTL) and slo-deadline', () => {
  it('remove from the middle and the head; unknown and shed ids are null', () => {
    const q = queue('fifo');
    const r2 = req('r2', { slo: 'standard', tenant: 't1' });
    q.enqueue(req('r1', { slo: 'standard', tenant: 't1' }), 1);
    q.enqueue(r2, 2);
    q.enqueue(req('r3', { slo: 'batch', tenant: 't2' }), 3);
    expect(q.remove('r2')).toBe(r2);
    expect(q.remove('r999')).toBeNull();
    expect(q.length).toBe(2);
    expect(drain(q, 2)).toEqual(['r1', 'r3']);
    const h = queue('fifo');
    h.enqueue(req('r1', { slo: 'standard' }), 1);
    h.enqueue(req('r2', { slo: 'standard' }), 2);
    expect(h.remove('r1')?.id).toBe('r1');
    expect(drain(h, 1)).toEqual(['r2']);
    const s = queue('fifo', 2);
    s.setSheddingEnabled(true);
    s.enqueue(req('r1', { slo: 'sheddable', tenant: 't1' }), 1);
    s.enqueue(req('r2', { slo: 'standard', tenant: 't1' }), 2);
    expect(s.enqueue(req('r3', { slo: 'critical', tenant: 't1' }), 3).victim?.id).toBe('r1');
    expect(s.remove('r1')).toBeNull();
  });

  it('earliest deadline first within a flow; no target sorts last; ties by seq', () => {
    const q = queue('slo-deadline');
    q.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 500000 }), 1);
    q.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 200, sloTargetUs: 100000 }), 2);
    expect(drain(q, 2)).toEqual(['r2', 'r1']);
    const n = queue('slo-deadline');
    n.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 200000 }), 1);
    n.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 100 }), 2);
    expect(drain(n, 2)).toEqual(['r1', 'r2']);
    const t = queue('slo-deadline');
    t.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 200000 }), 1);
    t.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 200000 }), 2);
    expect(drain(t, 1)).toEqual(['r1']);
  });

  it('fairness picks the flow before deadlines are compared', () => {
    const q = queue('slo-deadline');
    q.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 500000 }), 1);
    q.enqueue(req('r2', { slo: 'standard', tenant: 't2', enqueueAt: 100, sloTargetUs: 100000 }), 2);
    expect(drain(q, 1)).toEqual(['r1']);
  });

  it('class targets are the fallback; a request target overrides them', () => {
    const q = queue('slo-deadline');
    q.setSloTargets(new Map([['critical', 100000]]));
    q.enqueue(req('r1', { slo: 'critical', tenant: 't1', enqueueAt: 100 }), 1);
    q.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 100 }), 2);
    expect(drain(q, 1)).toEqual(['r1']);
    const o = queue('slo-deadline');
    o.setSloTargets(new Map([['standard', 500000]]));
    o.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 100000 }), 1);
    o.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 100 }), 2);
    expect(drain(o, 1)).toEqual(['r1']);
  });

  it('no targets at all degenerates to seq order; gated dispatch uses deadlines too', () => {
    const q = queue('slo-deadline');
    q.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100 }), 1);
    q.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 200 }), 2);
    q.enqueue(req('r3', { slo: 'standard', tenant: 't1', enqueueAt: 50 }), 3);
    expect(drain(q, 3)).toEqual(['r1', 'r2', 'r3']);
    const g = queue('slo-deadline');
    g.setUsageLimitThreshold(0.5);
    g.enqueue(req('r1', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 500000 }), 1);
    g.enqueue(req('r2', { slo: 'standard', tenant: 't1', enqueueAt: 100, sloTargetUs: 100000 }), 2);
    expect(g.dequeueGated(0.3)?.id).toBe('r2');
    expect(g.dequeueGated(1.0)).toBeNull();
  });

  it('long flows keep FIFO order across head compaction', () => {
    const q = queue('priority');
    for (let i = 0; i < 300; i++) q.enqueue(req(`r${i}`, { slo: 'standard' }), i + 1);
    const got = drain(q, 150);
    for (let i = 300; i < 400; i++) q.enqueue(req(`r${i}`, { slo: 'standard' }), i + 1);
    expect(q.remove('r200')?.id).toBe('r200');
    got.push(...drain(q, 249));
    expect(got).toEqual(Array.from({ length: 400 }, (_, i) => `r${i}`).filter((id) => id !== 'r200'));
    expect(q.length).toBe(0);
  });
});
