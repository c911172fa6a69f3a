/**
 * Seeded property tests over random clusters driven by random evolvable policies: every template of every
 * control point with random parameters inside their documented ranges, and random decision trees (admission
 * with DELAY leaves, priority, routing with filters and objectives, scheduler ordering). Every run keeps every
 * invariant (INV-1 with the DELAY bucket) and is deterministic.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { preparePolicies } from '../../src/policy/build.js';
import { parsePolicyBundle } from '../../src/policy/bundle.js';
import { TEMPLATES, type ParamSpec } from '../../src/policy/templates/catalog.js';
import type { ControlPoint } from '../../src/policy/view.js';
import { DEFAULT_POLICY_SETUP, type EngineSetup } from '../../src/sim/engine-setup.js';
import { checkScenario } from './check.js';
import { buildRequests, engineSpecArb, toSetup } from './scenarios.js';

function paramArb(p: ParamSpec): fc.Arbitrary<unknown> {
  if (p.type === 'boolean') return fc.boolean();
  if (p.type === 'enum') return fc.constantFrom(...(p.values ?? []));
  const min = p.min ?? 0;
  // Keep magnitudes that matter at this scale (huge thresholds are just "off").
  const max = Math.min(p.max ?? 1000, Math.max(min + 1, 1000));
  return p.type === 'integer' ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function templateArb(point: ControlPoint): fc.Arbitrary<Record<string, unknown>> {
  return fc.constantFrom(...TEMPLATES.filter((t) => t.point === point)).chain((t) =>
    fc.record(Object.fromEntries(t.parameters.map((p) => [p.name, paramArb(p)]))).map((parameters) => ({ type: 'parameterized', template: t.name, parameters })),
  ).filter((s) => {
    // Weighted templates need one positive weight.
    const p = s['parameters'] as Record<string, unknown>;
    const t = s['template'];
    if (t !== 'weighted_affinity_routing' && t !== 'weighted_scorers') return true;
    return Object.entries(p).some(([k, v]) => k !== 'utilization_threshold' && typeof v === 'number' && v > 0);
  });
}

const numFeature = (point: 'router' | 'scheduler'): fc.Arbitrary<[string, number]> =>
  point === 'router'
    ? fc.constantFrom<[string, number]>(['request.inputTokens', 64], ['tenant.activeRequests', 3], ['global.inFlight', 8], ['cluster.maxQueueDepth', 2], ['cluster.meanKvUtilization', 0.5], ['request.admissionDelays', 1], ['tenant.recentRate', 5])
    : fc.constantFrom<[string, number]>(['request.inputTokens', 64], ['request.waitUs', 10_000], ['instance.queueDepth', 3], ['request.priority', 1]);

function predArb(kind: 'router' | 'scheduler'): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(numFeature(kind), fc.constantFrom('<', '<=', '>', '>=', '==', '!='), fc.double({ min: 0, max: 2, noNaN: true })).map(([[f, scale], op, k]) => ({ feature: f, op, value: Math.round(scale * k * 100) / 100 }));
}

function treeArb(leaf: fc.Arbitrary<Record<string, unknown>>, kind: 'router' | 'scheduler'): fc.Arbitrary<unknown> {
  const { node } = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.record({ if: predArb(kind), then: tie('node'), else: tie('node') })),
  }));
  return node;
}

const admissionLeaf = fc.oneof(
  fc.constant({ action: 'admit' }),
  fc.constant({ action: 'reject', reason: 'r' }),
  fc.integer({ min: 1, max: 50_000 }).map((d) => ({ action: 'delay', delay_us: d })),
);
const priorityLeaf = fc.integer({ min: -5, max: 5 }).map((p) => ({ priority: p }));
const routingLeaf = fc.oneof(
  fc.constantFrom('instance.load', 'instance.queueDepth', 'instance.kvUtilization', 'instance.cachedPrefixBlocks', 'instance.shadowMatchedBlocks', 'instance.estimatedWaitMs').chain((f) =>
    fc.record({ kind: fc.constantFrom('minimize', 'maximize'), tie: fc.constantFrom('random', 'first'), filter: fc.boolean() }).map((r) => ({ route: { [r.kind]: f, tie: r.tie, ...(r.filter ? { filter: { feature: 'instance.load', op: '<', value: 4 } } : {}) } })),
  ),
  fc.uniqueArray(fc.constantFrom('precise-prefix-cache', 'queue-depth', 'kv-utilization', 'prefix-affinity', 'load-balance'), { minLength: 1, maxLength: 3 }).map((names) => ({ route: { scorers: Object.fromEntries(names.map((n, i) => [n, i + 1])) } })),
);
const schedulerLeaf = fc.integer({ min: -3, max: 3 }).map((p) => ({ priority: p }));

const bundleArb = fc.record({
  admission: fc.option(fc.oneof(templateArb('admission'), treeArb(admissionLeaf, 'router').map((tree) => ({ type: 'decision_tree', tree }))), { nil: undefined }),
  priority: fc.option(fc.oneof(templateArb('priority'), treeArb(priorityLeaf, 'router').map((tree) => ({ type: 'decision_tree', tree }))), { nil: undefined }),
  routing: fc.option(fc.oneof(templateArb('routing'), treeArb(routingLeaf, 'router').map((tree) => ({ type: 'decision_tree', tree }))), { nil: undefined }),
  scheduler: fc.option(fc.oneof(templateArb('scheduler'), treeArb(schedulerLeaf, 'scheduler').map((tree) => ({ type: 'decision_tree', tree }))), { nil: undefined }),
}).filter((b) => Object.values(b).some((v) => v !== undefined));

const tally = { tieredDeadlocks: 0 };

describe('evolvable policy properties', () => {
  it('random templates and trees at every control point: invariants hold (DELAY included), deterministic', async () => {
    const samples = fc.sample(fc.tuple(engineSpecArb({ maxInstances: 8, maxRequests: 30 }), bundleArb, fc.integer({ min: 1, max: 1_000_000 })), { seed: 4242, numRuns: 120 });
    let delays = 0;
    for (const [spec, b, seed] of samples) {
      const json = JSON.stringify(Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)));
      const bundle = parsePolicyBundle(json, 'random.json');
      const prepared = await preparePolicies(bundle.evolvable);
      const setup: EngineSetup = { ...toSetup(spec), policy: { ...DEFAULT_POLICY_SETUP, evolvable: prepared, traceDecisions: true }, seed: BigInt(seed) };
      const fresh = (): ReturnType<typeof buildRequests> => buildRequests(spec).map((r, i) => {
        r.tenantId = ['', 'tenant-a', 'tenant-b'][i % 3] as string;
        return r;
      });
      const { cs } = checkScenario(setup, fresh, spec.cpuBlocks > 0, 60_000, tally);
      delays += cs.admissionDelays;
    }
    expect(delays).toBeGreaterThan(0);
    expect(tally.tieredDeadlocks).toBeLessThan(samples.length * 0.05);
  });
});
