/**
 * Random token-id helpers shared by the synthetic generator and trace replay.
 *
 * Both consume the RNG one `Intn(MAX_TOKEN_ID)` per token, in array order, exactly as the reference does, so
 * that a given seed reproduces the reference's token ids (and therefore its prefix-cache hits) bit for bit.
 */
import type { GoRand } from '../engine/go-rand.js';
import { MAX_TOKEN_ID } from '../domain/units.js';
import { LIMITS, checkLimit } from '../domain/limits.js';

/** `n` token ids drawn in order from `rng`. @throws LimitError past {@link LIMITS.tokensPerRequest}. */
export function randomTokenIds(rng: GoRand, n: number): Int32Array {
  if (n > LIMITS.tokensPerRequest) checkLimit(n, LIMITS.tokensPerRequest, 'a generated prompt or output length (tokens)', 'lower the length distribution\'s values (or its max)');
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.intn(MAX_TOKEN_ID);
  return out;
}

/** Draws what {@link randomTokenIds} draws for `n` ids, keeping none (the stream stays aligned). */
export function skipTokenIds(rng: GoRand, n: number): void {
  for (let i = 0; i < n; i++) rng.intn(MAX_TOKEN_ID);
}

/** `prefix ++ rest` as a fresh array (the prefix is shared between requests and must not be aliased). */
export function concatTokens(prefix: Int32Array, rest: Int32Array): Int32Array {
  if (prefix.length === 0) return rest;
  const out = new Int32Array(prefix.length + rest.length);
  out.set(prefix, 0);
  out.set(rest, prefix.length);
  return out;
}
