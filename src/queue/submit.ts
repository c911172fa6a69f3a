/**
 * Jobs through a BullMQ queue on Redis: the submitting side. Each job is added under its content address, so
 * a job the queue already finished is collected, not run again (a resubmitted or resumed sweep), and one
 * that failed in an earlier run is retried. Results arrive through the queue's event stream and a periodic
 * reconciliation of every pending job's state (events can be missed across a reconnection); a job that
 * vanished (Redis restarted without persistence, `blis queue clean`) is queued again.
 *
 * Never waits forever: every Redis operation has a deadline; an unreachable Redis is retried with backoff for
 * `redisTimeoutMs`, then the run fails with QUEUE_UNAVAILABLE; with no worker connected for
 * `noWorkerTimeoutMs`, it fails with QUEUE_NO_WORKERS. Interrupted (the signal), it stops waiting: what is
 * queued stays queued and consistent, and a rerun collects it.
 */
import { Job, Queue, QueueEvents } from 'bullmq';
import { BlisError } from '../domain/errors.js';
import { jobId } from '../sweep/jobs.js';
import type { JobError, JobOutcome, JobRunner, JobSpec } from '../sweep/types.js';
import { backoffMs, closeWithin, connectionOptions, DeadlineError, RedisHealth, withDeadline, type QueueTarget, type TlsFiles } from './connection.js';

export const QUEUE_NO_WORKERS = 'QUEUE_NO_WORKERS';

export interface QueueRunnerOptions {
  readonly target: QueueTarget;
  readonly tls?: TlsFiles;
  readonly queueName: string;
  /** Give up once Redis has been unreachable this long (ms). */
  readonly redisTimeoutMs: number;
  /** Give up when no worker has been connected this long while jobs wait (ms; 0 = wait for workers forever). */
  readonly noWorkerTimeoutMs: number;
  /** Full reconciliation interval (ms). */
  readonly pollMs?: number;
  readonly warn: (message: string) => void;
}

/** Options every job is added with: results are kept (they are the cache), one attempt (see the worker). */
export const JOB_OPTIONS = { removeOnComplete: false, removeOnFail: false, attempts: 1 } as const;

/** The code of a job that its workers died running more often than `--max-stalls` allows. */
export const JOB_POISON = 'JOB_POISON';

/**
 * A failed job's reason as `CODE: message` (the worker writes it so); BullMQ's own reasons get a code here.
 * BullMQ fails a job whose worker stopped renewing its lock (died, or lost Redis) once more than the workers'
 * `maxStalledCount`: a poison job, one that kills its worker, would otherwise take down every worker in turn.
 * `stalls` is the number of times that happened (BullMQ's `stc` field), when known.
 */
export function parseFailure(reason: string, stalls?: number): JobError {
  const m = /^([A-Z][A-Z0-9_]+): ([\s\S]*)$/.exec(reason);
  if (m !== null) return { code: m[1] as string, message: m[2] as string };
  if (/stalled more than allowable limit/.test(reason)) {
    const times = stalls === undefined || !Number.isFinite(stalls) || stalls < 1 ? 'more often than --max-stalls allows' : stalls === 1 ? 'once (--max-stalls 0)' : stalls === 2 ? 'twice' : `${stalls} times`;
    return { code: JOB_POISON, message: `the job killed its worker ${times} (each worker running it died or stopped answering: out of memory, killed, or cut off from Redis); it is not run again in this run; a resubmission retries it (${reason})` };
  }
  return { code: 'JOB_FAILED', message: reason };
}

const OP_TIMEOUT_MS = 10_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  }));
  return out;
}

export class QueueRunner implements JobRunner {
  private readonly control = { stopped: false };
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  readonly health: RedisHealth;
  private readonly woken = new Set<string>();
  private wake: (() => void) | null = null;

  constructor(private readonly opts: QueueRunnerOptions) {
    const connection = connectionOptions(opts.target, opts.tls, this.control);
    this.health = new RedisHealth(opts.target);
    this.queue = new Queue(opts.queueName, { connection });
    this.events = new QueueEvents(opts.queueName, { connection });
    this.queue.on('error', (err: Error) => this.health.down(err.message));
    this.events.on('error', (err: Error) => this.health.down(err.message));
    const notify = ({ jobId: id }: { jobId: string }): void => {
      this.woken.add(id);
      this.wake?.();
    };
    this.events.on('completed', notify);
    this.events.on('failed', notify);
    this.health.onChange((up, error) => opts.warn(up ? `Redis at ${opts.target.display} answers again` : `lost Redis at ${opts.target.display} (${error}); retrying with backoff for up to ${Math.round(opts.redisTimeoutMs / 1000)} s`));
  }

  /** One Redis operation with a deadline, retried with backoff while Redis is away (up to the timeout). */
  private async call<T>(what: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.health.check(0, '');
      try {
        const v = await Promise.race([withDeadline(fn(), Math.min(OP_TIMEOUT_MS, Math.max(1000, this.opts.redisTimeoutMs)), what), this.health.whenRefused()]);
        this.health.up();
        return v;
      } catch (e) {
        const msg = (e as Error).message;
        // A command Redis answered with an error is not an outage.
        if (/^(ERR|WRONGTYPE|NOSCRIPT|Missing|Job )/.test(msg) || e instanceof BlisError) throw e;
        // A deadline says less than the connection's own error (ECONNREFUSED ...): keep that one.
        this.health.down(e instanceof DeadlineError && this.health.error !== '' ? '' : msg);
        this.health.check(this.opts.redisTimeoutMs, 'rerun the same command once Redis is back: finished jobs are kept and not run again');
        if (signal?.aborted === true) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
        await sleep(backoffMs(attempt));
      }
    }
  }

  private async add(entries: readonly [string, JobSpec][], signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < entries.length; i += 200) {
      // Each job is added by one atomic script (a chunk is one pipeline): an interruption leaves whole jobs.
      const chunk = entries.slice(i, i + 200);
      await this.call('add jobs', () => this.queue.addBulk(chunk.map(([id, job]) => ({ name: job.kind, data: job, opts: { ...JOB_OPTIONS, jobId: id } }))), signal);
      if (signal?.aborted === true) return;
    }
  }

  /** The end of a job, or null while it is pending; 'missing' when the queue no longer holds it. */
  private async settled(id: string): Promise<JobOutcome | 'missing' | null> {
    const state = await this.call('job state', () => this.queue.getJobState(id));
    if (state === 'unknown') return 'missing';
    if (state !== 'completed' && state !== 'failed') return null;
    const [returnvalue, failedReason, stalls] = await this.call('job result', () => this.resultFields(id));
    if (state === 'completed') return returnvalue === null ? 'missing' : { ok: true, value: JSON.parse(returnvalue) as unknown };
    return { ok: false, error: parseFailure(failedReason ?? 'failed', stalls === null ? undefined : Number(stalls)) };
  }

  /**
   * A finished job's result, failure reason and stall count, without its data (a job carries its
   * configuration's files, which may be large): three fields of the job's hash, where BullMQ keeps them.
   */
  private async resultFields(id: string): Promise<[string | null, string | null, string | null]> {
    const backend = this.queue.getBackend() as unknown as { client?: Promise<{ hmget?(key: string, ...fields: string[]): Promise<(string | null)[]> }> };
    const client = await backend.client;
    if (client?.hmget !== undefined) {
      const [r, f, stc] = await client.hmget(this.queue.toKey(id), 'returnvalue', 'failedReason', 'stc');
      return [r ?? null, f ?? null, stc ?? null];
    }
    const job = await Job.fromId(this.queue, id);
    return [job === undefined ? null : JSON.stringify(job.returnvalue), job?.failedReason ?? null, job === undefined ? null : String(job.stalledCounter)];
  }

  async runAll(jobs: readonly JobSpec[], onDone?: (index: number, outcome: JobOutcome, cached: boolean) => void, signal?: AbortSignal): Promise<JobOutcome[]> {
    const aborted = (): boolean => signal?.aborted === true;
    const stop = (): never => {
      throw signal?.reason instanceof Error ? signal.reason : new Error('aborted');
    };
    const indices = new Map<string, number[]>();
    const specs = new Map<string, JobSpec>();
    jobs.forEach((j, i) => {
      const id = jobId(j);
      if (!specs.has(id)) specs.set(id, j);
      indices.set(id, [...(indices.get(id) ?? []), i]);
    });
    const out = new Array<JobOutcome>(jobs.length);
    const pending = new Set(specs.keys());
    const finish = (id: string, o: JobOutcome, cached: boolean): void => {
      if (!pending.delete(id)) return;
      for (const i of indices.get(id) ?? []) {
        out[i] = o;
        onDone?.(i, o, cached);
      }
    };
    await this.call('connect', () => Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]), signal);
    // What the queue already holds: finished results are collected, earlier failures retried, the rest added.
    const ids = [...specs.keys()];
    const first = await mapLimit(ids, 64, async (id) => (aborted() ? null : this.settled(id)));
    if (aborted()) stop();
    const toAdd: [string, JobSpec][] = [];
    const toRetry: string[] = [];
    ids.forEach((id, k) => {
      const s = first[k];
      if (s === 'missing') toAdd.push([id, specs.get(id) as JobSpec]);
      else if (s !== null && s !== undefined && s.ok) finish(id, s, true);
      else if (s !== null && s !== undefined) toRetry.push(id);
    });
    await this.add(toAdd, signal);
    if (aborted()) stop();
    await mapLimit(toRetry, 16, async (id) => {
      const job = await this.call('job', () => Job.fromId(this.queue, id), signal);
      await this.call('retry job', () => job?.retry('failed') ?? Promise.resolve(), signal).catch(() => undefined);
    });
    const pollMs = this.opts.pollMs ?? 2000;
    let lastFull = performance.now();
    let lastWorkerCheck = 0;
    let noWorkersSince: number | null = null;
    let warnedNoWorkers = false;
    let warnedMissing = false;
    while (pending.size > 0) {
      if (aborted()) stop();
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(t);
          signal?.removeEventListener('abort', wake);
          this.wake = null;
          resolve();
        };
        const t = setTimeout(wake, this.woken.size > 0 ? 0 : Math.min(pollMs, 500));
        this.wake = wake;
        signal?.addEventListener('abort', wake, { once: true });
      });
      if (aborted()) stop();
      const now = performance.now();
      const full = now - lastFull >= pollMs;
      const check = full ? [...pending] : [...this.woken].filter((id) => pending.has(id));
      this.woken.clear();
      if (full) lastFull = now;
      const states = await mapLimit(check, 64, (id) => this.settled(id));
      const lost: [string, JobSpec][] = [];
      check.forEach((id, k) => {
        const s = states[k];
        if (s === 'missing') lost.push([id, specs.get(id) as JobSpec]);
        else if (s !== null && s !== undefined) finish(id, s, false);
      });
      if (lost.length > 0) {
        if (!warnedMissing) this.opts.warn(`${lost.length} job(s) vanished from the queue (Redis restarted without persistence, or the queue was cleaned); queued again`);
        warnedMissing = true;
        await this.add(lost, signal);
      }
      if (now - lastWorkerCheck >= 5000 && pending.size > 0) {
        lastWorkerCheck = now;
        const workers = await this.call('workers', () => this.queue.getWorkersCount(), signal);
        if (workers > 0) noWorkersSince = null;
        else {
          noWorkersSince ??= now;
          const idle = now - noWorkersSince;
          if (!warnedNoWorkers && idle >= 10_000) {
            warnedNoWorkers = true;
            this.opts.warn(`no worker is connected to queue "${this.opts.queueName}" at ${this.opts.target.display}; start some with: blis worker --queue ${this.opts.target.display}`);
          }
          if (this.opts.noWorkerTimeoutMs > 0 && idle >= this.opts.noWorkerTimeoutMs) {
            throw new BlisError(QUEUE_NO_WORKERS, `no worker connected to queue "${this.opts.queueName}" at ${this.opts.target.display} for ${Math.round(idle / 1000)} s with ${pending.size} job(s) waiting; start workers (blis worker --queue ${this.opts.target.display}) and rerun the same command: finished jobs are kept`);
          }
        }
      }
    }
    return out;
  }

  /** Closes the connections within a bounded time, even when Redis is gone (reconnection stops). */
  async close(): Promise<void> {
    this.control.stopped = true;
    // With Redis away a graceful close waits for a reconnection that will not come: drop the connections.
    if (this.health.downForMs() > 0 || !(await closeWithin(() => Promise.allSettled([this.events.close(), this.queue.close()]), 3000))) {
      await closeWithin(() => Promise.allSettled([this.events.disconnect(), this.queue.disconnect()]), 2000);
    }
  }
}
