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
import type { SimulationOutputs } from '../sim/run.js';
import { simulateRun } from '../sim/run.js';
import { parseSimulationConfig } from '../sim/simulate.js';
import type { SimEnv } from '../sim/env.js';
import { ConfigError } from '../sim/config-error.js';
import { anomalyReport } from '../sim/policy-report.js';
import { gpuUsage } from '../sim/scaling-report.js';
import { rawMetrics, scoreRun } from './fitness.js';
import { summarizeForReflection, type RunForSummary } from './summary.js';
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

interface Run {
  readonly result: ScenarioResult;
  readonly summary: RunForSummary;
}

const CANDIDATE_FILE = 'candidate.yaml';

async function runOne(c: Candidate, suite: Suite, s: Scenario, seed: number, reportData: boolean): Promise<Run> {
  const files: Record<string, string> = { ...s.files, ...c.files, [CANDIDATE_FILE]: c.bundle };
  const config = {
    mode: 'run' as const,
    ...s.config,
    seed,
    policyConfig: CANDIDATE_FILE,
    traceLevel: 'decisions',
    counterfactualK: 3,
    ...(reportData ? { reportData: true } : {}),
    files,
  };
  const { values } = parseSimulationConfig(config);
  const env: SimEnv = {
    readText: (path, option) => {
      const text = files[path];
      if (text === undefined) throw new ConfigError('missing-file', `${option}: "${path}" is not part of the candidate or the scenario`);
      return text;
    },
    warn: () => undefined,
  };
  const out: SimulationOutputs = await simulateRun(values, env, undefined, { prefixAudit: true });
  const anomalies = anomalyReport({
    cs: out.cluster, recorder: out.recorder, requests: out.requests, metadata: null, evolvable: null, traceLevel: 'decisions',
    goodputTargets: null, priorityScheduling: values.str('scheduler') === 'priority-fcfs',
  });
  const metrics = rawMetrics({
    cs: out.cluster,
    output: out.report.clusterOutput,
    anomalies: anomalies.counts,
    simEndedUs: out.report.aggregate.simEndedTime,
    usage: gpuUsage(out.cluster, out.report.aggregate.simEndedTime),
    slo: s.slo,
  });
  const scored = scoreRun(metrics, suite.objectives);
  const result: ScenarioResult = {
    scenario: s.name,
    seed,
    key: { policy_id: c.id, workload_seed: seed, sim_seed: seed, jitter_seed: 0 },
    metrics,
    objectives: scored.objectives,
    scores: scored.scores,
    score: scored.score,
    anomalies: anomalies.counts,
    ...(reportData ? { report_data: out.report.jsonExtras['report_data'] } : {}),
  };
  return {
    result,
    summary: { scenario: s.name, seed, cs: out.cluster, recorder: out.recorder, requests: out.requests, anomalies, slo: s.slo, objectives: scored.objectives, scores: scored.scores },
  };
}

/** The error of a failed candidate, from what was thrown (null: not the candidate's fault, rethrow). */
function candidateError(e: unknown): EvaluationError | null {
  if (!(e instanceof Error)) return null;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  return { code, message: e.message };
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

/** Evaluates `candidate` on `suite`. Never throws for a candidate's own failure (see the module comment). */
export async function evaluateCandidate(candidate: Candidate, suite: Suite, opts: EvaluateOptions = {}, hooks: EvaluateHooks = {}): Promise<EvaluationResult> {
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
  const runs: Run[] = [];
  const stagesRun: number[] = [];
  const runStage = async (st: 1 | 2, list: readonly { scenario: Scenario; seed: number }[]): Promise<EvaluationError | null> => {
    stagesRun.push(st);
    for (const { scenario, seed } of list) {
      try {
        runs.push(await runOne(candidate, suite, scenario, seed, opts.reportData === true));
        hooks.onRunDone?.(++done, planned);
      } catch (e) {
        const err = candidateError(e);
        if (err === null) throw e;
        return err;
      }
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
    const s1 = runs.reduce((a, r) => a + r.result.score, 0) / Math.max(runs.length, 1);
    if (stage === 2 && s1 >= suite.stage1Threshold) {
      runs.length = 0;
      const err2 = await runStage(2, expand(suite.stage2));
      if (err2 !== null) return failure(candidate, suite, stage, stagesRun, err2);
    } else if (stage === 2) {
      stage1Note = `Stage 1 score ${s1.toFixed(3)} is below the suite's threshold ${suite.stage1Threshold}: stage 2 was not run.\n\n`;
    }
  }
  const results = runs.map((r) => r.result);
  const weightOf = (r: ScenarioResult): number => [...suite.stage1, ...suite.stage2].find((s) => s.name === r.scenario)?.weight ?? 1;
  const objectives = weightedMean(results.map((r) => ({ weight: weightOf(r), values: r.objectives })));
  const scores = weightedMean(results.map((r) => ({ weight: weightOf(r), values: r.scores })));
  let total = 0;
  let weights = 0;
  for (const r of results) {
    total += r.score * weightOf(r);
    weights += weightOf(r);
  }
  const summary = summarizeForReflection(runs.map((r) => r.summary));
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
