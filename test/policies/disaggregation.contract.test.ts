/**
 * The P/D decider contract, run against every implementation: the built-ins (never, always,
 * prefix-threshold), every disaggregation template with its defaults, a decision tree and a code decider in
 * each sandbox engine. Each returns a boolean with a reason, moves the request only to a pod of the decode
 * pool, leaves its inputs untouched and decides the same way twice. Then: the prefix-threshold rule written
 * in each representation agrees with the built-in on every context; the conditional template's caps; the
 * prefill pool is read only by deciders that look at it; and a broken code decider fails with a
 * PolicyRuntimeError naming the control point.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../../src/domain/slo.js';
import { GoRand } from '../../src/gocompat/go-rand.js';
import { preparePolicies, type BuiltPolicies } from '../../src/policy/build.js';
import { parsePolicyBundle } from '../../src/policy/bundle.js';
import { PolicyConfigError, PolicyRuntimeError } from '../../src/policy/errors.js';
import type { PolicyBuildContext } from '../../src/policy/templates/build.js';
import { TEMPLATES } from '../../src/policy/templates/catalog.js';
import { DISAGGREGATION_DECIDERS, makeDisaggregationDecider, type DisaggregationContext, type DisaggregationDecider } from '../../src/routing/disaggregation.js';
import { makeRequest, scenarioCachedBlocks, scenarioSnapshots, scenarioTokens } from '../../src/routing/test-fixtures.js';
import { routingSnapshot, type RouterState } from '../../src/routing/types.js';

const ENGINES = ['fast', 'strict'] as const;
const BLOCK = 16;

function buildCtx(): PolicyBuildContext {
  return {
    blockSize: BLOCK,
    routerRng: new GoRand(7n),
    rngFor: () => new GoRand(11n),
    cachedBlocks: scenarioCachedBlocks,
    priorities: new SloPriorityMap(),
  };
}

async function bundle(yaml: string, file = 'd.yaml'): Promise<() => BuiltPolicies> {
  const b = parsePolicyBundle(yaml, file);
  const prepared = await preparePolicies(b.evolvable);
  return () => prepared.build(buildCtx());
}

function code(engine: string, source: string): string {
  return `disaggregation:\n  type: code\n  engine: ${engine}\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`;
}

interface Case {
  readonly req: ReturnType<typeof makeRequest>;
  readonly ctx: DisaggregationContext;
  /** How many times the prefill pool was read. */
  prefillReads: number;
}

/** A deterministic grid: 4 decode pods with varying load, 2 prefill pods whose queues grow, prompts of 64-88 tokens with cached prefixes. */
function cases(n: number): Case[] {
  const out: Case[] = [];
  const inFlight = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    const snaps = Object.freeze(scenarioSnapshots(i, inFlight, i % 2 === 0).map((s) => Object.freeze(s)));
    const state: RouterState = Object.freeze({ snapshots: snaps, clock: i * 1000 });
    const prefill: RouterState = Object.freeze({
      snapshots: Object.freeze([routingSnapshot('instance_p0', { queueDepth: i % 7 }), routingSnapshot('instance_p1', { queueDepth: (i * 3) % 5, kvUtilization: (i % 10) / 10 })]),
      clock: i * 1000,
    });
    const req = makeRequest(`r${i}`, i % 11 === 0 ? [] : scenarioTokens(i));
    const c: Case = {
      req,
      prefillReads: 0,
      ctx: {
        state,
        selected: i % 4,
        cachedBlocks: (id) => scenarioCachedBlocks(id, req),
        blockSize: BLOCK,
        prefillState: () => {
          c.prefillReads++;
          return prefill;
        },
      },
    };
    out.push(c);
    inFlight[i % 4] = (inFlight[i % 4] as number) + 1;
  }
  return out;
}

const THRESHOLD = 40;
const subjects: { label: string; make: () => DisaggregationDecider }[] = [];
/** Implementations of "disaggregate when more than THRESHOLD prompt tokens are uncached on the chosen pod". */
const sameRule: { label: string; make: () => DisaggregationDecider }[] = [];

beforeAll(async () => {
  for (const name of DISAGGREGATION_DECIDERS) subjects.push({ label: `built-in ${name}`, make: () => makeDisaggregationDecider(name, 16) });
  for (const t of TEMPLATES.filter((x) => x.point === 'disaggregation')) {
    const b = await bundle(`disaggregation: {type: parameterized, template: ${t.name}, parameters: {}}\n`);
    subjects.push({ label: `template ${t.name}`, make: () => b().disaggregation as DisaggregationDecider });
  }
  const tree = await bundle(`disaggregation:
  type: decision_tree
  tree:
    if: {feature: selected.uncachedTokens, op: "<=", value: 32}
    then: {disaggregate: false, reason: short}
    else:
      if: {any: [{feature: prefill.maxQueueDepth, op: ">=", value: 5}, {feature: selected.load, op: "<", value: 1}]}
      then: {disaggregate: false}
      else: {disaggregate: true, reason: long and the prefill pool keeps up}
`);
  subjects.push({ label: 'tree', make: () => tree().disaggregation as DisaggregationDecider });
  for (const e of ENGINES) {
    const c = await bundle(code(e, `let calls = 0;
function decide(request, state) {
  calls++;
  const busy = state.prefillInstances.some((p) => p.queueDepth >= 5);
  if (state.selected.uncachedTokens > 32 && !busy) return { disaggregate: true, reason: "long #" + calls };
  // Move the request to the least loaded decode pod when its own pod is busy.
  const least = state.instances.reduce((a, b) => (b.load < a.load ? b : a));
  return least.load + 2 < state.selected.load ? { disaggregate: false, decodeInstance: least.id } : false;
}`));
    subjects.push({ label: `code (${e})`, make: () => c().disaggregation as DisaggregationDecider });
  }
  sameRule.push({ label: 'built-in prefix-threshold', make: () => makeDisaggregationDecider('prefix-threshold', THRESHOLD) });
  const tpl = await bundle(`disaggregation: {type: parameterized, template: prefix_threshold_disaggregation, parameters: {threshold: ${THRESHOLD}}}\n`);
  sameRule.push({ label: 'template prefix_threshold_disaggregation', make: () => tpl().disaggregation as DisaggregationDecider });
  const t2 = await bundle(`disaggregation:\n  type: decision_tree\n  tree: {if: {feature: selected.uncachedTokens, op: ">", value: ${THRESHOLD}}, then: {disaggregate: true}, else: {disaggregate: false}}\n`);
  sameRule.push({ label: 'tree', make: () => t2().disaggregation as DisaggregationDecider });
  for (const e of ENGINES) {
    const c = await bundle(code(e, `function decide(request, state) {\n  return request.inputTokens - state.selected.cachedPrefixBlocks * state.blockSize > ${THRESHOLD};\n}`));
    sameRule.push({ label: `code (${e})`, make: () => c().disaggregation as DisaggregationDecider });
  }
  subjects.push(...sameRule.map((x) => ({ ...x, label: `${x.label} (threshold ${THRESHOLD})` })));
});

describe('disaggregation (P/D decider) contract', () => {
  it('every implementation: a boolean with a reason, a decode override only to a pool member, inputs untouched, deterministic', () => {
    expect(subjects.length).toBe(3 + 2 + 1 + 2 + 5);
    for (const s of subjects) {
      const run = (): string[] => {
        const d = s.make();
        return cases(40).map(({ req, ctx }) => {
          const before = [req.id, req.inputLen, req.outcome, req.assignedInstance, ctx.state.snapshots.map((x) => `${x.id}:${x.queueDepth}:${x.inFlightRequests}`).join(',')];
          const dec = d.decide(req, ctx);
          expect(typeof dec.disaggregate, s.label).toBe('boolean');
          expect(typeof dec.reason === 'string' && dec.reason.length > 0, s.label).toBe(true);
          if (dec.decodeOverride !== undefined) expect(ctx.state.snapshots.map((x) => x.id), s.label).toContain(dec.decodeOverride);
          expect([req.id, req.inputLen, req.outcome, req.assignedInstance, ctx.state.snapshots.map((x) => `${x.id}:${x.queueDepth}:${x.inFlightRequests}`).join(',')], s.label).toEqual(before);
          return `${dec.disaggregate}|${dec.decodeOverride ?? ''}|${dec.reason}`;
        });
      };
      expect(run(), s.label).toEqual(run());
    }
  });

  it('the built-ins: never keeps every prefill local, always splits every request', () => {
    const all = cases(20);
    expect(all.map((c) => makeDisaggregationDecider('never', 0).decide(c.req, c.ctx).disaggregate)).toEqual(new Array(20).fill(false));
    expect(all.map((c) => makeDisaggregationDecider('always', 0).decide(c.req, c.ctx).disaggregate)).toEqual(new Array(20).fill(true));
  });

  it('the prefix-threshold rule as template, tree and code (both engines) decides as the built-in on every context', () => {
    // Expected from the fixture itself: uncached = prompt - cached blocks x 16 on the chosen pod.
    const expected = cases(60).map(({ req, ctx }) => {
      const id = ctx.state.snapshots[ctx.selected]?.id as string;
      return req.inputLen > 0 && req.inputLen - scenarioCachedBlocks(id, req) * BLOCK > THRESHOLD;
    });
    expect(expected.filter(Boolean).length).toBeGreaterThan(10);
    expect(expected.filter((x) => !x).length).toBeGreaterThan(5);
    for (const s of sameRule) {
      const d = s.make();
      expect(cases(60).map(({ req, ctx }) => d.decide(req, ctx).disaggregate), s.label).toEqual(expected);
    }
  });

  it('the prefill pool is read only by deciders that look at it', async () => {
    const count = (d: DisaggregationDecider): number => cases(30).reduce((n, c) => {
      d.decide(c.req, c.ctx);
      return n + c.prefillReads;
    }, 0);
    expect(count(makeDisaggregationDecider('prefix-threshold', 16))).toBe(0);
    const noCap = await bundle('disaggregation: {type: parameterized, template: conditional_disaggregation, parameters: {max_local_prefill_tokens: 0}}\n');
    expect(count(noCap().disaggregation as DisaggregationDecider)).toBe(0);
    const capped = await bundle('disaggregation: {type: parameterized, template: conditional_disaggregation, parameters: {max_local_prefill_tokens: 0, max_prefill_queue_per_instance: 2}}\n');
    expect(count(capped().disaggregation as DisaggregationDecider)).toBe(30 - 3); // the 3 empty prompts stay local first
    const tree = await bundle('disaggregation:\n  type: decision_tree\n  tree: {if: {feature: prefill.meanQueueDepth, op: "<", value: 3}, then: {disaggregate: true}, else: {disaggregate: false}}\n');
    expect(count(tree().disaggregation as DisaggregationDecider)).toBe(30);
  });

  it('conditional_disaggregation: local below the token cap, when the decode pod is idle, or when the prefill pool is over its caps', async () => {
    const b = await bundle('disaggregation: {type: parameterized, template: conditional_disaggregation, parameters: {max_local_prefill_tokens: 40, max_prefill_queue_per_instance: 3, max_prefill_kv_utilization: 0.5, local_if_decode_load_below: 2}}\n');
    const d = b().disaggregation as DisaggregationDecider;
    const req = makeRequest('r', Array.from({ length: 100 }, (_, k) => 500_000 + k));
    const decode = (load: number): RouterState => ({ snapshots: [routingSnapshot('d0', { queueDepth: load })], clock: 0 });
    const pool = (q: number, kv: number): RouterState => ({ snapshots: [routingSnapshot('p0', { queueDepth: q, kvUtilization: kv }), routingSnapshot('p1', { queueDepth: q + 2, kvUtilization: kv })], clock: 0 });
    const at = (cached: number, load: number, q: number, kv: number): boolean =>
      d.decide(req, { state: decode(load), selected: 0, cachedBlocks: () => cached, blockSize: BLOCK, prefillState: () => pool(q, kv) }).disaggregate;
    expect(at(0, 5, 0, 0)).toBe(true); // 100 uncached > 40, busy decode pod, idle prefill pool
    expect(at(4, 5, 0, 0)).toBe(false); // 100 - 64 = 36 <= 40
    expect(at(0, 1, 0, 0)).toBe(false); // decode load 1 < 2
    expect(at(0, 5, 2, 0)).toBe(true); // prefill mean queue (2 + 4) / 2 = 3 is not above 3
    expect(at(0, 5, 3, 0)).toBe(false); // mean queue 4 > 3
    expect(at(0, 5, 0, 0.6)).toBe(false); // KV 0.6 > 0.5
  });
});

describe('disaggregation failures', () => {
  const fail = async (engine: string, source: string, match: RegExp): Promise<void> => {
    const b = await bundle(code(engine, source));
    const d = b().disaggregation as DisaggregationDecider;
    const [c] = cases(2).slice(1);
    let err: unknown = null;
    try {
      d.decide((c as Case).req, (c as Case).ctx);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PolicyRuntimeError);
    expect((err as PolicyRuntimeError).message).toMatch(/disaggregation/);
    expect((err as PolicyRuntimeError).message).toMatch(match);
  };
  for (const e of ENGINES) {
    it(`${e}: a throw, a malformed answer, an unknown decode pod and a runaway loop are PolicyRuntimeErrors`, async () => {
      await fail(e, 'function decide(r, s) { throw new Error("boom"); }', /boom/);
      await fail(e, 'function decide(r, s) { return "yes"; }', /expected true, false or \{disaggregate/);
      await fail(e, 'function decide(r, s) { return { disaggregate: false, decodeInstance: "instance_9" }; }', /instance_9.*not a routable decode pod/);
      await fail(e, 'function decide(r, s) { for (;;) {} }', /budget/i);
    });
  }

  it('bundle errors are located: a non-boolean leaf, a feature of another control point, an unknown template parameter, a section without type', () => {
    const err = (yaml: string): PolicyConfigError => {
      try {
        parsePolicyBundle(yaml, 'b.yaml');
      } catch (e) {
        if (e instanceof PolicyConfigError) return e;
        throw e;
      }
      throw new Error('no error');
    };
    expect(err('disaggregation:\n  type: decision_tree\n  tree: {disaggregate: "yes"}\n').message).toMatch(/b\.yaml:3:\d+.*disaggregate must be true or false/);
    expect(err('disaggregation:\n  type: decision_tree\n  tree:\n    if: {feature: instance.load, op: ">", value: 2}\n    then: {disaggregate: true}\n    else: {disaggregate: false}\n').message).toMatch(/b\.yaml:4:\d+.*instance\.load/);
    expect(err('disaggregation: {type: parameterized, template: prefix_threshold_disaggregation, parameters: {treshold: 3}}\n').message).toMatch(/b\.yaml:1:\d+.*treshold/);
    expect(err('disaggregation:\n  threshold: 3\n').message).toMatch(/b\.yaml:2:\d+.*needs `type/);
  });
});
