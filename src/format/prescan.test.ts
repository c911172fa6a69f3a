import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { INPUT_LIMITS } from '../domain/limits.js';
import { linePos, prescanJson, prescanYaml } from './prescan.js';
import { parseYaml } from './yaml.js';
import { parseJson } from './json.js';

const small = { ...INPUT_LIMITS, yamlIndicators: 40, yamlKeys: 20, jsonValues: 40, jsonKeysPerObject: 5, depth: 6, scalarChars: 10 };

/** Values of a parsed YAML tree (keys and values), to check that the indicator count bounds them. */
function values(text: string): number {
  let n = 0;
  const visit = (v: unknown): void => {
    n++;
    if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') for (const [, x] of Object.entries(v)) { n++; visit(x); }
  };
  visit(parseDocument(text).toJS());
  return n;
}

describe('prescan', () => {
  it('YAML: the indicator count bounds the values, whatever the syntax', () => {
    for (const text of ['a: 1\nb: [1, 2, {c: d}]\n', '- - - x\n- {a, b, c}\n', '[a: b, c: d]\n', 'a: |\n  x\n  y\nb: "q: [1"\n', '? a\n: b\n']) {
      const scan = prescanYaml(text, { ...INPUT_LIMITS, yamlIndicators: 1e9 });
      expect(scan).toBeNull();
      let ind = 0;
      for (const c of text) if (':-,[{?'.includes(c)) ind++;
      expect(values(text)).toBeLessThanOrEqual(1 + 3 * ind);
    }
  });

  it('YAML: counts, keys and depth past the limits are located', () => {
    expect(prescanYaml('a: [1, 2, 3]\n'.repeat(20), small)?.problem).toMatch(/more than 40 YAML structure indicators/);
    expect(prescanYaml('a: 1\n'.repeat(21), small)?.problem).toMatch(/more than 20 mapping keys/);
    const deep = prescanYaml(`a: ${'['.repeat(10)}`, small)!;
    expect(deep.problem).toMatch(/nests deeper than 6 levels/);
    expect(linePos(`a: ${'['.repeat(10)}`, deep.offset)).toEqual({ line: 1, col: 8 });
    // Brackets inside quoted scalars are not nesting; a block scalar's indentation is bounded.
    expect(prescanYaml('a: "[[[[[[[[[["\nb: \'{{{{{{{{\'\n', small)).toBeNull();
    expect(prescanYaml('a:\n  b:\n    c:\n      - - - d\n', small)?.problem).toMatch(/nests deeper/);
  });

  it('JSON: exact values, keys per object, depth and string length', () => {
    expect(prescanJson('{"a":[1,2,{"b":"c"}],"d":null}', small)).toBeNull();
    expect(prescanJson(`[${'1,'.repeat(40)}1]`, small)?.problem).toMatch(/more than 40 values/);
    expect(prescanJson('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}', small)?.problem).toMatch(/more than 5 keys/);
    expect(prescanJson('[[[[[[[1]]]]]]]', small)?.problem).toMatch(/nests deeper than 6 levels/);
    expect(prescanJson('["0123456789x"]', small)?.problem).toMatch(/longer than 10 characters/);
    expect(prescanJson('{"k\\"ey":"v\\\\"}', small)).toBeNull();
  });

  it('parseYaml and parseJson refuse before parsing, at file:line:col', () => {
    expect(() => parseYaml(`x: 1\ny: ${'['.repeat(1000)}`, 'deep.yaml')).toThrow(/^deep\.yaml:2:\d+: the file nests deeper than 128 levels/);
    expect(() => parseJson(`${'['.repeat(200)}${']'.repeat(200)}`, 'c.json')).toThrow(/^c\.json:1:129: the file nests deeper than 128 levels/);
    // Duplicate keys are still refused (in linear time), as yaml's uniqueKeys did.
    expect(() => parseYaml('a: 1\nb: 2\na: 3\n', 'd.yaml')).toThrow(/^d\.yaml:3:1: invalid YAML: Map keys must be unique/);
    const many = Array.from({ length: 50_000 }, (_, i) => `k${i}: ${i}`).join('\n');
    // Linear, not quadratic: a quadratic check of 50,000 keys is 1.25e9 comparisons (minutes). Measured in CPU
    // time (this process's own work, whatever else the machine runs); linear parsing takes ~0.3 s.
    const cpu0 = process.cpuUsage();
    expect(parseYaml(many, 'm.yaml').toJs()).toHaveProperty('k49999', 49_999);
    const cpu = process.cpuUsage(cpu0);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(5_000);
  });
});
