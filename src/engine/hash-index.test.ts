import { describe, expect, it } from 'vitest';
import { HashIndex } from './hash-index.js';
import { mulberry32 } from './test-helpers.js';

describe('HashIndex', () => {
  it('agrees with a Map over random set/delete/get sequences, including growth and clustered keys', () => {
    for (const [seed, keySpace, expected] of [
      [1, 50, 4],
      [2, 5000, 64],
      [3, 300, 1000],
    ] as const) {
      const rand = mulberry32(seed);
      const idx = new HashIndex(expected);
      const ref = new Map<number, number>();
      // Keys sharing their low 32 bits, large 53-bit keys, and small integers all mixed together.
      const key = (i: number): number => (i % 3 === 0 ? (i + 1) * 4294967296 : i % 3 === 1 ? 2 ** 52 + i * 7919 : i + 1);
      for (let op = 0; op < 20000; op++) {
        const k = key(Math.floor(rand() * keySpace));
        const p = rand();
        if (p < 0.35) {
          const v = Math.floor(rand() * 1e6);
          idx.set(k, v);
          ref.set(k, v);
        } else if (p < 0.45) {
          // getOrInsert: the existing value, or -1 after storing the new one.
          const v = Math.floor(rand() * 1e6);
          const had = ref.get(k);
          expect(idx.getOrInsert(k, v)).toBe(had ?? -1);
          if (had === undefined) ref.set(k, v);
        } else if (p < 0.8) {
          expect(idx.delete(k)).toBe(ref.delete(k));
        } else if (p < 0.8004) {
          // clear(): empties (a large, sparse table also shrinks) and keeps working.
          idx.clear();
          ref.clear();
        } else {
          expect(idx.get(k)).toBe(ref.get(k) ?? -1);
        }
        expect(idx.size).toBe(ref.size);
      }
      for (const [k, v] of ref) expect(idx.get(k)).toBe(v);
      const sorted = (e: [number, number][]): [number, number][] => e.sort((x, y) => x[0] - y[0]);
      expect(sorted(idx.entries())).toEqual(sorted([...ref.entries()]));
    }
  });

  it('clear() after a burst shrinks the table, and the index keeps agreeing with a Map', () => {
    const idx = new HashIndex(16);
    for (let i = 1; i <= 5000; i++) idx.set(i * 4294967296 + i, i);
    idx.clear();
    expect(idx.size).toBe(0);
    expect(idx.get(4294967297)).toBe(-1);
    // Cleared again with few entries: the table sized for the burst (16k slots) is not zeroed in full any more.
    for (let i = 1; i <= 10; i++) idx.set(i, i);
    idx.clear();
    for (let i = 1; i <= 300; i++) idx.set(i + 0.5e9, i);
    for (let i = 1; i <= 300; i++) expect(idx.get(i + 0.5e9)).toBe(i);
    expect(idx.entries().length).toBe(300);
  });

  it('rejects the reserved empty key', () => {
    expect(() => new HashIndex(4).set(0, 1)).toThrow();
    expect(() => new HashIndex(4).getOrInsert(0, 1)).toThrow();
    expect(new HashIndex(4).get(0)).toBe(-1);
    expect(new HashIndex(4).delete(0)).toBe(false);
  });
});
