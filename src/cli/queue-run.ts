/**
 * `blis worker` and `blis queue status|clean`, and the queue connection every queue command shares: the URL,
 * the password from BLIS_REDIS_PASSWORD, TLS files, and a warning for an exposed Redis.
 */
import { exposureWarning, parseQueueUrl, queueClean, queueStatus, runQueueWorker, CLEANABLE, type CleanableState, type QueueTarget, type TlsFiles } from '../queue/index.js';
import { EXIT_FAILURE, RunFailure, UsageError } from './errors.js';
import type { Io } from './io.js';
import { parseIntFlag } from '../sim/options.js';
import { readInputFile } from './read-input.js';
import { threadCount } from './threads.js';
import type { QueueFlags } from './queue-flags.js';
import { showValue } from '../domain/errors.js';

export function int(flag: string, v: string, min: number): number {
  const n = parseIntFlag(flag, v);
  if (n < min) throw new UsageError('bad-flag', `${flag} must be an integer >= ${min}, got ${n}`);
  return n;
}

function readPem(file: string | undefined, flag: string): string | undefined {
  if (file === undefined) return undefined;
  return readInputFile(file, flag, 1024 * 1024);
}

export interface QueueConnection {
  readonly target: QueueTarget;
  readonly tls: TlsFiles;
  readonly queueName: string;
  readonly redisTimeoutMs: number;
}

/** The queue flags checked, files read, and the exposure warning printed. */
export function queueConnection(o: QueueFlags, io: Io, env: NodeJS.ProcessEnv = process.env): QueueConnection {
  const target = parseQueueUrl(o.queue as string, '--queue', env['BLIS_REDIS_PASSWORD']);
  if (!/^[A-Za-z0-9._-]+$/.test(o.queueName)) throw new UsageError('bad-flag', `--queue-name ${showValue(o.queueName)}: use letters, digits, '.', '_' and '-'`);
  const tlsFlags = [o.tlsCa, o.tlsCert, o.tlsKey].some((x) => x !== undefined) || o.tlsInsecure === true;
  if (tlsFlags && !target.tls) throw new UsageError('bad-flag', '--tls-* options need a rediss:// URL (TLS); write --queue rediss://HOST:PORT');
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) throw new UsageError('bad-flag', '--tls-cert and --tls-key go together');
  const warning = exposureWarning(target);
  if (warning !== null) io.warn(warning);
  return {
    target,
    tls: { ca: readPem(o.tlsCa, '--tls-ca'), cert: readPem(o.tlsCert, '--tls-cert'), key: readPem(o.tlsKey, '--tls-key'), insecure: o.tlsInsecure === true },
    queueName: o.queueName,
    redisTimeoutMs: int('--redis-timeout-s', o.redisTimeoutS, 0) * 1000,
  };
}

/**
 * A queue error (Redis gone, no workers) ends the command with exit 1, not 2: the input was fine. A bad URL or
 * refused credentials stay exit 2.
 */
export function asRunFailure(e: unknown): unknown {
  const code = (e as { code?: unknown }).code;
  if (e instanceof Error && typeof code === 'string' && code.startsWith('QUEUE_') && code !== 'QUEUE_URL' && code !== 'QUEUE_AUTH') return new RunFailure(code, e.message, EXIT_FAILURE);
  return e;
}

export interface WorkerFlags extends QueueFlags {
  concurrency: string;
  timeoutS: string;
  lockDurationMs: string;
  stalledIntervalMs: string;
  maxStalls: string;
  jobHeapMb: string;
}

export async function workerCommand(o: WorkerFlags, io: Io): Promise<void> {
  const concurrency = threadCount('--concurrency', o.concurrency);
  const q = queueConnection(o, io);
  const lockDurationMs = int('--lock-duration-ms', o.lockDurationMs, 500);
  const ac = new AbortController();
  let interrupts = 0;
  const onSignal = (): void => {
    if (++interrupts === 1) ac.abort();
    else process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const tally = await runQueueWorker({
      ...q,
      concurrency,
      timeoutMs: int('--timeout-s', o.timeoutS, 0) * 1000,
      lockDurationMs,
      stalledIntervalMs: int('--stalled-interval-ms', o.stalledIntervalMs, 100),
      maxStalls: int('--max-stalls', o.maxStalls, 0),
      heapMb: int('--job-heap-mb', o.jobHeapMb, 64),
      log: (line) => io.info?.(line),
      warn: (line) => io.info?.(line),
    }, ac.signal);
    io.info?.(`worker stopped: ${tally.completed} job(s) done, ${tally.failed} failed`);
  } catch (e) {
    throw asRunFailure(e);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export async function queueStatusCommand(o: QueueFlags, io: Io): Promise<void> {
  const q = queueConnection(o, io);
  try {
    const s = await queueStatus(q.target, q.tls, q.queueName, Math.max(1000, q.redisTimeoutMs));
    io.stdout(`${JSON.stringify(s, null, 2)}\n`);
  } catch (e) {
    throw asRunFailure(e);
  }
}

export async function queueCleanCommand(o: QueueFlags & { state: string }, io: Io): Promise<void> {
  const q = queueConnection(o, io);
  const states = o.state.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const s of states) if (!(CLEANABLE as readonly string[]).includes(s)) throw new UsageError('bad-flag', `--state ${showValue(s)}: use ${CLEANABLE.join(', ')} (active jobs finish on their workers)`);
  if (states.length === 0) throw new UsageError('bad-flag', `--state: name at least one of ${CLEANABLE.join(', ')}`);
  try {
    const r = await queueClean(q.target, q.tls, q.queueName, Math.max(1000, q.redisTimeoutMs), states as CleanableState[]);
    io.stdout(`${JSON.stringify(r, null, 2)}\n`);
  } catch (e) {
    throw asRunFailure(e);
  }
}
