import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_HASH, SharedPrefix, hashBlock, inputBlockHashes } from './block-hash.js';
import { Request } from './request.js';
import { bigIntChainer, blockChainer, blockHashWasmBytes, xxh64Tokens } from './block-hash-wasm.js';

/** The chain hashBlock gives, block by block, over a plain number array (the generic path). */
function chain(tokens: readonly number[], blockSize: number): number[] {
  const out: number[] = [];
  let parent = NO_HASH;
  for (let b = 0; b + blockSize <= tokens.length; b += blockSize) {
    parent = hashBlock(parent, tokens, b, b + blockSize);
    out.push(parent);
  }
  return out;
}

const token = fc.integer({ min: 0, max: 127_999 });

describe('inputBlockHashes', () => {
  it('equals the hashBlock chain of the prompt (the KV layer hashes blocks one by one with hashBlock)', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 200 }), fc.integer({ min: 1, max: 40 }), (tokens, bs) => {
        const req = new Request('r', Int32Array.from(tokens), new Int32Array(3), 0);
        expect(Array.from(inputBlockHashes(req, bs))).toEqual(chain(tokens, bs));
      }),
    );
  });

  it('with a shared prefix, gives the same hashes as hashing the whole prompt, for any prefix and block size', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 120 }), fc.array(token, { maxLength: 120 }), fc.integer({ min: 1, max: 40 }), (prefix, rest, bs) => {
        const shared = new SharedPrefix(Int32Array.from(prefix));
        const req = new Request('r', Int32Array.from([...prefix, ...rest]), new Int32Array(0), 0);
        req.sharedPrefix = shared;
        const want = chain([...prefix, ...rest], bs);
        expect(Array.from(inputBlockHashes(req, bs))).toEqual(want);
        // A second request and another block size reuse / recompute the prefix's hashes correctly.
        const req2 = new Request('r2', Int32Array.from([...prefix, ...rest.slice(1)]), new Int32Array(0), 0);
        req2.sharedPrefix = shared;
        expect(Array.from(inputBlockHashes(req2, bs + 1))).toEqual(chain([...prefix, ...rest.slice(1)], bs + 1));
        expect(Array.from(inputBlockHashes(req2, bs))).toEqual(chain([...prefix, ...rest.slice(1)], bs));
      }),
    );
  });

  it('a prompt shorter than its prefix group\'s full blocks takes only the blocks it has', () => {
    const prefix = Int32Array.from({ length: 64 }, (_, i) => i * 7);
    const req = new Request('short', prefix.slice(0, 40), new Int32Array(0), 0);
    req.sharedPrefix = new SharedPrefix(prefix);
    expect(Array.from(inputBlockHashes(req, 16))).toEqual(chain(Array.from(prefix.slice(0, 40)), 16));
  });

  it('refuses a request whose token ids were released', () => {
    const req = new Request('gone', new Int32Array(32), new Int32Array(0), 0);
    req.releaseTokens();
    expect(() => inputBlockHashes(req, 16)).toThrow(/released its token ids/);
  });
});

describe('block identities: XXH64 seeded with the parent, cut to 53 bits', () => {
  // XXH64 of the tokens' little-endian bytes, from the xxHash library itself (libxxhash 0.8.1, XXH64()).
  const VECTORS: [number[], bigint, bigint][] = [
    [[], 0n, 0xef46db3751d8e999n],
    [[1], 0n, 0xf42f94001fcb5351n],
    [[1, 2], 5n, 0x9895e140bfa6e1b2n],
    [[1, 2, 3], 7n, 0x1d93e48db334cce2n],
    [[1, 2, 3, 4, 5, 6, 7, 8], 0n, 0x09a35922a3521665n],
    [Array.from({ length: 16 }, (_, i) => i * 7919), 123456789n, 0x2f5ed54622708fd8n],
    [Array.from({ length: 13 }, (_, i) => i * 31 + 100000), 2n ** 52n + 3n, 0x3df04f7a2cfe3698n],
    [Array(17).fill(127999) as number[], 2n ** 53n - 1n, 0xad42267a8d6767c4n],
    [[-1, 5, -7], 9n, 0x0725eb6a017cc98cn],
  ];
  const cut = (h: bigint): number => Number(h & (2n ** 53n - 1n)) || 1;

  it('is XXH64 (the xxHash library\'s values), in the BigInt fallback and in WebAssembly', () => {
    for (const [tokens, seed, want] of VECTORS) {
      expect(xxh64Tokens(tokens, 0, tokens.length, seed)).toBe(want);
      expect(bigIntChainer.one(Number(seed), tokens, 0, tokens.length)).toBe(cut(want));
      expect(hashBlock(Number(seed), tokens, 0, tokens.length)).toBe(cut(want));
      expect(hashBlock(Number(seed), Int32Array.from(tokens), 0, tokens.length)).toBe(cut(want));
    }
  });

  it('WebAssembly and BigInt give the same chains, for any tokens, block size and parent', () => {
    expect(blockChainer()).not.toBe(bigIntChainer);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 300 }), fc.integer({ min: 1, max: 70 }), fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.nat(), (tokens, bs, parent, skip) => {
        // From any start: a prompt's blocks after a shared prefix, one block in the middle of an array.
        const start = tokens.length === 0 ? 0 : skip % tokens.length;
        const n = Math.floor((tokens.length - start) / bs);
        const a = new Float64Array(n + 2);
        const b = new Float64Array(n + 2);
        blockChainer().chain(Int32Array.from(tokens), start, n, bs, parent, a, 1);
        bigIntChainer.chain(tokens, start, n, bs, parent, b, 1);
        expect(Array.from(a)).toEqual(Array.from(b));
        for (const h of a.subarray(1, n + 1)) expect(Number.isSafeInteger(h) && h > 0).toBe(true);
        if (n > 0) expect(hashBlock(parent, Int32Array.from(tokens), start, start + bs)).toBe(b[1]);
      }),
      { numRuns: 300 },
    );
  });

  it('chains longer than the module\'s memory, and blocks larger than it, match too', () => {
    const tokens = Int32Array.from({ length: 70_000 }, (_, i) => (i * 2654435761) % 128_000);
    const a = new Float64Array(4375);
    blockChainer().chain(tokens, 0, 4375, 16, 0, a, 0);
    const b = new Float64Array(4375);
    bigIntChainer.chain(tokens, 0, 4375, 16, 0, b, 0);
    expect(a).toEqual(b);
    expect(hashBlock(5, tokens, 0, 70_000)).toBe(bigIntChainer.one(5, tokens, 0, 70_000));
  });

  it('a parent or a token changes the identity', () => {
    const t = Int32Array.from({ length: 16 }, (_, i) => i);
    const h = hashBlock(NO_HASH, t, 0, 16);
    expect(hashBlock(1, t, 0, 16)).not.toBe(h);
    const u = t.slice();
    u[15] = 16;
    expect(hashBlock(NO_HASH, u, 0, 16)).not.toBe(h);
  });

  it('the WebAssembly bytes are block-hash.wat assembled', async () => {
    const wabt = await (await import('wabt')).default();
    const wat = readFileSync(new URL('./block-hash.wat', import.meta.url), 'utf8');
    const { buffer } = wabt.parseWat('block-hash.wat', wat).toBinary({});
    expect(Buffer.from(buffer).equals(Buffer.from(blockHashWasmBytes()))).toBe(true);
  });
});
