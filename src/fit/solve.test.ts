import { describe, expect, it } from 'vitest';
import { choleskySolve, robustScale, solveRobust, type LinearRows } from './solve.js';

/** Rows y_i = a_i · truth (+ noise), residuals relative to y. */
function rows(a: number[][], y: number[]): LinearRows {
  const k = a[0]!.length;
  return {
    a: Float64Array.from(a.flat()),
    y: Float64Array.from(y),
    d: Float64Array.from(y.map(Math.abs)),
    w: new Float64Array(y.length).fill(1),
    g: new Int32Array(y.length),
    groups: 1,
    n: y.length,
    k,
  };
}

const free = (k: number): { lower: number[]; fixed: boolean[] } => ({ lower: new Array<number>(k).fill(-1e9), fixed: new Array<boolean>(k).fill(false) });

describe('robust least squares', () => {
  it('Cholesky solves a hand-checked 2×2 system', () => {
    // [4 2; 2 3] x = [2; 1] → x = [0.5, 0]
    const x = new Float64Array(2);
    expect(choleskySolve(Float64Array.from([4, 2, 2, 3]), Float64Array.from([2, 1]), 2, [true, true], x)).toBe(true);
    expect(x[0]).toBeCloseTo(0.5, 12);
    expect(x[1]).toBeCloseTo(0, 12);
    // Singular: the second column repeats the first.
    expect(choleskySolve(Float64Array.from([1, 1, 1, 1]), Float64Array.from([1, 1]), 2, [true, true], new Float64Array(2))).toBe(false);
  });

  it('recovers exact coefficients from exact data', () => {
    const truth = [2.5, 40];
    const a = Array.from({ length: 30 }, (_, i) => [10 + i, 1 + (i % 3)]);
    const r = solveRobust(rows(a, a.map((v) => v[0]! * truth[0]! + v[1]! * truth[1]!)), [1, 1], free(2));
    expect(r.ok).toBe(true);
    expect(r.x[0]).toBeCloseTo(2.5, 9);
    expect(r.x[1]).toBeCloseTo(40, 7);
  });

  it('a few stalled requests barely move the Huber fit, unlike plain least squares', () => {
    // 100 + 3·x ± 1, with four observations stalled to 3× their value (relative residual −2/3 each).
    const a = Array.from({ length: 60 }, (_, i) => [1, i + 1]);
    const y = a.map((v, i) => 100 + 3 * v[1]! + (i % 2 === 0 ? 1 : -1));
    for (const i of [5, 17, 33, 50]) y[i]! *= 3;
    const robust = solveRobust(rows(a, y), [1, 1], free(2));
    const plain = solveRobust(rows(a, y), [1, 1], { ...free(2), delta: 1e9 });
    expect(Math.abs(robust.x[0]! - 100)).toBeLessThan(0.5);
    expect(Math.abs(plain.x[0]! - 100)).toBeGreaterThan(4 * Math.abs(robust.x[0]! - 100));
    expect(Math.abs(robust.x[1]! - 3)).toBeLessThan(0.01);
  });

  it('keeps unknowns inside their bounds and fixed unknowns where they are', () => {
    // The data wants x0 = -1; bounded at 0 it stays at 0 and x1 absorbs what it can.
    const a = Array.from({ length: 20 }, (_, i) => [1, 1 + i]);
    const y = a.map((v) => -1 + 2 * v[1]!);
    const r = solveRobust(rows(a, y), [1, 1], { lower: [0, 0], fixed: [false, false] });
    expect(r.x[0]).toBe(0);
    expect(r.x[1]).toBeGreaterThan(0);
    const f = solveRobust(rows(a, y), [7, 1], { lower: [-10, -10], fixed: [true, false] });
    expect(f.x[0]).toBe(7);
  });

  it('damping pulls a step towards the start point', () => {
    const a = Array.from({ length: 10 }, (_, i) => [1 + i]);
    const y = a.map((v) => 5 * v[0]!);
    const undamped = solveRobust(rows(a, y), [1], free(1));
    const damped = solveRobust(rows(a, y), [1], { ...free(1), lambda: 10 });
    expect(undamped.x[0]).toBeCloseTo(5, 9);
    expect(damped.x[0]).toBeGreaterThan(1);
    expect(damped.x[0]).toBeLessThan(2);
  });

  it('robust scale is 1.4826 × the median absolute residual', () => {
    expect(robustScale(Float64Array.from([0.01, -0.02, 0.03, -0.5, 0.02]), new Float64Array(5).fill(1))).toBeCloseTo(1.4826 * 0.02, 12);
  });
});
