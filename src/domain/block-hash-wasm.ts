/**
 * Chains of KV-block identities (domain/block-hash.ts) in WebAssembly: XXH64 of each block's token ids (their
 * little-endian bytes) seeded with the previous identity, cut to 53 bits (block-hash.wat, assembled into the
 * bytes below; a test re-assembles the source and compares). Hand-rolled because hashing every prompt block is
 * one of the larger costs of a run, and XXH64's 64-bit arithmetic takes a few operations per token where
 * JavaScript's 32-bit lanes took twenty (a 10,000-request run hashed its 5 million prompt tokens in ~25 ms;
 * here ~5 ms). Without WebAssembly (`node --jitless`) the same values come from BigInt arithmetic, slowly.
 */

const WASM_BASE64 = 'AGFzbQEAAAABEAJgA39/fgF+YAV/f398fwADAwIAAQUDAQAMBw8CA21lbQIABWNoYWluAAEKwAYC2gUCAX8FfiAAIAFqIQMgAUEgTwRAIAJC1uuC7ur9ifXgAHwhBSACQs/W077Sx6vZQnwhBiACIQcgAkKHla+vmLbem55/fSEIAkADQCAAQSBqIANLDQEgBSAAKQMAQs/W077Sx6vZQn58Qh+JQoeVr6+Ytt6bnn9+IQUgBiAAKQMIQs/W077Sx6vZQn58Qh+JQoeVr6+Ytt6bnn9+IQYgByAAKQMQQs/W077Sx6vZQn58Qh+JQoeVr6+Ytt6bnn9+IQcgCCAAKQMYQs/W077Sx6vZQn58Qh+JQoeVr6+Ytt6bnn9+IQggAEEgaiEADAALCyAFQgGJIAZCB4l8IAdCDIkgCEISiXx8IQQgBCAFQs/W077Sx6vZQn5CH4lCh5Wvr5i23puef36FQoeVr6+Ytt6bnn9+QuPcypX8zvL1hX98IQQgBCAGQs/W077Sx6vZQn5CH4lCh5Wvr5i23puef36FQoeVr6+Ytt6bnn9+QuPcypX8zvL1hX98IQQgBCAHQs/W077Sx6vZQn5CH4lCh5Wvr5i23puef36FQoeVr6+Ytt6bnn9+QuPcypX8zvL1hX98IQQgBCAIQs/W077Sx6vZQn5CH4lCh5Wvr5i23puef36FQoeVr6+Ytt6bnn9+QuPcypX8zvL1hX98IQQFIAJCxc/ZsvHluuonfCEECyAEIAGtfCEEAkADQCAAQQhqIANLDQEgBCAAKQMAQs/W077Sx6vZQn5CH4lCh5Wvr5i23puef36FIQQgBEIbiUKHla+vmLbem55/fkLj3MqV/M7y9YV/fCEEIABBCGohAAwACwsgAEEEaiADTQRAIAQgADUCAEKHla+vmLbem55/foUhBCAEQheJQs/W077Sx6vZQn5C+fPd8Zn2masWfCEECyAEIARCIYiFIQQgBELP1tO+0ser2UJ+IQQgBCAEQh2IhSEEIARC+fPd8Zn2masWfiEEIAQgBEIgiIULYgMBfwJ+AX8gAkECdCEFIAOxIQYCQANAIAggAU8NASAAIAUgBhAAQv////////8PgyEHIAdQBEBCASEHCyAEIAe6OQMAIAchBiAAIAVqIQAgBEEIaiEEIAhBAWohCAwACwsL';

/** Token ids per call: the module's memory holds them at byte 0, and the identities (as f64s) after them. */
const CHUNK_TOKENS = 65536;
const OUT_BYTE = 4 * CHUNK_TOKENS;

/** The module's bytes (for the test that re-assembles block-hash.wat). */
export function blockHashWasmBytes(): Uint8Array {
  return Uint8Array.from(Buffer.from(WASM_BASE64, 'base64'));
}

/** The slice of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Readonly<Record<string, unknown>> };
}

type ChainFn = (tok: number, n: number, bs: number, parent: number, out: number) => void;

const MASK53 = (1n << 53n) - 1n;
const M64 = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

function rotl(x: bigint, r: bigint): bigint {
  return ((x << r) | (x >> (64n - r))) & M64;
}

function round(acc: bigint, v: bigint): bigint {
  return (rotl((acc + v * P2) & M64, 31n) * P1) & M64;
}

/** The little-endian 64-bit word of token ids i and i + 1. */
function word(tokens: ArrayLike<number>, i: number): bigint {
  return BigInt((tokens[i] as number) >>> 0) | (BigInt((tokens[i + 1] as number) >>> 0) << 32n);
}

/** XXH64 of the bytes of `tokens[start, end)` seeded with `seed` (the module's computation, in BigInt). */
export function xxh64Tokens(tokens: ArrayLike<number>, start: number, end: number, seed: bigint): bigint {
  const len = BigInt(4 * (end - start));
  let p = start;
  let h: bigint;
  if (end - start >= 8) {
    let v1 = (seed + P1 + P2) & M64;
    let v2 = (seed + P2) & M64;
    let v3 = seed;
    let v4 = (seed - P1) & M64;
    for (; p + 8 <= end; p += 8) {
      v1 = round(v1, word(tokens, p));
      v2 = round(v2, word(tokens, p + 2));
      v3 = round(v3, word(tokens, p + 4));
      v4 = round(v4, word(tokens, p + 6));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    for (const v of [v1, v2, v3, v4]) h = (((h ^ round(0n, v)) * P1) + P4) & M64;
  } else {
    h = (seed + P5) & M64;
  }
  h = (h + len) & M64;
  for (; p + 2 <= end; p += 2) h = ((rotl(h ^ round(0n, word(tokens, p)), 27n) * P1) + P4) & M64;
  if (p < end) h = ((rotl(h ^ ((BigInt((tokens[p] as number) >>> 0) * P1) & M64), 23n) * P2) + P3) & M64;
  h = ((h ^ (h >> 33n)) * P2) & M64;
  h = ((h ^ (h >> 29n)) * P3) & M64;
  return h ^ (h >> 32n);
}

/** The identity of the block `tokens[start, end)` after `parent`, without WebAssembly. */
function identityBigInt(parent: number, tokens: ArrayLike<number>, start: number, end: number): number {
  const h = Number(xxh64Tokens(tokens, start, end, BigInt(parent)) & MASK53);
  return h === 0 ? 1 : h;
}

/**
 * Writes the identities of `n` consecutive blocks of `bs` tokens, the first at `tokens[start]` and chained from
 * `parent`, to `out[at, at + n)`.
 */
export interface BlockChainer {
  chain(tokens: ArrayLike<number>, start: number, n: number, bs: number, parent: number, out: Float64Array, at: number): void;
  /** The identity of the block `tokens[start, end)` after `parent`. */
  one(parent: number, tokens: ArrayLike<number>, start: number, end: number): number;
}

class WasmChainer implements BlockChainer {
  private readonly tokens: Int32Array;
  private readonly ids: Float64Array;

  constructor(
    mem: { readonly buffer: ArrayBuffer },
    private readonly run: ChainFn,
  ) {
    // The memory never grows: these views stay valid.
    this.tokens = new Int32Array(mem.buffer, 0, CHUNK_TOKENS);
    this.ids = new Float64Array(mem.buffer, OUT_BYTE, CHUNK_TOKENS);
  }

  /**
   * Copies `tokens[start, end)` into the module's memory; returns the byte offset where `tokens[start]` landed.
   * An Int32Array that fits and is mostly the range (a prompt) is copied whole, with no view to make, and the
   * range's offset passed to the module instead.
   */
  private put(tokens: ArrayLike<number>, start: number, end: number): number {
    if (tokens instanceof Int32Array) {
      if (tokens.length <= CHUNK_TOKENS && 2 * (end - start) >= tokens.length) {
        this.tokens.set(tokens);
        return 4 * start;
      }
      this.tokens.set(tokens.subarray(start, end));
    } else {
      const t = this.tokens;
      for (let i = start; i < end; i++) t[i - start] = (tokens[i] as number) | 0;
    }
    return 0;
  }

  chain(tokens: ArrayLike<number>, start: number, n: number, bs: number, parent: number, out: Float64Array, at: number): void {
    const per = bs > 0 ? Math.floor(CHUNK_TOKENS / bs) : CHUNK_TOKENS;
    if (per === 0) {
      // A block larger than the module's memory (not a block size anyone uses): the same values, in BigInt.
      for (let b = 0; b < n; b++) out[at + b] = parent = identityBigInt(parent, tokens, start + b * bs, start + (b + 1) * bs);
      return;
    }
    for (let done = 0; done < n; ) {
      const k = Math.min(per, n - done);
      const from = start + done * bs;
      this.run(this.put(tokens, from, from + k * bs), k, bs, parent, OUT_BYTE);
      out.set(k === CHUNK_TOKENS ? this.ids : this.ids.subarray(0, k), at + done);
      parent = this.ids[k - 1] as number;
      done += k;
    }
  }

  one(parent: number, tokens: ArrayLike<number>, start: number, end: number): number {
    if (end - start > CHUNK_TOKENS) return identityBigInt(parent, tokens, start, end);
    this.run(this.put(tokens, start, end), 1, end - start, parent, OUT_BYTE);
    return this.ids[0] as number;
  }
}

/** The same values without WebAssembly. */
export const bigIntChainer: BlockChainer = {
  chain(tokens, start, n, bs, parent, out, at) {
    for (let b = 0; b < n; b++) out[at + b] = parent = identityBigInt(parent, tokens, start + b * bs, start + (b + 1) * bs);
  },
  one: identityBigInt,
};

let chainer: BlockChainer | undefined;

/** The shared chainer, made on first use: WebAssembly where available, else {@link bigIntChainer}. */
export function blockChainer(): BlockChainer {
  if (chainer === undefined) {
    const api = (globalThis as { readonly WebAssembly?: WasmApi }).WebAssembly;
    try {
      if (api === undefined) throw new Error('no WebAssembly');
      const { exports } = new api.Instance(new api.Module(blockHashWasmBytes()), {});
      chainer = new WasmChainer(exports['mem'] as { readonly buffer: ArrayBuffer }, exports['chain'] as ChainFn);
    } catch {
      chainer = bigIntChainer;
    }
  }
  return chainer;
}
