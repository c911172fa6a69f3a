import { describe, expect, it } from 'vitest';
import { BlisError } from '../domain/errors.js';
import { checkNotBinary, readCsv } from './csv.js';
import { locateJson } from './json-locate.js';

function fails(f: () => unknown): BlisError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected a BlisError');
}

describe('readCsv', () => {
  it('splits records like Go encoding/csv: quotes, CRLF, blank lines, multi-line fields', () => {
    const rows = readCsv('\ufeffa,b\r\n\r\n"x,1","line1\nline2"\n"q""q",\n', 'f.csv');
    expect(rows).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 3, fields: ['x,1', 'line1\nline2'] },
      { line: 5, fields: ['q"q', ''] },
    ]);
  });

  it('refuses oversized and binary input with a position, never the bytes', () => {
    expect(fails(() => readCsv('a,b\n'.repeat(100), 'big.csv', { maxBytes: 16 })).message).toMatch(/^big\.csv:1: the file is larger than 16 bytes/);
    const e = fails(() => readCsv('a,b\n1,\u0000\u0007\n', 'bin.csv'));
    expect(e.message).toBe('bin.csv:2: the file holds binary data (a NUL byte), not text (column 3); check the path: this option takes a text file');
    expect(() => checkNotBinary('fine text', 'ok.csv')).not.toThrow();
  });

  it('locates syntax errors at their line', () => {
    expect(fails(() => readCsv('a\n"open\n', 'q.csv')).message).toMatch(/^q\.csv:2: quoted field is never closed/);
    expect(fails(() => readCsv('a\nx"y\n', 'q.csv')).message).toMatch(/^q\.csv:2: bare " in non-quoted field/);
  });
});

describe('locateJson', () => {
  const text = '{\n  "a": {"b": [10, {"c": 3}]},\n  "a2": 1,\n  "a": {"b": [20]}\n}\n';
  it('finds the value at a path (the last duplicate key, as JSON.parse keeps)', () => {
    expect(locateJson(text, ['a2'])).toEqual({ line: 3, col: 9 });
    expect(locateJson(text, ['a', 'b', 0])).toEqual({ line: 4, col: 15 });
  });
  it('falls back to the deepest value that exists', () => {
    expect(locateJson(text, ['a2', 'missing'])).toEqual({ line: 3, col: 9 });
    expect(locateJson(text, ['nope'])).toEqual({ line: 1, col: 1 });
  });
});
