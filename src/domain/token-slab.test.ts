import { describe, expect, it } from 'vitest';
import { releaseTokenArray, tokenArray } from './token-slab.js';
import { Request } from './request.js';

/** A deterministic stream of small integers (no Math.random in tests either). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

describe('token slabs', () => {
  it('hands out arrays of the length asked, each its own range, also from reused slabs', () => {
    const held: Int32Array[] = [];
    for (let i = 0; i < 2000; i++) {
      const a = tokenArray(500);
      expect(a.length).toBe(500);
      for (const h of held) expect(h.buffer !== a.buffer || h.byteOffset + 2000 <= a.byteOffset || a.byteOffset + 2000 <= h.byteOffset).toBe(true);
      a.fill(7);
      held.push(a);
      if (held.length > 20) releaseTokenArray(held.shift() as Int32Array);
    }
  });

  it('reuses the space of slabs whose arrays all came back', () => {
    const first = tokenArray(1000);
    const buffers = new Set<ArrayBufferLike>([first.buffer]);
    releaseTokenArray(first);
    // Twenty slabs' worth of arrays, each given back at once: only a few slabs are ever made.
    for (let i = 0; i < 20 * 262; i++) {
      const a = tokenArray(1000);
      buffers.add(a.buffer);
      releaseTokenArray(a);
    }
    expect(buffers.size).toBeLessThanOrEqual(3);
  });

  it('never overwrites an array that was not given back, whatever else is given back', () => {
    const next = lcg(12345);
    const live: { a: Int32Array; tag: number }[] = [];
    const kept: { a: Int32Array; tag: number }[] = [];
    for (let i = 0; i < 30_000; i++) {
      const n = 1 + (next() % 3000);
      const a = tokenArray(n);
      const tag = (i % 1000) + 1;
      a.fill(tag);
      // One array in fifty is never given back (a prefix, a copy someone else holds).
      if (next() % 50 === 0) kept.push({ a, tag });
      else live.push({ a, tag });
      while (live.length > 300) {
        const k = next() % live.length;
        const [gone] = live.splice(k, 1);
        expect(gone!.a.every((v) => v === gone!.tag)).toBe(true);
        releaseTokenArray(gone!.a);
      }
    }
    for (const { a, tag } of [...kept, ...live]) expect(a.every((v) => v === tag)).toBe(true);
  });

  it('gives large arrays their own buffer and ignores arrays it did not make', () => {
    const big = tokenArray(1 << 16);
    expect(big.byteOffset).toBe(0);
    expect(big.buffer.byteLength).toBe(4 << 16);
    expect(tokenArray(0).length).toBe(0);
    expect(() => releaseTokenArray(new Int32Array(10))).not.toThrow();
    expect(() => releaseTokenArray(big)).not.toThrow();
  });

  it('a request gives its arrays back only when it owns them, and only once', () => {
    const input = tokenArray(100);
    const output = tokenArray(50);
    input.fill(3);
    const shared = new Request('r', input, output, 0);
    shared.releaseTokens(); // not owned: its arrays stay where they are
    expect(shared.inputTokens.length).toBe(0);
    expect(input.every((v) => v === 3)).toBe(true);

    const owner = new Request('o', tokenArray(100), tokenArray(50), 0);
    owner.ownsTokens = true;
    owner.releaseTokens();
    expect(owner.ownsTokens).toBe(false);
    expect(owner.inputTokens.length).toBe(0);
    owner.releaseTokens(); // a second release gives nothing back twice
    expect(owner.outputTokens.length).toBe(0);
  });
});
