/**
 * Random token-id helpers shared by the synthetic generator and trace replay.
 *
 * Both consume the RNG one `Intn(MAX_TOKEN_ID)` per token, in array order, exactly as the reference does, so
 * that a given seed reproduces the reference's token ids (and therefore its prefix-cache hits) bit for bit.
 *
 * The arrays are views into shared slabs: a run generates tens of thousands of token arrays, and one
 * ArrayBuffer per array made the garbage collector account each one as external memory (frequent forced
 * scavenges, slow frees). A slab is freed once no view of it is left.
 */
import type { GoRand } from '../engine/go-rand.js';
import { MAX_TOKEN_ID } from '../domain/units.js';
import { LIMITS, checkLimit } from '../domain/limits.js';

const SLAB_TOKENS = 1 << 18;
let slab = new Int32Array(0);
let slabUsed = 0;

/** A zeroed Int32Array of `n` tokens (a view of the current slab, or its own buffer when large). */
export function tokenArray(n: number): Int32Array {
  if (n > SLAB_TOKENS / 8) return new Int32Array(n);
  if (slabUsed + n > slab.length) {
    slab = new Int32Array(SLAB_TOKENS);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + n);
  slabUsed += n;
  return out;
}

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
