/**
 * `blis search`: an honest baseline optimiser over one template's parameters, using the same evaluator a
 * framework would call. Random search over the documented ranges first, then a (1+1) evolution strategy
 * with Gaussian steps scaled to each range and the 1/5th success rule adapting the step size (the simplest
 * member of the CMA-ES family). Deterministic for a seed: draws come from a seeded Go-compatible stream.
 *
 * It shows the whole loop working without any framework, and is the baseline an LLM-driven search must beat.
 */
import { GoRand } from '../engine/go-rand.js';
import { findTemplate, type ParamSpec, type ParamValue, type TemplateSpec } from '../policy/templates/catalog.js';
import type { EvaluateOptions } from './evaluate.js';
import { candidateFromBundle } from './candidate.js';
import type { Candidate, EvaluationResult, Suite } from './types.js';

export interface SearchOptions {
  readonly template: string;
  /** Evaluations in all (the start point included). */
  readonly budget: number;
  /** Share of the budget spent on random search before hill-climbing. */
  readonly randomShare: number;
  readonly seed: number;
  /** Starting parameters (the template's defaults for those not given). */
  readonly start: Readonly<Record<string, ParamValue>>;
}

export interface SearchStep {
  readonly evaluation: number;
  readonly phase: 'start' | 'random' | 'climb';
  readonly parameters: Readonly<Record<string, ParamValue>>;
  readonly combined_score: number;
  readonly improved: boolean;
}

export interface SearchResult {
  readonly template: string;
  readonly suite: string;
  readonly start: { readonly parameters: Readonly<Record<string, ParamValue>>; readonly combined_score: number };
  readonly best: { readonly parameters: Readonly<Record<string, ParamValue>>; readonly combined_score: number; readonly bundle: string };
  readonly evaluations: number;
  readonly history: readonly SearchStep[];
}

/** The bundle (JSON) of a template with parameters. */
export function templateBundle(t: TemplateSpec, params: Readonly<Record<string, ParamValue>>, id: string): string {
  return JSON.stringify({ metadata: { id }, [t.point]: { type: 'parameterized', template: t.name, parameters: params } }, null, 2);
}

function range(p: ParamSpec): [number, number] {
  const lo = p.min ?? 0;
  // Unbounded or huge ranges are searched over a scale where they matter.
  const hi = Math.min(p.max ?? lo + 100, lo + Math.max(10 * Math.abs(Number(p.default) || 1), 10));
  return [lo, hi];
}

function sample(p: ParamSpec, rng: GoRand): ParamValue {
  if (p.type === 'boolean') return rng.intn(2) === 1;
  if (p.type === 'enum') return (p.values ?? [])[rng.intn((p.values ?? []).length)] as string;
  const [lo, hi] = range(p);
  const v = lo + rng.float64() * (hi - lo);
  return p.type === 'integer' ? Math.round(v) : round6(v);
}

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

function mutate(p: ParamSpec, v: ParamValue, sigma: number, rng: GoRand): ParamValue {
  if (p.type === 'boolean') return rng.float64() < sigma ? !(v as boolean) : v;
  if (p.type === 'enum') return rng.float64() < sigma ? ((p.values ?? [])[rng.intn((p.values ?? []).length)] as string) : v;
  const [lo, hi] = range(p);
  const max = p.max ?? Infinity;
  let x = (v as number) + rng.normFloat64() * sigma * (hi - lo);
  x = Math.min(Math.max(x, lo), max);
  return p.type === 'integer' ? Math.round(x) : round6(x);
}

/** Weighted templates need one positive weight; other constraints are the catalog's ranges. */
function valid(t: TemplateSpec, params: Readonly<Record<string, ParamValue>>): boolean {
  if (t.name !== 'weighted_affinity_routing' && t.name !== 'weighted_scorers') return true;
  return Object.entries(params).some(([k, v]) => k !== 'utilization_threshold' && typeof v === 'number' && v > 0);
}

export async function searchTemplate(
  suite: Suite,
  opts: SearchOptions,
  evaluate: (c: Candidate, o: EvaluateOptions) => Promise<EvaluationResult>,
): Promise<SearchResult> {
  const t = findTemplate(opts.template);
  if (t === undefined) throw new RangeError(`unknown template "${opts.template}"`);
  const rng = new GoRand(BigInt(opts.seed));
  const defaults = Object.fromEntries(t.parameters.map((p) => [p.name, p.default]));
  const start = { ...defaults, ...opts.start };
  const history: SearchStep[] = [];
  let n = 0;
  const score = async (params: Readonly<Record<string, ParamValue>>): Promise<number> => {
    n++;
    const id = `search-${opts.seed}-${n}`;
    const r = await evaluate(candidateFromBundle(id, templateBundle(t, params, id)), { stage: 2 });
    return r.combined_score;
  };
  const startScore = await score(start);
  history.push({ evaluation: 1, phase: 'start', parameters: start, combined_score: startScore, improved: false });
  let best = { parameters: start as Record<string, ParamValue>, score: startScore };
  const randomN = Math.max(0, Math.floor((opts.budget - 1) * opts.randomShare));
  for (let i = 0; i < randomN && n < opts.budget; i++) {
    let params: Record<string, ParamValue>;
    do params = Object.fromEntries(t.parameters.map((p) => [p.name, sample(p, rng)]));
    while (!valid(t, params));
    const s = await score(params);
    const improved = s > best.score;
    if (improved) best = { parameters: params, score: s };
    history.push({ evaluation: n, phase: 'random', parameters: params, combined_score: s, improved });
  }
  let sigma = 0.2;
  while (n < opts.budget) {
    let params: Record<string, ParamValue>;
    do params = Object.fromEntries(t.parameters.map((p) => [p.name, mutate(p, best.parameters[p.name] as ParamValue, sigma, rng)]));
    while (!valid(t, params));
    const s = await score(params);
    const improved = s > best.score;
    if (improved) best = { parameters: params, score: s };
    // The 1/5th success rule: widen after a success, narrow after a failure.
    sigma = Math.min(0.5, Math.max(0.01, improved ? sigma * 1.5 : sigma * Math.pow(1.5, -0.25)));
    history.push({ evaluation: n, phase: 'climb', parameters: params, combined_score: s, improved });
  }
  return {
    template: t.name,
    suite: suite.name,
    start: { parameters: start, combined_score: startScore },
    best: { parameters: best.parameters, combined_score: best.score, bundle: templateBundle(t, best.parameters, 'search-best') },
    evaluations: n,
    history,
  };
}

/** The suite with every seed shifted: held-out seeds for checking that a search's gain generalises. */
export function withSeedOffset(suite: Suite, offset: number): Suite {
  const shift = (list: Suite['stage2']): Suite['stage2'] => list.map((s) => ({ ...s, seeds: s.seeds.map((x) => x + offset) }));
  return { ...suite, name: `${suite.name}+seeds${offset}`, stage1: shift(suite.stage1), stage2: shift(suite.stage2) };
}
