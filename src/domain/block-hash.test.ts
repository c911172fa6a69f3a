import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_HASH, SharedPrefix, hashBlock, inputBlockHashes } from './block-hash.js';
import { Request } from './request.js';

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
