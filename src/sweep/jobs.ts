/**
 * Jobs: one simulation (a sweep point) or one evaluation (a candidate on a suite), named by their content —
 * the whole configuration (files included) and the blis-ts version — so the same work anywhere has the same
 * id: a queue that already holds its result never runs it again.
 */
import { createHash } from 'node:crypto';
import { BLIS_VERSION, candidateHash, evaluateCandidate, ResultCache, type Candidate, type EvaluateOptions, type EvaluationResult, type Suite } from '../evaluate/index.js';
import { simulate, type SimulationConfig } from '../sim/simulate.js';
import { flattenMetrics } from './metrics.js';
import type { EvaluationJob, JobError, JobSpec, PointResult, SimulationJob } from './types.js';

/** JSON with every object's keys sorted: the same content gives the same text whatever the key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x ?? null)).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  if (typeof v === 'bigint') return JSON.stringify(v.toString());
  return JSON.stringify(v) ?? 'null';
}

/** `wallClockMs` > 0: the point's in-run wall-clock budget (sweep --timeout-s), see SimulationJob. */
export function simulationJob(config: Readonly<Record<string, unknown>>, wallClockMs = 0): SimulationJob {
  return wallClockMs > 0 ? { kind: 'simulate', version: BLIS_VERSION, config, wallClockMs } : { kind: 'simulate', version: BLIS_VERSION, config };
}

export function evaluationJob(candidate: Candidate, suite: Suite, opts: EvaluateOptions): EvaluationJob {
  return { kind: 'evaluate', version: BLIS_VERSION, candidate, suite, opts };
}

/** The job's content address (BullMQ ids may not contain ':'). */
export function jobId(job: JobSpec): string {
  if (job.kind === 'evaluate') return `eval-${ResultCache.key(job.candidate, job.suite, job.opts).slice(0, 40)}`;
  return `sim-${createHash('sha256').update(canonicalJson({ kind: job.kind, version: job.version, config: job.config })).digest('hex').slice(0, 40)}`;
}

function isCoded(e: unknown): e is Error & { code: string } {
  return e instanceof Error && typeof (e as { code?: unknown }).code === 'string';
}

/** A failure that is not a result: the job's code broke (a bug) — reported, never cached. */
export class JobInternalError extends Error {
  readonly code = 'INTERNAL';
  constructor(message: string) {
    super(message);
    this.name = 'JobInternalError';
  }
}

/**
 * A point stopped by the fast engine's wall-clock backstop: a fact about this machine and moment, not the point —
 * the job fails (EVAL_TIMEOUT, as an evaluation over its budget), never cached.
 */
export class JobTimeoutError extends Error {
  readonly code = 'EVAL_TIMEOUT';
  constructor(message: string) {
    super(message);
    this.name = 'JobTimeoutError';
  }
}

/**
 * One sweep point: `simulate()` and its metrics flattened. A configuration the simulator refuses is a result
 * too (`{error}`): the same config fails the same way everywhere. Anything else is a {@link JobInternalError}.
 */
export async function runSimulation(job: SimulationJob): Promise<PointResult> {
  try {
    // Sweep points are validated by the same schema at run time (checkSimulation before queueing).
    const r = await simulate(job.config as unknown as SimulationConfig, job.wallClockMs === undefined ? {} : { wallClockMs: job.wallClockMs });
    return { metrics: flattenMetrics(r.metrics as unknown as Readonly<Record<string, unknown>>) };
  } catch (e) {
    if (e instanceof Error && e.name === 'WallClockError') throw new JobTimeoutError(e.message.replace(/\s*\n\s*/g, ' '));
    if (isCoded(e)) return { error: { code: e.code, message: e.message.replace(/\s*\n\s*/g, ' ') } };
    throw new JobInternalError(`internal: ${e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e)}`);
  }
}

/** A job in this thread (no pool): what a worker computes, JSON-round-tripped like a queued result. */
export async function runJobInProcess(job: JobSpec): Promise<unknown> {
  const value: PointResult | EvaluationResult = job.kind === 'simulate' ? await runSimulation(job) : await evaluateCandidate(job.candidate, job.suite, job.opts);
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** Infrastructure failures of an evaluation (not facts about the candidate): the job fails, nothing is cached. */
export function evaluationFailure(r: EvaluationResult): JobError | null {
  const code = r.error?.code;
  return code === 'EVAL_TIMEOUT' || code === 'EVAL_WORKER_DIED' ? { code, message: r.error?.message ?? code } : null;
}

/** The scored failure an evaluation job that did not finish stands for (as the pool gives for a dead worker). */
export function failedEvaluation(job: EvaluationJob, error: JobError): EvaluationResult {
  const zeros = Object.fromEntries(job.suite.objectives.map((o) => [o.name, 0]));
  return {
    combined_score: 0,
    combined_score_se: null,
    combined_score_ci95: null,
    constraints: {},
    objectives: {},
    scores: zeros,
    features: {},
    scenarios: [],
    artifacts: { summary: `## Outcome\n- The candidate failed; it was scored 0.\n\n## Error\n${error.message}\n`, worst_decisions: '' },
    candidate: { id: job.candidate.id, hash: candidateHash(job.candidate) },
    suite: { name: job.suite.name, stage: job.opts.stage ?? 2, stages_run: [] },
    blis_version: job.version,
    error: { code: error.code, message: error.message },
  };
}
