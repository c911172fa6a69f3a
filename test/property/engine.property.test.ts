/**
 * Seeded property tests over random engine configurations (scenarios.ts): KV pressure with and without a CPU
 * tier, chunked prefill, every scheduler and preemption policy, max-model-len caps, short deadlines, bounded
 * and unbounded horizons, admission/routing latencies, blackbox/roofline/trained-physics latency, 1-4
 * round-robin instances. Every run must satisfy every invariant (checked after every event, see
 * test/invariants/recorder.ts) and a second run of the same spec must render byte-identical output (INV-6).
 * Seeds and run counts are fixed; fast-check prints the failing spec and the seed/path to replay it.
 *
 * One known reference bug is set aside, not hidden: with a CPU tier, a failed admission after a partial
 * CPU->GPU reload leaves the waiting request holding the reloaded blocks (reference sim/kv/tiered.go, kept for
 * parity), which can starve a request that needs the whole cache and livelock the run. A run that trips the
 * livelock guard in exactly that state (and broke no per-event invariant before) is discarded and counted; the
 * count is asserted small, and tiered-quirks.test.ts pins the behaviour with fixed reproductions. Under
 * `--semantics corrected` (reference-differences K6/K7 fixed) the same tiered scenarios run with no tolerance:
 * a livelock there fails the property.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkScenario } from './check.js';
import { buildRequests, engineSpecArb, toSetup, type EngineSpec } from './scenarios.js';

/** Legitimate runs of these sizes stay under ~6,000 events (measured); only a livelock gets here. */
const MAX_EVENTS = 20_000;

const tally = { tieredDeadlocks: 0, decodeIdentityChecks: 0 };

function checkSpec(spec: EngineSpec): void {
  checkScenario(toSetup(spec), () => buildRequests(spec), spec.cpuBlocks > 0, MAX_EVENTS, tally);
}

/** Corrected semantics: nothing is discarded (a livelock throws and fails the property). */
function checkCorrected(spec: EngineSpec): void {
  checkScenario({ ...toSetup(spec), semantics: 'corrected' }, () => buildRequests(spec), false, MAX_EVENTS, tally);
}

/** Tiered KV under pressure only: where the reference livelocks. */
const tieredArb = (maxInstances: number, maxRequests: number) => engineSpecArb({ maxInstances, maxRequests }).map((s) => (s.cpuBlocks > 0 ? s : { ...s, cpuBlocks: 1 + (s.totalBlocks % 16) }));

describe('engine properties', () => {
  it('single instance: every invariant holds, output is deterministic', () => {
    tally.tieredDeadlocks = 0;
    tally.decodeIdentityChecks = 0;
    const numRuns = 1000;
    fc.assert(fc.property(engineSpecArb({ maxInstances: 1, maxRequests: 30 }), checkSpec), { seed: 20260501, numRuns });
    expect(tally.tieredDeadlocks).toBeLessThan(numRuns * 0.02);
    // Most runs also pass the decode-identities comparison (the others' prompts repeat outputs: tiny alphabets).
    expect(tally.decodeIdentityChecks).toBeGreaterThan(numRuns * 0.2);
  });

  it('1-4 instances, round-robin: every invariant holds, output is deterministic', () => {
    tally.tieredDeadlocks = 0;
    tally.decodeIdentityChecks = 0;
    const numRuns = 600;
    fc.assert(fc.property(engineSpecArb({ maxInstances: 4, maxRequests: 50 }), checkSpec), { seed: 4242, numRuns });
    expect(tally.tieredDeadlocks).toBeLessThan(numRuns * 0.02);
    // Most runs also pass the decode-identities comparison (the others' prompts repeat outputs: tiny alphabets).
    expect(tally.decodeIdentityChecks).toBeGreaterThan(numRuns * 0.2);
  });

  it('--semantics corrected, tiered KV (1 and 1-4 instances): every invariant holds, no livelock tolerated', () => {
    fc.assert(fc.property(tieredArb(1, 30), checkCorrected), { seed: 20260501, numRuns: 800 });
    fc.assert(fc.property(tieredArb(4, 50), checkCorrected), { seed: 4242, numRuns: 400 });
  });

  it('the same tiered scenarios under reference semantics do livelock (what the corrected run proves absent)', () => {
    tally.tieredDeadlocks = 0;
    fc.assert(fc.property(tieredArb(1, 30), checkSpec), { seed: 20260501, numRuns: 800 });
    expect(tally.tieredDeadlocks).toBeGreaterThan(0); // 14 of 800 at this seed
  });
});
