/**
 * Speculative decoding / MTP (upstream issue #1528, PR #1538): a decode step verifies K draft tokens plus one
 * bonus token in one forward pass (the latency models price it at verify width K+1) and a decoding request
 * advances 1 + a tokens per step on average, a = the expected accepted drafts. The advance is deterministic: a
 * request's n-th speculative step emits 1 + ⌊n·a⌋ − ⌊(n−1)·a⌋ tokens (a fractional carry, no randomness), so
 * after n steps it has emitted n + ⌊n·a⌋, never more than it still needs (the final step emits what is left).
 */

export { SPECULATIVE_METHODS } from '../domain/engine-features.js';

export interface SpeculativeConfig {
  /** Draft tokens per step (K >= 1). */
  readonly k: number;
  /** Expected accepted drafts per step, in [0, K]. */
  readonly accepted: number;
  /**
   * --semantics corrected (beyond upstream #1627): a decode takes K+1 tokens of the step's token budget and
   * needs its K look-ahead KV slots free, as vLLM schedules it; false = upstream's accounting by emitted tokens.
   */
  readonly lookahead: boolean;
}

/**
 * Expected accepted drafts when draft i is accepted with probability a_i given drafts 1..i−1 were (verification
 * stops at the first rejection): E = Σ_i P(drafts 1..i all accepted) = Σ_i Π_{j≤i} a_j. With every a_j = α this
 * is α + α² + … + α^K; upstream's single-rate model takes α·K instead (the rate as the accepted fraction).
 */
export function expectedAccepted(rates: readonly number[]): number {
  let all = 1;
  let sum = 0;
  for (const a of rates) {
    all *= a;
    sum += all;
  }
  return sum;
}

/** Absorbs the rounding of n·a (0.7·3 is 2.0999999999999996 in binary) so that 10·2.1 counts as 21. */
const EPS = 1e-7;

/**
 * Tokens a decode emits at its n-th speculative step (n >= 1) with `accepted` expected accepted drafts per
 * step, when it still needs `remaining` (>= 1) tokens: 1 + ⌊n·a⌋ − ⌊(n−1)·a⌋, at most `remaining`.
 */
export function speculativeTokens(n: number, accepted: number, remaining: number): number {
  const g = 1 + Math.floor(n * accepted + EPS) - Math.floor((n - 1) * accepted + EPS);
  return g < remaining ? g : remaining;
}
