/**
 * `--semantics`: the gateway-queue corrections (docs/reference-differences.md F1-F6), on the queue and
 * controller units with a recording host, and F5/F6 end to end on a cluster.
 */
import { describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../../src/domain/slo.js';
import { roundRobinPolicy } from '../../src/cluster/flow-control/bands.js';
import { DEFAULT_FLOW_CONTROL_CONFIG, FlowController, type FlowControlConfig } from '../../src/cluster/flow-control/controller.js';
import { GatewayQueue } from '../../src/cluster/flow-control/gateway-queue.js';
import { RecordingHost, req, snaps, state } from '../../src/cluster/flow-control/test-helpers.js';
import { buildMetricsFile } from '../../src/metrics/output.js';
import { buildReport, DEFAULT_REPORT_OPTIONS } from '../../src/sim/report.js';
import { DEFAULT_POLICY_SETUP, runEngine } from '../../src/sim/engine-setup.js';
import { engineSetup, req as engineReq } from './helpers.js';

const PM = new SloPriorityMap();

function controller(corrected: boolean, over: Partial<FlowControlConfig> = {}): { fc: FlowController; host: RecordingHost } {
  const host = new RecordingHost();
  return { fc: new FlowController({ ...DEFAULT_FLOW_CONTROL_CONFIG, ...over }, PM, host, corrected), host };
}

function admit(fc: FlowController, r: ReturnType<typeof req>, now: number): void {
  fc.admission.admit(r, state([], now));
  fc.onAdmitted(r, now);
}

describe('gateway queue under --semantics', () => {
  it('F1: a rejected request creates its band (reference), lowering the other ceilings; corrected creates none', () => {
    // A full queue rejects the first request of a new class.
    const depths = [false, true].map((corrected) => {
      const q = new GatewayQueue('priority', 2, PM, corrected);
      q.setUsageLimitThreshold(0.5);
      q.enqueue(req('c1', { slo: 'critical' }), 1);
      q.enqueue(req('s1', { slo: 'standard' }), 2);
      expect(q.enqueue(req('b1', { slo: 'batch' }), 3).outcome).toBe('rejected');
      // Two bands: standard's ceiling is 0.5; with the rejected batch band it rises to 0.75.
      const c = q.dequeueGated(0.6);
      return { bands: q.bandPriorities(), first: c?.id ?? null, second: q.dequeueGated(0.6)?.id ?? null };
    });
    expect(depths[0]).toEqual({ bands: [4, 3, -1], first: 'c1', second: 's1' });
    expect(depths[1]).toEqual({ bands: [4, 3], first: 'c1', second: null });
  });

  it('F2: round-robin restarts at the first tenant when the served one vanished (reference) or resumes at its successor (corrected)', () => {
    const picks = [false, true].map((corrected) => {
      const q = new GatewayQueue('priority', 0, PM);
      q.setFairnessPolicy(roundRobinPolicy(corrected));
      q.enqueue(req('a1', { tenant: 'a' }), 1);
      q.enqueue(req('a2', { tenant: 'a' }), 2);
      q.enqueue(req('b1', { tenant: 'b' }), 3);
      q.enqueue(req('c1', { tenant: 'c' }), 4);
      return [1, 2, 3, 4].map(() => q.dequeueGated(0)?.id);
    });
    // After a1, b1 is served and tenant b vanishes: next is a2 (first tenant) or c1 (b's successor).
    expect(picks[0]).toEqual(['a1', 'b1', 'a2', 'c1']);
    expect(picks[1]).toEqual(['a1', 'b1', 'c1', 'a2']);
  });

  it('F3: "fifo" under gating dispatches by band (reference) or by arrival among the open bands (corrected)', () => {
    const order = [false, true].map((corrected) => {
      const q = new GatewayQueue('fifo', 0, PM, corrected);
      q.enqueue(req('b1', { slo: 'batch' }), 1);
      q.enqueue(req('s1', { slo: 'standard' }), 2);
      q.enqueue(req('c1', { slo: 'critical' }), 3);
      return [1, 2, 3].map(() => q.dequeueGated(0)?.id);
    });
    expect(order[0]).toEqual(['c1', 's1', 'b1']);
    expect(order[1]).toEqual(['b1', 's1', 'c1']);
  });
});

describe('flow controller under --semantics', () => {
  it('F4: one release per enqueue plus one per tick (reference) or every request the gate allows (corrected)', () => {
    const routed = [false, true].map((corrected) => {
      const { fc, host } = controller(corrected, { detector: 'concurrency', maxConcurrency: 3 });
      // Five arrive while the detector reads saturated, then the instance empties: one tick follows.
      host.view = state(snaps({ inFlightRequests: 3 }));
      for (let i = 0; i < 5; i++) admit(fc, req(`r${i}`), 0);
      host.take();
      host.view = state(snaps({ inFlightRequests: 0 }));
      fc.onDispatchTick(1000);
      return host.take().filter((c) => c.kind === 'route').length;
    });
    // Corrected: three fit under max concurrency 3 (the pending releases count), the reference sends one.
    expect(routed).toEqual([1, 3]);
  });

  it('F5: a failed eviction loses its candidate (reference) or keeps it (corrected)', () => {
    const left = [false, true].map((corrected) => {
      const { fc, host } = controller(corrected, { detector: 'concurrency', maxConcurrency: 1, inFlightEviction: true });
      const victim = req('v', { slo: 'sheddable', dispatchAt: 5 });
      fc.onRouted(victim, 'instance_0');
      host.view = state(snaps({ inFlightRequests: 1 }));
      admit(fc, req('c', { slo: 'critical' }), 10);
      const evict = host.take().find((c) => c.kind === 'evict');
      expect(evict).toMatchObject({ id: 'v' });
      fc.onEvictionFailed(victim, 'instance_0');
      return fc.tracker!.length;
    });
    expect(left).toEqual([0, 1]);
  });
});

describe('gateway delay of a request queued at t = 0 (F6)', () => {
  it('is not reported (reference) or reported (corrected)', () => {
    const policy = { ...DEFAULT_POLICY_SETUP, flowControl: { ...DEFAULT_FLOW_CONTROL_CONFIG, detector: 'concurrency' as const, maxConcurrency: 1 } };
    const rows = [false, true].map((corrected) => {
      const cs = runEngine({ ...engineSetup(), policy, semantics: corrected ? 'corrected' : 'reference' }, [engineReq(0, 16, 2, 0), engineReq(1, 16, 2, 0)]);
      const rep = buildReport(cs, { ...DEFAULT_REPORT_OPTIONS, corrected });
      return (buildMetricsFile(rep.aggregate, rep.clusterOutput, corrected)['requests'] as Record<string, unknown>[]).map((r) => r['gateway_queue_delay_ms']);
    });
    // request_1 waits for request_0 to finish (2 steps of 1 ms) plus the next dispatch tick.
    expect(rows[0]).toEqual([undefined, undefined]);
    expect(rows[1]![0]).toBeUndefined();
    expect(rows[1]![1]).toBeGreaterThanOrEqual(2);
  });
});
