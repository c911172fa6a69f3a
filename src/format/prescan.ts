/**
 * Bounds before work: one linear pass over the text of a YAML or JSON file, building nothing, that refuses a file
 * whose tree would be too large or too deep before a parser allocates it. The counts are upper bounds: the YAML
 * scan counts every structure indicator wherever it stands (inside strings and comments too), so it can refuse
 * only a file with at least that many indicators, never let through one that builds more values than the cap.
 */
import { INPUT_LIMITS, grouped } from '../domain/limits.js';

export interface ScanLimits {
  readonly yamlIndicators: number;
  readonly yamlKeys: number;
  readonly jsonValues: number;
  readonly jsonKeysPerObject: number;
  readonly depth: number;
  readonly scalarChars: number;
  readonly yamlDoubleQuotedChars: number;
}

/** A limit the text crossed: where (0-based offset of the character that crossed it) and what. */
export interface ScanProblem {
  readonly offset: number;
  readonly problem: string;
  readonly fix: string;
}

const SPLIT = 'split the file or write fewer values';

/** 1-based line and column of `offset` (a linear count, only run once a problem is found). */
export function linePos(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  return { line, col: offset - last };
}

/**
 * YAML: indicator and `:` counts (sound upper bounds of values and keys) and an estimate of the nesting depth
 * (open flow brackets outside quoted scalars, plus the indentation levels, plus the block indicators of the line).
 * Deeper nesting than the estimate sees is still caught: a parser's stack overflow is reported as too deep.
 */
export function prescanYaml(text: string, limits: ScanLimits = INPUT_LIMITS): ScanProblem | null {
  // Counts first, over every character (strings and comments too): sound whatever the tokens are.
  let indicators = 0;
  let keys = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 58 || c === 45 || c === 44 || c === 91 || c === 123 || c === 63) {
      indicators++;
      if (indicators > limits.yamlIndicators) {
        return { offset: i, problem: `the file holds more than ${grouped(limits.yamlIndicators)} YAML structure indicators (: - , [ { ?), so possibly as many values (limit ${grouped(limits.yamlIndicators)})`, fix: SPLIT };
      }
      if (c === 58) {
        keys++;
        if (keys > limits.yamlKeys) return { offset: i, problem: `the file holds more than ${grouped(limits.yamlKeys)} mapping keys (counted as ':' characters; limit ${grouped(limits.yamlKeys)})`, fix: SPLIT };
      }
    }
  }
  let flow = 0;
  const indents: number[] = [0];
  let lineStart = 0;
  let lineIndicators = 0;
  let quoted = 0; // characters inside double-quoted scalars so far
  let quote = 0; // 34 or 39 while inside a quoted scalar (tracked only to keep brackets in strings out of the depth)
  let prev = 10; // previous non-space character (10: start of line)
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      lineStart = i + 1;
      lineIndicators = 0;
      prev = 10;
      // Indentation of the next line with content (tabs are not YAML indentation; counted as spaces is harmless).
      let j = lineStart;
      while (j < n && text.charCodeAt(j) === 32) j++;
      const nc = j < n ? text.charCodeAt(j) : 10;
      if (quote === 0 && flow === 0 && nc !== 10 && nc !== 13 && nc !== 35) {
        const indent = j - lineStart;
        while (indents.length > 0 && indents[indents.length - 1]! > indent) indents.pop();
        if (indents.length === 0 || indents[indents.length - 1]! < indent) indents.push(indent);
      }
      continue;
    }
    if (quote !== 0) {
      if (quote === 34 && ++quoted > limits.yamlDoubleQuotedChars) {
        return { offset: i, problem: `the file holds more than ${grouped(limits.yamlDoubleQuotedChars)} characters inside double-quoted strings (limit ${grouped(limits.yamlDoubleQuotedChars)}; the YAML parser builds them one character at a time)`, fix: 'write long text as single-quoted strings or block scalars (| or >), or shorten it' };
      }
      if (c === quote) {
        if (c === 34) {
          let b = 0;
          for (let k = i - 1; k >= 0 && text.charCodeAt(k) === 92; k--) b++;
          if (b % 2 === 0) quote = 0;
        } else if (i + 1 < n && text.charCodeAt(i + 1) === 39) i++;
        else quote = 0;
      }
      continue;
    }
    if (c === 32 || c === 9 || c === 13) continue;
    if ((c === 34 || c === 39) && (prev === 10 || prev === 58 || prev === 45 || prev === 44 || prev === 91 || prev === 123 || prev === 63)) {
      quote = c;
      prev = c;
      continue;
    }
    if (c === 35 && (i === 0 || text.charCodeAt(i - 1) <= 32)) {
      const e = text.indexOf('\n', i);
      i = (e === -1 ? n : e) - 1;
      continue;
    }
    if (c === 91 || c === 123) flow++;
    else if ((c === 93 || c === 125) && flow > 0) flow--;
    else if ((c === 45 || c === 63 || c === 58) && (i + 1 >= n || text.charCodeAt(i + 1) <= 32)) lineIndicators++;
    prev = c;
    if (flow + indents.length + lineIndicators > limits.depth) {
      return { offset: i, problem: `the file nests deeper than ${limits.depth} levels (estimated from its brackets and indentation)`, fix: 'flatten the structure' };
    }
  }
  return null;
}

/** JSON: exact counts of values, of each object's keys, of the nesting depth and of each string's length. */
export function prescanJson(text: string, limits: ScanLimits = INPUT_LIMITS): ScanProblem | null {
  let values = 0;
  const keys: number[] = [];
  const n = text.length;
  let expectValue = true;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92) i += 2;
        else if (d === 34) break;
        else i++;
      }
      if (i - start - 1 > limits.scalarChars) return { offset: start, problem: `a string is longer than ${grouped(limits.scalarChars)} characters (limit ${grouped(limits.scalarChars)})`, fix: 'shorten it' };
      // A key is a string directly followed by ':' (whitespace aside).
      let j = i + 1;
      while (j < n && text.charCodeAt(j) <= 32) j++;
      if (j < n && text.charCodeAt(j) === 58 && keys.length > 0) {
        const k = keys.length - 1;
        keys[k] = keys[k]! + 1;
        if (keys[k] > limits.jsonKeysPerObject) return { offset: start, problem: `an object holds more than ${grouped(limits.jsonKeysPerObject)} keys (limit ${grouped(limits.jsonKeysPerObject)})`, fix: SPLIT };
        expectValue = false;
        continue;
      }
    } else if (c === 123 || c === 91) {
      keys.push(0);
      if (keys.length > limits.depth) return { offset: i, problem: `the file nests deeper than ${limits.depth} levels`, fix: 'flatten the structure' };
    } else if (c === 125 || c === 93) {
      keys.pop();
      expectValue = false;
      continue;
    } else if (c === 44 || c === 58) {
      expectValue = true;
      continue;
    } else if (c <= 32) continue;
    else if (!expectValue) continue;
    // A value starts here (an object, array, string, number or literal).
    expectValue = c === 123 || c === 91;
    values++;
    if (values > limits.jsonValues) return { offset: i, problem: `the file holds more than ${grouped(limits.jsonValues)} values (limit ${grouped(limits.jsonValues)})`, fix: SPLIT };
    if (c !== 34 && c !== 123 && c !== 91) {
      while (i + 1 < n) {
        const d = text.charCodeAt(i + 1);
        if (d === 44 || d === 93 || d === 125 || d <= 32) break;
        i++;
      }
    }
  }
  return null;
}
