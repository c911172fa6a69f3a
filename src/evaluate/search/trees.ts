/**
 * Decision trees as a search space (`blis search`): random trees over a documented set of features per control
 * point, and mutations that change structure (grow a leaf into a branch, prune a branch to one of its children)
 * as well as thresholds, features and leaves. Trees are plain data in the bundle syntax (policy/tree/index.ts),
 * so every tree the search proposes is parsed and checked by the same code as a user's.
 *
 * The thresholds are drawn where the feature's values lie on the workloads of the built-in suites (queue depths
 * of a few requests per instance, prompt lengths of tens to thousands of tokens, KV utilization from 2% up).
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import type { SearchRange } from '../../policy/templates/catalog.js';
import type { ControlPoint } from '../../policy/view.js';
import { sampleRange, perturbRange } from './ranges.js';

export type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };
export type PlainObject = { [k: string]: Plain };

/** A feature a searched tree may test, with where its thresholds are drawn. */
export interface TreeFeature {
  readonly name: string;
  readonly type: 'number' | 'string' | 'boolean';
  readonly range?: SearchRange & { readonly integer?: boolean };
  /** Values of a string feature (SLO classes: the suite's). */
  readonly values?: readonly string[];
}

/** The control points the search builds trees for. */
export const TREE_POINTS: readonly ControlPoint[] = ['admission', 'priority', 'scheduler', 'routing'];

const ROUTER_FEATURES = (classes: readonly string[]): TreeFeature[] => [
  { name: 'request.sloClass', type: 'string', values: classes },
  { name: 'request.inputTokens', type: 'number', range: { min: 32, max: 8192, log: true, integer: true } },
  { name: 'cluster.meanQueueDepth', type: 'number', range: { min: 0.25, max: 64, log: true } },
  { name: 'cluster.maxQueueDepth', type: 'number', range: { min: 1, max: 128, log: true, integer: true } },
  { name: 'cluster.meanKvUtilization', type: 'number', range: { min: 0.02, max: 1, log: true } },
  { name: 'global.inFlight', type: 'number', range: { min: 2, max: 512, log: true, integer: true } },
  { name: 'tenant.burstDetected', type: 'boolean' },
  { name: 'tenant.recentRate', type: 'number', range: { min: 0.5, max: 200, log: true } },
];

/** The features a searched tree of `point` tests; `classes` are the SLO classes the suite sends. */
export function treeFeatures(point: ControlPoint, classes: readonly string[]): TreeFeature[] {
  switch (point) {
    case 'admission':
    case 'priority':
      return ROUTER_FEATURES(classes);
    case 'routing':
      return [
        { name: 'request.prefixBlocks', type: 'number', range: { min: 1, max: 256, log: true, integer: true } },
        { name: 'cluster.maxCachedPrefixBlocks', type: 'number', range: { min: 1, max: 256, log: true, integer: true } },
        { name: 'cluster.meanQueueDepth', type: 'number', range: { min: 0.25, max: 64, log: true } },
        { name: 'request.sloClass', type: 'string', values: classes },
      ];
    case 'scheduler':
      return [
        { name: 'request.sloClass', type: 'string', values: classes },
        { name: 'request.inputTokens', type: 'number', range: { min: 32, max: 8192, log: true, integer: true } },
        { name: 'request.waitUs', type: 'number', range: { min: 10_000, max: 30_000_000, log: true, integer: true } },
        { name: 'instance.queueDepth', type: 'number', range: { min: 1, max: 128, log: true, integer: true } },
      ];
    default:
      return [];
  }
}

const pick = <T>(xs: readonly T[], rng: GoRand): T => xs[rng.intn(xs.length)] as T;

const ROUTE_SCORERS = ['precise-prefix-cache', 'queue-depth', 'kv-utilization', 'load-balance'] as const;
const ROUTE_OBJECTIVES = ['instance.load', 'instance.queueDepth', 'instance.kvUtilization', 'instance.estimatedWaitMs'] as const;

function round(v: number, integer: boolean): number {
  return integer ? Math.round(v) : Math.round(v * 1e4) / 1e4;
}

/** A random leaf of `point`. */
export function randomLeaf(point: ControlPoint, rng: GoRand): PlainObject {
  switch (point) {
    case 'admission': {
      const r = rng.intn(4);
      if (r <= 1) return { action: 'admit' };
      if (r === 2) return { action: 'reject' };
      return { action: 'delay', delay_us: Math.round(sampleRange({ min: 20_000, max: 2_000_000, log: true }, rng)) };
    }
    case 'priority':
    case 'scheduler':
      return { priority: round(sampleRange({ min: -10, max: 10 }, rng), false) };
    case 'routing': {
      if (rng.intn(3) === 0) return { route: { minimize: pick(ROUTE_OBJECTIVES, rng) } };
      const scorers: PlainObject = {};
      for (const s of ROUTE_SCORERS) if (rng.intn(2) === 1) scorers[s] = round(sampleRange({ min: 0.1, max: 10, log: true }, rng), false);
      if (Object.keys(scorers).length === 0) scorers[pick(ROUTE_SCORERS, rng)] = 1;
      return { route: { scorers } };
    }
    default:
      throw new RangeError(`no tree leaves for control point ${point}`);
  }
}

/** A random comparison of one of `features`. */
export function randomPredicate(features: readonly TreeFeature[], rng: GoRand): PlainObject {
  const f = pick(features, rng);
  if (f.type === 'boolean') return { feature: f.name, op: '==', value: rng.intn(2) === 1 };
  if (f.type === 'string') {
    const values = f.values ?? [];
    if (values.length > 1 && rng.intn(3) === 0) {
      const chosen = values.filter(() => rng.intn(2) === 1);
      if (chosen.length > 0 && chosen.length < values.length) return { feature: f.name, op: 'in', value: chosen };
    }
    return { feature: f.name, op: rng.intn(4) === 0 ? '!=' : '==', value: values.length === 0 ? '' : pick(values, rng) };
  }
  const range = f.range as SearchRange & { integer?: boolean };
  return { feature: f.name, op: rng.intn(2) === 0 ? '>' : '<=', value: round(sampleRange(range, rng), range.integer === true) };
}

/** A random tree of `point`: a branch with a random predicate, its children leaves or (to `depth`) branches. */
export function randomTree(point: ControlPoint, features: readonly TreeFeature[], rng: GoRand, depth = 2): PlainObject {
  if (depth <= 0 || features.length === 0) return randomLeaf(point, rng);
  const child = (): PlainObject => (depth > 1 && rng.intn(3) === 0 ? randomTree(point, features, rng, depth - 1) : randomLeaf(point, rng));
  return { if: randomPredicate(features, rng), then: child(), else: child() };
}

const isBranch = (n: PlainObject): boolean => Object.hasOwn(n, 'if');

/** Every node of `tree` with its path (keys `then` / `else`), root first. */
function nodes(tree: PlainObject, path: readonly string[] = []): { path: readonly string[]; node: PlainObject }[] {
  const out = [{ path, node: tree }];
  if (isBranch(tree)) {
    out.push(...nodes(tree['then'] as PlainObject, [...path, 'then']));
    out.push(...nodes(tree['else'] as PlainObject, [...path, 'else']));
  }
  return out;
}

function replaceAt(tree: PlainObject, path: readonly string[], node: PlainObject): PlainObject {
  if (path.length === 0) return node;
  const [head, ...rest] = path as [string, ...string[]];
  return { ...tree, [head]: replaceAt(tree[head] as PlainObject, rest, node) };
}

function depthOf(tree: PlainObject): number {
  return isBranch(tree) ? 1 + Math.max(depthOf(tree['then'] as PlainObject), depthOf(tree['else'] as PlainObject)) : 0;
}

/** A threshold or value of one comparison moved by a step of relative size `sigma`. */
function perturbPredicate(p: PlainObject, features: readonly TreeFeature[], rng: GoRand, sigma: number): PlainObject {
  const f = features.find((x) => x.name === p['feature']);
  if (f === undefined || f.type !== 'number' || typeof p['value'] !== 'number') return randomPredicate(features, rng);
  const range = f.range as SearchRange & { integer?: boolean };
  return { ...p, value: round(perturbRange(range, p['value'], sigma, rng), range.integer === true) };
}

function perturbLeaf(point: ControlPoint, leaf: PlainObject, rng: GoRand, sigma: number): PlainObject {
  if ((point === 'priority' || point === 'scheduler') && typeof leaf['priority'] === 'number') {
    return { priority: round(perturbRange({ min: -10, max: 10 }, leaf['priority'], sigma, rng), false) };
  }
  if (point === 'admission' && typeof leaf['delay_us'] === 'number' && rng.intn(2) === 0) {
    return { ...leaf, delay_us: Math.round(perturbRange({ min: 20_000, max: 2_000_000, log: true }, leaf['delay_us'], sigma, rng)) };
  }
  return randomLeaf(point, rng);
}

/**
 * One mutation of `tree`: with equal odds, a threshold (or value) moved, a leaf changed, a predicate replaced, a
 * leaf grown into a branch (up to depth 3) or a branch pruned to one of its children. A leaf-only tree grows.
 */
export function mutateTree(point: ControlPoint, tree: PlainObject, features: readonly TreeFeature[], rng: GoRand, sigma: number): PlainObject {
  const all = nodes(tree);
  const branches = all.filter((n) => isBranch(n.node));
  const leaves = all.filter((n) => !isBranch(n.node));
  const op = branches.length === 0 ? 3 : rng.intn(5);
  if (op === 0) {
    const b = pick(branches, rng);
    return replaceAt(tree, b.path, { ...b.node, if: perturbPredicate(b.node['if'] as PlainObject, features, rng, sigma) });
  }
  if (op === 1) {
    const l = pick(leaves, rng);
    return replaceAt(tree, l.path, perturbLeaf(point, l.node, rng, sigma));
  }
  if (op === 2) {
    const b = pick(branches, rng);
    return replaceAt(tree, b.path, { ...b.node, if: randomPredicate(features, rng) });
  }
  if (op === 3 && features.length > 0) {
    const l = pick(leaves, rng);
    if (l.path.length < 3 && depthOf(tree) < 4) {
      const keep = rng.intn(2) === 0;
      const fresh = randomLeaf(point, rng);
      return replaceAt(tree, l.path, { if: randomPredicate(features, rng), then: keep ? l.node : fresh, else: keep ? fresh : l.node });
    }
  }
  if (branches.length === 0) return randomLeaf(point, rng);
  const b = pick(branches, rng);
  return replaceAt(tree, b.path, b.node[rng.intn(2) === 0 ? 'then' : 'else'] as PlainObject);
}
