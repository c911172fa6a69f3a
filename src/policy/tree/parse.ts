/**
 * The strict parser of decision trees: plain data (YAML/JSON already converted to JS values) in, a compiled
 * {@link DecisionTree} out, or a `POLICY_TREE` {@link PolicyConfigError} naming the field path, its
 * `file:line:col`, what is wrong and how to fix it. The syntax is documented in index.ts.
 */
import { didYouMean, editDistance } from '../../domain/suggest.js';
import { FEATURES, featureNames, findFeature } from '../features.js';
import type { FeatureSpec, FeatureType } from '../features.js';
import { PolicyConfigError, formatPolicyPath } from '../errors.js';
import type { PolicyPath, PolicyPosition } from '../errors.js';
import type { ControlPoint } from '../view.js';
import { SCORER_NAMES, isScorerName } from '../../routing/scorer-registry.js';
import { compileAll, compileAny, compileCompare, compileNot, numberReader } from './compile.js';
import { COMPARE_OPS, MAX_PREDICATE_DEPTH, MAX_TREE_DEPTH, MAX_TREE_NODES } from './types.js';
import type { CompareOp, DecisionTree, FeatureRef, Operand, Predicate, RouteRule, Scalar, ScorerWeight, TreeLeaf, TreeNode } from './types.js';
import { showValue } from '../../domain/errors.js';

/** Where a path of the bundle is (falling back to its nearest parent that exists). */
export type TreeLocator = (path: PolicyPath) => { readonly file: string; readonly pos: PolicyPosition };

type Rel = readonly (string | number)[];
type Obj = Readonly<Record<string, unknown>>;
/** Where a feature is read: a tree branch, a routing rule's filter, or a routing rule's objective. */
type FeatureContext = 'branch' | 'filter' | 'objective';

const BRANCH_KEYS = ['if', 'then', 'else'] as const;
const COMPARE_KEYS = ['feature', 'op', 'value'] as const;
const PREDICATE_KEYS = ['feature', 'op', 'value', 'all', 'any', 'not'] as const;
const RULE_KEYS = ['scorers', 'minimize', 'maximize', 'tie', 'filter', 'reason'] as const;
const PREDICATE_FORMS = '{feature, op, value}, {all: [PRED, ...]}, {any: [PRED, ...]} or {not: PRED}';

const LEAF_KEYS: Readonly<Record<ControlPoint, readonly string[]>> = {
  admission: ['action', 'reason', 'delay_us'],
  priority: ['priority', 'hints'],
  routing: ['route'],
  scheduler: ['priority'],
  autoscale: ['scale', 'by', 'scale_to', 'reason'],
  disaggregation: ['disaggregate', 'reason'],
  encode: ['encode', 'reason'],
};

const LEAF_FORMS: Readonly<Record<ControlPoint, string>> = {
  admission: '{action: admit}, {action: reject, reason?: TEXT} or {action: delay, delay_us: MICROSECONDS, reason?: TEXT}',
  priority: '{priority: NUMBER, hints?: {KEY: VALUE}}',
  routing: '{route: RULE} with RULE {scorers: {NAME: WEIGHT}}, {minimize: INSTANCE_FEATURE} or {maximize: INSTANCE_FEATURE}',
  scheduler: '{priority: NUMBER}',
  autoscale: '{scale: up | down | none, by?: N, reason?: TEXT} or {scale_to: N, reason?: TEXT}',
  disaggregation: '{disaggregate: true | false, reason?: TEXT}',
  encode: '{encode: true | false, reason?: TEXT}',
};

const LEAF_EXAMPLES: Readonly<Record<ControlPoint, string>> = {
  admission: '{action: admit}',
  priority: '{priority: 1}',
  routing: '{route: {minimize: instance.load}}',
  scheduler: '{priority: 1}',
  autoscale: '{scale: none}',
  disaggregation: '{disaggregate: false}',
  encode: '{encode: false}',
};

/** The key that marks a leaf of each kind, for "this leaf belongs to another control point". */
const LEAF_MARKERS: readonly (readonly [string, readonly ControlPoint[]])[] = [
  ['action', ['admission']],
  ['route', ['routing']],
  ['scale', ['autoscale']],
  ['scale_to', ['autoscale']],
  ['disaggregate', ['disaggregation']],
  ['encode', ['encode']],
  ['priority', ['priority', 'scheduler']],
];

/** Operator spellings from other languages, for the hint. */
const OP_ALIASES: Readonly<Record<string, CompareOp>> = {
  '=': '==', '===': '==', eq: '==', is: '==', '!==': '!=', '<>': '!=', ne: '!=', neq: '!=',
  lt: '<', le: '<=', lte: '<=', '=<': '<=', gt: '>', ge: '>=', gte: '>=', '=>': '>=',
  'not in': 'not_in', notin: 'not_in', nin: 'not_in', 'not-in': 'not_in', '!in': 'not_in',
};

const TYPE_OPS: Readonly<Record<FeatureType, readonly CompareOp[]>> = {
  number: COMPARE_OPS,
  string: ['==', '!=', 'in', 'not_in'],
  boolean: ['==', '!=', 'in', 'not_in'],
};

/** Parses and compiles a decision tree for one control point; see index.ts for the syntax. */
export function parseDecisionTree(point: ControlPoint, raw: unknown, base: PolicyPath, where: TreeLocator): DecisionTree {
  const p = new TreeParser(point, base, where);
  const { node, depth } = p.node(raw, [], 1);
  return Object.freeze({ point, root: node, nodeCount: p.count, depth, features: Object.freeze([...p.features].sort()) });
}

export { editDistance } from '../../domain/suggest.js';

/** Up to `max` names within edit distance `limit` of `name` (closest first), plus names sharing its last segment. */
export function closestNames(name: string, known: readonly string[], limit = 3, max = 3): string[] {
  const lower = name.toLowerCase();
  const tail = lower.slice(lower.lastIndexOf('.') + 1);
  const scored: { n: string; d: number }[] = [];
  for (const k of known) {
    const kl = k.toLowerCase();
    let d = editDistance(lower, kl);
    // `inputTokens` for `request.inputTokens`, `instance.kvUtil` for ... : the same last segment is a near miss.
    if (d > limit && tail !== '' && kl.slice(kl.lastIndexOf('.') + 1) === tail) d = limit;
    if (d <= limit) scored.push({ n: k, d });
  }
  scored.sort((x, y) => x.d - y.d || (x.n < y.n ? -1 : x.n > y.n ? 1 : 0));
  return scored.slice(0, max).map((x) => x.n);
}


function describe(v: unknown): string {
  if (v === undefined || v === null) return 'nothing';
  if (typeof v === 'string') return `text ${JSON.stringify(v)}`;
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : String(v);
  if (typeof v === 'boolean') return `the boolean ${v}`;
  if (typeof v === 'bigint') return `the integer ${v}`;
  if (Array.isArray(v)) return 'a list';
  return 'a mapping';
}

function isMapping(v: unknown): v is Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function has(o: Obj, key: string): boolean {
  return Object.hasOwn(o, key);
}

/** `an admission`, `a routing`. */
function aPoint(p: ControlPoint): string {
  return `${/^[aeiou]/.test(p) ? 'an' : 'a'} ${p}`;
}

function typeName(t: FeatureType): string {
  return t === 'number' ? 'a number' : t === 'string' ? 'text' : 'true or false';
}

function freezeRule(r: RouteRule): RouteRule {
  if (r.kind === 'scorers') Object.freeze(r.scorers);
  return Object.freeze(r);
}

class TreeParser {
  count = 0;
  readonly features = new Set<string>();

  constructor(
    private readonly point: ControlPoint,
    private readonly base: PolicyPath,
    private readonly where: TreeLocator,
  ) {}

  fail(rel: Rel, problem: string, fix: string): never {
    const path = [...this.base, ...rel];
    throw new PolicyConfigError('POLICY_TREE', this.where(path), formatPolicyPath(path), problem, fix);
  }

  private mapping(raw: unknown, rel: Rel, expected: string, example: string): Obj {
    if (!isMapping(raw)) this.fail(rel, `expected ${expected}, got ${describe(raw)}`, `write a mapping such as ${example}`);
    return raw;
  }

  private checkKeys(o: Obj, rel: Rel, allowed: readonly string[], what: string, more = ''): void {
    for (const k of Object.keys(o)) {
      if (allowed.includes(k)) continue;
      this.fail([...rel, k], `unknown key ${showValue(k)} in ${what}`, `${didYouMean(closestNames(k, allowed, 2, 1))}remove it or fix its spelling (keys of ${what}: ${allowed.join(', ')})${more}`);
    }
  }

  private required(o: Obj, key: string, rel: Rel, fix: string): unknown {
    if (!has(o, key) || o[key] === undefined) this.fail([...rel, key], `missing ${showValue(key)}`, fix);
    return o[key];
  }

  private text(o: Obj, key: string, rel: Rel): string {
    const v = o[key];
    if (typeof v !== 'string') this.fail([...rel, key], `expected text, got ${describe(v)}`, 'write a plain or quoted string');
    return v;
  }

  private optionalText(o: Obj, key: string, rel: Rel): string {
    return has(o, key) ? this.text(o, key, rel) : '';
  }

  private finite(v: unknown, rel: Rel, what: string): number {
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(rel, `${what} must be a finite number, got ${describe(v)}`, 'write an unquoted number such as 2.5');
    return v;
  }

  private integer(v: unknown, rel: Rel, what: string, min: 0 | 1): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
      this.fail(rel, `${what} must be ${min === 1 ? 'a positive' : 'a non-negative'} integer, got ${describe(v)}`, `write a whole number${min === 1 ? ' of at least 1' : ' of at least 0'} (unquoted)`);
    }
    return v;
  }

  // ---- nodes ---------------------------------------------------------------------------------------------

  node(raw: unknown, rel: Rel, depth: number): { node: TreeNode; depth: number } {
    if (depth > MAX_TREE_DEPTH) {
      this.fail(rel, `the tree is more than ${MAX_TREE_DEPTH} nodes deep (the limit is ${MAX_TREE_DEPTH})`, 'flatten it: combine tests with all/any instead of nesting branches');
    }
    if (++this.count > MAX_TREE_NODES) {
      this.fail(rel, `the tree has more than ${MAX_TREE_NODES} nodes (the limit is ${MAX_TREE_NODES} branches plus leaves)`, 'prune it: merge branches whose leaves agree');
    }
    const o = this.mapping(raw, rel, `a node (a branch {if, then, else} or ${aPoint(this.point)} leaf)`, LEAF_EXAMPLES[this.point]);
    if (has(o, 'if') || has(o, 'then') || has(o, 'else')) {
      this.checkKeys(o, rel, BRANCH_KEYS, 'a branch', '; a leaf cannot sit beside if/then/else');
      const fix = 'a branch is {if: PRED, then: NODE, else: NODE} with all three keys';
      const cond = this.predicate(this.required(o, 'if', rel, fix), [...rel, 'if'], 'branch', 1);
      const rawThen = this.required(o, 'then', rel, fix);
      const rawElse = this.required(o, 'else', rel, fix);
      const t = this.node(rawThen, [...rel, 'then'], depth + 1);
      const e = this.node(rawElse, [...rel, 'else'], depth + 1);
      return { node: Object.freeze({ kind: 'branch', if: cond, then: t.node, else: e.node }), depth: 1 + Math.max(t.depth, e.depth) };
    }
    return { node: Object.freeze({ kind: 'leaf', leaf: this.leaf(o, rel) }), depth: 1 };
  }

  /** Fails for a mapping that is neither a branch nor a leaf of this control point. */
  private notALeaf(o: Obj, rel: Rel): never {
    const shape = `a branch {if, then, else} or ${aPoint(this.point)} leaf: ${LEAF_FORMS[this.point]}`;
    const forms = `a node is ${shape}`;
    const keys = Object.keys(o);
    if (keys.length === 0) this.fail(rel, 'empty mapping where a node belongs', `write ${shape}`);
    for (const k of keys) {
      const marker = LEAF_MARKERS.find(([m]) => m === k);
      if (marker !== undefined && !marker[1].includes(this.point)) {
        this.fail([...rel, k], `${showValue(k)} makes ${marker[1].join(' or ')} leaves, which ${aPoint(this.point)} tree cannot hold`, forms);
      }
    }
    const allowed = [...BRANCH_KEYS, ...LEAF_KEYS[this.point]];
    const bad = keys.find((k) => !allowed.includes(k)) ?? keys[0]!;
    this.fail([...rel, bad], `unknown key ${showValue(bad)} in a node`, `${didYouMean(closestNames(bad, allowed, 2, 1))}${forms}`);
  }

  private leaf(o: Obj, rel: Rel): TreeLeaf {
    switch (this.point) {
      case 'admission': return this.admissionLeaf(o, rel);
      case 'priority': return this.priorityLeaf(o, rel);
      case 'routing': return this.routingLeaf(o, rel);
      case 'scheduler': return this.schedulerLeaf(o, rel);
      case 'autoscale': return this.autoscaleLeaf(o, rel);
      case 'disaggregation': return this.disaggregationLeaf(o, rel);
      case 'encode': return this.encodeLeaf(o, rel);
    }
  }

  private admissionLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'action')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.admission, 'an admission leaf');
    const action = o.action;
    if (action !== 'admit' && action !== 'reject' && action !== 'delay') {
      const near = typeof action === 'string' ? closestNames(action, ['admit', 'reject', 'delay'], 2, 1) : [];
      this.fail([...rel, 'action'], `unknown admission action ${describe(action)}`, `${didYouMean(near)}write admit, reject or delay`);
    }
    if (action === 'admit' && has(o, 'reason')) this.fail([...rel, 'reason'], 'an admit leaf takes no reason', 'remove reason (only reject and delay leaves carry one)');
    if (action !== 'delay' && has(o, 'delay_us')) this.fail([...rel, 'delay_us'], `delay_us applies only to action delay, not ${action}`, 'remove delay_us or change the action to delay');
    const delayUs = action === 'delay'
      ? this.integer(this.required(o, 'delay_us', rel, 'a delay leaf is {action: delay, delay_us: MICROSECONDS}'), [...rel, 'delay_us'], 'delay_us', 1)
      : 0;
    return Object.freeze({ point: 'admission', action, delayUs, reason: this.optionalText(o, 'reason', rel) });
  }

  private priorityLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'priority')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.priority, 'a priority leaf');
    const priority = this.finite(o.priority, [...rel, 'priority'], 'priority');
    const hints: Record<string, string | number | boolean> = {};
    if (has(o, 'hints')) {
      const h = this.mapping(o.hints, [...rel, 'hints'], 'hints {KEY: VALUE}', '{tier: gold}');
      for (const k of Object.keys(h)) {
        const v = h[k];
        if (typeof v === 'number' ? !Number.isFinite(v) : typeof v !== 'string' && typeof v !== 'boolean') {
          this.fail([...rel, 'hints', k], `a hint must be text, a finite number or true/false, got ${describe(v)}`, 'write a scalar value');
        }
        Object.defineProperty(hints, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
    }
    return Object.freeze({ point: 'priority', priority, hints: Object.freeze(hints) });
  }

  private schedulerLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'priority')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.scheduler, 'a scheduler leaf');
    return Object.freeze({ point: 'scheduler', priority: this.finite(o.priority, [...rel, 'priority'], 'priority') });
  }

  private disaggregationLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'disaggregate')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.disaggregation, 'a disaggregation leaf');
    const d = o.disaggregate;
    if (typeof d !== 'boolean') this.fail([...rel, 'disaggregate'], `disaggregate must be true or false, got ${describe(d)}`, 'write disaggregate: true (prefill on a prefill pod, KV transferred) or false (prefill on the chosen decode pod)');
    return Object.freeze({ point: 'disaggregation', disaggregate: d, reason: this.optionalText(o, 'reason', rel) });
  }

  private encodeLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'encode')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.encode, 'an encode leaf');
    const e = o.encode;
    if (typeof e !== 'boolean') this.fail([...rel, 'encode'], `encode must be true or false, got ${describe(e)}`, 'write encode: true (through the encode pool) or false (skip it)');
    return Object.freeze({ point: 'encode', encode: e, reason: this.optionalText(o, 'reason', rel) });
  }

  private autoscaleLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'scale') && !has(o, 'scale_to')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.autoscale, 'an autoscale leaf');
    const reason = this.optionalText(o, 'reason', rel);
    if (has(o, 'scale_to')) {
      if (has(o, 'scale')) this.fail([...rel, 'scale_to'], 'scale_to cannot be combined with scale', 'keep one: {scale: up | down | none, by?: N} or {scale_to: N}');
      if (has(o, 'by')) this.fail([...rel, 'by'], 'by applies only to scale up or down', 'remove by (scale_to names the replica count itself)');
      const scaleTo = this.integer(o.scale_to, [...rel, 'scale_to'], 'scale_to', 0);
      return Object.freeze({ point: 'autoscale', scale: 'none', by: 0, scaleTo, reason });
    }
    const scale = o.scale;
    if (scale !== 'up' && scale !== 'down' && scale !== 'none') {
      const near = typeof scale === 'string' ? closestNames(scale, ['up', 'down', 'none'], 1, 1) : [];
      this.fail([...rel, 'scale'], `unknown scale direction ${describe(scale)}`, `${didYouMean(near)}write up, down or none`);
    }
    if (scale === 'none' && has(o, 'by')) this.fail([...rel, 'by'], 'by applies only to scale up or down', 'remove by, or scale up or down');
    const by = scale === 'none' ? 0 : has(o, 'by') ? this.integer(o.by, [...rel, 'by'], 'by', 1) : 1;
    return Object.freeze({ point: 'autoscale', scale, by, scaleTo: null, reason });
  }

  private routingLeaf(o: Obj, rel: Rel): TreeLeaf {
    if (!has(o, 'route')) this.notALeaf(o, rel);
    this.checkKeys(o, rel, LEAF_KEYS.routing, 'a routing leaf');
    return Object.freeze({ point: 'routing', rule: this.rule(o.route, [...rel, 'route']) });
  }

  private rule(raw: unknown, rel: Rel): RouteRule {
    const o = this.mapping(raw, rel, 'a route rule ({scorers: ...}, {minimize: FEATURE} or {maximize: FEATURE})', '{minimize: instance.load}');
    this.checkKeys(o, rel, RULE_KEYS, 'a route rule');
    const kinds = (['scorers', 'minimize', 'maximize'] as const).filter((k) => has(o, k));
    if (kinds.length === 0) this.fail(rel, 'a route rule needs scorers, minimize or maximize', 'add one, e.g. {minimize: instance.load} or {scorers: {queue-depth: 1}}');
    if (kinds.length > 1) {
      this.fail([...rel, kinds[1]!], `${showValue(kinds[1]!)} cannot be combined with ${showValue(kinds[0]!)} in one rule`, 'a rule has exactly one of scorers, minimize, maximize; choose between them with a branch');
    }
    const kind = kinds[0]!;
    const filter = has(o, 'filter') ? this.predicate(o.filter, [...rel, 'filter'], 'filter', 1) : null;
    const reason = this.optionalText(o, 'reason', rel);
    if (kind === 'scorers') {
      if (has(o, 'tie')) this.fail([...rel, 'tie'], 'tie applies only to minimize and maximize rules', 'remove tie (weighted scoring breaks ties itself)');
      return freezeRule({ kind, scorers: this.scorers(o.scorers, [...rel, 'scorers']), filter, reason });
    }
    const name = o[kind];
    if (typeof name !== 'string') this.fail([...rel, kind], `expected a feature name, got ${describe(name)}`, 'write a per-instance feature such as instance.load');
    const f = this.feature(name, [...rel, kind], 'objective');
    let tie: 'random' | 'first' = 'random';
    if (has(o, 'tie')) {
      const t = o.tie;
      if (t !== 'random' && t !== 'first') this.fail([...rel, 'tie'], `tie must be random or first, got ${describe(t)}`, 'write tie: random (the default) or tie: first (lowest instance index)');
      tie = t;
    }
    return freezeRule({ kind, feature: f.name, tie, filter, reason, objective: numberReader(f.path) });
  }

  private scorers(raw: unknown, rel: Rel): ScorerWeight[] {
    const out: ScorerWeight[] = [];
    const add = (name: unknown, weight: unknown, namePath: Rel, weightPath: Rel): void => {
      if (typeof name !== 'string') this.fail(namePath, `expected a scorer name, got ${describe(name)}`, `write one of ${SCORER_NAMES.join(', ')}`);
      if (!isScorerName(name)) this.fail(namePath, `unknown scorer ${showValue(name)}`, `${didYouMean(closestNames(name, SCORER_NAMES, 3, 2))}valid scorers: ${SCORER_NAMES.join(', ')}`);
      if (out.some((s) => s.name === name)) this.fail(namePath, `scorer ${showValue(name)} is listed twice`, 'list each scorer once and add up its weights');
      if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0) {
        this.fail(weightPath, `the weight of ${name} must be a finite number > 0, got ${describe(weight)}`, 'give a positive weight, or drop the scorer');
      }
      out.push(Object.freeze({ name, weight }));
    };
    if (Array.isArray(raw)) {
      raw.forEach((item: unknown, i) => {
        const o = this.mapping(item, [...rel, i], 'a scorer {name, weight}', '{name: queue-depth, weight: 1}');
        this.checkKeys(o, [...rel, i], ['name', 'weight'], 'a scorer entry');
        const fix = 'a scorer entry is {name: SCORER, weight: NUMBER}';
        add(this.required(o, 'name', [...rel, i], fix), this.required(o, 'weight', [...rel, i], fix), [...rel, i, 'name'], [...rel, i, 'weight']);
      });
    } else if (isMapping(raw)) {
      for (const k of Object.keys(raw)) add(k, raw[k], [...rel, k], [...rel, k]);
    } else {
      this.fail(rel, `expected scorers as {NAME: WEIGHT} or a list of {name, weight}, got ${describe(raw)}`, 'write e.g. scorers: {queue-depth: 2, kv-utilization: 1}');
    }
    if (out.length === 0) this.fail(rel, 'no scorers', 'give at least one scorer with a positive weight, e.g. {queue-depth: 1}');
    return out;
  }

  // ---- predicates ----------------------------------------------------------------------------------------

  private predicate(raw: unknown, rel: Rel, ctx: 'branch' | 'filter', depth: number): Predicate {
    if (depth > MAX_PREDICATE_DEPTH) {
      this.fail(rel, `the predicate nests all/any/not more than ${MAX_PREDICATE_DEPTH} deep (the limit is ${MAX_PREDICATE_DEPTH})`, 'flatten it');
    }
    const o = this.mapping(raw, rel, `a predicate (${PREDICATE_FORMS})`, `{feature: request.inputTokens, op: '>', value: 4000}`);
    if (has(o, 'feature') || has(o, 'op') || has(o, 'value')) {
      this.checkKeys(o, rel, COMPARE_KEYS, 'a comparison', '; write all/any/not as predicates of their own');
      return this.compare(o, rel, ctx);
    }
    for (const kind of ['all', 'any', 'not'] as const) {
      if (!has(o, kind)) continue;
      this.checkKeys(o, rel, [kind], `a "${kind}" predicate`, '; nest further predicates inside it');
      if (kind === 'not') {
        const term = this.predicate(o.not, [...rel, 'not'], ctx, depth + 1);
        return Object.freeze({ kind, term, test: compileNot(term) });
      }
      const list = o[kind];
      if (!Array.isArray(list)) this.fail([...rel, kind], `expected a list of predicates, got ${describe(list)}`, `write ${kind}: [PRED, ...] with one "- " item per predicate`);
      if (list.length === 0) this.fail([...rel, kind], `an empty ${showValue(kind)} list`, `give ${kind} at least one predicate, or remove it`);
      const terms = Object.freeze(list.map((t: unknown, i) => this.predicate(t, [...rel, kind, i], ctx, depth + 1)));
      return Object.freeze({ kind, terms, test: kind === 'all' ? compileAll(terms) : compileAny(terms) });
    }
    const keys = Object.keys(o);
    if (keys.length === 0) this.fail(rel, 'empty predicate', `write ${PREDICATE_FORMS}`);
    const k = keys[0]!;
    this.fail([...rel, k], `unknown key ${showValue(k)} in a predicate`, `${didYouMean(closestNames(k, PREDICATE_KEYS, 2, 1))}a predicate is ${PREDICATE_FORMS}`);
  }

  private compare(o: Obj, rel: Rel, ctx: 'branch' | 'filter'): Predicate {
    const fix = 'a comparison is {feature: NAME, op: OP, value: V}';
    const name = this.required(o, 'feature', rel, fix);
    if (typeof name !== 'string') this.fail([...rel, 'feature'], `expected a feature name, got ${describe(name)}`, 'write a dotted feature name such as request.inputTokens');
    const f = this.feature(name, [...rel, 'feature'], ctx);
    const op = this.required(o, 'op', rel, fix);
    if (typeof op !== 'string' || !(COMPARE_OPS as readonly string[]).includes(op)) {
      const alias = typeof op === 'string' ? OP_ALIASES[op.toLowerCase()] : undefined;
      this.fail([...rel, 'op'], `unknown operator ${describe(op)}`, `${alias === undefined ? '' : `did you mean ${showValue(alias)}? `}write one of ${COMPARE_OPS.join(' ')}`);
    }
    const cop = op as CompareOp;
    if (!TYPE_OPS[f.type].includes(cop)) {
      this.fail([...rel, 'op'], `${showValue(cop)} compares numbers, but ${f.name} is ${typeName(f.type)}`, `use ${TYPE_OPS[f.type].join(', ')} with a ${f.type} feature`);
    }
    const raw = this.required(o, 'value', rel, fix);
    const vrel = [...rel, 'value'];
    let value: Operand;
    if (cop === 'in' || cop === 'not_in') {
      if (!Array.isArray(raw)) this.fail(vrel, `${showValue(cop)} needs a list of values, got ${describe(raw)}`, `write value: [A, B, ...], or use ${cop === 'in' ? '==' : '!='} for a single value`);
      if (raw.length === 0) this.fail(vrel, `an empty list for ${showValue(cop)}`, 'give at least one value');
      value = Object.freeze({ kind: 'list', values: Object.freeze(raw.map((v: unknown, i) => this.scalar(f, v, [...vrel, i]))) });
    } else if (Array.isArray(raw)) {
      this.fail(vrel, `a list needs op in or not_in, not ${showValue(cop)}`, 'use op: in (or not_in), or give a single value');
    } else if (isMapping(raw)) {
      this.checkKeys(raw, vrel, ['feature'], 'a feature operand', '; write {feature: NAME} to compare two features');
      const other = this.required(raw, 'feature', vrel, 'write {feature: NAME} to compare two features');
      if (typeof other !== 'string') this.fail([...vrel, 'feature'], `expected a feature name, got ${describe(other)}`, 'write a dotted feature name');
      const g = this.feature(other, [...vrel, 'feature'], ctx);
      if (g.type !== f.type) this.fail([...vrel, 'feature'], `${g.name} is ${typeName(g.type)} but ${f.name} is ${typeName(f.type)}`, 'compare two features of the same type');
      value = Object.freeze({ kind: 'feature', feature: g });
    } else {
      value = Object.freeze({ kind: 'const', value: this.scalar(f, raw, vrel) });
    }
    return Object.freeze({ kind: 'compare', feature: f, op: cop, value, test: compileCompare(f, cop, value) });
  }

  private scalar(f: FeatureRef, v: unknown, rel: Rel): Scalar {
    if (f.type === 'number' && typeof v === 'number' && Number.isFinite(v)) return v;
    if (f.type === 'string' && typeof v === 'string') return v;
    if (f.type === 'boolean' && typeof v === 'boolean') return v;
    const fix = f.type === 'number'
      ? (typeof v === 'number' ? 'write a finite number' : 'write an unquoted number such as 4000')
      : f.type === 'string'
        ? `quote it: ${JSON.stringify(typeof v === 'number' || typeof v === 'boolean' ? String(v) : 'text')}`
        : 'write true or false (unquoted)';
    this.fail(rel, `expected ${f.type === 'number' ? 'a finite number' : typeName(f.type)} (${f.name} is a ${f.type} feature), got ${describe(v)}`, fix);
  }

  private feature(name: string, rel: Rel, ctx: FeatureContext): FeatureRef {
    const spec: FeatureSpec | undefined = findFeature(name, this.point);
    const list = `run \`blis policies\` for the full list of ${this.point} features`;
    const instanceNumeric = (): string[] => FEATURES.filter((x) => x.scope === 'instance' && x.type === 'number' && x.points.includes(this.point)).map((x) => x.name);
    if (spec === undefined) {
      const candidates = ctx === 'branch' ? featureNames(this.point, 'decision') : ctx === 'filter' ? featureNames(this.point) : instanceNumeric();
      const near = didYouMean(closestNames(name, candidates));
      const elsewhere = [...new Set(FEATURES.filter((x) => x.name === name).flatMap((x) => x.points))];
      if (elsewhere.length > 0) this.fail(rel, `feature ${showValue(name)} is not available in ${this.point} trees (only in ${elsewhere.join(', ')})`, `${near}${list}`);
      this.fail(rel, `unknown feature ${showValue(name)}`, `${near}${list}`);
    }
    if (ctx === 'branch' && spec.scope === 'instance') {
      this.fail(rel, `${showValue(name)} is a per-instance feature, readable only inside a routing rule (route.filter, route.minimize, route.maximize)`,
        'branch on a cluster aggregate instead (e.g. cluster.minLoad, cluster.maxKvUtilization), or move the test into the rule\'s filter');
    }
    if (ctx === 'objective' && (spec.scope !== 'instance' || spec.type !== 'number')) {
      this.fail(rel, `${showValue(name)} is not a numeric per-instance feature, so no rule can minimize or maximize it`, `${didYouMean(closestNames(name, instanceNumeric()))}use an instance.* number feature such as instance.load; ${list}`);
    }
    this.features.add(spec.name);
    return Object.freeze({ name: spec.name, type: spec.type, scope: spec.scope, path: Object.freeze(spec.name.split('.')) });
  }
}
