/**
 * Seeded property tests over random engine configurations (scenarios.ts): KV pressure with and without a CPU
 * tier, chunked prefill, every scheduler and preemption policy, max-model-len caps, short deadlines, bounded
 * and unbounded horizons, admission/routing latencies, blackbox/roofline/trained-physics latency, 1-4
 * round-robin instances. Every run must satisfy every invariant (checked after every event, see
 * test/invariants/recorder.ts) and a second run of the same spec must render byte-identical output (INV-6).
 * Seeds and run counts are fixed; fast-check prints the failing spec and the seed/path to replay it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runEngine } from '../../src/sim/engine-setup.js';
import { renderAll, runChecked } from '../invariants/harness.js';
import { buildRequests, engineSpecArb, toSetup, type EngineSpec } from './scenarios.js';

/** Far above any legitimate run of these sizes; only a livelock gets there. */
const MAX_EVENTS = 250_000;

function checkSpec(spec: EngineSpec): void {
  const setup = toSetup(spec);
  const { cs } = runChecked(setup, buildRequests(spec), { deep: true, maxEvents: MAX_EVENTS });
  const again = runEngine(setup, buildRequests(spec));
  expect(renderAll(again)).toBe(renderAll(cs));
}

describe('engine properties', () => {
  it('single instance: every invariant holds, output is deterministic', () => {
    fc.assert(fc.property(engineSpecArb({ maxInstances: 1, maxRequests: 30 }), checkSpec), { seed: 20260501, numRuns: 300 });
  });

  it('1-4 instances, round-robin: every invariant holds, output is deterministic', () => {
    fc.assert(fc.property(engineSpecArb({ maxInstances: 4, maxRequests: 50 }), checkSpec), { seed: 4242, numRuns: 200 });
  });
});
