/**
 * Seeded property tests with the storage KV tier on (docs/kv-tiers.md): the random engine scenarios of
 * scenarios.ts under KV pressure, with a CPU tier and a small storage tier of random capacity, bandwidth and
 * latency, 1-4 instances, reference and corrected semantics. Every invariant is checked after every event,
 * block conservation across the three tiers included (test/invariants/kv-tiers.ts), and a second run must
 * render byte-identical output. The reference's tiered livelock (engine.property.test.ts) is tolerated and
 * counted under reference semantics only, as there.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import { checkScenario } from './check.js';
import { buildRequests, engineSpecArb, toSetup, type EngineSpec } from './scenarios.js';

const MAX_EVENTS = 20_000;
const tally = { tieredDeadlocks: 0 };

interface StorageSpec {
  readonly blocks: number;
  readonly bandwidthGBps: number;
  readonly latencyUs: number;
  readonly cycleWindowUs: number;
}

const storageArb: fc.Arbitrary<StorageSpec> = fc.record({
  blocks: fc.integer({ min: 1, max: 200 }),
  bandwidthGBps: fc.constantFrom(0.01, 1, 100),
  latencyUs: fc.constantFrom(0, 40, 1000),
  cycleWindowUs: fc.constantFrom(1000, 1_000_000),
});

const arb = (maxInstances: number, maxRequests: number): fc.Arbitrary<[EngineSpec, StorageSpec]> =>
  fc.tuple(
    engineSpecArb({ maxInstances, maxRequests }).map((s) => (s.cpuBlocks > 0 ? s : { ...s, cpuBlocks: 1 + (s.totalBlocks % 16) })),
    storageArb,
  );

function setupOf(spec: EngineSpec, st: StorageSpec): EngineSetup {
  const base = toSetup(spec);
  // 2 KiB per token: small enough that the slow channel still finishes runs quickly.
  return { ...base, kv: { ...base.kv, storage: { ...st, blockBytes: 2048 * spec.blockSize } } };
}

describe('storage KV tier properties', () => {
  it('reference semantics, 1 and 1-4 instances: every invariant holds after every event, output is deterministic', () => {
    tally.tieredDeadlocks = 0;
    fc.assert(fc.property(arb(1, 30), ([spec, st]) => void checkScenario(setupOf(spec, st), () => buildRequests(spec), true, MAX_EVENTS, tally)), { seed: 7301, numRuns: 150 });
    fc.assert(fc.property(arb(4, 50), ([spec, st]) => void checkScenario(setupOf(spec, st), () => buildRequests(spec), true, MAX_EVENTS, tally)), { seed: 7302, numRuns: 100 });
    expect(tally.tieredDeadlocks).toBeLessThan(13);
  });

  it('--semantics corrected: every invariant holds, no livelock tolerated', () => {
    fc.assert(fc.property(arb(1, 30), ([spec, st]) => void checkScenario({ ...setupOf(spec, st), semantics: 'corrected' }, () => buildRequests(spec), false, MAX_EVENTS, tally)), { seed: 7303, numRuns: 300 });
    fc.assert(fc.property(arb(4, 50), ([spec, st]) => void checkScenario({ ...setupOf(spec, st), semantics: 'corrected' }, () => buildRequests(spec), false, MAX_EVENTS, tally)), { seed: 7304, numRuns: 200 });
  });

  it('the storage tier is exercised: some scenarios reload from it and some thrash', () => {
    let reloaded = 0;
    let cycled = 0;
    fc.assert(fc.property(arb(1, 30), ([spec, st]) => {
      const { cs } = checkScenario({ ...setupOf(spec, st), semantics: 'corrected' }, () => buildRequests(spec), false, MAX_EVENTS, tally);
      for (const inst of cs.instances) {
        const r = inst.kv.tierReport?.() ?? null;
        if (r === null) continue;
        if (r.storageToGpuBlocks > 0) reloaded++;
        if (r.cycles.length > 0) cycled++;
      }
    }), { seed: 7305, numRuns: 150 });
    expect(reloaded).toBeGreaterThan(10);
    expect(cycled).toBeGreaterThan(0);
  });
});
