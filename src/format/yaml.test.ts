import { describe, expect, it } from 'vitest';
import { BlisError } from '../domain/errors.js';
import { parseYaml } from './yaml.js';
import { parseJson } from './json.js';

function fails(f: () => unknown): BlisError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected a BlisError');
}

describe('parseYaml limits', () => {
  it('refuses an alias bomb quickly, at the alias that crosses the limit', () => {
    let s = 'a0: &a0 [1,2,3,4,5,6,7,8,9,10]\n';
    for (let i = 1; i < 9; i++) s += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(',')}]\n`;
    const t = performance.now();
    const e = fails(() => parseYaml(s, 'bomb.yaml'));
    expect(performance.now() - t).toBeLessThan(2000);
    expect(e.message).toMatch(/^bomb\.yaml:\d+:\d+: the document expands to more than 2,000,000 values/);
    expect(e.file).toBe('bomb.yaml');
  });

  it('refuses exponential merge keys', () => {
    let m = 'm0: &m0 {x: 1}\n';
    for (let i = 1; i < 40; i++) m += `m${i}: &m${i}\n  <<: [*m${i - 1}, *m${i - 1}]\n  y${i}: 1\n`;
    const e = fails(() => parseYaml(m, 'merge.yaml', { yaml: { merge: true } }));
    expect(e.message).toContain('expands to more than');
  });

  it('accepts ordinary aliases and resolves them through deref', () => {
    const p = parseYaml('a: &x {b: 1}\nc: *x\n', 'ok.yaml');
    expect(p.doc.toJS()).toEqual({ a: { b: 1 }, c: { b: 1 } });
  });

  it('names the line and column of syntax errors, unknown anchors and over-deep nesting', () => {
    expect(fails(() => parseYaml('a: [1, 2\n', 'bad.yaml')).message).toMatch(/^bad\.yaml:\d+:\d+: invalid YAML/);
    expect(fails(() => parseYaml('a: 1\nb: *x\n', 'x.yaml')).message).toMatch(/^x\.yaml:2:4: alias \*x names no anchor/);
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    expect(fails(() => parseYaml(deep, 'deep.yaml')).message).toContain('nests deeper than 128 levels');
  });

  it('refuses oversized text before parsing', () => {
    const e = fails(() => parseYaml('a: 1\n'.repeat(100), 'big.yaml', { limits: { maxBytes: 64 } }));
    expect(e.code).toBe('INPUT_TOO_LARGE');
    expect(e.message).toContain('larger than 64 bytes');
  });
});

describe('parseJson', () => {
  it('locates syntax errors', () => {
    expect(fails(() => parseJson('{"a": 1,\n "b": }', 'bad.json')).message).toMatch(/^bad\.json:2:7: invalid JSON/);
  });
});

describe('parseYaml extras', () => {
  it('reads the first document of a stream and reports an empty one', () => {
    const p = parseYaml('a: 1\n---\nb: [unclosed\n', 'multi.yaml', { documents: 'first' });
    expect(p.documents).toBe(2);
    expect(p.toJs()).toEqual({ a: 1 });
    expect(parseYaml('', 'empty.yaml', { documents: 'first' }).documents).toBe(0);
  });

  it('toJs expands aliases through the loader and applies merge keys when asked', () => {
    const p = parseYaml('base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\nlist: [*b, *b]\n', 'm.yaml', { yaml: { merge: true } });
    expect(p.toJs(undefined, { merge: true })).toEqual({ base: { x: 1, y: 2 }, use: { x: 1, y: 3 }, list: [{ x: 1, y: 2 }, { x: 1, y: 2 }] });
    const proto = parseYaml('__proto__: {polluted: 1}\n', 'p.yaml').toJs() as Record<string, unknown>;
    expect(Object.keys(proto)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('raises errors through the caller\'s hook', () => {
    expect(() =>
      parseYaml('a: *nope\n', 'h.yaml', {
        fail: (pos, problem) => {
          throw new Error(`hooked ${pos.line}:${pos.col} ${problem}`);
        },
      }),
    ).toThrow(/^hooked 1:4 alias \*nope names no anchor/);
  });
});

describe('parseJson extras', () => {
  it('accepts a leading byte-order mark', () => {
    expect(parseJson('\ufeff{"a": 1}', 'bom.json')).toEqual({ a: 1 });
  });
  it('an empty or blank file is named as empty, not as a syntax error at 1:1', () => {
    for (const text of ['', '  \n\t\n', '\ufeff']) {
      const e = fails(() => parseJson(text, 'e.json'));
      expect(e.message).toBe('e.json: the file is empty (no JSON document); write the document or pass another file');
    }
    expect(fails(() => parseJson('{', 'open.json')).message).toMatch(/^open\.json:1:2: invalid JSON/);
  });
});

describe('parseJson: duplicate keys are refused, as the YAML inputs refuse them', () => {
  it('names the key, its line and the first definition', () => {
    expect(fails(() => parseJson('{"a": 1,\n "b": {"c": 1, "c": 2}}', 'd.json')).message).toBe('d.json:2:16: duplicate key "c" (first defined on line 2); keep one');
    expect(fails(() => parseJson('{"a": 1,\n"\\u0061": 2}', 'd.json')).message).toMatch(/^d\.json:2:1: duplicate key "a" \(first defined on line 1\)/);
  });
  it('accepts equal keys in different objects, and strings that look like keys in arrays', () => {
    expect(parseJson('{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}], "c": ["a", "a"]}', 'ok.json')).toEqual({ a: { a: 1 }, b: [{ a: 1 }, { a: 2 }], c: ['a', 'a'] });
    expect(parseJson('{"x\\"y": 1, "x": 2}', 'ok.json')).toEqual({ 'x"y': 1, x: 2 });
  });
});
