import { describe, expect, it } from 'vitest';
import { SampleStore } from './instance-metrics.js';

describe('SampleStore', () => {
  it.each([0, 1, 255, 256, 257, 65_535, 65_536, 65_537, 200_000])('keeps %i values in order (at and toArray)', (n) => {
    const s = new SampleStore();
    const want: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = (i * 7919) % 100_003;
      s.push(v);
      want.push(v);
    }
    expect(s.length).toBe(n);
    const all = s.toArray();
    expect(all).toBeInstanceOf(Int32Array);
    expect(Array.from(all)).toEqual(want);
    for (const i of [0, 255, 256, 65_535, 65_536, 199_999]) if (i < n) expect(s.at(i)).toBe(want[i]);
  });

  it.each([10, 300, 70_000])('widens to 64-bit floats at the first non-int32 value (after %i ints), keeping what it held', (before) => {
    const s = new SampleStore();
    const want: number[] = [];
    for (let i = 0; i < before; i++) {
      s.push(i);
      want.push(i);
    }
    for (const v of [0.5, 2 ** 40, -3, 1e-9]) {
      s.push(v);
      want.push(v);
    }
    for (let i = 0; i < 70_000; i++) {
      s.push(i + 0.25);
      want.push(i + 0.25);
    }
    const all = s.toArray();
    expect(all).toBeInstanceOf(Float64Array);
    expect(Array.from(all)).toEqual(want);
    expect(s.at(before)).toBe(0.5);
    expect(s.at(want.length - 1)).toBe(want[want.length - 1]);
  });
});
