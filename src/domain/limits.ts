/**
 * What one simulation can hold. Each limit is far above any realistic deployment and far below what would
 * exhaust a workstation's memory or spin for hours; a value past one is refused with a {@link LimitError}
 * before any work starts (docs/usage.md, "Limits").
 */
import { BlisError, type ErrorWhere } from './errors.js';

export const LIMITS = {
  /** Instances in one cluster (each holds its own KV cache, queues and metrics: ~0.1-1 MB). */
  instances: 10_000,
  /** GPU or CPU KV blocks of one instance (the block tables are typed arrays of 30-75 bytes per block). */
  kvBlocksPerInstance: 2 ** 26,
  /** KV blocks (GPU + CPU) over every instance of the cluster. */
  kvBlocksPerCluster: 2 ** 28,
  /** Requests in one workload (each costs ~1-2 KB while simulated). */
  requests: 20_000_000,
  /** Prompt or output tokens of one request (token ids are held as int32 arrays). */
  tokensPerRequest: 10_000_000,
  /** Token ids of a whole workload generated or replayed at once (4 bytes each). */
  workloadTokens: 1_000_000_000,
  /**
   * Session rounds the generator must draw only to keep the random streams aligned with the reference (the
   * rounds of a session after the horizon are drawn when another session of the same client follows it).
   */
  drawnSessionRounds: 10_000_000,
} as const;

/** A value beyond one of the {@link LIMITS}. */
export class LimitError extends BlisError {
  constructor(message: string, where: ErrorWhere = {}) {
    super('LIMIT', message, where);
    this.name = 'LimitError';
  }
}

/** Thousands separators, for messages. */
export function grouped(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n);
}

/** Throws a {@link LimitError} naming `what` when `value` exceeds `limit`; `fix` says what to do instead. */
export function checkLimit(value: number, limit: number, what: string, fix: string, where: ErrorWhere = {}): void {
  if (value > limit) throw new LimitError(`${what} is ${grouped(value)}, above the limit of ${grouped(limit)} (docs/usage.md, Limits); ${fix}`, where);
}
