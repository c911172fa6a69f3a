/**
 * What `blis search` does (loaded only when it runs; its flags are in evaluate-command.ts): whole-policy search on
 * a suite (src/evaluate/search/), then the held-out proof, printed as one JSON document.
 */
import {
  evaluateCandidate,
  findSuite,
  ResultCache,
  type Candidate,
  type EvaluateOptions,
  type EvaluationResult,
  type Suite,
} from '../evaluate/index.js';
import { MAX_SEEDS } from '../evaluate/suites.js';
import { parseConstraintSpec, parseObjectiveSpec, withObjectives } from '../evaluate/objective-spec.js';
import { searchPolicies, withSeedOffset } from '../evaluate/search/search.js';
import { proveOnHoldout } from '../evaluate/search/proof.js';
import { findTemplate, type ParamValue } from '../policy/templates/catalog.js';
import { validateTemplate } from '../policy/templates/validate.js';
import { EvaluationPool } from '../evaluate/pool.js';
import { CONTROL_POINTS, type ControlPoint } from '../policy/view.js';
import { UsageError } from './errors.js';
import { BlisError, showValue } from '../domain/errors.js';
import { DECIMAL_FLOAT, parseFloatFlag } from '../sim/options.js';
import type { Io } from './io.js';
import { checkInputsAndOutputs, checkOutputPath, commitOutputs } from './outputs.js';
import { progressDisplay } from './progress.js';
import { threadCount } from './threads.js';
import { dirCache, int, loadSuite } from './evaluate-inputs.js';

export interface SearchFlags {
  template?: string;
  suite: string;
  budget: string;
  randomShare: string;
  seed: string;
  start: string;
  points?: string;
  trees: boolean;
  rungs: string;
  minGain: string;
  workers: string;
  best?: string;
  holdoutOffset?: string;
  cache?: string;
  semantics?: string;
  latencyProfile?: string;
  latencyModel?: string;
  objective: string[];
  constraint: string[];
  quiet?: boolean;
}

function parseStart(text: string): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  if (text.trim() === '') return out;
  for (const part of text.split(',')) {
    const [k, v] = part.split('=').map((x) => x.trim()) as [string, string | undefined];
    if (k === '' || v === undefined) throw new UsageError('bad-flag', `--start ${showValue(part)}: write name=value,... (blis policies lists the parameters)`);
    out[k] = v === 'true' ? true : v === 'false' ? false : DECIMAL_FLOAT.test(v) && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return out;
}

function parseRungs(text: string): number[] {
  const parts = text.split(',').map((x) => x.trim());
  const out = parts.map((x) => (/^\d+$/.test(x) ? Number(x) : NaN));
  if (out.length === 0 || out.some((k, i) => !(Number.isInteger(k) && k >= 1 && k <= MAX_SEEDS && (i === 0 || k > (out[i - 1] as number))))) {
    throw new UsageError('bad-flag', `--rungs must be increasing seeds per scenario, each 1..${MAX_SEEDS}, e.g. 2,4,8; got ${showValue(text)}`);
  }
  return out;
}

function parsePoints(text: string): ControlPoint[] {
  const out: ControlPoint[] = [];
  for (const x of text.split(',').map((y) => y.trim())) {
    if (!(CONTROL_POINTS as readonly string[]).includes(x)) throw new UsageError('bad-flag', `--points: unknown control point ${showValue(x)}; one or more of ${CONTROL_POINTS.join(', ')}`);
    out.push(x as ControlPoint);
  }
  return out;
}

/**
 * `blis search`: whole policies (or one template with --template) raced on common random numbers, then the best
 * proved on the suite's held-out seeds (evaluate/search/).
 */
export async function searchCommand(o: SearchFlags, io: Io): Promise<void> {
  const suite = withObjectives(loadSuite(o.suite, o.semantics, o.latencyProfile, o.latencyModel), o.objective.map(parseObjectiveSpec), o.constraint.map(parseConstraintSpec));
  const t = o.template === undefined ? null : findTemplate(o.template);
  if (t === undefined) throw new UsageError('bad-flag', `--template: unknown template ${showValue(o.template ?? "")}; blis policies lists them`);
  if (t !== null && o.points !== undefined) throw new UsageError('bad-flag', '--points and --template do not go together: --template searches its own control point');
  const budget = int('--budget', o.budget, 1);
  if (budget > 100_000) throw new UsageError('bad-flag', `--budget must be <= 100000 candidates, got ${budget}`);
  const seed = int('--seed', o.seed, 0);
  const share = parseFloatFlag('--random-share', o.randomShare);
  if (!(share >= 0 && share <= 1)) throw new UsageError('bad-flag', `--random-share must be in [0, 1], got ${showValue(o.randomShare)}`);
  const start = parseStart(o.start);
  if (t === null && Object.keys(start).length > 0) throw new UsageError('bad-flag', '--start sets a template\'s parameters: give --template too (a whole-policy search starts from the suite\'s defaults)');
  if (t !== null) {
    // The catalog's own checks (names, types, ranges), reported against the flag.
    try {
      validateTemplate(t.point, t.name, start, [t.point], () => ({ file: '--start', pos: { line: 1, col: 1 } }));
    } catch (e) {
      if (e instanceof BlisError) throw new UsageError('bad-flag', e.message.replace(/^--start:1:1: [^:]*\.parameters(\.)?/, '--start: '));
      throw e;
    }
  }
  const bestOut = o.best === undefined ? null : checkOutputPath('--best', o.best);
  checkInputsAndOutputs([bestOut], [
    ...(findSuite(o.suite) === undefined ? [{ flag: '--suite', path: o.suite }] : []),
    ...(o.latencyProfile === undefined ? [] : [{ flag: '--latency-profile', path: o.latencyProfile }]),
  ]);
  const rungs = parseRungs(o.rungs);
  const minGain = parseFloatFlag('--min-gain', o.minGain);
  if (!(minGain >= 0 && minGain <= 1)) throw new UsageError('bad-flag', `--min-gain must be in [0, 1] (a combined-score difference), got ${showValue(o.minGain)}`);
  const points = o.points === undefined ? null : parsePoints(o.points);
  const workers = threadCount('--workers', o.workers);
  const cache = o.cache === undefined ? new ResultCache() : dirCache(o.cache, io);
  const pool = workers > 1 ? new EvaluationPool({ workers, timeoutMs: 0 }) : null;
  const evaluate = async (c: Candidate, evalOpts: EvaluateOptions, s: Suite = suite): Promise<EvaluationResult> => {
    const key = ResultCache.key(c, s, evalOpts);
    const hit = cache.get(key);
    if (hit !== null) return hit;
    const r = pool === null ? await evaluateCandidate(c, s, evalOpts) : await pool.run(c, s, evalOpts);
    cache.set(key, r);
    return r;
  };
  const display = progressDisplay('search', o.quiet === true);
  try {
    let result;
    try {
      result = await searchPolicies(suite, { template: t?.name ?? null, start, budget, exploreShare: share, seed, points, trees: o.trees, rungs, minGain, onStep: (d, n) => display?.units(d, n) }, (c, eo) => evaluate(c, eo));
    } catch (e) {
      if (e instanceof RangeError) throw new UsageError('bad-flag', e.message);
      throw e;
    }
    display?.stop();
    const { candidates, ...printed } = result;
    let holdout: unknown = null;
    if (o.holdoutOffset !== undefined) {
      // The older proof: the suite's own seeds shifted by N (0 = none).
      const offset = int('--holdout-offset', o.holdoutOffset, 0);
      if (offset > 0) {
        const held = withSeedOffset(suite, offset);
        const score = async (c: Candidate): Promise<number> => (await evaluate(c, { stage: 2 }, held)).combined_score;
        holdout = { seed_offset: offset, start: await score(candidates.start), best: await score(candidates.best) };
      }
    } else {
      holdout = await proveOnHoldout(suite, candidates.start, candidates.best, (c, eo) => evaluate(c, eo));
    }
    if (bestOut !== null) commitOutputs([[bestOut, `${JSON.stringify(printed.best.bundle, null, 2)}\n`]]);
    io.stdout(`${JSON.stringify({ ...printed, holdout }, null, 2)}\n`);
  } finally {
    display?.stop();
    await pool?.close();
  }
}
