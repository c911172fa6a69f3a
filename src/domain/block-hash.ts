/**
 * Chained KV-block identity.
 *
 * The reference names a block by SHA-256(parentHashHex ‖ "tok|"…) and only ever compares those names for
 * equality (cache lookups, router prefix indexes); no hash value reaches any output. blis-ts therefore names a
 * block by XXH64 of its token ids seeded with its parent's identity, cut to 53 bits so that it fits a plain
 * number (block-hash-wasm.ts). That gives the same equality relation except with collision probability about
 * n²/2^54 for n distinct blocks (< 1e-4 at a million distinct blocks). It keeps the reference's chaining rules
 * exactly: a chain starts from {@link NO_HASH} (the reference's ""), and a block filled after an unhashed block
 * also chains from {@link NO_HASH}, so equal token blocks with equal parents get equal identities in both
 * systems. SHA-256 costs ~1 µs per block in Node; this ~1 ns per token.
 */
import { blockChainer } from './block-hash-wasm.js';

/** The empty parent / "no hash" value (the reference's ""). Computed hashes are never 0. */
export const NO_HASH = 0;

/** Hash of the block `tokens[start, end)` chained from `parent`. Never returns {@link NO_HASH}. */
export function hashBlock(parent: number, tokens: ArrayLike<number>, start: number, end: number): number {
  return blockChainer().one(parent, tokens, start, end);
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
    blockChainer().chain(this.tokens, 0, n, blockSize, NO_HASH, out, 0);
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
 * What {@link inputBlockHashes} reads and caches on a request. Request (request.ts) has these fields; the
 * structural type keeps request.ts and this file from importing each other.
 */
export interface PromptHashCache {
  readonly id: string;
  readonly inputLen: number;
  readonly inputTokens: Int32Array;
  readonly sharedPrefix: SharedPrefix | null;
  inputBlockHashes: Float64Array | null;
  inputHashBlockSize: number;
}

/**
 * The chained hashes of every full input block of `req` for `blockSize`, computed once and cached on the
 * request (the prompt never changes).
 */
export function inputBlockHashes(req: PromptHashCache, blockSize: number): Float64Array {
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
  if (b < n) blockChainer().chain(tokens, b * blockSize, n - b, blockSize, parent, out, b);
  req.inputBlockHashes = out;
  req.inputHashBlockSize = blockSize;
  return out;
}
