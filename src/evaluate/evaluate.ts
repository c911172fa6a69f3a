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
import { summarizeForReflection } from './summary.js';
import type { Candidate, EvaluationError, EvaluationResult, Scenario, ScenarioResult, Suite } from './types.js';

export const BLIS_VERSION = '0.1.0';

export interface EvaluateOptions {
  /** 1 = the smoke stage only; 2 (default) = stage 1, then the full suite when stage 1 passes. */
  readonly stage?: 1 | 2;
  /** Restrict to these runs (scenario name and seed, of either stage); no cascade then. */
  readonly only?: readonly { readonly scenario: string; readonly seed: number }[] | null;
  /** Attach each scenario run's report data (`report_data`: latency CDFs, time series) for an HTML report. */
  readonly reportData?: boolean;
}

/** Observers of an evaluation in progress (not part of the result or its cache key). */
export interface EvaluateHooks {
  /** After each scenario run: runs done, runs planned (stage 2 counted in until the cascade skips it). */
  readonly onRunDone?: (done: number, total: number) => void;
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

/** The result of a failed candidate: scored 0, the error and the reason as feedback. */
function failure(c: Candidate, suite: Suite, stage: 1 | 2, stagesRun: number[], err: EvaluationError): EvaluationResult {
  return {
    combined_score: 0,
    objectives: Object.fromEntries(suite.objectives.map((o) => [o.name, 0])),
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

/**
 * Evaluates `candidate` on `suite`. Never throws for a candidate's own failure (see the module comment).
 * `runner` decides where the scenario runs happen; the result is the same bytes whichever it is.
 */
export async function evaluateCandidate(candidate: Candidate, suite: Suite, opts: EvaluateOptions = {}, hooks: EvaluateHooks = {}, runner: ScenarioRunner = IN_THREAD): Promise<EvaluationResult> {
  const stage = opts.stage ?? 2;
  let done = 0;
  let planned = 0;
  const plan: { stage: 1 | 2; scenario: Scenario; seed: number }[] = [];
  const only = opts.only ?? null;
  if (only !== null) {
    for (const want of only) {
      const s = [...suite.stage1, ...suite.stage2].find((x) => x.name === want.scenario && x.seeds.includes(want.seed));
      if (s === undefined) throw new ConfigError('bad-flag', `--only ${want.scenario}@${want.seed}: no such scenario and seed in suite ${suite.name}`);
      plan.push({ stage: suite.stage1.includes(s) ? 1 : 2, scenario: s, seed: want.seed });
    }
  }
  let results: ScenarioResult[] = [];
  let digests: RunDigest[] = [];
  const stagesRun: number[] = [];
  const reportData = opts.reportData === true;
  const runStage = async (st: 1 | 2, list: readonly { scenario: Scenario; seed: number }[]): Promise<EvaluationError | null> => {
    stagesRun.push(st);
    const tasks = list.map(({ scenario, seed }): RunTask => ({ candidate, scenario, seed, objectives: suite.objectives, reportData }));
    const outcomes = await runner.runAll(tasks, () => hooks.onRunDone?.(++done, planned));
    for (const o of outcomes) {
      if ('internal' in o) throw new WorkerBug(o.internal);
      if (!o.ok) return o.error;
      results.push(o.result);
      digests.push(o.digest);
    }
    return null;
  };
  const expand = (list: readonly Scenario[]): { scenario: Scenario; seed: number }[] => list.flatMap((s) => s.seeds.map((seed) => ({ scenario: s, seed })));
  let stage1Note = '';
  planned = only !== null ? plan.length : expand(suite.stage1).length + (stage === 2 ? expand(suite.stage2).length : 0);
  if (only !== null) {
    const err = await runStage(stage, plan);
    if (err !== null) return failure(candidate, suite, stage, stagesRun, err);
  } else {
    const err1 = await runStage(1, expand(suite.stage1));
    if (err1 !== null) return failure(candidate, suite, stage, stagesRun, err1);
    const s1 = results.reduce((a, r) => a + r.score, 0) / Math.max(results.length, 1);
    if (stage === 2 && s1 >= suite.stage1Threshold) {
      results = [];
      digests = [];
      const err2 = await runStage(2, expand(suite.stage2));
      if (err2 !== null) return failure(candidate, suite, stage, stagesRun, err2);
    } else if (stage === 2) {
      stage1Note = `Stage 1 score ${s1.toFixed(3)} is below the suite's threshold ${suite.stage1Threshold}: stage 2 was not run.\n\n`;
    }
  }
  const weightOf = (r: ScenarioResult): number => [...suite.stage1, ...suite.stage2].find((s) => s.name === r.scenario)?.weight ?? 1;
  const objectives = weightedMean(results.map((r) => ({ weight: weightOf(r), values: r.objectives })));
  const scores = weightedMean(results.map((r) => ({ weight: weightOf(r), values: r.scores })));
  let total = 0;
  let weights = 0;
  for (const r of results) {
    total += r.score * weightOf(r);
    weights += weightOf(r);
  }
  const summary = summarizeForReflection(digests);
  return {
    combined_score: weights > 0 ? total / weights : 0,
    objectives,
    scores,
    features: features(results),
    scenarios: results,
    artifacts: { summary: stage1Note + summary.summary, worst_decisions: summary.worstDecisions },
    candidate: { id: candidate.id, hash: candidateHash(candidate) },
    suite: { name: suite.name, stage, stages_run: stagesRun },
    blis_version: BLIS_VERSION,
  };
}
