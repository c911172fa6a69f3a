/**
 * One scenario run of a candidate: simulate, measure, score, and digest what the reflection summary needs.
 * The unit of work of an evaluation, in this thread or in a pool worker: everything it takes and returns is
 * plain, structured-clonable data, so both give the same bytes.
 */
import { optionControlPoint } from '../policy/control-points.js';
import type { ControlPoint } from '../policy/view.js';
import { ConfigError } from '../sim/config-error.js';
import type { SimEnv } from '../sim/env.js';
import { anomalyReport } from '../sim/policy-report.js';
import { simulateRun } from '../sim/run.js';
import { WallClockError } from '../policy/errors.js';
import { gpuUsage } from '../sim/scaling-report.js';
import { parseSimulationConfig } from '../sim/simulate.js';
import { digestRun, type RunDigest } from './digest.js';
import { rawMetrics, scoreRun } from './fitness.js';
import type { Candidate, EvaluationError, Objective, Scenario, ScenarioResult } from './types.js';

export interface RunTask {
  readonly candidate: Candidate;
  readonly scenario: Scenario;
  readonly seed: number;
  readonly objectives: readonly Objective[];
  /** The suite's policy defaults (Suite.defaults): options for the control points the candidate leaves unset. */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** The control points the candidate's bundle sets (policy/control-points.ts; null: it does not parse), read once per evaluation. */
  readonly candidatePoints: readonly ControlPoint[] | null;
  /** Attach the run's report data (latency CDFs, time series) to its result. */
  readonly reportData: boolean;
  /** The run's wall-clock backstop with fast-engine code (RunOptions.wallClockMs; not part of the memo key). */
  readonly wallClockMs?: number;
}

/**
 * A run's outcome: its result and digest; the candidate's failure (scored, like any other broken candidate);
 * or, from a pool worker, `internal`: a bug of the simulator or evaluator (thrown again by the caller, never
 * scored).
 */
export type RunOutcome =
  | { readonly ok: true; readonly result: ScenarioResult; readonly digest: RunDigest }
  | { readonly ok: false; readonly error: EvaluationError }
  | { readonly ok: false; readonly internal: string };

const CANDIDATE_FILE = 'candidate.yaml';

/** The error of a failed candidate, from what was thrown (null: not the candidate's fault). */
function candidateError(e: unknown): EvaluationError | null {
  if (!(e instanceof Error)) return null;
  // The wall-clock backstop is a fact about this evaluation, not the candidate: EVAL_TIMEOUT, never cached.
  if (e instanceof WallClockError) return { code: 'EVAL_TIMEOUT', message: e.message };
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  return { code, message: e.message };
}

/** The suite's default policy options for the control points the candidate leaves unset (all of them when its bundle does not parse). */
function defaultsFor(points: readonly ControlPoint[] | null, defaults: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const keys = Object.keys(defaults);
  if (keys.length === 0) return {};
  const set = new Set(points ?? []);
  return Object.fromEntries(keys.filter((k) => !set.has(optionControlPoint(k) as ControlPoint)).map((k) => [k, defaults[k]]));
}

async function simulateScenario(t: RunTask): Promise<{ result: ScenarioResult; digest: RunDigest }> {
  const { candidate: c, scenario: s, seed, reportData } = t;
  const files: Record<string, string> = { ...s.files, ...c.files, [CANDIDATE_FILE]: c.bundle };
  const config = {
    mode: 'run' as const,
    ...defaultsFor(t.candidatePoints, t.defaults),
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
  const out = await simulateRun(values, env, undefined, { prefixAudit: true, ...(t.wallClockMs === undefined ? {} : { wallClockMs: t.wallClockMs }) });
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
  const scored = scoreRun(metrics, t.objectives);
  const result: ScenarioResult = {
    scenario: s.name,
    seed,
    key: { policy_id: c.id, workload_seed: seed, sim_seed: seed, jitter_seed: 0 },
    metrics,
    objectives: scored.objectives,
    scores: scored.scores,
    score: scored.score,
    objective_score: scored.score,
    constraint_factor: 1,
    constraints: [],
    anomalies: anomalies.counts,
    ...(reportData ? { report_data: out.report.jsonExtras['report_data'] } : {}),
  };
  const digest = digestRun({ scenario: s.name, seed, cs: out.cluster, recorder: out.recorder, requests: out.requests, anomalies, slo: s.slo, objectives: scored.objectives, scores: scored.scores });
  return { result, digest };
}

/** Runs one scenario × seed: a candidate's failure is an outcome; a bug throws. */
export async function runScenario(t: RunTask): Promise<RunOutcome> {
  try {
    const { result, digest } = await simulateScenario(t);
    return { ok: true, result, digest };
  } catch (e) {
    const error = candidateError(e);
    if (error === null) throw e;
    return { ok: false, error };
  }
}
