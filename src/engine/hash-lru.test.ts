import { describe, expect, it } from 'vitest';
import { HashLru } from './hash-lru.js';

/** The obvious array-based LRU, as an oracle. */
class ArrayLru {
  keys: number[] = [];
  constructor(private readonly cap: number) {}
  touch(k: number): void {
    const i = this.keys.indexOf(k);
    if (i >= 0) this.keys.splice(i, 1);
    else if (this.keys.length >= this.cap) this.keys.shift();
    this.keys.push(k);
  }
}

describe('HashLru', () => {
  it('evicts the least recently used key and refreshes on touch', () => {
    const l = new HashLru(3);
    [1, 2, 3].forEach((k) => l.touch(k));
    l.touch(1);
    l.touch(4); // evicts 2
    expect(l.has(2)).toBe(false);
    expect(l.keys()).toEqual([3, 1, 4]);
  });

  it('matches an array LRU over a long random sequence', () => {
    const l = new HashLru(50);
    const o = new ArrayLru(50);
    let x = 7;
    for (let i = 0; i < 20000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const k = 1 + (x % 120) * 4294967296 + (x % 7);
      l.touch(k);
      o.touch(k);
    }
    expect(l.keys()).toEqual(o.keys);
    expect(l.size).toBe(50);
  });

  it.each([1, 2, 4097, 9000])('matches the array LRU at capacity %i, through growth and eviction', (cap) => {
    const l = new HashLru(cap);
    const o = new ArrayLru(cap);
    let x = 11;
    for (let i = 0; i < 30000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const k = 1 + (x % (cap + 3000)) * 65537;
      l.touch(k);
      o.touch(k);
      if (i % 997 === 0) expect(l.has(k)).toBe(true);
    }
    expect(l.keys()).toEqual(o.keys);
    expect(l.size).toBe(o.keys.length);
  });

  it('clone: an independent copy that goes on like an LRU fed the same keys, at its own capacity', () => {
    const l = new HashLru(100);
    for (let k = 1; k <= 5000; k += 97) l.touch(k);
    l.touch(98);
    const c = l.clone(60);
    expect(c.keys()).toEqual(l.keys());
    const oc = new ArrayLru(60);
    for (const k of l.keys()) oc.touch(k);
    for (let k = 3; k < 9000; k += 101) {
      c.touch(k);
      oc.touch(k);
    }
    expect(c.keys()).toEqual(oc.keys);
    expect(l.size).toBe(52); // the original is untouched
    expect(() => l.clone(10)).toThrow(RangeError);
  });
});
