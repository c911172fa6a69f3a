/** Go text conversions; every expected string was printed by Go's fmt/strconv for the same input. */
import { describe, expect, it } from 'vitest';
import { goFixed, goFormatV, goParseFloat } from './go-text.js';

describe('goFixed (%.Nf)', () => {
  it.each([
    [0.8125, '0.812', '0.81', '1'],
    [0.0625, '0.062', '0.06', '0'],
    [0.3125, '0.312', '0.31', '0'],
    [1.125, '1.125', '1.12', '1'],
    [0.125, '0.125', '0.12', '0'],
    [2.5, '2.500', '2.50', '2'],
    [0.5, '0.500', '0.50', '0'],
    [1.0005, '1.000', '1.00', '1'],
    [0.1875, '0.188', '0.19', '0'],
  ])('%d', (x, f3, f2, f0) => {
    expect([goFixed(x, 3), goFixed(x, 2), goFixed(x, 0)]).toEqual([f3, f2, f0]);
  });

  it('keeps signs and spells non-finite values as Go does', () => {
    expect([goFixed(-0.8125, 3), goFixed(-0, 2), goFixed(NaN, 2), goFixed(Infinity, 1), goFixed(-Infinity, 1)]).toEqual(['-0.812', '-0.00', 'NaN', '+Inf', '-Inf']);
  });
});

describe('goFormatV (%v of float64)', () => {
  it('matches Go', () => {
    const xs = [1e6, 123456, 1234567.5, -1, -0.5, 0, -0, 1e-5, 0.0001, -1e21, 1e20, NaN, Infinity, -Infinity, 1e-7];
    expect(xs.map(goFormatV).join('|')).toBe('1e+06|123456|1.2345675e+06|-1|-0.5|0|-0|1e-05|0.0001|-1e+21|1e+20|NaN|+Inf|-Inf|1e-07');
  });
});

describe('goParseFloat (strconv.ParseFloat)', () => {
  it.each([
    ['0x1p-2', 0.25],
    ['1_0', 10],
    ['0x_1p0', 1],
    ['-inf', -Infinity],
    ['Infinity', Infinity],
    ['1e-400', 0],
    ['.5', 0.5],
    ['5.', 5],
    ['+.5e1', 5],
    ['0x.8p1', 1],
  ])('accepts %s', (s, v) => {
    expect(goParseFloat(s)).toEqual({ ok: true, value: v });
  });

  it('accepts nan', () => {
    const r = goParseFloat('NaN');
    expect(r.ok && Number.isNaN(r.value)).toBe(true);
  });

  it.each(['0x1', '+nan', 'infin', '1e', '', 'abc', '1__0', '_1', '1_', '0b1', '1.5.2', ' 1'])('rejects %j as invalid syntax', (s) => {
    expect(goParseFloat(s)).toEqual({ ok: false, error: 'invalid syntax' });
  });

  it('reports overflow as out of range', () => {
    expect(goParseFloat('1e400')).toEqual({ ok: false, error: 'value out of range' });
  });
});
