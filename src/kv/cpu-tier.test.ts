import { describe, expect, it } from 'vitest';
import { CpuTier } from './cpu-tier.js';

describe('CpuTier', () => {
  it('evicts the oldest entry when full and counts evictions', () => {
    const c = new CpuTier(2);
    c.store(1);
    c.store(2);
    c.store(3);
    expect(c.has(1)).toBe(false);
    expect(c.lruOrder()).toEqual([2, 3]);
    expect(c.used).toBe(2);
    expect(c.evictionCount).toBe(1);
  });

  it('touch refreshes recency; duplicate store and missing touch are no-ops', () => {
    const c = new CpuTier(2);
    c.store(1);
    c.store(2);
    expect(c.touch(1)).toBe(true);
    c.store(1);
    expect(c.lruOrder()).toEqual([2, 1]);
    c.store(3);
    expect(c.lruOrder()).toEqual([1, 3]);
    expect(c.touch(99)).toBe(false);
    expect(c.used).toBe(2);
  });

  it('evictHead on an empty tier does nothing; non-positive capacity is rejected', () => {
    const c = new CpuTier(10);
    c.evictHead();
    expect(c.used).toBe(0);
    expect(c.evictionCount).toBe(0);
    expect(() => new CpuTier(0)).toThrow();
    expect(() => new CpuTier(-1)).toThrow();
  });

  it('keeps exact LRU order past its initial slot allocation', () => {
    const c = new CpuTier(2500);
    for (let i = 1; i <= 3000; i++) c.store(i);
    c.touch(600);
    c.store(3001);
    expect(c.used).toBe(2500);
    expect(c.evictionCount).toBe(501);
    const order = c.lruOrder();
    expect(order.slice(0, 2)).toEqual([502, 503]);
    expect(order.slice(-2)).toEqual([600, 3001]);
  });
  it('matches a move-to-tail list under long touch-heavy random sequences (queue compaction and growth)', () => {
    for (const [capacity, keys, seed] of [
      [5, 12, 7],
      [300, 900, 8],
      [3000, 5000, 9],
    ] as const) {
      let x: number = seed;
      const rand = (k: number): number => {
        x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
        return x % k;
      };
      const c = new CpuTier(capacity);
      const ref: number[] = [];
      let evictions = 0;
      for (let op = 0; op < 40000; op++) {
        const h = 1 + rand(keys);
        const i = ref.indexOf(h);
        if (rand(4) === 0) {
          expect(c.touch(h)).toBe(i >= 0);
          if (i >= 0) ref.push(...ref.splice(i, 1));
        } else {
          expect(c.touchOrStore(h)).toBe(i < 0);
          if (i >= 0) ref.push(...ref.splice(i, 1));
          else {
            if (ref.length >= capacity) {
              ref.shift();
              evictions++;
            }
            ref.push(h);
          }
        }
        if (op % 997 === 0) expect(c.lruOrder()).toEqual(ref);
      }
      expect(c.lruOrder()).toEqual(ref);
      expect(c.evictionCount).toBe(evictions);
      expect(c.used).toBe(ref.length);
    }
  });
});
