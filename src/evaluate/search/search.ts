/**
 * `blis search`: a baseline optimiser over whole policies (what an LLM-driven search must beat), using the same evaluator a framework would call.
 *
 * The space (space.ts) is every control point the suite leaves to the candidate, each holding the suite's default,
 * any template of that point with parameters in their search ranges, or a decision tree; `--template` narrows it
 * to one template's parameters. Every template (at its typical setting) and a tree per point are screened first,
 * proposals are then random up to a share of the budget (one or two points given a fresh random policy), then mutations of the incumbent (a (1+1) evolution strategy whose step size follows the
 * 1/5th success rule; one step in three starts from the runner-up instead: the proposal that beat the incumbent's
 * score most without being accepted, e.g. for breaking a constraint, so a near miss is repaired). Each proposal races the incumbent on common random numbers (race.ts): seeds are added only
 * while the comparison is undecided. The winner is proved afterwards on the suite's held-out seeds (proof.ts).
 *
 * Deterministic for a seed: every draw comes from a seeded Go-compatible stream, and the evaluator is.
 */
import { GoRand } from '../../gocompat/go-rand.js';
import { templateDefaults, type ParamValue, type TemplateSpec } from '../../policy/templates/catalog.js';
import type { ControlPoint } from '../../policy/view.js';
import { candidateFromBundle } from '../candidate.js';
import type { Candidate, Suite } from '../types.js';
import { Racer, type Evaluator, type RacingStats, type Verdict } from './race.js';
import { describeGenome, genomeBundle, genomeBundleObject, genomeKey, mutateGenome, randomGenome, screenGene, screeningList, searchSpace, withGene, type Genome } from './space.js';

export interface SearchOptions {
  /** Candidates evaluated in all (the start included). */
  readonly budget: number;
  /** Share of the budget spent on random proposals before hill-climbing. */
  readonly exploreShare: number;
  readonly seed: number;
  /** Narrow the search to one template (its parameters only). */
  readonly template?: string | null;
  /** Starting parameters of `template` (its defaults for those not given). */
  readonly start?: Readonly<Record<string, ParamValue>>;
  /** Narrow the searched control points. */
  readonly points?: readonly ControlPoint[] | null;
  /** Search decision trees too (default true). */
  readonly trees?: boolean;
  /** Seeds per scenario of the racing rungs (default [2, 4, 8]). */
  readonly rungs?: readonly number[];
  /** The smallest combined-score gain worth adding seeds for (default 0.002). */
  readonly minGain?: number;
  /** Called after each candidate's race (for a progress display). */
  readonly onStep?: (done: number, budget: number) => void;
}

export interface SearchStep {
  readonly evaluation: number;
  readonly phase: 'start' | 'screen' | 'explore' | 'climb';
  readonly policy: string;
  /** The race against the incumbent of the time (null for the start). */
  readonly race: { readonly verdict: Verdict; readonly seeds: number; readonly difference: number | null; readonly error?: string } | null;
  readonly accepted: boolean;
}

export interface SearchPoint {
  readonly policy: string;
  /** The bundle as plain data: write it to a file for --policy-config or blis evaluate --candidate. */
  readonly bundle: Record<string, unknown>;
  /** Weighted mean score on the search seeds of the last rung, with its standard error. */
  readonly combined_score: number;
  readonly combined_score_se: number | null;
  /** The template's parameters (with --template). */
  readonly parameters?: Readonly<Record<string, ParamValue>>;
}

export interface SearchResult {
  readonly suite: string;
  readonly mode: 'whole-policy' | 'template';
  readonly template: string | null;
  readonly control_points: readonly ControlPoint[];
  readonly trees: boolean;
  /** Seeds per scenario of the racing rungs. */
  readonly rungs: readonly number[];
  readonly start: SearchPoint;
  readonly best: SearchPoint;
  readonly evaluations: number;
  readonly racing: RacingStats;
  readonly history: readonly SearchStep[];
  /** The candidates of the start and of the best (for the held-out proof). */
  readonly candidates: { readonly start: Candidate; readonly best: Candidate };
}

/** The bundle (JSON) of a template with parameters. */
export function templateBundle(t: TemplateSpec, params: Readonly<Record<string, ParamValue>>, id: string): string {
  return JSON.stringify({ metadata: { id }, [t.point]: { type: 'parameterized', template: t.name, parameters: params } }, null, 2);
}

export const DEFAULT_RUNGS: readonly number[] = [2, 4, 8];
export const DEFAULT_MIN_GAIN = 0.002;

/** Searches `suite` (see the module comment). Throws RangeError for a template or control point it cannot search. */
export async function searchPolicies(suite: Suite, opts: SearchOptions, evaluate: Evaluator): Promise<SearchResult> {
  const space = searchSpace(suite, { template: opts.template ?? null, points: opts.points ?? null, trees: opts.trees ?? true });
  const rng = new GoRand(BigInt(opts.seed));
  const racer = new Racer(suite, evaluate, opts.rungs ?? DEFAULT_RUNGS, suite.constraints.some((c) => c.relativeToBaseline), opts.minGain ?? DEFAULT_MIN_GAIN);
  const last = racer.rungs[racer.rungs.length - 1] as number;
  const t = space.fixedTemplate;
  const startGenome: Genome = t === null ? {} : { [t.point]: { kind: 'template', template: t.name, params: { ...templateDefaults(t), ...(opts.start ?? {}) } } };
  const candidateOf = (g: Genome, id: string): Candidate => candidateFromBundle(id, genomeBundle(g, id));
  let n = 1;
  const startCandidate = candidateOf(startGenome, 'search-start');
  await racer.scoresAt(startCandidate, racer.rungs[0] as number);
  const history: SearchStep[] = [{ evaluation: 1, phase: 'start', policy: describeGenome(startGenome), race: null, accepted: true }];
  opts.onStep?.(1, opts.budget);
  let best = { genome: startGenome, candidate: startCandidate };
  const tried = new Set([genomeKey(startGenome)]);
  const exploreN = Math.max(0, Math.floor((opts.budget - 1) * opts.exploreShare));
  // Screening: every template (its typical setting) and tree form of every point once, round-robin over the points,
  // each on top of the incumbent of the time; it counts towards the random share (or all of it, when larger).
  const screen = screeningList(space);
  let sigma = 0.2;
  let runnerUp: { genome: Genome; difference: number } | null = null;
  while (n < opts.budget) {
    const i0 = n - 1;
    const phase = i0 < screen.length && i0 < Math.max(exploreN, Math.min(screen.length, opts.budget - 1)) ? 'screen' : i0 < exploreN ? 'explore' : 'climb';
    let g: Genome = best.genome;
    for (let i = 0; i < 50; i++) {
      const s = screen[i0];
      const from = phase === 'climb' && runnerUp !== null && rng.intn(3) === 0 ? runnerUp.genome : best.genome;
      g = phase === 'screen' && s !== undefined
        ? withGene(space, best.genome, s.point, screenGene(space, s, rng))
        : phase === 'climb' ? mutateGenome(space, from, rng, sigma) : randomGenome(space, best.genome, rng);
      if (!tried.has(genomeKey(g))) break;
    }
    n++;
    tried.add(genomeKey(g));
    const c = candidateOf(g, `search-${opts.seed}-${n}`);
    const r = await racer.race(c, best.candidate);
    const accepted = r.verdict === 'better';
    if (accepted) {
      best = { genome: g, candidate: c };
      runnerUp = null;
    } else if (r.verdict !== 'failed' && r.difference !== null && r.difference.mean > 0 && (runnerUp === null || r.difference.mean > runnerUp.difference)) {
      runnerUp = { genome: g, difference: r.difference.mean };
    }
    // The 1/5th success rule: widen after a success, narrow after a failure.
    if (phase === 'climb') sigma = Math.min(0.5, Math.max(0.02, accepted ? sigma * 1.5 : sigma * Math.pow(1.5, -0.25)));
    history.push({
      evaluation: n,
      phase,
      policy: describeGenome(g),
      race: { verdict: r.verdict, seeds: r.seeds, difference: r.difference?.mean ?? null, ...(r.error === undefined ? {} : { error: `${r.error.code}: ${r.error.message}` }) },
      accepted,
    });
    opts.onStep?.(n, opts.budget);
  }
  const point = async (g: Genome, c: Candidate, id: string): Promise<SearchPoint> => {
    const s = await racer.scoreAt(c, last);
    const gene = t === null ? undefined : g[t.point];
    return {
      policy: describeGenome(g),
      bundle: genomeBundleObject(g, id),
      combined_score: s.mean,
      combined_score_se: s.se,
      ...(gene?.kind === 'template' ? { parameters: gene.params } : {}),
    };
  };
  const start = await point(startGenome, startCandidate, 'search-start');
  const bestPoint = await point(best.genome, best.candidate, 'search-best');
  return {
    suite: suite.name,
    mode: t === null ? 'whole-policy' : 'template',
    template: t?.name ?? null,
    control_points: space.points,
    trees: Object.keys(space.trees).length > 0,
    rungs: racer.rungs,
    start,
    best: bestPoint,
    evaluations: n,
    racing: racer.stats,
    history,
    candidates: { start: startCandidate, best: best.candidate },
  };
}

/** The suite with every seed shifted: held-out seeds for checking that a search's gain generalises. */
export function withSeedOffset(suite: Suite, offset: number): Suite {
  const shift = (list: Suite['stage2']): Suite['stage2'] => list.map((s) => ({ ...s, seeds: s.seeds.map((x) => x + offset) }));
  return { ...suite, name: `${suite.name}+seeds${offset}`, stage1: shift(suite.stage1), stage2: shift(suite.stage2) };
}
