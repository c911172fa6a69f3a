/**
 * `--semantics`: what the router sees of the instances (docs/reference-differences.md M5, M6). Each test runs
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

  it('M5: before the first periodic refresh the snapshots read zero (reference) or a scrape taken at t = 0 (corrected)', () => {
    // 50 ms periodic snapshots; 100 blocks of 16 tokens per instance. request_0 is routed at 10 ms (before any
    // refresh is due), request_1 at 60 ms (after one).
    const setup = engineSetup({
      numInstances: 2,
      policy: policy({ routingPolicy: 'least-loaded', snapshotRefreshInterval: 50_000, traceDecisions: true, counterfactualK: 2 }),
    });
    const runs = bothModes(setup, () => [req(0, 16, 1, 10_000), req(1, 16, 1, 60_000)]);
    const free = (m: 'reference' | 'corrected', k: number): number[] => (runs[m].cs.routingRecords[k]!.candidates ?? []).map((c) => c.freeKVBlocks);
    const util = (m: 'reference' | 'corrected', k: number): number[] => (runs[m].cs.routingRecords[k]!.candidates ?? []).map((c) => c.kvUtilization);
    // Reference: at 10 ms both instances read as full caches with no capacity; corrected: idle, 100 free blocks.
    expect(free('reference', 0)).toEqual([0, 0]);
    expect(free('corrected', 0)).toEqual([100, 100]);
    expect(util('reference', 0)).toEqual([0, 0]);
    expect(util('corrected', 0)).toEqual([0, 0]);
    // From the first refresh on (60 ms, request_0 long done) both modes see the same.
    expect(free('reference', 1)).toEqual([100, 100]);
    expect(free('corrected', 1)).toEqual([100, 100]);
    // The scrape changes what is seen, not when it refreshes: the same routing and timings here.
    for (const m of ['reference', 'corrected'] as const) expect(runs[m].reqs.map((r) => r.e2e)).toEqual([1000, 1000]);
  });
});
