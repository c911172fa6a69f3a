// FlowController against the reference's cluster-side flow (flow_control_admission_test.go,
// gateway_queue_ttl_test.go, and tryDispatchFromGatewayQueue / the Gateway* events of cluster_event.go).
import { describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../../domain/slo.js';
import { tenantBudget } from '../../routing/admission.js';
import { DEFAULT_FLOW_CONTROL_CONFIG, FlowController, type FlowControlConfig } from './controller.js';
import { RecordingHost, req, snaps, state } from './test-helpers.js';

const PM = new SloPriorityMap();

function setup(over: Partial<FlowControlConfig> = {}): { fc: FlowController; host: RecordingHost } {
  const host = new RecordingHost();
  const fc = new FlowController({ ...DEFAULT_FLOW_CONTROL_CONFIG, ...over }, PM, host);
  return { fc, host };
}

/** Runs an admission decision the way the cluster does. */
function admit(fc: FlowController, r: ReturnType<typeof req>, now: number) {
  const d = fc.admission.admit(r, state([], now));
  return { d, res: fc.onAdmitted(r, now) };
}

const SATURATED_1 = state(snaps({ inFlightRequests: 1 }));
const IDLE_1 = state(snaps({ inFlightRequests: 0 }));

describe('FlowController admission', () => {
  it('always admits; enqueue stamps the clock and gives the reason', () => {
    const { fc } = setup({ dispatchOrder: 'priority', detector: 'concurrency', maxConcurrency: 1 });
    const r = req('r1', { slo: 'standard', tenant: 't1' });
    const { d } = admit(fc, r, 100);
    expect(d).toEqual({ admitted: true, reason: 'flow-control-enqueued' });
    expect(r.gatewayEnqueueTime).toBe(100);
  });

  it('a queue rejection is admitted, clears the enqueue time, schedules nothing and reads no state', () => {
    const { fc, host } = setup({ dispatchOrder: 'priority', maxQueueDepth: 1, detector: 'concurrency', maxConcurrency: 1, requestTtl: 5000 });
    host.view = SATURATED_1;
    admit(fc, req('r1', { slo: 'standard' }), 100);
    host.calls.length = 0;
    const r2 = req('r2', { slo: 'standard' });
    const { d, res } = admit(fc, r2, 200);
    expect(d).toEqual({ admitted: true, reason: 'flow-control-queue-rejected' });
    expect(res).toEqual({ outcome: 'rejected', victim: null });
    expect(r2.gatewayEnqueueTime).toBe(0);
    expect(host.calls).toEqual([]);
    expect(fc.counters()).toEqual({ queueDepth: 1, queueShed: 0, queueRejected: 1, evicted: 0, expired: 0 });
  });

  it('shed victim: outcome, victim enqueue time cleared, counted as shed', () => {
    const { fc, host } = setup({ dispatchOrder: 'priority', maxQueueDepth: 1, queueShedding: true, detector: 'concurrency', maxConcurrency: 1 });
    host.view = SATURATED_1;
    const r1 = req('r1', { slo: 'batch' });
    admit(fc, r1, 100);
    const { res } = admit(fc, req('r2', { slo: 'standard' }), 200);
    expect(res.outcome).toBe('shed-victim');
    expect(res.victim).toBe(r1);
    expect(r1.gatewayEnqueueTime).toBe(0);
    expect(fc.counters()).toMatchObject({ queueDepth: 1, queueShed: 1, queueRejected: 0 });
  });

  it('the seq counter orders admissions', () => {
    const { fc, host } = setup({ dispatchOrder: 'priority', detector: 'concurrency', maxConcurrency: 1 });
    host.view = SATURATED_1;
    admit(fc, req('r1', { slo: 'standard' }), 100);
    admit(fc, req('r2', { slo: 'standard' }), 200);
    expect(fc.queue.dequeue()?.id).toBe('r1');
  });

  it('a tenant-budget decorator rejects before the enqueue side effect', () => {
    const { fc } = setup({ dispatchOrder: 'priority' });
    const policy = tenantBudget(fc.admission, { isOverBudget: () => true }, PM);
    expect(policy.admit(req('r1', { slo: 'batch', tenant: 't1' }), state([], 100))).toEqual({ admitted: false, reason: 'tenant-budget-shed' });
    expect(fc.depth).toBe(0);
    expect(policy.admit(req('r2', { slo: 'standard', tenant: 't1' }), state([], 100)).admitted).toBe(true);
    expect(fc.depth).toBe(1);
  });

  it('onAdmitted insists on the request the admission policy just enqueued', () => {
    const { fc } = setup();
    expect(() => fc.onAdmitted(req('x'), 0)).toThrow(/without passing through/);
  });
});

describe('FlowController dispatch', () => {
  it('never-saturated is a pass-through: each enqueue routes at once; one tick, which then stops', () => {
    const { fc, host } = setup({ detector: 'never' });
    admit(fc, req('r1'), 0);
    admit(fc, req('r2'), 0);
    admit(fc, req('r3'), 400);
    expect(host.take()).toEqual([
      { kind: 'tick', at: 1000 },
      { kind: 'route', at: 0, id: 'r1' },
      { kind: 'route', at: 0, id: 'r2' },
      { kind: 'route', at: 400, id: 'r3' },
    ]);
    fc.onDispatchTick(1000);
    expect(host.take()).toEqual([]);
    expect(fc.isTickPending).toBe(false);
    admit(fc, req('r4'), 1500);
    expect(host.take()).toEqual([{ kind: 'tick', at: 2500 }, { kind: 'route', at: 1500, id: 'r4' }]);
  });

  it('rate limit: one request per enqueue plus one per tick', () => {
    const { fc, host } = setup({ detector: 'concurrency', maxConcurrency: 1 });
    host.view = SATURATED_1;
    const rs = [req('r1'), req('r2'), req('r3')];
    for (const r of rs) admit(fc, r, 0);
    expect(host.take()).toEqual([{ kind: 'tick', at: 1000 }]);
    host.view = IDLE_1; // the gate stays open from here on
    fc.onDispatchTick(1000);
    expect(host.take()).toEqual([{ kind: 'route', at: 1000, id: 'r1' }, { kind: 'tick', at: 2000 }]);
    admit(fc, req('r4'), 1500);
    expect(host.take()).toEqual([{ kind: 'route', at: 1500, id: 'r2' }]);
    fc.onDispatchTick(2000);
    fc.onDispatchTick(3000);
    expect(host.take()).toEqual([
      { kind: 'route', at: 2000, id: 'r3' },
      { kind: 'tick', at: 3000 },
      { kind: 'route', at: 3000, id: 'r4' },
    ]);
    expect(fc.isTickPending).toBe(false);
    expect(rs.map((r) => r.gatewayDispatchTime)).toEqual([1000, 1500, 2000]);
  });

  it('a held queue keeps ticking without routing; the state is read only when the queue is non-empty', () => {
    const { fc, host } = setup({ detector: 'utilization', queueDepthThreshold: 3, dispatchTickInterval: 250 });
    host.view = state(snaps({ queueDepth: 3 }));
    admit(fc, req('r1'), 10);
    fc.onDispatchTick(260);
    fc.onDispatchTick(510);
    expect(host.calls.filter((c) => c.kind === 'state').length).toBe(3);
    expect(host.take()).toEqual([{ kind: 'tick', at: 260 }, { kind: 'tick', at: 510 }, { kind: 'tick', at: 760 }]);
    expect(fc.queue.remove('r1')?.id).toBe('r1');
    fc.onDispatchTick(760);
    expect(host.calls).toEqual([]);
  });

  it('slo-deadline uses the admission clock as the enqueue time', () => {
    const { fc, host } = setup({ dispatchOrder: 'slo-deadline', detector: 'concurrency', maxConcurrency: 1 });
    host.view = SATURATED_1;
    admit(fc, req('r1', { slo: 'standard', tenant: 't1', sloTargetUs: 500000 }), 100);
    admit(fc, req('r2', { slo: 'standard', tenant: 't1', sloTargetUs: 100000 }), 200);
    host.view = IDLE_1;
    fc.onDispatchTick(1100);
    expect(host.take().filter((c) => c.kind === 'route')).toEqual([{ kind: 'route', at: 1100, id: 'r2' }]);
  });

  it('a non-finite saturation is an error', () => {
    const { fc, host } = setup({ detector: 'utilization' });
    host.view = state(snaps({ kvUtilization: NaN }));
    const r = req('r1');
    fc.admission.admit(r, state([], 0));
    expect(() => fc.onAdmitted(r, 0)).toThrow(/not finite/);
  });
});

describe('FlowController TTL and eviction', () => {
  it('TTL is scheduled before the dispatch attempt; expiry is a no-op once dispatched', () => {
    const { fc, host } = setup({ detector: 'concurrency', maxConcurrency: 1, requestTtl: 5000 });
    host.view = IDLE_1;
    const r1 = req('r1', { slo: 'standard' });
    admit(fc, r1, 0);
    host.view = SATURATED_1;
    const r2 = req('r2', { slo: 'batch' });
    admit(fc, r2, 100);
    expect(host.take()).toEqual([
      { kind: 'ttl', at: 5000, id: 'r1' },
      { kind: 'tick', at: 1000 },
      { kind: 'route', at: 0, id: 'r1' },
      { kind: 'ttl', at: 5100, id: 'r2' },
    ]);
    expect(fc.onTtlExpiry(r1)).toBe(false);
    expect(fc.onTtlExpiry(r2)).toBe(true);
    expect(fc.onTtlExpiry(r2)).toBe(false);
    expect(fc.counters()).toEqual({ queueDepth: 0, queueShed: 0, queueRejected: 0, evicted: 0, expired: 1 });
  });

  it('saturated with a non-sheddable waiting: evicts the newest sheddable and dispatches nothing', () => {
    const { fc, host } = setup({ detector: 'concurrency', maxConcurrency: 1, dispatchOrder: 'priority', inFlightEviction: true });
    host.view = IDLE_1;
    const s0 = req('shed-0', { slo: 'sheddable' });
    admit(fc, s0, 0);
    fc.onRouted(s0, 'instance_0');
    fc.onRouted(req('crit-x', { slo: 'critical' }), 'instance_0'); // non-sheddable: not tracked
    host.view = SATURATED_1;
    const s1 = req('shed-1', { slo: 'sheddable' });
    admit(fc, s1, 1000);
    expect(fc.tracker?.length).toBe(1); // a sheddable waiting does not trigger eviction
    admit(fc, req('crit-0', { slo: 'critical' }), 50000);
    expect(host.take()).toEqual([
      { kind: 'tick', at: 1000 },
      { kind: 'route', at: 0, id: 'shed-0' },
      { kind: 'evict', at: 50000, id: 'shed-0', instance: 'instance_0' },
    ]);
    expect(fc.tracker?.length).toBe(0);
    fc.onEvicted(s0);
    expect(fc.counters().evicted).toBe(1);
    expect(fc.depth).toBe(2);
  });

  it('completed requests leave the tracker; eviction is off by default', () => {
    const { fc } = setup({ inFlightEviction: true });
    const s = req('s', { slo: 'background' });
    fc.onRouted(s, 'instance_1');
    fc.onRequestDone(s);
    expect(fc.tracker?.length).toBe(0);
    expect(setup().fc.tracker).toBeNull();
  });
});

describe('FlowController configuration', () => {
  it('tick interval 0 means 1000; negative TTL / interval and unknown names throw', () => {
    expect(setup({ dispatchTickInterval: 0 }).fc.tickInterval).toBe(1000);
    expect(setup({ dispatchTickInterval: 250 }).fc.tickInterval).toBe(250);
    expect(() => setup({ requestTtl: -1 })).toThrow();
    expect(() => setup({ dispatchTickInterval: -1 })).toThrow();
    expect(() => setup({ fairnessPolicy: 'bogus' as 'round-robin' })).toThrow(/fairness/);
    expect(() => setup({ detector: 'concurrency', maxConcurrency: 0 })).toThrow();
  });

  it('usage limit applies only below 1.0; per-band capacity only above 0', () => {
    const { fc, host } = setup({ usageLimitThreshold: 0.5, dispatchOrder: 'priority', detector: 'utilization', queueDepthThreshold: 10, perBandCapacity: 1 });
    host.view = state(snaps({ queueDepth: 6 })); // saturation 0.6
    admit(fc, req('c', { slo: 'critical' }), 0);
    admit(fc, req('b', { slo: 'batch' }), 0);
    expect(admit(fc, req('b2', { slo: 'batch' }), 0).res.outcome).toBe('rejected');
    expect(host.take().filter((c) => c.kind === 'route').map((c) => (c as { id: string }).id)).toEqual(['c']);
    expect(fc.depth).toBe(1);
  });
});
