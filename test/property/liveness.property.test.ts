/**
 * Nothing hangs: random small engines (engine.property's scenarios) in every scheduling mode, with requests
 * whose output does NOT fit the cache mixed in (engine.property folds them away), in both semantics. Every run
 * ends under an event cap: either with every invariant holding, or — reference semantics, unbounded horizon,
 * no deadline — refused with the never-fits error for a request that really needs more KV than the cache. The
 * reference's tiered-KV livelocks (reference-differences K6/K7) are set aside and counted as in engine.property.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../src/domain/units.js';
import { UnservableRequestError } from '../../src/instance/never-fits.js';
import type { SchedulingMode } from '../../src/instance/batch-formation.js';
import type { Semantics } from '../../src/domain/semantics.js';
import { checkScenario, type Tally } from './check.js';
import { buildRequests, engineSpecArb, toSetup, type EngineSpec } from './scenarios.js';

/** A futile self-preemption cycle costs at most ~1,600 events here (768 tokens of KV, 1-token budgets); 32 of them end an unbounded run. */
const MAX_EVENTS = 120_000;

const liveArb = fc.record({
  spec: engineSpecArb({ maxInstances: 2, maxRequests: 8 }).filter((s) => s.totalBlocks <= 48),
  mode: fc.constantFrom<SchedulingMode>('sync', 'async', 'prefill-first'),
  /** Index (mod the request count) of a request given more output than the whole cache; -1 = none. */
  huge: fc.oneof(fc.constant(-1), fc.nat(7)),
});

function run(semantics: Semantics, x: { spec: EngineSpec; mode: SchedulingMode; huge: number }, tally: Tally & { refused: number }): void {
  const { spec, mode } = x;
  const capacity = spec.totalBlocks * spec.blockSize;
  const k = x.huge < 0 ? -1 : x.huge % spec.requests.length;
  // A request that cannot fit spins (as the reference does) until its deadline or the horizon when it has one:
  // steps of at least 2 ms keep that within the event cap (3 s at most).
  const latency: EngineSpec['latency'] = k < 0 ? spec.latency : { kind: 'blackbox', alpha: [0, 0, 0], beta: [2000, 0.5, 1] };
  const s: EngineSpec = { ...spec, latency, requests: spec.requests.map((q, i) => (i === k ? { ...q, output: q.output + capacity } : q)) };
  const setup = { ...toSetup(s), schedulingMode: mode, semantics };
  try {
    checkScenario(setup, () => buildRequests(s), semantics === 'reference' && s.cpuBlocks > 0, MAX_EVENTS, tally, mode !== 'prefill-first');
  } catch (e) {
    if (!(e instanceof UnservableRequestError)) throw e;
    // Refused only when the run could never end, and only for a request that cannot fit.
    expect(semantics).toBe('reference');
    expect(setup.horizon).toBe(MAX_INT64);
    const id = /^request (request_\d+)/.exec(e.message)?.[1];
    const r = buildRequests(s).find((q) => q.id === id);
    expect(r, e.message).toBeDefined();
    expect(r?.deadline).toBe(0);
    expect((r?.inputLen ?? 0) + (r?.outputLen ?? 0)).toBeGreaterThan(capacity);
    tally.refused++;
  }
}

describe('liveness over small caches, tiny budgets and huge outputs', () => {
  for (const semantics of ['reference', 'corrected'] as const) {
    it(`${semantics}: every run ends, counted or refused with the never-fits error`, () => {
      const tally = { tieredDeadlocks: 0, refused: 0 };
      const numRuns = 400;
      fc.assert(fc.property(liveArb, (x) => run(semantics, x, tally)), { seed: semantics === 'reference' ? 77 : 78, numRuns });
      expect(tally.tieredDeadlocks).toBeLessThan(numRuns * 0.05);
      if (semantics === 'reference') expect(tally.refused).toBeGreaterThan(0);
      else expect(tally.refused).toBe(0);
    }, 240_000);
  }
});
