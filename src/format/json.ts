/**
 * The one way blis-ts parses JSON input: pre-scanned against the node, key, depth and length caps before
 * JSON.parse builds anything, a syntax error located at `file:line:col`, duplicate keys refused (as the YAML
 * inputs refuse them). JSON has no aliases, so the tree is never larger than the text.
 */
import { BlisError } from '../domain/errors.js';
import { INPUT_LIMITS } from '../domain/limits.js';
import { linePos, prescanJson, type ScanLimits } from './prescan.js';
import { DEFAULT_TEXT_LIMITS, INPUT_SYNTAX, INPUT_TOO_LARGE, checkTextSize } from './text-limits.js';

/**
 * Parses JSON with a size limit; a syntax error names `file:line:col`. (JSON has no aliases, so the tree is
 * never larger than the text.) A leading byte-order mark is accepted.
 */
export function parseJson(input: string, file: string, options: { readonly maxBytes?: number; readonly code?: string; readonly scan?: Partial<ScanLimits> } = {}): unknown {
  checkTextSize(input, file, options.maxBytes ?? DEFAULT_TEXT_LIMITS.maxBytes);
  checkJsonBounds(input, file, options);
  // A leading byte-order mark (editors on Windows write one) is not part of the document.
  const text = input.charCodeAt(0) === 0xfeff ? ` ${input.slice(1)}` : input;
  // An empty file has no document to be wrong about: say so rather than "Unexpected end of JSON input".
  if (text.trim() === '') throw new BlisError(options.code ?? INPUT_SYNTAX, `${file}: the file is empty (no JSON document); write the document or pass another file`, { file });
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    const msg = (e as Error).message;
    const m = /position (\d+)/.exec(msg);
    const offset = m === null ? jsonErrorOffset(text) : Number(m[1]);
    let line = 1;
    let col = 1;
    for (let i = 0; i < offset && i < text.length; i++) {
      if (text.charCodeAt(i) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    const what = msg.replace(/ in JSON at position \d+.*$/, '').replace(/, ".*" is not valid JSON$/s, '');
    throw new BlisError(options.code ?? INPUT_SYNTAX, `${file}:${line}:${col}: invalid JSON: ${what}; fix the JSON syntax`, { file, line, col });
  }
  // JSON.parse keeps the last of two equal keys; the YAML inputs (yaml.v3, as the reference) refuse them.
  const dup = duplicateJsonKey(text);
  if (dup !== null) {
    const { line, col } = linePos(text, dup.offset);
    const first = linePos(text, dup.first);
    throw new BlisError(options.code ?? INPUT_SYNTAX, `${file}:${line}:${col}: duplicate key ${JSON.stringify(dup.key)} (first defined on line ${first.line}); keep one`, { file, line, col });
  }
  return value;
}

/** The first key repeated within one object of `text` (valid JSON), with the offsets of both; null if none. */
export function duplicateJsonKey(text: string): { key: string; offset: number; first: number } | null {
  const stack: (Map<string, number> | null)[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 123) stack.push(new Map());
    else if (c === 91) stack.push(null);
    else if (c === 125 || c === 93) stack.pop();
    else if (c === 34) {
      const start = i;
      let escaped = false;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92) {
          escaped = true;
          i += 2;
        } else if (d === 34) break;
        else i++;
      }
      let j = i + 1;
      while (j < n && text.charCodeAt(j) <= 32) j++;
      const keys = stack[stack.length - 1];
      if (j < n && text.charCodeAt(j) === 58 && keys !== undefined && keys !== null) {
        const raw = text.slice(start + 1, i);
        const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
        const first = keys.get(key);
        if (first !== undefined) return { key, offset: start, first };
        keys.set(key, start);
      }
    }
  }
  return null;
}

/**
 * Bounds before work for JSON: values, keys per object, depth and string length counted in one pass before
 * JSON.parse builds anything; past a limit, a {@link BlisError} at `file:line:col`.
 */
export function checkJsonBounds(text: string, file: string, options: { readonly code?: string; readonly scan?: Partial<ScanLimits> } = {}): void {
  const p = prescanJson(text, { ...INPUT_LIMITS, ...options.scan });
  if (p === null) return;
  const { line, col } = linePos(text, p.offset);
  throw new BlisError(options.code ?? INPUT_TOO_LARGE, `${file}:${line}:${col}: ${p.problem}; ${p.fix}`, { file, line, col });
}

/**
 * Offset of the first syntax error in `text` (Node 20's JSON.parse does not always say). Only run after
 * JSON.parse failed, so it is written for clarity, not speed.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  class At extends Error {
    constructor(readonly offset: number) {
      super('json syntax');
    }
  }
  const fail = (): never => {
    throw new At(i);
  };
  const lit = (w: string): void => {
    if (text.startsWith(w, i)) i += w.length;
    else fail();
  };
  const str = (): void => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const num = (): void => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m === null || m[0] === '' || m[0] === '-') fail();
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 10_000) fail();
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') return str();
    if (c === 't') return lit('true');
    if (c === 'f') return lit('false');
    if (c === 'n') return lit('null');
    return num();
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail();
    return text.length;
  } catch (at) {
    if (at instanceof At) return at.offset;
    throw at;
  }
}
