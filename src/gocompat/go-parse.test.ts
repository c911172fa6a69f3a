import { describe, expect, it } from 'vitest';
import { GoParseError, goParseDuration, goParseFloat } from './go-parse.js';

const H = 3_600_000_000_000n;
const M = 60_000_000_000n;
const S = 1_000_000_000n;
const MS = 1_000_000n;

describe('goParseDuration (time.ParseDuration)', () => {
  const ok: [string, bigint][] = [
    ['0', 0n],
    ['+0', 0n],
    ['-0', 0n],
    ['5s', 5n * S],
    ['30s', 30n * S],
    ['1478s', 1478n * S],
    ['-5s', -5n * S],
    ['+5s', 5n * S],
    ['5.0s', 5n * S],
    ['5.6s', 5n * S + 600n * MS],
    ['5.s', 5n * S],
    ['.5s', 500n * MS],
    ['1.0s', S],
    ['1.004s', S + 4n * MS],
    ['100.00100s', 100n * S + MS],
    ['10ns', 10n],
    ['11us', 11_000n],
    ['12\u00b5s', 12_000n],
    ['12\u03bcs', 12_000n],
    ['13ms', 13n * MS],
    ['14s', 14n * S],
    ['15m', 15n * M],
    ['16h', 16n * H],
    ['3h30m', 3n * H + 30n * M],
    ['10.5s4m', 4n * M + 10n * S + 500n * MS],
    ['-2m3.4s', -(2n * M + 3n * S + 400n * MS)],
    ['1h2m3s4ms5us6ns', H + 2n * M + 3n * S + 4n * MS + 5000n + 6n],
    ['39h9m14.425s', 39n * H + 9n * M + 14n * S + 425n * MS],
    ['52763797000ns', 52763797000n],
    ['0.3333333333333333333h', 20n * M],
    ['9007199254740993ns', 9007199254740993n],
    ['9223372036854775807ns', 9223372036854775807n],
    ['9223372036854775.807us', 9223372036854775807n],
    ['9223372036854.775807ms', 9223372036854775807n],
    ['-9223372036854775808ns', -9223372036854775808n],
    ['0.100000000000000000000h', 6n * M],
    ['0.830103483285477580700h', 49n * M + 48n * S + 372539827n],
  ];
  for (const [s, want] of ok) it(`parses ${JSON.stringify(s)}`, () => expect(goParseDuration(s)).toBe(want));

  const bad: [string, string][] = [
    ['', 'time: invalid duration ""'],
    ['3', 'time: missing unit in duration "3"'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['.', 'time: invalid duration "."'],
    ['-.', 'time: invalid duration "-."'],
    ['.s', 'time: invalid duration ".s"'],
    ['+.s', 'time: invalid duration "+.s"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['100 ms', 'time: unknown unit " ms" in duration "100 ms"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['9223372036854775.808us', 'time: invalid duration "9223372036854775.808us"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
    ['\u00e9s', 'time: invalid duration "\\xc3\\xa9s"'],
  ];
  for (const [s, msg] of bad) {
    it(`rejects ${JSON.stringify(s)}`, () => {
      expect(() => goParseDuration(s)).toThrow(GoParseError);
      expect(() => goParseDuration(s)).toThrow(msg);
    });
  }
});

describe('goParseFloat (strconv.ParseFloat)', () => {
  const ok: [string, number][] = [
    ['1', 1],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['5.', 5],
    ['+2', 2],
    ['-2.5e3', -2500],
    ['1E-2', 0.01],
    ['1_000.5', 1000.5],
    ['0x1p-2', 0.25],
    ['0x1.8p1', 3],
    ['-0X_1P+4', -16],
    ['inf', Infinity],
    ['-Infinity', -Infinity],
    ['+INF', Infinity],
    ['1e-400', 0],
    ['0.1', 0.1],
  ];
  for (const [s, want] of ok) it(`parses ${JSON.stringify(s)}`, () => expect(goParseFloat(s)).toBe(want));
  it('parses NaN', () => expect(goParseFloat('nan')).toBeNaN());

  for (const s of ['', ' 1', '1 ', 'abc', '1x', '_1', '1_', '1__0', '1_.5', '0x1', '0x', '1e', '1e+', '+nan', 'infin', '--1', '.', '.e1', '0x.p1']) {
    it(`rejects ${JSON.stringify(s)} as invalid syntax`, () => {
      expect(() => goParseFloat(s)).toThrow(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
    });
  }
  it('reports overflow as out of range', () => {
    expect(() => goParseFloat('1e400')).toThrow('strconv.ParseFloat: parsing "1e400": value out of range');
    expect(() => goParseFloat('0x1p2000')).toThrow('value out of range');
  });
  it('rounds hex mantissas to nearest even, subnormals included', () => {
    expect(goParseFloat('0x1.00000000000008p0')).toBe(1); // exact half below an even neighbour
    expect(goParseFloat('0x1.00000000000018p0')).toBe(1 + 2 * 2 ** -52);
    expect(goParseFloat('0x1p-1074')).toBe(Number.MIN_VALUE);
    expect(goParseFloat('0x1p-1075')).toBe(0);
    expect(goParseFloat('0x3p-1076')).toBe(Number.MIN_VALUE);
  });
});
