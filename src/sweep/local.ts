/**
 * Jobs on this machine: in this thread (one worker, no budget), or on the evaluation layer's piscina pool —
 * sweep points through this layer's worker module, evaluations through the pool's own. Each outcome is what a
 * queued run gives for the same job (a result, or a failure that is never cached).
 */
import { fileURLToPath } from 'node:url';
import { EvaluationPool, PoolTaskFailure } from '../evaluate/pool.js';
import { evaluationFailure, JobInternalError, JobTimeoutError, runJobInProcess } from './jobs.js';
import type { JobOutcome, JobRunner, JobSpec } from './types.js';
import type { WorkerReply } from './worker.js';

/**
 * The built worker module, dist/sweep/worker.js (an entry point of the bundle). This code may sit in any bundle
 * chunk under dist/, or in src/ when tests run from sources (they use the build beside them).
 */
export function sweepWorkerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return here.replace(/\/src\/sweep\/local\.ts$/, '/dist/sweep/worker.js');
  return `${here.slice(0, here.lastIndexOf('/dist/') + '/dist/'.length)}sweep/worker.js`;
}

export interface LocalOptions {
  /** Threads (1 = in this thread unless a budget is set). */
  readonly workers: number;
  /** Wall-clock budget per job in ms (0 = none); needs the pool. */
  readonly timeoutMs: number;
  /** Run on threads even with one worker (keeps this thread's event loop free, as a queue worker needs). */
  readonly threads?: boolean;
  /** Heap limit of each thread (MB; the pool's default, 2048, when absent): a job over it fails with EVAL_WORKER_DIED. */
  readonly heapMb?: number;
}

function roundTrip(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why a payload is not a job blis queues (a queue worker runs whatever Redis holds), or null: the kind, and for
 * an evaluation the top-level shapes of its candidate, suite and options (a simulation's config is checked by
 * simulate()'s schema).
 */
function malformedJob(job: unknown): string | null {
  const kind = isObject(job) ? job.kind : undefined;
  if (kind === 'simulate') return null;
  if (kind !== 'evaluate') return `unknown job kind ${JSON.stringify(kind) ?? 'undefined'} (expected "simulate" or "evaluate")`;
  const j = job as Record<string, unknown>;
  const c = j.candidate;
  if (!isObject(c) || typeof c.id !== 'string' || typeof c.label !== 'string' || typeof c.bundle !== 'string' || !isObject(c.files)) return 'an evaluation job without a candidate {id, label, bundle, files}';
  const s = j.suite;
  if (!isObject(s) || typeof s.name !== 'string' || !Array.isArray(s.stage1) || !Array.isArray(s.stage2) || !Array.isArray(s.objectives) || !Array.isArray(s.constraints)) return 'an evaluation job without a suite {name, stage1, stage2, objectives, constraints}';
  if (!isObject(j.opts)) return 'an evaluation job without its options';
  return null;
}

export class LocalRunner implements JobRunner {
  private readonly pool: EvaluationPool | null;

  constructor(private readonly opts: LocalOptions) {
    this.pool = opts.workers > 1 || opts.timeoutMs > 0 || opts.threads === true ? new EvaluationPool({ workers: opts.workers, timeoutMs: opts.timeoutMs, ...(opts.heapMb === undefined ? {} : { maxOldGenerationSizeMb: opts.heapMb }) }) : null;
  }

  /** One job; never rejects for the job's own failures. */
  async run(job: JobSpec): Promise<JobOutcome> {
    // A payload blis did not queue (a queue worker reads whatever Redis holds): refused as a configuration.
    const malformed = malformedJob(job);
    if (malformed !== null) return { ok: true, value: { error: { code: 'bad-config', message: `${malformed}: this job was not queued by blis` } } };
    try {
      if (this.pool === null) return { ok: true, value: await runJobInProcess(job) };
      if (job.kind === 'evaluate') {
        const r = await this.pool.run(job.candidate, job.suite, job.opts);
        const failure = evaluationFailure(r);
        return failure === null ? { ok: true, value: roundTrip(r) } : { ok: false, error: failure };
      }
      const reply = (await this.pool.runModule(sweepWorkerFile(), job)) as WorkerReply;
      if ('timeout' in reply) return { ok: false, error: { code: 'EVAL_TIMEOUT', message: reply.timeout } };
      return 'internal' in reply ? { ok: false, error: { code: 'INTERNAL', message: reply.internal } } : { ok: true, value: roundTrip(reply.result) };
    } catch (e) {
      if (e instanceof PoolTaskFailure || e instanceof JobInternalError || e instanceof JobTimeoutError) return { ok: false, error: { code: e.code, message: e.message } };
      // Anything else is a bug (or a payload the shape check let through): this job's INTERNAL row, never a
      // rejection that would end every other job of the sweep or the queue worker's loop.
      return { ok: false, error: { code: 'INTERNAL', message: `internal: ${e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e)}` } };
    }
  }

  /** All jobs, at most a few per thread in flight (memory stays bounded on big sweeps); outcomes in job order. */
  async runAll(jobs: readonly JobSpec[], onDone?: (index: number, outcome: JobOutcome, cached: boolean) => void, signal?: AbortSignal): Promise<JobOutcome[]> {
    const out = new Array<JobOutcome>(jobs.length);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < jobs.length && signal?.aborted !== true) {
        const i = next++;
        const o = await this.run(jobs[i] as JobSpec);
        out[i] = o;
        onDone?.(i, o, false);
        // In-thread runs block the event loop per job: let signals and progress through between jobs.
        if (this.pool === null) await new Promise<void>((r) => setImmediate(r));
      }
    };
    const lanes = this.pool === null ? 1 : this.opts.workers * 2;
    await Promise.all(Array.from({ length: Math.min(lanes, jobs.length) }, () => lane()));
    if (signal?.aborted === true) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
    return out;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
