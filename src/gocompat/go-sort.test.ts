import { describe, expect, it } from 'vitest';
import { goSortSlice } from './go-sort.js';

/**
 * Expected orders produced by Go 1.23's sort.Slice on the same inputs (keys from an LCG, many ties): length,
 * key modulus, a checksum of the whole permutation, and its first eight indices.
 */
const GO: readonly [number, number, number, number[]][] = [
  [5, 3, 1969190, [2, 3, 1, 0, 4]],
  [5, 50, 3816230, [4, 3, 1, 0, 2]],
  [13, 3, 421745539, [9, 2, 3, 11, 1, 5, 6, 8]],
  [13, 50, 73553130, [0, 11, 8, 6, 5, 2, 4, 12]],
  [60, 3, 219032283, [20, 56, 2, 52, 49, 45, 42, 38]],
  [60, 50, 34538916, [39, 20, 12, 48, 28, 41, 53, 50]],
  [200, 3, 414997206, [84, 95, 2, 3, 196, 5, 6, 195]],
  [200, 50, 372426037, [120, 150, 63, 18, 181, 85, 45, 185]],
  [1000, 3, 159009348, [844, 91, 685, 3, 4, 5, 994, 993]],
  [1000, 50, 164918554, [810, 381, 595, 3, 221, 864, 440, 128]],
  [5000, 3, 244238041, [3751, 3749, 4998, 4993, 4, 5, 4989, 4988]],
  [5000, 50, 909941827, [4307, 4319, 2928, 2869, 3034, 4847, 4836, 4792]],
];

describe('goSortSlice', () => {
  it.each(GO)('orders ties exactly as Go sort.Slice (n=%i, keys mod %i)', (n, mod, checksum, head) => {
    const xs: { key: number; idx: number }[] = [];
    let s = (n * 7 + mod) >>> 0;
    for (let i = 0; i < n; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      xs.push({ key: (s >>> 16) % mod, idx: i });
    }
    goSortSlice(xs, (a, b) => a.key < b.key);
    let sum = 0n;
    xs.forEach((x, p) => (sum = (sum * 31n + BigInt(x.idx) + BigInt(p)) % 1000000007n));
    expect(xs.slice(0, 8).map((x) => x.idx)).toEqual(head);
    expect(Number(sum)).toBe(checksum);
    for (let i = 1; i < n; i++) expect(xs[i - 1]!.key <= xs[i]!.key).toBe(true);
  });
});
