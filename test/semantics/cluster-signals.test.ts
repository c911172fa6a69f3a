/**
 * `--semantics`: what the router sees of the instances (docs/reference-differences.md M6). Each test runs
 * the same requests in both modes and reads the routing records or the routing decisions.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY_SETUP, type PolicySetup } from '../../src/sim/engine-setup.js';
import { bothModes, engineSetup, req } from './helpers.js';

const policy = (p: Partial<PolicySetup>): PolicySetup => ({ ...DEFAULT_POLICY_SETUP, ...p });

describe('router signals under --semantics', () => {
  it('M6: a completion leaves the in-flight count when its step starts (reference) or when it ends (corrected)', () => {
    // request_0 (1 output token) finishes in the step [0, 1000 µs); request_1 is routed at 500 µs, mid-step.
    const setup = engineSetup({
      numInstances: 2,
      policy: policy({ routingPolicy: 'least-loaded', snapshotRefreshInterval: 0, traceDecisions: true, counterfactualK: 2 }),
    });
    const runs = bothModes(setup, () => [req(0, 16, 1, 0), req(1, 16, 1, 500)]);
    for (const m of ['reference', 'corrected'] as const) {
      const [first, second] = runs[m].cs.routingRecords;
      const firstTarget = first!.chosenInstance;
      const seen = new Map((second!.candidates ?? []).map((c) => [c.instanceId, c.inFlightRequests]));
      if (m === 'reference') {
        // Both instances look empty at 500 µs: request_0's instance already counted it done at t = 0.
        expect([...seen.values()]).toEqual([0, 0]);
      } else {
        expect(seen.get(firstTarget)).toBe(1);
        expect(second!.chosenInstance).not.toBe(firstTarget);
      }
      // The requests complete at the same times in both modes.
      expect(runs[m].reqs.map((r) => r.e2e)).toEqual([1000, 1000]);
    }
  });
});
