/**
 * A queue worker: takes jobs from the queue and runs them on this machine's thread pool (`concurrency`
 * threads), so its event loop stays free to renew job locks. A worker that dies mid-job loses nothing: its
 * lock expires and another worker's stalled-job check puts the job back (up to `maxStalls` times, then the job
 * fails with that reason). A job's failure (a dead thread, its budget, a bug) is recorded as `CODE: message`;
 * one attempt per job, since the same job fails the same way again.
 */
import { hostname } from 'node:os';
import { Queue, Worker, type Job } from 'bullmq';
import { BlisError } from '../domain/errors.js';
import { BLIS_VERSION } from '../evaluate/index.js';
import { jobId } from '../sweep/jobs.js';
import { LocalRunner } from '../sweep/local.js';
import type { JobSpec } from '../sweep/types.js';
import { closeWithin, connectionOptions, DeadlineError, RedisHealth, withDeadline, type QueueTarget, type TlsFiles } from './connection.js';

export interface QueueWorkerOptions {
  readonly target: QueueTarget;
  readonly tls?: TlsFiles;
  readonly queueName: string;
  /** Jobs at once (threads). */
  readonly concurrency: number;
  /** Wall-clock budget per job (ms; 0 = none). */
  readonly timeoutMs: number;
  /** Heap limit of each job's thread (MB): a job over it fails with EVAL_WORKER_DIED, the worker goes on. */
  readonly heapMb?: number;
  /** How long a job's lock lives without renewal (ms): a dead worker's job is noticed after about this long. */
  readonly lockDurationMs: number;
  /** How often this worker looks for stalled jobs (ms). */
  readonly stalledIntervalMs: number;
  /** Times a job may be put back after its worker stopped; one more and it fails. */
  readonly maxStalls: number;
  /** Exit once Redis has been unreachable this long (ms; 0 = keep retrying). */
  readonly redisTimeoutMs: number;
  readonly log: (line: string) => void;
  readonly warn: (line: string) => void;
}

export interface WorkerTally {
  completed: number;
  failed: number;
}

/** Runs until `signal` aborts (then finishes the jobs in hand) or Redis stays away too long (then throws). */
export async function runQueueWorker(opts: QueueWorkerOptions, signal: AbortSignal): Promise<WorkerTally> {
  const control = { stopped: false };
  const connection = connectionOptions(opts.target, opts.tls, control);
  const runner = new LocalRunner({ workers: opts.concurrency, timeoutMs: opts.timeoutMs, threads: true, ...(opts.heapMb === undefined ? {} : { heapMb: opts.heapMb }) });
  const health = new RedisHealth(opts.target);
  health.onChange((up, error) => (up ? opts.warn(`connected to Redis at ${opts.target.display}`) : opts.warn(`lost Redis at ${opts.target.display} (${error}); retrying with backoff${opts.redisTimeoutMs > 0 ? ` for up to ${Math.round(opts.redisTimeoutMs / 1000)} s` : ''}`)));
  const tally: WorkerTally = { completed: 0, failed: 0 };
  const processor = async (job: Job): Promise<unknown> => {
    const spec = job.data as JobSpec;
    if (spec?.version !== BLIS_VERSION) throw new Error(`VERSION_MISMATCH: this worker runs blis-ts ${BLIS_VERSION} and the job was queued by ${String(spec?.version)}; run workers of the submitter's version`);
    if (job.id !== jobId(spec)) throw new Error(`JOB_MISMATCH: job ${job.id} does not hold the content its id names; it was not queued by blis`);
    const t0 = performance.now();
    opts.log(`start ${job.id} (${spec.kind})`);
    const o = await runner.run(spec);
    const ms = Math.round(performance.now() - t0);
    if (!o.ok) {
      tally.failed++;
      opts.log(`failed ${job.id} after ${ms} ms: ${o.error.code}`);
      throw new Error(`${o.error.code}: ${o.error.message}`);
    }
    tally.completed++;
    opts.log(`done ${job.id} in ${ms} ms`);
    return o.value;
  };
  const worker = new Worker(opts.queueName, processor, {
    connection,
    name: `${hostname()}:${process.pid}`,
    concurrency: opts.concurrency,
    lockDuration: opts.lockDurationMs,
    stalledInterval: opts.stalledIntervalMs,
    maxStalledCount: opts.maxStalls,
    autorun: false,
  });
  worker.on('error', (e: Error) => health.down(e.message));
  worker.on('stalled', (id: string) => opts.log(`stalled ${id}: its worker stopped answering; queued again`));
  // A plain connection answers the health checks (the worker's own block on the queue).
  const probe = new Queue(opts.queueName, { connection });
  probe.on('error', (e: Error) => health.down(e.message));
  const state: { failure: BlisError | null } = { failure: null };
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  let giveUp = (): void => undefined;
  const gaveUp = new Promise<void>((resolve) => (giveUp = resolve));
  let probing = false;
  const watch = setInterval(() => {
    if (!probing) {
      probing = true;
      withDeadline(probe.getJobCounts('active'), 5000, 'health check').then(() => health.up(), (e: Error) => health.down(e instanceof DeadlineError && health.error !== '' ? '' : e.message)).finally(() => (probing = false));
    }
    if (state.failure === null) {
      state.failure = health.refused() ?? (opts.redisTimeoutMs > 0 && health.downForMs() >= opts.redisTimeoutMs ? health.unavailable(opts.redisTimeoutMs, 'this worker stops; its jobs in hand are retried by other workers') : null);
      if (state.failure !== null) giveUp();
    }
  }, 1000);
  const running = worker.run().catch((e: unknown) => health.down(e instanceof Error ? e.message : String(e)));
  opts.warn(`worker ${hostname()}:${process.pid} on queue "${opts.queueName}" at ${opts.target.display}: ${opts.concurrency} job(s) at a time`);
  await Promise.race([stopped, running, gaveUp]);
  clearInterval(watch);
  const failure = state.failure;
  if (failure === null) {
    if (signal.aborted) opts.warn('stopping: finishing the jobs in hand (Ctrl-C again to stop at once; they are then retried elsewhere)');
    // Graceful: the jobs in hand finish and are reported (a second Ctrl-C exits at once).
    await worker.close().catch(() => undefined);
  } else {
    // Redis is gone: stop reconnecting and drop the connections; the jobs in hand become stalled and are
    // retried by other workers once Redis is back.
    control.stopped = true;
    if (!(await closeWithin(() => worker.close(true), 2000))) await closeWithin(() => worker.disconnect(), 2000);
  }
  control.stopped = true;
  if (!(await closeWithin(() => probe.close(), 2000))) await closeWithin(() => probe.disconnect(), 2000);
  await runner.close();
  if (failure !== null) throw failure;
  return tally;
}
