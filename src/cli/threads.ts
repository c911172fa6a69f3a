/**
 * The bound on worker threads (`--workers` of evaluate, sweep and `suites check`; `blis worker --concurrency`),
 * apart from the queue code so that commands which never queue do not load it.
 */
import { availableParallelism } from 'node:os';
import { parseIntFlag } from '../sim/options.js';
import { UsageError } from './errors.js';

/**
 * The most worker threads one command may start on this machine: four per core, at least 8 and at most 64. Each
 * thread is a V8 isolate with its own heap (tens of MB before any work), so `--workers 100000` would exhaust memory
 * or threads long before it helped; above about one per core, more threads only share the same cores.
 */
export function maxWorkerThreads(cores: number = availableParallelism()): number {
  return Math.min(64, Math.max(8, 4 * cores));
}

/** A thread count flag (`--workers`, `--concurrency`): an integer from 1 to {@link maxWorkerThreads}. */
export function threadCount(flag: string, v: string, cores: number = availableParallelism()): number {
  const n = parseIntFlag(flag, v);
  if (n < 1) throw new UsageError('bad-flag', `${flag} must be an integer >= 1, got ${n}`);
  const max = maxWorkerThreads(cores);
  if (n > max) throw new UsageError('bad-flag', `${flag} must be <= ${max} on this machine (it has ${cores} core${cores === 1 ? '' : 's'}), got ${n}`);
  return n;
}
