/**
 * One call that turns a candidate into scores, objectives and feedback (policy-search-design §9–§13).
 *
 * Cascade: stage 1 runs the suite's short smoke scenario; a candidate that fails there (or scores below the
 * suite's threshold) is not run further. Stage 2 runs every scenario × seed, the same seeds for every
 * candidate (common random numbers), so candidates are compared on identical workloads. A candidate that
 * breaks — a sandbox budget, an invalid decision, a bundle that does not parse — yields `combined_score` 0
 * with an `error` and the reason as feedback; it never throws. Only a broken suite or a bug throws.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../sim/config-error.js';
import type { RunDigest } from './digest.js';
import { runScenario, type RunOutcome, type RunTask } from './run.js';
import { summarizeForReflection } from './summary/index.js';
import { bundleControlPoints, optionControlPoint } from '../policy/control-points.js';
import type { ControlPoint } from '../policy/view.js';
import { checkConstraints } from './fitness.js';
import { estimate } from './noise.js';
import { seedsFor } from './suites.js';
import type { BaselineComparison, Candidate, EvaluationError, EvaluationResult, KnownPolicy, Scenario, ScenarioResult, Stage, Suite } from './types.js';

export const BLIS_VERSION = '0.1.0';

export interface EvaluateOptions {
  /** 1 = the smoke stage only; 2 (default) = stage 1, then the full suite when stage 1 passes; validate = the full suite on the held-out seeds. */
  readonly stage?: Stage;
  /** Restrict to these runs (scenario name and seed, of either stage, search or held-out); no cascade then. */
  readonly only?: readonly { readonly scenario: string; readonly seed: number }[] | null;
  /** Attach each scenario run's report data (`report_data`: latency CDFs, time series) for an HTML report. */
  readonly reportData?: boolean;
  /** Seeds per scenario (the declared ones, cut or extended by suites.ts seedsFor); null = as declared. */
  readonly seeds?: number | null;
  /** Compare with the suite's baseline (default true; needed by constraints relative to the baseline). */
  readonly baseline?: boolean;
  /**
   * Wall-clock backstop of each scenario run with fast-engine code (ms; sandbox/watchdog.ts): absent = the
   * scenario's policyWallClockS (default 600 s), 0 = none; a scenario that sets policyWallClockS keeps its own. A run past it fails the evaluation with EVAL_TIMEOUT (never cached).
   */
  readonly wallClockMs?: number;
}

/** Observers of an evaluation in progress (not part of the result or its cache key). */
export interface EvaluateHooks {
  /** After each scenario run: runs done, runs planned (stage 2 counted in until the cascade skips it). */
  readonly onRunDone?: (done: number, total: number) => void;
  /**
   * How the suite's baseline is evaluated on the candidate's runs (the CLI passes its cached evaluation); default:
   * evaluateCandidate with the same runner, remembered in this process.
   */
  readonly evaluateBaseline?: (baseline: Candidate, opts: EvaluateOptions) => Promise<EvaluationResult>;
}

/** A content hash of the candidate (bundle and files, in sorted order). */
export function candidateHash(c: Candidate): string {
  const h = createHash('sha256');
  h.update(c.bundle);
  for (const k of Object.keys(c.files).sort()) h.update(`\0${k}\0${c.files[k] as string}`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Runs an evaluation's scenario runs: in this thread one after the other, or spread over a worker pool
 * (EvaluationPool). `runAll` returns the outcomes of a prefix of `tasks` in task order, every one a success
 * but possibly the last: it stops at the first failure in task order (runs after it may not be run), so the
 * evaluation fails with the same error whichever order the runs finished in. `onDone` is called after each
 * successful run.
 */
export interface ScenarioRunner {
  runAll(tasks: readonly RunTask[], onDone: () => void): Promise<RunOutcome[]>;
}

export const IN_THREAD: ScenarioRunner = {
  async runAll(tasks, onDone) {
    const out: RunOutcome[] = [];
    for (const t of tasks) {
      const o = await runScenario(t);
      out.push(o);
      if (!o.ok) break;
      onDone();
    }
    return out;
  },
};

/** A bug reported by a pool worker, thrown again here with the worker's stack (its class does not cross threads). */
class WorkerBug extends Error {
  constructor(stack: string) {
    super(stack.split('\n')[0] ?? stack);
    this.name = 'WorkerBug';
    this.stack = stack;
  }
}

function weightedMean(runs: readonly { weight: number; values: Readonly<Record<string, number>> }[]): Record<string, number> {
  const out: Record<string, number> = {};
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.values)))].sort();
  for (const k of names) {
    let t = 0;
    let w = 0;
    for (const r of runs) {
      const v = r.values[k];
      if (v === undefined) continue;
      t += v * r.weight;
      w += r.weight;
    }
    out[k] = w > 0 ? t / w : 0;
  }
  return out;
}

/** MAP-Elites features: raw continuous numbers describing how the candidate behaved. */
function features(runs: readonly ScenarioResult[]): Record<string, number> {
  const mean = (k: string): number => (runs.length === 0 ? 0 : runs.reduce((a, r) => a + (r.metrics[k] ?? 0), 0) / runs.length);
  return {
    cache_hit_rate: mean('cache_hit_rate'),
    admission_rate: mean('admission_rate'),
    load_imbalance: mean('load_imbalance'),
    replicas_used: mean('replicas'),
    gpu_hours: mean('gpu_hours'),
    preemptions_per_request: mean('arrived_requests') > 0 ? mean('preemption_count') / mean('arrived_requests') : 0,
  };
}

/**
 * The result of a failed candidate: scored 0, the error and the reason as feedback. It reports no objective values
 * (a latency of 0 ms would read as excellent) and every objective's score as 0.
 */
function failure(c: Candidate, suite: Suite, stage: Stage, stagesRun: (number | 'validate')[], err: EvaluationError): EvaluationResult {
  return {
    combined_score: 0,
    combined_score_se: null,
    combined_score_ci95: null,
    constraints: {},
    objectives: {},
    scores: Object.fromEntries(suite.objectives.map((o) => [o.name, 0])),
    features: features([]),
    scenarios: [],
    artifacts: { summary: `## Outcome\n- The candidate failed (${err.code}); it was scored 0.\n\n## Error\n${err.message}\n`, worst_decisions: '' },
    candidate: { id: c.id, hash: candidateHash(c) },
    suite: { name: suite.name, stage, stages_run: stagesRun },
    blis_version: BLIS_VERSION,
    error: err,
  };
}

/** The control points the suite's scenarios fix through their own `config` (policy options), with a scenario that fixes each. */
export function fixedControlPoints(suite: Suite): Map<ControlPoint, { scenario: string; option: string }> {
  const out = new Map<ControlPoint, { scenario: string; option: string }>();
  for (const sc of [...suite.stage1, ...suite.stage2]) {
    for (const k of Object.keys(sc.config)) {
      const p = optionControlPoint(k);
      if (p !== null && !out.has(p)) out.set(p, { scenario: sc.name, option: k });
    }
  }
  return out;
}

/** The message of a candidate that sets a control point the suite fixes (null: none). */
export function fixedPointConflict(suite: Suite, points: readonly ControlPoint[]): string | null {
  const fixed = fixedControlPoints(suite);
  for (const p of points) {
    const f = fixed.get(p);
    if (f !== undefined) {
      return `suite ${suite.name} fixes the ${p} control point (scenario ${f.scenario} sets ${f.option}: ${JSON.stringify(suite.stage2.concat(suite.stage1).find((x) => x.name === f.scenario)?.config[f.option])}), ` +
        `so a candidate may not set ${p}: remove the candidate's ${p} policy, or use a suite that leaves ${p} to the candidate (one that sets it under defaults: instead of a scenario's config)`;
    }
  }
  return null;
}

interface PlannedRun {
  readonly stage: number | 'validate';
  readonly scenario: Scenario;
  readonly seed: number;
}

const BASELINE_MEMO = new Map<string, Promise<EvaluationResult>>();
const BASELINE_MEMO_MAX = 64;

function memoBaseline(key: string, make: () => Promise<EvaluationResult>): Promise<EvaluationResult> {
  let p = BASELINE_MEMO.get(key);
  if (p === undefined) {
    p = make();
    if (BASELINE_MEMO.size >= BASELINE_MEMO_MAX) BASELINE_MEMO.delete(BASELINE_MEMO.keys().next().value as string);
    BASELINE_MEMO.set(key, p);
    p.catch(() => BASELINE_MEMO.delete(key));
  }
  return p;
}

/** The candidate of a suite's known policy (its baseline, a known-good or a known-bad one). */
export function knownPolicyCandidate(p: KnownPolicy): Candidate {
  return { id: p.id, label: `${p.id}.yaml`, bundle: p.bundle, files: {} };
}

/**
 * Evaluates `candidate` on `suite`. Never throws for a candidate's own failure (see the module comment).
 * `runner` decides where the scenario runs happen; the result is the same bytes whichever it is.
 */
export async function evaluateCandidate(candidate: Candidate, suite: Suite, opts: EvaluateOptions = {}, hooks: EvaluateHooks = {}, runner: ScenarioRunner = IN_THREAD): Promise<EvaluationResult> {
  const stage = opts.stage ?? 2;
  const seedCount = opts.seeds ?? null;
  let done = 0;
  let planned = 0;
  const only = opts.only ?? null;
  const plan: PlannedRun[] = [];
  if (only !== null) {
    for (const want of only) {
      const s = [...suite.stage1, ...suite.stage2].find((x) => x.name === want.scenario);
      const allowed = s === undefined ? [] : [...seedsFor(s, 'search', seedCount), ...seedsFor(s, 'holdout', seedCount)];
      if (s === undefined || !allowed.includes(want.seed)) throw new ConfigError('bad-flag', `--only ${want.scenario}@${want.seed}: no such scenario and seed in suite ${suite.name}`);
      plan.push({ stage: suite.stage1.includes(s) ? 1 : 2, scenario: s, seed: want.seed });
    }
  }
  const stagesRun: (number | 'validate')[] = [];
  const points = bundleControlPoints(candidate.bundle, candidate.label);
  const conflict = points === null ? null : fixedPointConflict(suite, points);
  if (conflict !== null) return failure(candidate, suite, stage, stagesRun, { code: 'SUITE_FIXED_CONTROL_POINT', message: conflict });
  let results: ScenarioResult[] = [];
  let digests: RunDigest[] = [];
  const reportData = opts.reportData === true;
  const runStage = async (st: number | 'validate', list: readonly PlannedRun[]): Promise<EvaluationError | null> => {
    stagesRun.push(st);
    const tasks = list.map(({ scenario, seed }): RunTask => ({ candidate, scenario, seed, objectives: suite.objectives, defaults: suite.defaults, candidatePoints: points, reportData, ...(opts.wallClockMs === undefined ? {} : { wallClockMs: opts.wallClockMs }) }));
    const outcomes = await runner.runAll(tasks, () => hooks.onRunDone?.(++done, planned));
    for (const o of outcomes) {
      if ('internal' in o) throw new WorkerBug(o.internal);
      if (!o.ok) return o.error;
      results.push(o.result);
      digests.push(o.digest);
    }
    return null;
  };
  const expand = (st: number | 'validate', list: readonly Scenario[], which: 'search' | 'holdout'): PlannedRun[] =>
    list.flatMap((s) => seedsFor(s, which, which === 'holdout' && seedCount === null && s.holdoutSeeds.length > 0 ? s.holdoutSeeds.length : seedCount).map((seed) => ({ stage: st, scenario: s, seed })));
  let stage1Note = '';
  if (only !== null) {
    planned = plan.length;
    const err = await runStage(stage, plan);
    if (err !== null) return failure(candidate, suite, stage, stagesRun, err);
  } else if (stage === 'validate') {
    const list = expand('validate', suite.stage2, 'holdout');
    planned = list.length;
    const err = await runStage('validate', list);
    if (err !== null) return failure(candidate, suite, stage, stagesRun, err);
  } else {
    const s1 = expand(1, suite.stage1, 'search');
    const s2 = expand(2, suite.stage2, 'search');
    planned = s1.length + (stage === 2 ? s2.length : 0);
    const err1 = s1.length === 0 ? null : await runStage(1, s1);
    if (err1 !== null) return failure(candidate, suite, stage, stagesRun, err1);
    const score1 = results.reduce((a, r) => a + r.score, 0) / Math.max(results.length, 1);
    if (stage === 2 && (s1.length === 0 || score1 >= suite.stage1Threshold)) {
      results = [];
      digests = [];
      const err2 = await runStage(2, s2);
      if (err2 !== null) return failure(candidate, suite, stage, stagesRun, err2);
    } else if (stage === 2) {
      stage1Note = `Stage 1 score ${score1.toFixed(3)} is below the suite's threshold ${suite.stage1Threshold}: stage 2 was not run.\n\n`;
    }
  }
  const weightOf = (name: string): number => [...suite.stage1, ...suite.stage2].find((s) => s.name === name)?.weight ?? 1;
  if (stagesRun.includes(2) || stagesRun.includes('validate')) checkClassesSent(suite, results);

  // The baseline on the same runs: for constraints relative to it and for the paired difference.
  const base = suite.baseline;
  const baseCandidate = base === null ? null : knownPolicyCandidate(base);
  let baseline: EvaluationResult | null = null;
  if (baseCandidate !== null && opts.baseline !== false && results.length > 0 && candidateHash(baseCandidate) !== candidateHash(candidate)) {
    const baseOpts: EvaluateOptions = { stage, only: results.map((r) => ({ scenario: r.scenario, seed: r.seed })), seeds: seedCount, baseline: false };
    const memoKey = createHash('sha256').update(JSON.stringify([suite, baseOpts])).digest('hex');
    baseline = await (hooks.evaluateBaseline?.(baseCandidate, baseOpts) ?? memoBaseline(memoKey, () => evaluateCandidate(baseCandidate, suite, baseOpts, {}, runner)));
    const err = baseline.error;
    if (err !== undefined) {
      // Wall-clock failures are facts about this evaluation, not the suite: this candidate fails with them.
      if (err.code === 'EVAL_TIMEOUT' || err.code === 'EVAL_WORKER_DIED') {
        BASELINE_MEMO.delete(memoKey);
        return failure(candidate, suite, stage, stagesRun, { code: err.code, message: `while evaluating the suite's baseline ${base?.id ?? ''}: ${err.message}` });
      }
      throw new ConfigError('bad-suite', `suite ${suite.name}: its baseline ${base?.id ?? ''} fails (${err.code}): ${err.message}`);
    }
  }
  const baseRun = new Map<string, ScenarioResult>();
  for (const r of baseline?.scenarios ?? []) baseRun.set(`${r.scenario}@${r.seed}`, r);
  // Constraints, per run (a run's baseline figures are those of the same scenario and seed).
  const needsBaseline = suite.constraints.some((c) => c.relativeToBaseline);
  results = results.map((r) => {
    const b = baseRun.get(`${r.scenario}@${r.seed}`) ?? null;
    const { factor, checks } = checkConstraints(r.metrics, needsBaseline ? (b?.metrics ?? (baseCandidate !== null && candidateHash(baseCandidate) === candidateHash(candidate) ? r.metrics : null)) : null, suite.constraints);
    return { ...r, score: r.objective_score * factor, constraint_factor: factor, constraints: checks };
  });
  const constraintSummary: Record<string, { violated_runs: number; mean_factor: number }> = {};
  for (const c of suite.constraints) {
    const hits = results.flatMap((r) => r.constraints.filter((k) => k.name === c.name));
    constraintSummary[c.name] = { violated_runs: hits.filter((k) => !k.satisfied).length, mean_factor: hits.length === 0 ? 1 : hits.reduce((a, k) => a + k.factor, 0) / hits.length };
  }

  const objectives = weightedMean(results.map((r) => ({ weight: weightOf(r.scenario), values: r.objectives })));
  const scores = weightedMean(results.map((r) => ({ weight: weightOf(r.scenario), values: r.scores })));
  const combined = estimate(results.map((r) => ({ scenario: r.scenario, weight: weightOf(r.scenario), value: r.score })));
  let comparison: BaselineComparison | undefined;
  if (baseline !== null && base !== null) {
    const diffs = results.map((r) => ({ scenario: r.scenario, weight: weightOf(r.scenario), value: r.score - (baseRun.get(`${r.scenario}@${r.seed}`)?.score ?? 0) }));
    const eps = 1e-9;
    comparison = {
      id: base.id,
      combined_score: baseline.combined_score,
      difference: estimate(diffs),
      wins: diffs.filter((d) => d.value > eps).length,
      losses: diffs.filter((d) => d.value < -eps).length,
      ties: diffs.filter((d) => Math.abs(d.value) <= eps).length,
    };
  }
  const summary = summarizeForReflection(digests);
  return {
    combined_score: combined.mean,
    combined_score_se: combined.se,
    combined_score_ci95: combined.ci95,
    ...(comparison === undefined ? {} : { baseline: comparison }),
    constraints: constraintSummary,
    objectives,
    scores,
    features: features(results),
    scenarios: results,
    artifacts: { summary: stage1Note + constraintNote(suite, constraintSummary) + baselineNote(comparison) + summary.summary, worst_decisions: summary.worstDecisions },
    candidate: { id: candidate.id, hash: candidateHash(candidate) },
    suite: { name: suite.name, stage, stages_run: stagesRun },
    blis_version: BLIS_VERSION,
  };
}

/**
 * An objective or constraint on an SLO class that no run of the whole suite sent is a mistake of the set-up (a
 * misspelled class would otherwise just not count): one error naming it and the classes the scenarios send.
 */
function checkClassesSent(suite: Suite, results: readonly ScenarioResult[]): void {
  if (results.length === 0) return;
  const sent = new Set<string>();
  for (const r of results) for (const k of Object.keys(r.metrics)) if (k.startsWith('arrived_requests@')) sent.add(k.slice('arrived_requests@'.length));
  for (const { what, metric } of [...suite.objectives.map((o) => ({ what: `objective ${o.name}`, metric: o.metric })), ...suite.constraints.map((c) => ({ what: `constraint ${c.name}`, metric: c.metric }))]) {
    const at = metric.indexOf('@');
    const cls = at < 0 ? null : metric.slice(at + 1);
    if (cls !== null && !sent.has(cls)) {
      throw new ConfigError('bad-suite', `suite ${suite.name}: ${what} (${metric}) names SLO class ${JSON.stringify(cls)}, which no scenario sends; the scenarios send ${[...sent].sort().map((x) => JSON.stringify(x)).join(', ') || 'no request'} (requests without a class are "default")`);
    }
  }
}

/** Feedback lines on violated constraints (empty when all hold). */
function constraintNote(suite: Suite, summary: Readonly<Record<string, { violated_runs: number; mean_factor: number }>>): string {
  const lines = suite.constraints.flatMap((c) => {
    const s = summary[c.name];
    if (s === undefined || s.violated_runs === 0) return [];
    const bound = `${c.kind === 'min' ? '>=' : '<='} ${c.value}${c.relativeToBaseline ? 'x the baseline' : ''}`;
    return [`- Constraint ${c.name} (${c.metric} ${bound}) was violated in ${s.violated_runs} run(s); it scaled their scores by ${s.mean_factor.toFixed(3)} on average.`];
  });
  return lines.length === 0 ? '' : `## Constraints\n${lines.join('\n')}\n\n`;
}

/** One feedback line comparing the candidate with the suite's baseline. */
function baselineNote(c: BaselineComparison | undefined): string {
  if (c === undefined) return '';
  const d = c.difference;
  const ci = d.ci95 === null ? '' : ` (95% CI ${d.ci95[0].toFixed(4)} to ${d.ci95[1].toFixed(4)})`;
  return `## Against the baseline\n- ${c.id} scores ${c.combined_score.toFixed(4)}; this candidate differs by ${d.mean >= 0 ? '+' : ''}${d.mean.toFixed(4)}${ci}, winning ${c.wins}, losing ${c.losses} and tying ${c.ties} of ${d.runs} paired runs.\n\n`;
}
