import { describe, expect, it } from 'vitest';
import { TagMismatch, resolveGoScalar } from './go-scalar.js';
import type { GoScalar } from './go-scalar.js';

const plain = (text: string): GoScalar => resolveGoScalar(text, false, undefined);

describe('resolveGoScalar (yaml.v3 rules, not YAML 1.2 core)', () => {
  const cases: [string, GoScalar][] = [
    ['', { kind: 'null' }],
    ['~', { kind: 'null' }],
    ['Null', { kind: 'null' }],
    ['true', { kind: 'bool', value: true }],
    ['FALSE', { kind: 'bool', value: false }],
    // YAML 1.1 words are only booleans for a bool field, not when resolving.
    ['yes', { kind: 'str', value: 'yes' }],
    ['42', { kind: 'int', value: 42 }],
    ['-7', { kind: 'int', value: -7 }],
    ['+7', { kind: 'int', value: 7 }],
    ['1_000', { kind: 'int', value: 1000 }],
    ['010', { kind: 'int', value: 8 }],
    ['0o17', { kind: 'int', value: 15 }],
    ['0x1F', { kind: 'int', value: 31 }],
    ['0b101', { kind: 'int', value: 5 }],
    ['-0b11', { kind: 'int', value: -3 }],
    ['08', { kind: 'float', value: 8 }],
    ['18446744073709551615', { kind: 'int', value: Number(2n ** 64n - 1n) }],
    ['0.25', { kind: 'float', value: 0.25 }],
    ['.5', { kind: 'float', value: 0.5 }],
    ['1e3', { kind: 'float', value: 1000 }],
    ['1_0.5', { kind: 'float', value: 10.5 }],
    ['1e400', { kind: 'str', value: '1e400' }],
    ['.inf', { kind: 'float', value: Infinity }],
    ['-.Inf', { kind: 'float', value: -Infinity }],
    ['2024-01-02', { kind: 'timestamp' }],
    ['fcfs', { kind: 'str', value: 'fcfs' }],
    ['<<', { kind: 'str', value: '<<' }],
  ];
  for (const [text, want] of cases) {
    it(`plain ${JSON.stringify(text)}`, () => {
      const got = plain(text);
      if (want.kind === 'float' && Number.isNaN(want.value)) expect(got.kind).toBe('float');
      else expect(got).toEqual(want);
    });
  }

  it('.nan is a NaN float', () => {
    const got = plain('.NaN');
    expect(got.kind === 'float' && Number.isNaN(got.value)).toBe(true);
  });

  it('never resolves quoted or block scalars', () => {
    expect(resolveGoScalar('10', true, undefined)).toEqual({ kind: 'str', value: '10' });
  });

  it('honours core tags and leaves custom tags as text', () => {
    expect(resolveGoScalar('5', false, 'tag:yaml.org,2002:str')).toEqual({ kind: 'str', value: '5' });
    expect(resolveGoScalar('5', false, 'tag:yaml.org,2002:float')).toEqual({ kind: 'float', value: 5 });
    expect(resolveGoScalar('5', true, 'tag:yaml.org,2002:int')).toEqual({ kind: 'int', value: 5 });
    expect(resolveGoScalar('x', false, '!custom')).toEqual({ kind: 'str', value: 'x' });
    expect(() => resolveGoScalar('x', false, 'tag:yaml.org,2002:int')).toThrow(TagMismatch);
  });
});
