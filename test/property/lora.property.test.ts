/**
 * Seeded property tests over random LoRA runs: the engine scenarios of scenarios.ts (KV pressure, chunking,
 * every scheduler, timeouts, 1-6 instances) with adapters of random ranks on random requests, 1-3 slots per
 * instance, random load costs and step overheads, and every routing policy (weighted with lora-affinity).
 * After every event: LoRA slot conservation (an adapter resident at most once, never more than the slots,
 * resident = loads - evictions, pins match the requests holding them, pinned adapters never evicted) and every
 * engine invariant (INV-8 counting an adapter load in flight as pending work); then determinism (INV-6).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResolvedLora } from '../../src/config/lora.js';
import { AdapterCost } from '../../src/instance/lora.js';
import { DEFAULT_POLICY_SETUP, type EngineSetup } from '../../src/sim/engine-setup.js';
import { checkScenario } from './check.js';
import { buildRequests, engineSpecArb, toSetup, type EngineSpec } from './scenarios.js';

interface LoraSpec {
  readonly capacity: number;
  readonly ranks: readonly number[];
  /** Adapter index per request (-1 = base model). */
  readonly use: readonly number[];
  readonly baseUs: number;
  readonly bandwidth: number;
  readonly k6: number;
  readonly routing: string;
  readonly refresh: number;
}

const loraArb: fc.Arbitrary<LoraSpec> = fc.record({
  capacity: fc.integer({ min: 1, max: 3 }),
  ranks: fc.array(fc.constantFrom(4, 8, 16, 32, 64), { minLength: 1, maxLength: 6 }),
  use: fc.array(fc.integer({ min: -1, max: 5 }), { minLength: 40, maxLength: 40 }),
  baseUs: fc.constantFrom(0, 1500, 40_000),
  bandwidth: fc.constantFrom(1e3, 2e6),
  k6: fc.constantFrom(0, 0.02, 0.5),
  routing: fc.constantFrom('round-robin', 'least-loaded', 'weighted'),
  refresh: fc.constantFrom(0, 20_000),
});

const tally = { tieredDeadlocks: 0 };

function check(spec: EngineSpec, l: LoraSpec, seed: number): void {
  const adapters = l.ranks.map((rank, i) => ({ id: `ad-${i}`, rank, baseModel: '' }));
  const resolved: ResolvedLora = {
    capacity: l.capacity,
    loadBaseLatencyUs: l.baseUs,
    loadBandwidthBytesUs: l.bandwidth,
    footprintBytesPerRank: 2e6,
    stepOverheadTiers: new Map([[8, { k6: l.k6, k7: 1 }], [32, { k6: l.k6 * 2, k7: 1.5 }]]),
    adapters,
  };
  const setup: EngineSetup = {
    ...toSetup(spec),
    seed: BigInt(seed),
    lora: new AdapterCost(resolved),
    policy: {
      ...DEFAULT_POLICY_SETUP,
      routingPolicy: l.routing,
      routingScorers: l.routing === 'weighted' ? [{ name: 'queue-depth', weight: 1 }, { name: 'lora-affinity', weight: 2 }] : null,
      snapshotRefreshInterval: l.refresh,
    },
  };
  const fresh = (): ReturnType<typeof buildRequests> => buildRequests(spec).map((r, i) => {
    const a = l.use[i % l.use.length]!;
    r.adapter = a < 0 ? '' : `ad-${a % adapters.length}`;
    return r;
  });
  const { cs, requests } = checkScenario(setup, fresh, spec.cpuBlocks > 0, 40_000, tally);
  // Every load happened on an instance serving that adapter, and slots were actually exercised.
  for (const inst of cs.instances) {
    for (const id of inst.metrics.adapterLoads.keys()) expect(requests.some((r) => r.adapter === id && r.assignedInstance === inst.id)).toBe(true);
  }
}

describe('LoRA properties', () => {
  it('random adapters, slots and costs on random engines: slot conservation and every invariant after every event, deterministic', () => {
    tally.tieredDeadlocks = 0;
    const numRuns = 250;
    fc.assert(fc.property(engineSpecArb({ maxInstances: 6, maxRequests: 40 }), loraArb, fc.integer({ min: 1, max: 1_000_000 }), check), { seed: 4242, numRuns });
    expect(tally.tieredDeadlocks).toBeLessThan(numRuns * 0.02);
  });
});
