/**
 * A request whose KV at some step it must pass (prompt plus the tokens generated so far) exceeds the whole
 * cache preempts itself, restarts from scratch and, as a rule, comes back to the same step: it never finishes.
 * The reference simulator spins on it until its deadline or the horizon; with neither, its run never ends.
 * Such a run is refused (one BlisError naming the fix) instead of hanging; bounded runs keep the reference's
 * behaviour byte for byte. Not on the first futile self-preemption: the reference can escape once through its
 * prefix cache (seen with a readmitted prompt whose blocks were all cached), so the request must have
 * preempted itself past the cache {@link FUTILE_LIMIT} times. The CLI's max-model-len cap keeps such requests
 * out of ordinary runs; `--max-model-len 0`, a P/D decode pool smaller than its prefill pool, or a library
 * caller reaches it.
 */
import { BlisError } from '../domain/errors.js';
import { PdPart, type Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';

export class UnservableRequestError extends BlisError {
  constructor(message: string, field: string) {
    super('never-fits', message, { field });
  }
}

/**
 * Futile self-preemptions of one request before an unbounded run is refused (each costs a re-prefill). In
 * 3,000 random small engines the reference escaped only ever after the first one; the rest is margin.
 */
export const FUTILE_LIMIT = 32;

/** Counts futile self-preemptions per request (the map exists only once one happened). */
export class FutileSelfPreemptions {
  private counts: Map<Request, number> | null = null;

  /** Records one; true when `r` reached the limit. */
  note(r: Request): boolean {
    this.counts ??= new Map();
    const n = (this.counts.get(r) ?? 0) + 1;
    this.counts.set(r, n);
    return n >= FUTILE_LIMIT;
  }
}

/**
 * Corrected semantics: the max-model-len an instance enforces — the configured one, capped at what its KV cache
 * holds (as the CLI resolves it, and as vLLM refuses a longer one), so a request that could never fit is dropped
 * or length-capped by the ordinary, output-blind guards instead of preempting itself forever.
 */
export function cacheCappedMaxModelLen(maxModelLen: number, totalBlocks: number, blockSize: number): number {
  const cap = totalBlocks * blockSize;
  return maxModelLen > 0 && maxModelLen <= cap ? maxModelLen : cap;
}

/** True when nothing but the request's own completion could end the run: no horizon and no deadline. */
export function spinsForever(r: Request, horizon: number): boolean {
  return horizon >= MAX_INT64 && !(r.deadline > 0);
}

/** The error for `r`, which needed KV past `totalBlocks` blocks of `blockSize` tokens on instance `instanceId`. */
export function neverFitsError(r: Request, instanceId: string, totalBlocks: number, blockSize: number, corrected: boolean): UnservableRequestError {
  const cap = totalBlocks * blockSize;
  const decode = r.pdPart === PdPart.Decode;
  const lenFlag = decode ? '--decode-max-model-len' : '--max-model-len';
  const fixes = [
    `cap request lengths with ${lenFlag} at most ${cap} (prompt + output tokens)`,
    `raise --total-kv-blocks`,
    'set --horizon or a client --timeout',
  ];
  // Corrected semantics drop such requests at enqueue; a decode half skips the enqueue guards.
  if (!corrected && !decode) fixes.push('or use --semantics corrected (drops such requests as unservable)');
  const where = decode ? `decode pod ${instanceId}` : instanceId;
  return new UnservableRequestError(
    `request ${r.id} (${r.inputLen} prompt + ${r.outputLen} output tokens) needs more KV than the whole cache of ${where} ` +
      `(${totalBlocks} blocks of ${blockSize} tokens = ${cap} tokens): it preempts itself forever, and with no horizon and ` +
      `no deadline the run would never end; ${fixes.join(', ')}`,
    lenFlag,
  );
}
