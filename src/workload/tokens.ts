/**
 * Random token-id helpers shared by the synthetic generator and trace replay.
 *
 * Both consume the RNG one `Intn(MAX_TOKEN_ID)` per token, in array order, exactly as the reference does, so
 * that a given seed reproduces the reference's token ids (and therefore its prefix-cache hits) bit for bit.
 *
 * The arrays are views of shared slabs (domain/token-slab.ts), reused once the requests owning them have left.
 */
import type { GoRand } from '../gocompat/go-rand.js';
import { MAX_TOKEN_ID } from '../domain/units.js';
import { LIMITS, checkLimit } from '../domain/limits.js';
import { tokenArray } from '../domain/token-slab.js';

/** `n` token ids drawn in order from `rng`. @throws LimitError past {@link LIMITS.tokensPerRequest}. */
export function randomTokenIds(rng: GoRand, n: number): Int32Array {
  if (n > LIMITS.tokensPerRequest) checkLimit(n, LIMITS.tokensPerRequest, 'a generated prompt or output length (tokens)', 'lower the length distribution\'s values (or its max)');
  const out = tokenArray(n);
  rng.fillInt31n(out, 0, n, MAX_TOKEN_ID);
  return out;
}

/** `prefix ++ n fresh token ids drawn from rng`: the same as concatTokens(prefix, randomTokenIds(rng, n)), built in place. */
export function randomTokenIdsAfter(prefix: Int32Array, rng: GoRand, n: number): Int32Array {
  if (n > LIMITS.tokensPerRequest) checkLimit(n, LIMITS.tokensPerRequest, 'a generated prompt or output length (tokens)', 'lower the length distribution\'s values (or its max)');
  const out = tokenArray(prefix.length + n);
  out.set(prefix, 0);
  rng.fillInt31n(out, prefix.length, out.length, MAX_TOKEN_ID);
  return out;
}

/** Draws what {@link randomTokenIds} draws for `n` ids, keeping none (the stream stays aligned). */
export function skipTokenIds(rng: GoRand, n: number): void {
  for (let i = 0; i < n; i++) rng.intn(MAX_TOKEN_ID);
}

/** `prefix ++ rest` as a fresh array (the prefix is shared between requests and must not be aliased). */
export function concatTokens(prefix: Int32Array, rest: Int32Array): Int32Array {
  if (prefix.length === 0) return rest;
  const out = tokenArray(prefix.length + rest.length);
  out.set(prefix, 0);
  out.set(rest, prefix.length);
  return out;
}
