/**
 * The search space of `blis search`: a policy is a genome, one gene per control point the suite leaves to the
 * candidate. A gene is the suite's default (no policy set), a template with parameters, or a decision tree. The
 * genome becomes an ordinary policy bundle, so the evaluator checks and runs it like any user's bundle.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import { TEMPLATES, findTemplate, templateDefaults, type ParamValue, type TemplateSpec } from '../../policy/templates/catalog.js';
import type { ControlPoint } from '../../policy/view.js';
import { fixedControlPoints } from '../evaluate.js';
import type { Suite } from '../types.js';
import { mutateParam, sampleParam } from './ranges.js';
import { TREE_POINTS, mutateTree, randomTree, treeFeatures, type PlainObject, type TreeFeature } from './trees.js';

export type Gene =
  | { readonly kind: 'default' }
  | { readonly kind: 'template'; readonly template: string; readonly params: Readonly<Record<string, ParamValue>> }
  | { readonly kind: 'tree'; readonly tree: PlainObject };

/** One gene per searched control point (a point not listed keeps the suite's default). */
export type Genome = Readonly<Partial<Record<ControlPoint, Gene>>>;

/** What one search explores. */
export interface SearchSpace {
  /** Searched control points, in bundle order. */
  readonly points: readonly ControlPoint[];
  /** Templates per point. */
  readonly templates: Readonly<Partial<Record<ControlPoint, readonly TemplateSpec[]>>>;
  /** Tree features per point (absent: no trees at that point). */
  readonly trees: Readonly<Partial<Record<ControlPoint, readonly TreeFeature[]>>>;
  /** `--template`: only this template's parameters are searched (its point always holds it). */
  readonly fixedTemplate: TemplateSpec | null;
}

/** Bundle order of the control points (the order `blis policies` lists them). */
const POINT_ORDER: readonly ControlPoint[] = ['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode'];

/** What the suite's scenarios run: P/D pools, an autoscaler, an encode pool (read from their configs and files). */
function suiteRuns(suite: Suite): { pd: boolean; autoscale: boolean; encode: boolean } {
  let pd = false;
  let autoscale = false;
  let encode = false;
  for (const sc of [...suite.stage1, ...suite.stage2]) {
    const c = sc.config;
    const positive = (k: string): boolean => typeof c[k] === 'number' && (c[k]) > 0;
    if (positive('prefillInstances') || positive('decodeInstances')) pd = true;
    if (positive('encodeInstances')) encode = true;
    if (Object.keys(c).some((k) => /^autoscal/i.test(k))) autoscale = true;
    const deployment = typeof c['deployment'] === 'string' ? sc.files[c['deployment']] ?? '' : '';
    if (/^autoscaler\s*:/m.test(deployment)) autoscale = true;
    if (/^\s*(prefill|decode)\s*:/m.test(deployment)) pd = true;
  }
  return { pd, autoscale, encode };
}

/** The SLO classes the suite's scenarios declare targets for, and the usual ones. */
function suiteClasses(suite: Suite): string[] {
  const declared = [...suite.stage1, ...suite.stage2].flatMap((s) => Object.keys(s.slo)).filter((k) => k !== '' && k !== 'default');
  return [...new Set([...declared, 'critical', 'standard', 'batch', 'sheddable'])].sort();
}

export interface SpaceOptions {
  /** Narrow the search to one template's parameters. */
  readonly template?: string | null;
  /** Narrow the searched control points (default: all the suite leaves to the candidate and its scenarios use). */
  readonly points?: readonly ControlPoint[] | null;
  /** Search decision trees as well as templates (default true). */
  readonly trees?: boolean;
}

/**
 * The control points a search over `suite` may set: admission, priority, routing and the instance scheduler, plus
 * autoscale, disaggregation and encode where the scenarios run an autoscaler, P/D pools or an encode pool; minus
 * those the suite fixes through a scenario's config. Throws RangeError for a template or point it cannot search.
 */
export function searchSpace(suite: Suite, o: SpaceOptions = {}): SearchSpace {
  const runs = suiteRuns(suite);
  const fixed = fixedControlPoints(suite);
  const usable = POINT_ORDER.filter((p) => !fixed.has(p) && (p === 'autoscale' ? runs.autoscale : p === 'disaggregation' ? runs.pd : p === 'encode' ? runs.encode : true));
  const classes = suiteClasses(suite);
  if (o.template !== undefined && o.template !== null) {
    const t = findTemplate(o.template);
    if (t === undefined) throw new RangeError(`unknown template ${JSON.stringify(o.template)}`);
    if (fixed.has(t.point)) throw new RangeError(`suite ${suite.name} fixes the ${t.point} control point, so ${t.name} cannot be searched on it`);
    return { points: [t.point], templates: { [t.point]: [t] }, trees: {}, fixedTemplate: t };
  }
  let points = usable;
  if (o.points !== undefined && o.points !== null) {
    for (const p of o.points) {
      if (!usable.includes(p)) {
        throw new RangeError(`control point ${p} cannot be searched on suite ${suite.name}: ${fixed.has(p) ? 'the suite fixes it' : 'no scenario uses it'}; searchable: ${usable.join(', ')}`);
      }
    }
    points = usable.filter((p) => o.points?.includes(p));
  }
  const templates: Partial<Record<ControlPoint, readonly TemplateSpec[]>> = {};
  const trees: Partial<Record<ControlPoint, readonly TreeFeature[]>> = {};
  for (const p of points) {
    templates[p] = TEMPLATES.filter((t) => t.point === p);
    if (o.trees !== false && TREE_POINTS.includes(p)) trees[p] = treeFeatures(p, classes);
  }
  return { points, templates, trees, fixedTemplate: null };
}

const pick = <T>(xs: readonly T[], rng: GoRand): T => xs[rng.intn(xs.length)] as T;

/** Weighted templates need one positive weight. */
function validParams(t: TemplateSpec, params: Readonly<Record<string, ParamValue>>): boolean {
  if (t.name !== 'weighted_affinity_routing' && t.name !== 'weighted_scorers') return true;
  return Object.entries(params).some(([k, v]) => k !== 'utilization_threshold' && typeof v === 'number' && v > 0);
}

function sampleTemplateParams(t: TemplateSpec, rng: GoRand): Record<string, ParamValue> {
  for (let i = 0; ; i++) {
    const params = Object.fromEntries(t.parameters.map((p) => [p.name, sampleParam(p, rng)]));
    if (validParams(t, params) || i >= 20) return validParams(t, params) ? params : templateDefaults(t);
  }
}

/** A random gene of `point`: a template with sampled parameters, or (one time in three, where allowed) a random tree. */
export function randomGene(space: SearchSpace, point: ControlPoint, rng: GoRand): Gene {
  const features = space.trees[point];
  const templates = space.templates[point] ?? [];
  if (features !== undefined && (templates.length === 0 || rng.intn(3) === 0)) return { kind: 'tree', tree: randomTree(point, features, rng, 1 + rng.intn(2)) };
  if (templates.length === 0) return { kind: 'default' };
  const t = pick(templates, rng);
  return { kind: 'template', template: t.name, params: sampleTemplateParams(t, rng) };
}

/** One screening proposal: a template (by name) or a tree at a point. */
export interface ScreenItem {
  readonly point: ControlPoint;
  readonly template: string | null;
}

/**
 * Every template of every searched point (at its typical setting), and a random tree for each tree point,
 * round-robin over the points (the first template of each point, then the second, ...): the proposals a search
 * screens first. Empty with --template.
 */
export function screeningList(space: SearchSpace): ScreenItem[] {
  if (space.fixedTemplate !== null) return [];
  const lists = space.points.map((p) => [...(space.templates[p] ?? []).map((t): ScreenItem => ({ point: p, template: t.name })), ...(space.trees[p] === undefined ? [] : [{ point: p, template: null }])]);
  const out: ScreenItem[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++) for (const l of lists) if (i < l.length) out.push(l[i] as ScreenItem);
  return out;
}

/** The gene of a screening item: its template's typical active setting (the catalog's example, or its defaults), or a random tree. */
export function screenGene(space: SearchSpace, item: ScreenItem, rng: GoRand): Gene {
  if (item.template === null) return { kind: 'tree', tree: randomTree(item.point, space.trees[item.point] ?? [], rng, 1 + rng.intn(2)) };
  const t = findTemplate(item.template) as TemplateSpec;
  return { kind: 'template', template: t.name, params: { ...templateDefaults(t), ...(t.example ?? {}) } };
}

/** `g` with `point` holding `gene`. */
export function withGene(space: SearchSpace, g: Genome, point: ControlPoint, gene: Gene): Genome {
  return normalise(space, { ...g, [point]: gene });
}

/** A random genome: one or two control points given a random gene, the others kept from `base`. */
export function randomGenome(space: SearchSpace, base: Genome, rng: GoRand): Genome {
  if (space.fixedTemplate !== null) {
    const t = space.fixedTemplate;
    return { [t.point]: { kind: 'template', template: t.name, params: sampleTemplateParams(t, rng) } };
  }
  const out: Partial<Record<ControlPoint, Gene>> = { ...base };
  const n = space.points.length > 1 && rng.intn(3) === 0 ? 2 : 1;
  for (let i = 0; i < n; i++) {
    const p = pick(space.points, rng);
    out[p] = randomGene(space, p, rng);
  }
  return normalise(space, out);
}

/** Genes in bundle order; default genes dropped. */
function normalise(space: SearchSpace, g: Partial<Record<ControlPoint, Gene>>): Genome {
  const out: Partial<Record<ControlPoint, Gene>> = {};
  for (const p of space.points) {
    const gene = g[p];
    if (gene !== undefined && gene.kind !== 'default') out[p] = gene;
  }
  return out;
}

/**
 * One hill-climbing step from `g`: one control point changes. A template gene moves its parameters (each with
 * probability 1/n, at least one) by steps of relative size `sigma`; a tree gene mutates its structure or numbers;
 * now and then (and always for a default gene) the point gets a fresh random gene or goes back to the default.
 */
export function mutateGenome(space: SearchSpace, g: Genome, rng: GoRand, sigma: number): Genome {
  const out: Partial<Record<ControlPoint, Gene>> = { ...g };
  const set = space.points.filter((p) => g[p] !== undefined);
  const point = set.length > 0 && rng.intn(4) !== 0 ? pick(set, rng) : pick(space.points, rng);
  const gene = g[point] ?? { kind: 'default' };
  const fixed = space.fixedTemplate !== null;
  const fresh = !fixed && rng.intn(8) === 0;
  if (gene.kind === 'default' || fresh) {
    out[point] = !fixed && gene.kind !== 'default' && rng.intn(3) === 0 ? { kind: 'default' } : randomGene(space, point, rng);
  } else if (gene.kind === 'template') {
    const t = findTemplate(gene.template) as TemplateSpec;
    const params = { ...gene.params };
    const k = t.parameters.length;
    const forced = rng.intn(k);
    for (let i = 0; i < k; i++) {
      const p = t.parameters[i] as TemplateSpec['parameters'][number];
      if (i === forced || rng.float64() < 1 / k) params[p.name] = mutateParam(p, params[p.name] ?? p.default, sigma, rng);
    }
    out[point] = { kind: 'template', template: t.name, params: validParams(t, params) ? params : gene.params };
  } else {
    out[point] = { kind: 'tree', tree: mutateTree(point, gene.tree, space.trees[point] ?? [], rng, sigma) };
  }
  return normalise(space, out);
}

/**
 * The policy bundle (plain data, ready for --policy-config) of a genome; `{}` for the suite's defaults, the same
 * bundle as a suite baseline that sets nothing, so the evaluator recognises it and does not simulate it twice.
 */
export function genomeBundleObject(g: Genome, id: string): Record<string, unknown> {
  if (POINT_ORDER.every((p) => g[p] === undefined || g[p].kind === 'default')) return {};
  const out: Record<string, unknown> = { metadata: { id } };
  for (const p of POINT_ORDER) {
    const gene = g[p];
    if (gene === undefined || gene.kind === 'default') continue;
    out[p] = gene.kind === 'template' ? { type: 'parameterized', template: gene.template, parameters: gene.params } : { type: 'decision_tree', tree: gene.tree };
  }
  return out;
}

/** The bundle text (JSON) of a genome. */
export function genomeBundle(g: Genome, id: string): string {
  return JSON.stringify(genomeBundleObject(g, id), null, 2);
}

/** A genome's identity (its bundle without the id), for "already tried". */
export function genomeKey(g: Genome): string {
  const b = genomeBundleObject(g, '');
  delete b['metadata'];
  return JSON.stringify(b);
}

/** One line describing a genome: `admission=load_shedding_admission(max_queue_depth_per_instance=2, ...) routing=tree(3 nodes)`. */
export function describeGenome(g: Genome): string {
  const parts: string[] = [];
  for (const p of POINT_ORDER) {
    const gene = g[p];
    if (gene === undefined || gene.kind === 'default') continue;
    if (gene.kind === 'template') parts.push(`${p}=${gene.template}(${Object.entries(gene.params).map(([k, v]) => `${k}=${v}`).join(', ')})`);
    else parts.push(`${p}=tree(${JSON.stringify(gene.tree)})`);
  }
  return parts.length === 0 ? 'the suite\'s defaults' : parts.join(' ');
}
