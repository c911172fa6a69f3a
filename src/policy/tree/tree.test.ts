import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineCounter, isNode, parse as parseYaml, parseDocument, stringify } from 'yaml';
import { PolicyConfigError } from '../errors.js';
import type { PolicyPath } from '../errors.js';
import { FEATURES, findFeature, readFeature, routedInstances, routerEnv } from '../features.js';
import type { FeatureEnv, FeatureSpec, FeatureType, RoutedInstanceView } from '../features.js';
import type { ControlPoint, InstanceView, RequestView, StateView } from '../view.js';
import { CONTROL_POINTS } from '../view.js';
import { SCORER_NAMES } from '../../routing/scorer-registry.js';
import {
  bestInstances, closestNames, evaluatePredicate, evaluateTree, filterInstances, leafToPlain, parseDecisionTree, predicateFeatures, printTree,
  readRuleObjective, ruleReadsInstances, treeToPlain,
} from './index.js';
import type { DecisionTree, ObjectiveRule, RouteRule, TreeLeaf, TreeLocator } from './index.js';

const FILE = 'p.yaml';

/** A locator over a YAML text: the node at a path, else its nearest parent. */
function locator(text: string): { raw: unknown; where: TreeLocator } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  if (doc.errors.length > 0) throw doc.errors[0]!;
  const where: TreeLocator = (path) => {
    for (let n = path.length; n >= 0; n--) {
      const node: unknown = doc.getIn(path.slice(0, n), true);
      if (isNode(node) && node.range) return { file: FILE, pos: lineCounter.linePos(node.range[0]) };
    }
    return { file: FILE, pos: { line: 1, col: 1 } };
  };
  return { raw: doc.toJS() as unknown, where };
}

/** Parses `body` as the tree at `<point>.tree` of a bundle (body lines start at line 3, column 5). */
function tree(point: ControlPoint, body: string): DecisionTree {
  const text = `${point}:\n  tree:\n${body.trim().split('\n').map((l) => `    ${l}`).join('\n')}\n`;
  const { raw, where } = locator(text);
  const at = (raw as Record<string, Record<string, unknown>>)[point]!.tree;
  return parseDecisionTree(point, at, [point, 'tree'], where);
}

const noWhere: TreeLocator = () => ({ file: FILE, pos: { line: 1, col: 1 } });

function plainTree(point: ControlPoint, raw: unknown): DecisionTree {
  return parseDecisionTree(point, raw, [point, 'tree'], noWhere);
}

function treeError(point: ControlPoint, body: string): PolicyConfigError {
  try {
    tree(point, body);
  } catch (e) {
    if (e instanceof PolicyConfigError) return e;
    throw e;
  }
  throw new Error('expected a PolicyConfigError');
}

function expectError(point: ControlPoint, body: string, field: string, line: number, col: number, ...parts: string[]): void {
  const e = treeError(point, body);
  expect(e.code).toBe('POLICY_TREE');
  expect(e.field).toBe(field);
  const prefix = `${FILE}:${line}:${col}: ${field}: `;
  expect.soft(e.message.slice(0, prefix.length)).toBe(prefix);
  expect(e.message).not.toContain('\n');
  for (const p of parts) expect(e.message).toContain(p);
}

const ADMISSION = `
if: {feature: request.inputTokens, op: '>', value: 4000}
then: {action: reject, reason: too long}
else:
  if:
    all:
      - {feature: tenant.burstDetected, op: '==', value: true}
      - {feature: global.inFlight, op: '>=', value: 64}
  then: {action: delay, delay_us: 50000}
  else: {action: admit}
`;

describe('parse and evaluate, per control point', () => {
  it('admission', () => {
    const t = tree('admission', ADMISSION);
    expect(t.point).toBe('admission');
    expect(t.nodeCount).toBe(5);
    expect(t.depth).toBe(3);
    expect(t.features).toEqual(['global.inFlight', 'request.inputTokens', 'tenant.burstDetected']);
    expect(evaluateTree(t, { request: { inputTokens: 5000 } })).toEqual({ point: 'admission', action: 'reject', delayUs: 0, reason: 'too long' });
    expect(evaluateTree(t, { request: { inputTokens: 10 }, tenant: { burstDetected: true }, global: { inFlight: 64 } }))
      .toEqual({ point: 'admission', action: 'delay', delayUs: 50000, reason: '' });
    expect(evaluateTree(t, { request: { inputTokens: 10 }, tenant: { burstDetected: true }, global: { inFlight: 63 } })).toMatchObject({ action: 'admit' });
    // Missing values read 0 / false.
    expect(evaluateTree(t, {})).toMatchObject({ action: 'admit' });
    // The same leaf object each time.
    expect(evaluateTree(t, {})).toBe(evaluateTree(t, { request: { inputTokens: 1 } }));
  });

  it('admission through routerEnv', () => {
    const env = routerEnv(request({ inputTokens: 4001 }), state([instance(0, 1), instance(1, 3)]));
    expect(evaluateTree(tree('admission', ADMISSION), env)).toMatchObject({ action: 'reject' });
  });

  it('priority, with hints', () => {
    const t = tree('priority', `
if: {feature: request.sloClass, op: in, value: [critical, standard]}
then: {priority: 10, hints: {tier: gold, weight: 2, sticky: true}}
else: {priority: -1.5}
`);
    expect(evaluateTree(t, { request: { sloClass: 'critical' } })).toEqual({ point: 'priority', priority: 10, hints: { tier: 'gold', weight: 2, sticky: true } });
    expect(evaluateTree(t, { request: { sloClass: 'batch' } })).toEqual({ point: 'priority', priority: -1.5, hints: {} });
  });

  it('scheduler', () => {
    const t = tree('scheduler', `
if: {feature: request.waitUs, op: '>', value: {feature: instance.maxTokenBudget}}
then: {priority: 100}
else: {priority: 0}
`);
    expect(evaluateTree(t, { request: { waitUs: 9 }, instance: { maxTokenBudget: 8 } })).toEqual({ point: 'scheduler', priority: 100 });
    expect(evaluateTree(t, { request: { waitUs: 8 }, instance: { maxTokenBudget: 8 } })).toEqual({ point: 'scheduler', priority: 0 });
  });

  it('autoscale', () => {
    const t = tree('autoscale', `
if: {feature: deployment.avgQueueDepth, op: '>', value: 10}
then: {scale: up, by: 2, reason: queues}
else:
  if: {feature: deployment.currentReplicas, op: '<', value: {feature: deployment.minReplicas}}
  then: {scale_to: 3}
  else:
    if: {feature: deployment.avgUtilization, op: '<', value: 0.2}
    then: {scale: down}
    else: {scale: none}
`);
    const d = (x: Record<string, number>): FeatureEnv => ({ deployment: x });
    expect(evaluateTree(t, d({ avgQueueDepth: 11 }))).toEqual({ point: 'autoscale', scale: 'up', by: 2, scaleTo: null, reason: 'queues' });
    expect(evaluateTree(t, d({ currentReplicas: 1, minReplicas: 2 }))).toEqual({ point: 'autoscale', scale: 'none', by: 0, scaleTo: 3, reason: '' });
    expect(evaluateTree(t, d({ currentReplicas: 2, minReplicas: 2, avgUtilization: 0.1 }))).toEqual({ point: 'autoscale', scale: 'down', by: 1, scaleTo: null, reason: '' });
    expect(evaluateTree(t, d({ currentReplicas: 2, minReplicas: 2, avgUtilization: 0.5 }))).toEqual({ point: 'autoscale', scale: 'none', by: 0, scaleTo: null, reason: '' });
  });

  it('routing: weighted scorers in both spellings keep their order', () => {
    const t = tree('routing', `
if: {feature: request.prefixBlocks, op: '>=', value: 4}
then:
  route:
    scorers: {precise-prefix-cache: 3, queue-depth: 2, kv-utilization: 1}
    reason: cache
else:
  route:
    scorers: [{name: queue-depth, weight: 1}, {name: active-requests, weight: 0.5}]
`);
    const a = evaluateTree(t, { request: { prefixBlocks: 4 } }) as Extract<TreeLeaf, { point: 'routing' }>;
    expect(a.rule).toEqual({ kind: 'scorers', scorers: [{ name: 'precise-prefix-cache', weight: 3 }, { name: 'queue-depth', weight: 2 }, { name: 'kv-utilization', weight: 1 }], filter: null, reason: 'cache' });
    const b = evaluateTree(t, {}) as Extract<TreeLeaf, { point: 'routing' }>;
    expect(b.rule.kind === 'scorers' && b.rule.scorers.map((s) => s.name)).toEqual(['queue-depth', 'active-requests']);
    expect(ruleReadsInstances(b.rule)).toBe(false);
  });

  it('routing: minimize / maximize with filters over instance features', () => {
    const t = tree('routing', `
if: {feature: cluster.maxCachedPrefixBlocks, op: '>', value: 0}
then:
  route:
    maximize: instance.cachedPrefixBlocks
    tie: first
    filter: {feature: instance.kvUtilization, op: '<', value: 0.9}
else:
  route:
    minimize: instance.load
    filter:
      all:
        - {feature: instance.id, op: not_in, value: [i2]}
        - {feature: instance.queueDepth, op: '<=', value: {feature: request.inputTokens}}
`);
    const insts = [instance(0, 5, 2, 0.5), instance(1, 1, 3, 0.95), instance(2, 0, 3, 0.1), instance(3, 1, 0, 0.2)];
    const req = request({ inputTokens: 4, prefixHashes: [1, 2, 3] });
    const st = state(insts);
    const env = routerEnv(req, st);
    const routed = routedInstances(req, st);
    const hit = evaluateTree(t, env) as Extract<TreeLeaf, { point: 'routing' }>;
    const rule = hit.rule as ObjectiveRule;
    expect(rule).toMatchObject({ kind: 'maximize', feature: 'instance.cachedPrefixBlocks', tie: 'first', reason: '' });
    expect(ruleReadsInstances(rule)).toBe(true);
    const passing = filterInstances(rule, env, routed);
    expect(passing).toEqual([0, 2, 3]);
    expect(bestInstances(rule, env, routed, passing)).toEqual([2]);
    expect(readRuleObjective(rule, { ...env, instance: routed[0] })).toBe(2);
    expect(evaluatePredicate(rule.filter!, { ...env, instance: routed[1] })).toBe(false);
    expect(predicateFeatures(rule.filter!)).toEqual(['instance.kvUtilization']);

    const cold = routerEnv(req, state(insts.map((x) => ({ ...x, cachedPrefixBlocks: 0 }))));
    const other = (evaluateTree(t, cold) as Extract<TreeLeaf, { point: 'routing' }>).rule as ObjectiveRule;
    expect(other).toMatchObject({ kind: 'minimize', feature: 'instance.load', tie: 'random' });
    expect(predicateFeatures(other.filter!)).toEqual(['instance.id', 'instance.queueDepth', 'request.inputTokens']);
    // i2 is excluded by id, i0 by queueDepth 5 > inputTokens 4; i1 and i3 tie at load 1.
    const ok = filterInstances(other, cold, routed);
    expect(ok).toEqual([1, 3]);
    expect(bestInstances(other, cold, routed, ok)).toEqual([1, 3]);
  });

  it('routing: a filter nothing passes keeps every instance; NaN objectives rank last', () => {
    const t = tree('routing', `route: {minimize: instance.recentTtftMs, filter: {feature: instance.load, op: '>', value: 100}}`);
    const rule = (evaluateTree(t, {}) as Extract<TreeLeaf, { point: 'routing' }>).rule as ObjectiveRule;
    const routed = [instance(0, 1), instance(1, 2), instance(2, 3)].map((x) => ({ ...x, cpuUtilization: 0, cpuFreeBlocks: 0, offloadRate: 0, reloadRate: 0, storageUtilization: 0, storageFreeBlocks: 0, storageReloadRate: 0, shadowMatchedBlocks: 0, prefixMatchRatio: 0 }));
    expect(filterInstances(rule, {}, routed)).toEqual([0, 1, 2]);
    routed[0]!.recentTtftMs = NaN;
    routed[1]!.recentTtftMs = 7;
    routed[2]!.recentTtftMs = 7;
    expect(bestInstances(rule, {}, routed, [0, 1, 2])).toEqual([1, 2]);
    routed[1]!.recentTtftMs = NaN;
    routed[2]!.recentTtftMs = NaN;
    expect(bestInstances(rule, {}, routed, [0, 2])).toEqual([0, 2]);
  });

  it('a lone leaf is a tree', () => {
    const t = tree('admission', '{action: admit}');
    expect(t.nodeCount).toBe(1);
    expect(t.depth).toBe(1);
    expect(evaluateTree(t, {})).toMatchObject({ action: 'admit' });
  });
});

describe('predicate forms', () => {
  /** Whether `pred` (flow YAML) holds at the priority point in `env`. */
  const holds = (pred: string, env: FeatureEnv): boolean => {
    const t = tree('priority', `if: ${pred}\nthen: {priority: 1}\nelse: {priority: 0}`);
    const leaf = evaluateTree(t, env) as Extract<TreeLeaf, { point: 'priority' }>;
    expect(evaluatePredicate((t.root as Extract<DecisionTree['root'], { kind: 'branch' }>).if, env)).toBe(leaf.priority === 1);
    return leaf.priority === 1;
  };
  const n = (v: unknown): FeatureEnv => ({ request: { inputTokens: v } });

  it('numeric operators', () => {
    const cases: [string, number, boolean][] = [
      ['<', 3, true], ['<', 4, false], ['<=', 4, true], ['<=', 5, false], ['>', 5, true], ['>', 4, false],
      ['>=', 4, true], ['>=', 3, false], ['==', 4, true], ['==', 4.5, false], ['!=', 4.5, true], ['!=', 4, false],
    ];
    for (const [op, v, want] of cases) expect(holds(`{feature: request.inputTokens, op: '${op}', value: 4}`, n(v))).toBe(want);
    expect(holds(`{feature: request.inputTokens, op: in, value: [1, 2, 4]}`, n(4))).toBe(true);
    expect(holds(`{feature: request.inputTokens, op: in, value: [1, 2, 4]}`, n(3))).toBe(false);
    expect(holds(`{feature: request.inputTokens, op: not_in, value: [1, 2, 4]}`, n(3))).toBe(true);
    // Long lists go through a Set: the same answers.
    const long = '[1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12]';
    expect(holds(`{feature: request.inputTokens, op: in, value: ${long}}`, n(11))).toBe(true);
    expect(holds(`{feature: request.inputTokens, op: in, value: ${long}}`, n(4))).toBe(false);
    expect(holds(`{feature: request.inputTokens, op: not_in, value: ${long}}`, n(4))).toBe(true);
    // IEEE doubles: NaN compares false except with !=; -0 == 0.
    expect(holds(`{feature: request.inputTokens, op: '<', value: 4}`, n(NaN))).toBe(false);
    expect(holds(`{feature: request.inputTokens, op: '!=', value: 4}`, n(NaN))).toBe(true);
    expect(holds(`{feature: request.inputTokens, op: '==', value: 0}`, n(-0))).toBe(true);
    // A missing value, or one of another type, reads 0.
    expect(holds(`{feature: request.inputTokens, op: '==', value: 0}`, {})).toBe(true);
    expect(holds(`{feature: request.inputTokens, op: '==', value: 0}`, n('12'))).toBe(true);
    expect(holds(`{feature: clock, op: '>', value: 10}`, { clock: 11 })).toBe(true);
  });

  it('string and boolean operators', () => {
    const s = (v: unknown): FeatureEnv => ({ request: { tenant: v } });
    expect(holds(`{feature: request.tenant, op: '==', value: acme}`, s('acme'))).toBe(true);
    expect(holds(`{feature: request.tenant, op: '==', value: acme}`, s('Acme'))).toBe(false);
    expect(holds(`{feature: request.tenant, op: '!=', value: acme}`, s('Acme'))).toBe(true);
    expect(holds(`{feature: request.tenant, op: in, value: [a, b]}`, s('b'))).toBe(true);
    expect(holds(`{feature: request.tenant, op: not_in, value: [a, b]}`, s('b'))).toBe(false);
    expect(holds(`{feature: request.tenant, op: '==', value: ''}`, {})).toBe(true);
    expect(holds(`{feature: request.tenant, op: '==', value: {feature: request.model}}`, { request: { tenant: 'x', model: 'x' } })).toBe(true);
    expect(holds(`{feature: request.tenant, op: '!=', value: {feature: request.model}}`, { request: { tenant: 'x', model: 'x' } })).toBe(false);
    const b = (v: unknown): FeatureEnv => ({ tenant: { burstDetected: v } });
    expect(holds(`{feature: tenant.burstDetected, op: '==', value: true}`, b(true))).toBe(true);
    expect(holds(`{feature: tenant.burstDetected, op: '==', value: true}`, b('true'))).toBe(false);
    expect(holds(`{feature: tenant.burstDetected, op: '!=', value: true}`, {})).toBe(true);
    expect(holds(`{feature: tenant.burstDetected, op: in, value: [false]}`, {})).toBe(true);
  });

  it('feature against feature', () => {
    const env = { request: { inputTokens: 10, outputTokens: 20 } };
    expect(holds(`{feature: request.inputTokens, op: '<', value: {feature: request.outputTokens}}`, env)).toBe(true);
    expect(holds(`{feature: request.inputTokens, op: '>=', value: {feature: request.outputTokens}}`, env)).toBe(false);
    expect(holds(`{feature: request.inputTokens, op: '==', value: {feature: request.inputTokens}}`, env)).toBe(true);
  });

  it('all, any, not', () => {
    const a = `{feature: request.inputTokens, op: '>', value: 1}`;
    const b = `{feature: request.outputTokens, op: '>', value: 1}`;
    const env = (x: number, y: number): FeatureEnv => ({ request: { inputTokens: x, outputTokens: y } });
    expect(holds(`{all: [${a}, ${b}]}`, env(2, 2))).toBe(true);
    expect(holds(`{all: [${a}, ${b}]}`, env(2, 0))).toBe(false);
    expect(holds(`{all: [${a}, ${b}, ${a}]}`, env(2, 2))).toBe(true);
    expect(holds(`{all: [${a}]}`, env(2, 0))).toBe(true);
    expect(holds(`{any: [${a}, ${b}]}`, env(0, 2))).toBe(true);
    expect(holds(`{any: [${a}, ${b}]}`, env(0, 0))).toBe(false);
    expect(holds(`{any: [${a}, ${b}, ${b}]}`, env(0, 0))).toBe(false);
    expect(holds(`{any: [${b}]}`, env(0, 2))).toBe(true);
    expect(holds(`{not: ${a}}`, env(0, 0))).toBe(true);
    expect(holds(`{not: {any: [${a}, {not: ${b}}]}}`, env(0, 2))).toBe(true);
  });
});

describe('errors name the path, its line:col, the problem and the fix', () => {
  it('branches', () => {
    expectError('admission', `
if: {feature: request.inputTokens, op: '>', value: 4000}
then: {action: reject}
els: {action: admit}`, 'admission.tree.els', 5, 10, 'unknown key "els" in a branch', 'did you mean "else"?');
    expectError('admission', `
if: {feature: request.inputTokens, op: '>', value: 4000}
then: {action: reject}`, 'admission.tree.else', 3, 5, 'missing "else"', '{if: PRED, then: NODE, else: NODE}');
    expectError('admission', `
if: {feature: request.inputTokens, op: '>', value: 4000}
else: {action: reject}`, 'admission.tree.then', 3, 5, 'missing "then"');
    expectError('admission', `
then: {action: reject}
else: {action: admit}`, 'admission.tree.if', 3, 5, 'missing "if"');
    expectError('admission', `
if: {feature: request.inputTokens, op: '>', value: 4000}
then: admit
else: {action: admit}`, 'admission.tree.then', 4, 11, 'expected a node (a branch {if, then, else} or an admission leaf), got text "admit"', 'write a mapping such as {action: admit}');
    expectError('admission', `
if: {feature: request.inputTokens, op: '>', value: 4000}
then: {action: reject}
else: {}`, 'admission.tree.else', 5, 11, 'empty mapping where a node belongs');
  });

  it('features', () => {
    expectError('admission', `
if: {feature: request.inputTokns, op: '>', value: 4000}
then: {action: reject}
else: {action: admit}`, 'admission.tree.if.feature', 3, 19, 'unknown feature "request.inputTokns"', 'did you mean "request.inputTokens"?', '`blis policies`');
    expectError('admission', `
if: {feature: inputTokens, op: '>', value: 4000}
then: {action: reject}
else: {action: admit}`, 'admission.tree.if.feature', 3, 19, 'did you mean "request.inputTokens"?');
    expectError('admission', `
if: {feature: deployment.currentReplicas, op: '>', value: 4}
then: {action: reject}
else: {action: admit}`, 'admission.tree.if.feature', 3, 19, 'not available in admission trees (only in autoscale)', '`blis policies`');
    expectError('routing', `
if: {feature: request.inputTokens, op: '>', value: 4}
then: {route: {minimize: instance.load}}
else:
  if: {feature: instance.load, op: '<', value: 3}
  then: {route: {minimize: instance.load}}
  else: {route: {minimize: instance.queueDepth}}`, 'routing.tree.else.if.feature', 6, 21, 'per-instance feature', 'cluster.minLoad', 'filter');
    expectError('routing', `
if: {feature: request.inputTokens, op: '>', value: {feature: instance.load}}
then: {route: {minimize: instance.load}}
else: {route: {minimize: instance.load}}`, 'routing.tree.if.value.feature', 3, 66, 'per-instance feature');
    // A filter's suggestions include instance features.
    expectError('routing', `
route:
  minimize: instance.load
  filter: {feature: instance.lod, op: '<', value: 3}`, 'routing.tree.route.filter.feature', 5, 25, 'did you mean "instance.load" or "instance.id"?');
  });

  it('operators and values', () => {
    const at = (pred: string): string => `if: ${pred}\nthen: {action: reject}\nelse: {action: admit}`;
    expectError('admission', at(`{feature: request.tenant, op: '<', value: a}`), 'admission.tree.if.op', 3, 39, '"<" compares numbers, but request.tenant is text', 'use ==, !=, in, not_in');
    expectError('admission', at(`{feature: request.inputTokens, op: '=', value: 1}`), 'admission.tree.if.op', 3, 44, 'unknown operator text "="', 'did you mean "=="?');
    expectError('admission', at(`{feature: request.inputTokens, op: '>', value: '4000'}`), 'admission.tree.if.value', 3, 56, 'expected a finite number (request.inputTokens is a number feature), got text "4000"', 'unquoted number');
    expectError('admission', at(`{feature: request.tenant, op: '==', value: 5}`), 'admission.tree.if.value', 3, 52, 'expected text (request.tenant is a string feature), got 5', 'quote it: "5"');
    expectError('admission', at(`{feature: tenant.burstDetected, op: '==', value: yes}`), 'admission.tree.if.value', 3, 58, 'expected true or false', 'got text "yes"');
    expectError('admission', at(`{feature: request.inputTokens, op: in, value: 3}`), 'admission.tree.if.value', 3, 55, '"in" needs a list of values', 'use == for a single value');
    expectError('admission', at(`{feature: request.inputTokens, op: in, value: []}`), 'admission.tree.if.value', 3, 55, 'an empty list for "in"');
    expectError('admission', at(`{feature: request.inputTokens, op: in, value: [1, x]}`), 'admission.tree.if.value[1]', 3, 59, 'expected a finite number');
    expectError('admission', at(`{feature: request.inputTokens, op: '==', value: [1]}`), 'admission.tree.if.value', 3, 57, 'a list needs op in or not_in');
    expectError('admission', at(`{feature: request.inputTokens, op: '==', value: {feature: request.tenant}}`), 'admission.tree.if.value.feature', 3, 67, 'request.tenant is text but request.inputTokens is a number');
    expectError('admission', at(`{feature: request.inputTokens, op: '==', value: {feat: request.tenant}}`), 'admission.tree.if.value.feat', 3, 64, 'unknown key "feat" in a feature operand');
    expectError('admission', at(`{feature: request.inputTokens, op: '=='}`), 'admission.tree.if.value', 3, 9, 'missing "value"');
    expectError('admission', at(`{feature: request.inputTokens, op: '>', value: .inf}`), 'admission.tree.if.value', 3, 56, 'expected a finite number', 'got Infinity');
  });

  it('predicate shapes', () => {
    const at = (pred: string): string => `if: ${pred}\nthen: {action: reject}\nelse: {action: admit}`;
    expectError('admission', at(`{all: []}`), 'admission.tree.if.all', 3, 15, 'an empty "all" list');
    expectError('admission', at(`{any: {feature: clock, op: '>', value: 1}}`), 'admission.tree.if.any', 3, 15, 'expected a list of predicates');
    expectError('admission', at(`{nott: {feature: clock, op: '>', value: 1}}`), 'admission.tree.if.nott', 3, 16, 'unknown key "nott" in a predicate', 'did you mean "not"?');
    expectError('admission', at(`{}`), 'admission.tree.if', 3, 9, 'empty predicate');
    expectError('admission', at(`request.inputTokens > 4`), 'admission.tree.if', 3, 9, 'expected a predicate', 'got text "request.inputTokens > 4"', "write a mapping such as {feature: request.inputTokens, op: '>', value: 4000}");
    expectError('admission', at(`{feature: clock, op: '>', value: 1, all: []}`), 'admission.tree.if.all', 3, 50, 'unknown key "all" in a comparison');
    expectError('admission', at(`{not: {all: [{feature: clock, op: '>', value: 1}, {feature: clok, op: '>', value: 1}]}}`), 'admission.tree.if.not.all[1].feature', 3, 69, 'did you mean "clock"?');
  });

  it('leaves of the wrong control point or shape', () => {
    const at = (leaf: string): string => `if: {feature: clock, op: '>', value: 1}\nthen: ${leaf}\nelse: ${leaf}`;
    expectError('admission', at('{priority: 3}'), 'admission.tree.then.priority', 4, 22, '"priority" makes priority or scheduler leaves, which an admission tree cannot hold', '{action: admit}');
    expectError('routing', at('{action: admit}'), 'routing.tree.then.action', 4, 20, '"action" makes admission leaves, which a routing tree cannot hold', '{route: RULE}');
    expectError('scheduler', at('{priority: 3, hints: {a: 1}}'), 'scheduler.tree.then.hints', 4, 32, 'unknown key "hints" in a scheduler leaf');
    expectError('admission', at('{action: admit, reson: x}'), 'admission.tree.then.reson', 4, 34, 'unknown key "reson" in an admission leaf', 'did you mean "reason"?');
    expectError('admission', at('{acton: admit}'), 'admission.tree.then.acton', 4, 19, 'unknown key "acton" in a node', 'did you mean "action"?');
    expectError('admission', at('{action: admitt}'), 'admission.tree.then.action', 4, 20, 'unknown admission action text "admitt"', 'did you mean "admit"?');
    expectError('admission', at('{action: delay}'), 'admission.tree.then.delay_us', 4, 11, 'missing "delay_us"');
    expectError('admission', at('{action: delay, delay_us: 0}'), 'admission.tree.then.delay_us', 4, 37, 'delay_us must be a positive integer, got 0');
    expectError('admission', at('{action: delay, delay_us: 2.5}'), 'admission.tree.then.delay_us', 4, 37, 'delay_us must be a positive integer, got 2.5');
    expectError('admission', at('{action: reject, delay_us: 5}'), 'admission.tree.then.delay_us', 4, 38, 'delay_us applies only to action delay');
    expectError('admission', at('{action: admit, reason: x}'), 'admission.tree.then.reason', 4, 35, 'an admit leaf takes no reason');
    expectError('admission', at('{action: reject, reason: 5}'), 'admission.tree.then.reason', 4, 36, 'expected text, got 5');
    expectError('priority', at('{priority: high}'), 'priority.tree.then.priority', 4, 22, 'priority must be a finite number, got text "high"');
    expectError('priority', at('{priority: 1, hints: {a: [1]}}'), 'priority.tree.then.hints.a', 4, 36, 'a hint must be text, a finite number or true/false');
    expectError('autoscale', at('{scale: sideways}'), 'autoscale.tree.then.scale', 4, 19, 'unknown scale direction text "sideways"', 'up, down or none');
    expectError('autoscale', at('{scale: none, by: 2}'), 'autoscale.tree.then.by', 4, 29, 'by applies only to scale up or down');
    expectError('autoscale', at('{scale: up, by: 0}'), 'autoscale.tree.then.by', 4, 27, 'by must be a positive integer, got 0');
    expectError('autoscale', at('{scale_to: 2, by: 2}'), 'autoscale.tree.then.by', 4, 29, 'by applies only to scale up or down');
    expectError('autoscale', at('{scale_to: 2, scale: up}'), 'autoscale.tree.then.scale_to', 4, 22, 'scale_to cannot be combined with scale');
    expectError('autoscale', at('{scale_to: -1}'), 'autoscale.tree.then.scale_to', 4, 22, 'scale_to must be a non-negative integer, got -1');
  });

  it('routing rules', () => {
    const at = (rule: string): string => `if: {feature: clock, op: '>', value: 1}\nthen: {route: {minimize: instance.load}}\nelse: {route: ${rule}}`;
    expectError('routing', at('{scorers: {queue-dpth: 1}}'), 'routing.tree.else.route.scorers.queue-dpth', 5, 42, 'unknown scorer "queue-dpth"', 'did you mean "queue-depth"?', `valid scorers: ${SCORER_NAMES.join(', ')}`);
    expectError('routing', at('{scorers: [{name: queue-depth, weight: 0}]}'), 'routing.tree.else.route.scorers[0].weight', 5, 58, 'the weight of queue-depth must be a finite number > 0, got 0');
    expectError('routing', at('{scorers: {queue-depth: -1}}'), 'routing.tree.else.route.scorers.queue-depth', 5, 43, 'must be a finite number > 0, got -1');
    expectError('routing', at('{scorers: [{name: queue-depth, weight: 1}, {name: queue-depth, weight: 2}]}'), 'routing.tree.else.route.scorers[1].name', 5, 69, 'scorer "queue-depth" is listed twice');
    expectError('routing', at('{scorers: [{name: queue-depth}]}'), 'routing.tree.else.route.scorers[0].weight', 5, 30, 'missing "weight"');
    expectError('routing', at('{scorers: {}}'), 'routing.tree.else.route.scorers', 5, 29, 'no scorers');
    expectError('routing', at('{minimize: instance.load, scorers: {queue-depth: 1}}'), 'routing.tree.else.route.minimize', 5, 30, '"minimize" cannot be combined with "scorers"');
    expectError('routing', at('{scorers: {queue-depth: 1}, tie: first}'), 'routing.tree.else.route.tie', 5, 52, 'tie applies only to minimize and maximize');
    expectError('routing', at('{minimize: instance.load, tie: last}'), 'routing.tree.else.route.tie', 5, 50, 'tie must be random or first');
    expectError('routing', at('{minimize: request.inputTokens}'), 'routing.tree.else.route.minimize', 5, 30, 'not a numeric per-instance feature');
    expectError('routing', at('{maximize: instance.id}'), 'routing.tree.else.route.maximize', 5, 30, 'not a numeric per-instance feature');
    expectError('routing', at('{reason: x}'), 'routing.tree.else.route', 5, 19, 'a route rule needs scorers, minimize or maximize');
    expectError('routing', at('{minimize: instance.load, filtr: {}}'), 'routing.tree.else.route.filtr', 5, 52, 'unknown key "filtr" in a route rule', 'did you mean "filter"?');
  });

  it('depth and size limits', () => {
    // 65 nodes deep: the 65th node is the error.
    let deep: unknown = { action: 'admit' };
    for (let i = 0; i < 64; i++) deep = { if: { feature: 'clock', op: '>', value: i }, then: deep, else: { action: 'reject' } };
    const text = stringify({ admission: { tree: deep } });
    const { raw, where } = locator(text);
    const at = (raw as { admission: { tree: unknown } }).admission.tree;
    const path: PolicyPath = ['admission', 'tree', ...Array<string>(64).fill('then')];
    let err: unknown = null;
    try {
      parseDecisionTree('admission', at, ['admission', 'tree'], where);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PolicyConfigError);
    const e = err as PolicyConfigError;
    expect(e.field).toBe(path.join('.'));
    const pos = where(path).pos;
    expect(e.message.startsWith(`${FILE}:${pos.line}:${pos.col}: ${e.field}: the tree is more than 64 nodes deep (the limit is 64)`)).toBe(true);
    // 64 deep is fine.
    expect(parseDecisionTree('admission', (at as { then: unknown }).then, ['admission', 'tree'], where).depth).toBe(64);

    // A full binary tree 14 deep holds 16383 nodes.
    const full = (d: number): unknown => (d === 1 ? { action: 'admit' } : { if: { feature: 'clock', op: '>', value: d }, then: full(d - 1), else: full(d - 1) });
    const big = locator(stringify({ admission: { tree: full(14) } }));
    let err2: unknown = null;
    try {
      parseDecisionTree('admission', (big.raw as { admission: { tree: unknown } }).admission.tree, ['admission', 'tree'], big.where);
    } catch (e2) {
      err2 = e2;
    }
    expect(err2).toBeInstanceOf(PolicyConfigError);
    expect((err2 as PolicyConfigError).message).toMatch(/^p\.yaml:\d+:\d+: admission\.tree(\.(then|else))+: the tree has more than 10000 nodes \(the limit is 10000 branches plus leaves\)/);
    expect(plainTree('admission', full(13)).nodeCount).toBe(8191);
  });

  it('predicate nesting limit and non-mapping roots', () => {
    let p: unknown = { feature: 'clock', op: '>', value: 1 };
    for (let i = 0; i < 64; i++) p = { not: p };
    expect(() => plainTree('admission', { if: p, then: { action: 'admit' }, else: { action: 'admit' } })).toThrow(/nests all\/any\/not more than 64 deep/);
    expect(() => plainTree('admission', null)).toThrow(/^p\.yaml:1:1: admission\.tree: expected a node .* got nothing/);
    expect(() => plainTree('admission', [{ action: 'admit' }])).toThrow(/got a list/);
  });

  it('hint keys are data, leaves are frozen', () => {
    const t = plainTree('priority', JSON.parse('{"priority": 1, "hints": {"__proto__": "x", "constructor": 2}}'));
    const leaf = evaluateTree(t, {}) as Extract<TreeLeaf, { point: 'priority' }>;
    expect(Object.keys(leaf.hints)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(leaf.hints)).toBe(Object.prototype);
    expect(Object.isFrozen(leaf)).toBe(true);
    expect(Object.isFrozen(leaf.hints)).toBe(true);
    expect(leafToPlain(leaf)).toEqual(JSON.parse('{"priority": 1, "hints": {"__proto__": "x", "constructor": 2}}'));
  });

  it('closestNames', () => {
    expect(closestNames('request.inputTokns', ['request.inputTokens', 'request.outputTokens', 'clock'])).toEqual(['request.inputTokens']);
    expect(closestNames('zzz', ['request.inputTokens'])).toEqual([]);
  });
});

describe('printTree and treeToPlain', () => {
  it('prints the admission example', () => {
    expect(printTree(tree('admission', ADMISSION))).toBe([
      'if request.inputTokens > 4000:',
      '  reject "too long"',
      'else if tenant.burstDetected == true and global.inFlight >= 64:',
      '  delay 50000us',
      'else:',
      '  admit',
    ].join('\n'));
  });

  it('prints nested branches, every predicate form and routing rules', () => {
    const t = tree('routing', `
if:
  any:
    - {feature: request.sloClass, op: in, value: [critical, standard]}
    - all:
        - {feature: request.tenant, op: '!=', value: ''}
        - not: {feature: tenant.burstDetected, op: '==', value: true}
then:
  if: {feature: cluster.maxCachedPrefixBlocks, op: '>=', value: {feature: request.prefixBlocks}}
  then: {route: {maximize: instance.cachedPrefixBlocks, tie: first, reason: warm cache}}
  else: {route: {scorers: {queue-depth: 2, kv-utilization: 0.5}}}
else:
  route:
    minimize: instance.load
    filter: {feature: instance.id, op: not_in, value: [i0, i1]}
`);
    expect(printTree(t)).toBe([
      'if request.sloClass in ["critical", "standard"] or (request.tenant != "" and not (tenant.burstDetected == true)):',
      '  if cluster.maxCachedPrefixBlocks >= request.prefixBlocks:',
      '    route maximize instance.cachedPrefixBlocks tie first "warm cache"',
      '  else:',
      '    route scorers queue-depth:2, kv-utilization:0.5',
      'else:',
      '  route minimize instance.load where instance.id not in ["i0", "i1"]',
    ].join('\n'));
  });

  it('prints the leaves of the other points', () => {
    const leafText = (point: ControlPoint, leaf: string): string => printTree(tree(point, leaf));
    expect(leafText('priority', '{priority: 3, hints: {tier: gold, "a b": 1, ok: true}}')).toBe('priority 3 hints {tier: "gold", "a b": 1, ok: true}');
    expect(leafText('scheduler', '{priority: -2.5}')).toBe('priority -2.5');
    expect(leafText('autoscale', '{scale: up, by: 3, reason: hot}')).toBe('scale up by 3 "hot"');
    expect(leafText('autoscale', '{scale: down}')).toBe('scale down');
    expect(leafText('autoscale', '{scale_to: 0}')).toBe('scale to 0');
    expect(leafText('admission', '{action: reject}')).toBe('reject');
  });

  it('round-trips the canonical plain form', () => {
    const t = tree('routing', `
if: {feature: request.inputTokens, op: '>', value: 10}
then:
  route:
    scorers: [{name: queue-depth, weight: 2}, {name: active-requests, weight: 1}]
    filter: {any: [{feature: instance.load, op: '<', value: {feature: cluster.meanQueueDepth}}]}
    reason: ''
else: {route: {maximize: instance.freeKvBlocks, tie: random}}
`);
    const plain = treeToPlain(t);
    expect(plain).toEqual({
      if: { feature: 'request.inputTokens', op: '>', value: 10 },
      then: {
        route: {
          scorers: { 'queue-depth': 2, 'active-requests': 1 },
          filter: { any: [{ feature: 'instance.load', op: '<', value: { feature: 'cluster.meanQueueDepth' } }] },
        },
      },
      else: { route: { maximize: 'instance.freeKvBlocks' } },
    });
    const again = plainTree('routing', parseYaml(stringify(plain)));
    expect(treeToPlain(again)).toEqual(plain);
    expect(printTree(again)).toBe(printTree(t));
    expect(treeToPlain(tree('admission', ADMISSION))).toEqual(parseYaml(ADMISSION.replace('reason: too long', 'reason: "too long"')));
  });
});

// ---- property test ---------------------------------------------------------------------------------------

type Plain = Record<string, unknown>;

const TYPE_OPS: Record<FeatureType, readonly string[]> = {
  number: ['<', '<=', '>', '>=', '==', '!=', 'in', 'not_in'],
  string: ['==', '!=', 'in', 'not_in'],
  boolean: ['==', '!=', 'in', 'not_in'],
};

function valueArb(type: FeatureType): fc.Arbitrary<number | string | boolean> {
  if (type === 'number') return fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((x) => x + 0));
  if (type === 'string') return fc.constantFrom('', 'a', 'b', 'critical', 'with "quotes"');
  return fc.boolean();
}

/** An environment value: usually of the feature's type, sometimes missing, NaN or of another type. */
function envValueArb(type: FeatureType): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: valueArb(type) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, NaN, 'x', 7, true, null) },
  );
}

function comparisonArb(features: readonly FeatureSpec[]): fc.Arbitrary<Plain> {
  return fc.constantFrom(...features).chain((f) => fc.constantFrom(...TYPE_OPS[f.type]).chain((op) => {
    const peers = features.filter((g) => g.type === f.type);
    const value: fc.Arbitrary<unknown> = op === 'in' || op === 'not_in'
      ? fc.array(valueArb(f.type), { minLength: 1, maxLength: 12 })
      : fc.oneof({ weight: 3, arbitrary: valueArb(f.type) }, { weight: 1, arbitrary: fc.constantFrom(...peers).map((g) => ({ feature: g.name })) });
    return value.map((v) => ({ feature: f.name, op, value: v }));
  }));
}

function predicateArb(features: readonly FeatureSpec[]): fc.Arbitrary<Plain> {
  return fc.letrec<{ pred: Plain }>((tie) => ({
    pred: fc.oneof(
      { maxDepth: 3, depthIdentifier: 'pred' },
      comparisonArb(features),
      fc.array(tie('pred'), { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
      fc.array(tie('pred'), { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
      tie('pred').map((not) => ({ not })),
    ),
  })).pred;
}

const reasonArb = fc.option(fc.constantFrom('', 'r', 'too long'), { nil: undefined });

function withReason(o: Plain, reason: string | undefined): Plain {
  return reason === undefined ? o : { ...o, reason };
}

const ROUTING_ALL = FEATURES.filter((f) => f.points.includes('routing'));
const INSTANCE_NUMERIC = ROUTING_ALL.filter((f) => f.scope === 'instance' && f.type === 'number').map((f) => f.name);

function leafArb(point: ControlPoint): fc.Arbitrary<Plain> {
  switch (point) {
    case 'admission': return fc.oneof(
      fc.constant({ action: 'admit' }),
      reasonArb.map((r) => withReason({ action: 'reject' }, r)),
      fc.tuple(fc.integer({ min: 1, max: 1e7 }), reasonArb).map(([d, r]) => withReason({ action: 'delay', delay_us: d }, r)),
    );
    case 'priority': return fc.tuple(valueArb('number'), fc.option(fc.dictionary(fc.constantFrom('tier', 'k', 'a b'), fc.oneof(valueArb('string'), valueArb('number'), fc.boolean())), { nil: undefined }))
      .map(([p, h]) => (h === undefined ? { priority: p } : { priority: p, hints: h }));
    case 'scheduler': return valueArb('number').map((p) => ({ priority: p }));
    case 'autoscale': return fc.oneof(
      fc.tuple(fc.constantFrom('up', 'down'), fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }), reasonArb)
        .map(([s, by, r]) => withReason(by === undefined ? { scale: s } : { scale: s, by }, r)),
      reasonArb.map((r) => withReason({ scale: 'none' }, r)),
      fc.tuple(fc.integer({ min: 0, max: 50 }), reasonArb).map(([n, r]) => withReason({ scale_to: n }, r)),
    );
    case 'disaggregation': return fc.tuple(fc.boolean(), reasonArb).map(([d, r]) => withReason({ disaggregate: d }, r));
    case 'encode': return fc.tuple(fc.boolean(), reasonArb).map(([d, r]) => withReason({ encode: d }, r));
    case 'routing': {
      const filter = fc.option(predicateArb(ROUTING_ALL), { nil: undefined });
      const scorers = fc.uniqueArray(fc.constantFrom(...SCORER_NAMES), { minLength: 1, maxLength: 4 })
        .chain((names) => fc.tuple(...names.map(() => fc.double({ min: 0.01, max: 100, noNaN: true }))).map((ws) => names.map((name, i) => ({ name, weight: ws[i]! }))))
        .chain((list) => fc.boolean().map((asList) => (asList ? list : Object.fromEntries(list.map((s) => [s.name, s.weight])))));
      const rule = fc.oneof(
        scorers.map((s): Plain => ({ scorers: s })),
        fc.tuple(fc.constantFrom('minimize', 'maximize'), fc.constantFrom(...INSTANCE_NUMERIC), fc.constantFrom(undefined, 'random', 'first'))
          .map(([k, f, tie]): Plain => (tie === undefined ? { [k]: f } : { [k]: f, tie })),
      );
      return fc.tuple(rule, filter, reasonArb).map(([r, f, why]) => ({ route: withReason(f === undefined ? r : { ...r, filter: f }, why) }));
    }
  }
}

function treeArb(point: ControlPoint): fc.Arbitrary<unknown> {
  const decision = FEATURES.filter((f) => f.points.includes(point) && f.scope === 'decision');
  return fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { maxDepth: 5, depthIdentifier: 'node' },
      leafArb(point),
      fc.tuple(predicateArb(decision), tie('node'), tie('node')).map(([p, t, e]) => ({ if: p, then: t, else: e })),
    ),
  })).node;
}

function setPath(env: Record<string, unknown>, name: string, v: unknown): void {
  const segs = name.split('.');
  let o = env;
  for (const s of segs.slice(0, -1)) o = (o[s] ??= {}) as Record<string, unknown>;
  if (v !== undefined) o[segs[segs.length - 1]!] = v;
}

function envArb(features: readonly FeatureSpec[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(...features.map((f) => envValueArb(f.type))).map((vals) => {
    const env: Record<string, unknown> = {};
    features.forEach((f, i) => setPath(env, f.name, vals[i]));
    return env;
  });
}

/** The reference semantics, straight from the plain form and `readFeature`. */
function refPred(p: Plain, env: FeatureEnv, point: ControlPoint): boolean {
  if ('all' in p) return (p.all as Plain[]).every((q) => refPred(q, env, point));
  if ('any' in p) return (p.any as Plain[]).some((q) => refPred(q, env, point));
  if ('not' in p) return !refPred(p.not as Plain, env, point);
  const spec = findFeature(p.feature as string, point)!;
  const a = readFeature(env, spec.name.split('.'), spec.type);
  const v = p.value;
  if (Array.isArray(v)) return v.includes(a) === (p.op === 'in');
  const b = typeof v === 'object' && v !== null ? readFeature(env, (v as { feature: string }).feature.split('.'), spec.type) : v as number | string | boolean;
  switch (p.op) {
    case '<': return a < b;
    case '<=': return a <= b;
    case '>': return a > b;
    case '>=': return a >= b;
    case '==': return a === b;
    default: return a !== b;
  }
}

function refLeaf(node: Plain, env: FeatureEnv, point: ControlPoint): Plain {
  let n = node;
  while ('if' in n) n = (refPred(n.if as Plain, env, point) ? n.then : n.else) as Plain;
  return n;
}

describe('property: random trees', () => {
  it('parse, print, round-trip and evaluate deterministically, as the reference semantics say', () => {
    const point = fc.constantFrom(...CONTROL_POINTS);
    const sample = point.chain((p) => {
      const envFeatures = FEATURES.filter((f) => f.points.includes(p) && f.scope === 'decision');
      const instFeatures = ROUTING_ALL.filter((f) => f.scope === 'instance');
      return fc.record({
        point: fc.constant(p),
        raw: treeArb(p),
        envs: fc.array(envArb(envFeatures), { minLength: 1, maxLength: 4 }),
        instances: fc.array(envArb(instFeatures), { minLength: 1, maxLength: 4 }),
      });
    });
    const seen = { branches: 0, deep: 0, filters: 0, objectives: 0, featureOperands: 0, lists: 0 };
    fc.assert(fc.property(sample, ({ point, raw, envs, instances }) => {
      const t = plainTree(point, raw);
      const json = JSON.stringify(raw);
      if (t.nodeCount > 1) seen.branches++;
      if (t.depth >= 4) seen.deep++;
      if (json.includes('"value":{"feature"')) seen.featureOperands++;
      if (json.includes('"value":[')) seen.lists++;
      const text = printTree(t);
      expect(text.length).toBeGreaterThan(0);
      const plain = treeToPlain(t);
      const viaYaml = plainTree(point, parseYaml(stringify(plain)));
      const viaJson = plainTree(point, JSON.parse(JSON.stringify(plain)));
      expect(treeToPlain(viaYaml)).toEqual(plain);
      expect(treeToPlain(viaJson)).toEqual(plain);
      expect(printTree(viaYaml)).toBe(text);
      for (const env of envs) {
        const leaf = evaluateTree(t, env);
        expect(evaluateTree(t, env)).toBe(leaf);
        expect(leafToPlain(evaluateTree(viaYaml, env))).toEqual(leafToPlain(leaf));
        const want = refLeaf(raw as Plain, env, point);
        const wantNode = plainTree(point, want).root;
        if (wantNode.kind !== 'leaf') throw new Error('the reference walk ends at a leaf');
        expect(leafToPlain(leaf)).toEqual(leafToPlain(wantNode.leaf));
        if (leaf.point === 'routing' && leaf.rule.filter !== null) seen.filters++;
        if (leaf.point === 'routing' && leaf.rule.kind !== 'scorers') seen.objectives++;
        if (leaf.point === 'routing') checkRule(leaf.rule, want.route as Plain, env, instances.map((x) => (x.instance ?? {}) as RoutedInstanceView));
      }
    }), { numRuns: 400, seed: 20240611 });
    // The sample is not vacuous: it reaches every shape the property is about.
    for (const n of Object.values(seen)) expect(n).toBeGreaterThan(10);
  });
});

function checkRule(rule: RouteRule, raw: Plain, env: FeatureEnv, instances: RoutedInstanceView[]): void {
  const pass = instances.map((_, i) => i).filter((i) => raw.filter === undefined || refPred(raw.filter as Plain, { ...env, instance: instances[i] }, 'routing'));
  const want = pass.length === 0 ? instances.map((_, i) => i) : pass;
  const got = filterInstances(rule, env, instances);
  expect(got).toEqual(want);
  expect(filterInstances(rule, env, instances)).toEqual(got);
  if (rule.kind === 'scorers') return;
  const vals = want.map((i) => readFeature({ ...env, instance: instances[i] }, rule.feature.split('.'), 'number') as number);
  const finite = vals.filter((v) => !Number.isNaN(v));
  const best = finite.length === 0 ? NaN : rule.kind === 'minimize' ? Math.min(...finite) : Math.max(...finite);
  const expected = Number.isNaN(best) ? want : want.filter((_, k) => vals[k] === best);
  expect(bestInstances(rule, env, instances, want)).toEqual(expected);
}

// ---- fixtures --------------------------------------------------------------------------------------------

function request(over: Partial<RequestView>): RequestView {
  return {
    id: 'r1', inputTokens: 100, outputTokens: null, tenant: '', sloClass: 'standard', priority: 0, model: '', sessionId: '', arrivalUs: 0,
    prefixHashes: [], admissionDelays: 0, adapter: '', imageTokens: 0, audioTokens: 0, videoTokens: 0, ...over,
  };
}

function instance(index: number, queueDepth: number, cachedPrefixBlocks = 0, kvUtilization = 0): InstanceView {
  return {
    id: `i${index}`, index, queueDepth, batchSize: 0, inFlight: 0, kvUtilization, freeKvBlocks: 100, cacheHitRate: 0, recentTtftMs: 0, recentTpotMs: 0,
    estimatedWaitMs: 0, availableCapacity: 8, preemptionCount: 0, cachedPrefixBlocks, load: queueDepth, residentAdapters: [], adapterResident: false, pool: 'monolithic',
  };
}

function state(instances: InstanceView[]): StateView {
  return {
    clock: 1000, instances, tenants: {},
    tenant: { requestCount: 0, activeRequests: 0, recentRate: 0, sloClass: '', burstDetected: false },
    global: { inFlight: 0, requestRate: 0, throughput: 0, completedRequests: 0, rejectedRequests: 0, delayedRequests: 0 },
    history: [], observedKv: [], shadowKv: [],
  };
}
