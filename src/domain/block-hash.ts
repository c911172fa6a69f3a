/**
 * Chained KV-block identity.
 *
 * The reference names a block by SHA-256(parentHashHex ‖ "tok|"…) and only ever compares those names for
 * equality (cache lookups, router prefix indexes); no hash value reaches any output. blis-ts therefore uses a
 * fast 53-bit chained hash (two murmur3-style 32-bit lanes) held in a plain number, which gives the same
 * equality relation except with collision probability about n²/2^54 for n distinct blocks (< 1e-4 at a
 * million distinct blocks). It keeps the reference's chaining rules exactly: a chain starts from
 * {@link NO_HASH} (the reference's ""), and a block filled after an unhashed block also chains from
 * {@link NO_HASH}, so equal token blocks with equal parents get equal identities in both systems.
 * SHA-256 costs ~1 µs per block in Node; this costs ~10 ns per token, which matters in the step loop.
 */
import type { Request } from './request.js';

/** The empty parent / "no hash" value (the reference's ""). Computed hashes are never 0. */
export const NO_HASH = 0;

const TWO32 = 4294967296;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** The two lanes' final mix into a 53-bit identity (never {@link NO_HASH}). */
function finish(a: number, b: number, n: number): number {
  let h1 = a ^ n;
  let h2 = b ^ n;
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = (h1 + h2) | 0;
  h2 = (h2 + h1) | 0;
  const v = (h2 & 0x1fffff) * TWO32 + (h1 >>> 0);
  return v === NO_HASH ? 1 : v;
}

/** Hash of the block `tokens[start, end)` chained from `parent`. Never returns {@link NO_HASH}. */
export function hashBlock(parent: number, tokens: ArrayLike<number>, start: number, end: number): number {
  const plo = parent % TWO32 | 0;
  const phi = Math.floor(parent / TWO32) | 0;
  let h1 = 0x9747b28c ^ plo;
  let h2 = 0x1b873593 ^ phi ^ Math.imul(plo, 0x2545f491);
  for (let i = start; i < end; i++) {
    const t = (tokens[i] as number) | 0;
    let k = Math.imul(t, 0xcc9e2d51);
    k = rotl(k, 15);
    k = Math.imul(k, 0x1b873593);
    h1 ^= k;
    h1 = rotl(h1, 13);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
    let j = Math.imul(t ^ 0x5bd1e995, 0x85ebca6b);
    j = rotl(j, 17);
    j = Math.imul(j, 0xc2b2ae35);
    h2 ^= j;
    h2 = rotl(h2, 19);
    h2 = (Math.imul(h2, 9) + 0x52dce729) | 0;
  }
  return finish(h1, h2, end - start);
}

/**
 * {@link hashBlock} over an Int32Array only. Prompts are always Int32Arrays, while hashBlock is also called with
 * other array kinds (a decode block's scratch copy, tests); a separate copy of the loop keeps this, the hottest
 * caller, monomorphic. The two must give the same values (a test compares them).
 */
function hashInt32Block(parent: number, tokens: Int32Array, start: number, end: number): number {
  const plo = parent % TWO32 | 0;
  const phi = Math.floor(parent / TWO32) | 0;
  let h1 = 0x9747b28c ^ plo;
  let h2 = 0x1b873593 ^ phi ^ Math.imul(plo, 0x2545f491);
  for (let i = start; i < end; i++) {
    const t = tokens[i] as number;
    let k = Math.imul(t, 0xcc9e2d51);
    k = rotl(k, 15);
    k = Math.imul(k, 0x1b873593);
    h1 ^= k;
    h1 = rotl(h1, 13);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
    let j = Math.imul(t ^ 0x5bd1e995, 0x85ebca6b);
    j = rotl(j, 17);
    j = Math.imul(j, 0xc2b2ae35);
    h2 ^= j;
    h2 = rotl(h2, 19);
    h2 = (Math.imul(h2, 9) + 0x52dce729) | 0;
  }
  return finish(h1, h2, end - start);
}

/**
 * A token prefix that many prompts start with (a workload's prefix group). The hashes of its full blocks are
 * computed once per block size and copied into each prompt's hashes, instead of hashing the same tokens again
 * for every request. Whoever sets `Request.sharedPrefix` guarantees the prompt starts with exactly these tokens.
 */
export class SharedPrefix {
  private blockSize = 0;
  private hashes: Float64Array | null = null;

  constructor(readonly tokens: Int32Array) {}

  /** Chained hashes of the prefix's full blocks of `blockSize`. */
  blockHashes(blockSize: number): Float64Array {
    if (this.hashes !== null && this.blockSize === blockSize) return this.hashes;
    const n = Math.floor(this.tokens.length / blockSize);
    const out = new Float64Array(n);
    let parent = NO_HASH;
    for (let b = 0; b < n; b++) {
      parent = hashInt32Block(parent, this.tokens, b * blockSize, (b + 1) * blockSize);
      out[b] = parent;
    }
    this.hashes = out;
    this.blockSize = blockSize;
    return out;
  }
}

// Per-request hash arrays are views of shared slabs (as token arrays are, workload/tokens.ts): one ArrayBuffer per
// request made the collector account each as external memory, forcing scavenges.
const SLAB_HASHES = 1 << 14;
let slab = new Float64Array(0);
let slabUsed = 0;

function hashArray(n: number): Float64Array {
  if (n > SLAB_HASHES / 8) return new Float64Array(n);
  if (slabUsed + n > slab.length) {
    slab = new Float64Array(SLAB_HASHES);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + n);
  slabUsed += n;
  return out;
}

/**
 * The chained hashes of every full input block of `req` for `blockSize`, computed once and cached on the
 * request (the prompt never changes).
 */
export function inputBlockHashes(req: Request, blockSize: number): Float64Array {
  const cached = req.inputBlockHashes;
  if (cached !== null && req.inputHashBlockSize === blockSize) return cached;
  const tokens = req.inputTokens;
  if (tokens.length !== req.inputLen) throw new Error(`inputBlockHashes: ${req.id} has released its token ids (it has left the system)`);
  const n = Math.floor(req.inputLen / blockSize);
  const out = hashArray(n);
  let parent = NO_HASH;
  let b = 0;
  const shared = req.sharedPrefix;
  if (shared !== null) {
    const prefix = shared.blockHashes(blockSize);
    b = Math.min(prefix.length, n);
    if (b > 0) {
      out.set(b === prefix.length ? prefix : prefix.subarray(0, b));
      parent = out[b - 1] as number;
    }
  }
  for (; b < n; b++) {
    parent = hashInt32Block(parent, tokens, b * blockSize, (b + 1) * blockSize);
    out[b] = parent;
  }
  req.inputBlockHashes = out;
  req.inputHashBlockSize = blockSize;
  return out;
}
