/**
 * A small block-style YAML writer that reproduces gopkg.in/yaml.v3's `Marshal` output for the shapes trace
 * headers use (nested mappings, sequences of mappings, scalars): 4-space indent, sequences indented under
 * their key, no line wrapping, yaml.v3's scalar quoting rules and its "natural" map-key order.
 */
import { formatFloatG } from './go-float-format.js';

export type YamlTree =
  | { readonly k: 'scalar'; readonly text: string }
  | { readonly k: 'map'; readonly entries: ReadonlyArray<readonly [string, YamlTree]> }
  | { readonly k: 'seq'; readonly items: readonly YamlTree[] };

export const yScalar = (text: string): YamlTree => ({ k: 'scalar', text });
export const yStr = (s: string): YamlTree => yScalar(yamlString(s));
export const yInt = (n: number | bigint): YamlTree => yScalar(n === 0 ? '0' : String(n));
export const yFloat = (x: number): YamlTree => {
  const s = formatFloatG(x);
  return yScalar(s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s);
};
export const yBool = (b: boolean): YamlTree => yScalar(b ? 'true' : 'false');

const YAML_FLOAT_RE = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_RE = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const TIMESTAMP_RE = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$/;
const OLD_BOOLS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF']);
const RESERVED = new Set([
  '', '~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
  '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF', '.nan', '.NaN', '.NAN', '<<',
]);

/** Would an unquoted `s` be read back as something other than a string (so yaml.v3 double-quotes it)? */
function resolvesToNonString(s: string): boolean {
  if (RESERVED.has(s) || OLD_BOOLS.has(s) || BASE60_RE.test(s) || TIMESTAMP_RE.test(s)) return true;
  const plain = s.replaceAll('_', '');
  if (/^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[0-9]+)$/.test(plain)) return true;
  return YAML_FLOAT_RE.test(s);
}

function isPrintable(cp: number): boolean {
  return (
    cp === 0x0a || (cp >= 0x20 && cp <= 0x7e) || cp === 0x85 || (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff) || (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

const isBreak = (cp: number | undefined): boolean => cp === 0x0a || cp === 0x0d || cp === 0x85 || cp === 0x2028 || cp === 0x2029;
const isBlankOrEnd = (cp: number | undefined): boolean => cp === undefined || cp === 0x20 || cp === 0x09 || isBreak(cp);

/** libyaml's scalar analysis, reduced to the two answers block context needs. */
function analyze(cps: readonly number[]): { plain: boolean; single: boolean } {
  let plain = true;
  let single = true;
  const first = cps[0];
  const s3 = String.fromCodePoint(...cps.slice(0, 3));
  if (s3 === '---' || s3 === '...') plain = false;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i] ?? 0;
    const ch = String.fromCodePoint(c);
    const followedBySpace = isBlankOrEnd(cps[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) plain = false;
      if ((ch === '?' || ch === ':' || ch === '-') && followedBySpace) plain = false;
    } else {
      if (ch === ':' && followedBySpace) plain = false;
      if (ch === '#' && isBlankOrEnd(cps[i - 1])) plain = false;
    }
    if (!isPrintable(c) || c === 0xfeff || c === 0x09) {
      plain = false;
      single = false;
    }
    if (isBreak(c)) {
      plain = false;
      single = false;
    }
  }
  const last = cps[cps.length - 1];
  if (first === 0x20 || last === 0x20) plain = false;
  return { plain, single };
}

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (isPrintable(c) && c !== 0xfeff && !isBreak(c) && ch !== '"' && ch !== '\\') {
      out += ch;
      continue;
    }
    const named: Record<number, string> = {
      0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x1b: 'e',
      0x22: '"', 0x5c: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
    };
    const n = named[c];
    if (n !== undefined) out += `\\${n}`;
    else if (c <= 0xff) out += `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (c <= 0xffff) out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += `\\U${c.toString(16).toUpperCase().padStart(8, '0')}`;
  }
  return out + '"';
}

/**
 * A string scalar as yaml.v3 writes it: plain when that reads back as the same string, otherwise single-quoted,
 * or double-quoted for strings that would resolve to another type or hold non-printable characters.
 * (yaml.v3 writes multi-line strings as literal blocks; they are double-quoted here, which reads back the same.)
 */
export function yamlString(s: string): string {
  if (resolvesToNonString(s)) return doubleQuoted(s);
  const cps = Array.from(s, (ch) => ch.codePointAt(0) ?? 0);
  const a = analyze(cps);
  if (a.plain) return s;
  if (a.single) return `'${s.replaceAll("'", "''")}'`;
  return doubleQuoted(s);
}

const isLetter = (ch: string): boolean => /\p{L}/u.test(ch);
const isDigit = (ch: string): boolean => /\p{Nd}/u.test(ch);

/** yaml.v3's ordering of string map keys: letters by code point, digit runs by numeric value. */
export function yamlKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  let digits = false;
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const x = ar[i] ?? '';
    const y = br[i] ?? '';
    if (x === y) {
      digits = isDigit(x);
      continue;
    }
    const xl = isLetter(x);
    const yl = isLetter(y);
    if (xl && yl) return (x.codePointAt(0) ?? 0) < (y.codePointAt(0) ?? 0);
    if (xl || yl) return digits ? xl : yl;
    let an = 0n;
    let bn = 0n;
    if (x === '0' || y === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j] ?? ''); j--) {
        if (ar[j] !== '0') {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && isDigit(ar[ai] ?? ''); ai++) an = an * 10n + BigInt((ar[ai]?.codePointAt(0) ?? 48) - 48);
    for (; bi < br.length && isDigit(br[bi] ?? ''); bi++) bn = bn * 10n + BigInt((br[bi]?.codePointAt(0) ?? 48) - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return (x.codePointAt(0) ?? 0) < (y.codePointAt(0) ?? 0);
  }
  return ar.length < br.length;
}

export function sortYamlKeys(keys: Iterable<string>): string[] {
  return [...keys].sort((a, b) => (yamlKeyLess(a, b) ? -1 : yamlKeyLess(b, a) ? 1 : 0));
}

/** yaml.v3 aligns every nested block to the next multiple of the indent width. */
const nextIndent = (indent: number): number => 4 * Math.floor((indent + 4) / 4);

function emitMap(entries: ReadonlyArray<readonly [string, YamlTree]>, indent: number, out: string[], lead?: string): void {
  entries.forEach(([key, val], i) => {
    const pad = i === 0 && lead !== undefined ? lead : ' '.repeat(indent);
    const k = yamlString(key);
    if (val.k === 'scalar') {
      out.push(`${pad}${k}: ${val.text}`);
    } else if (val.k === 'map') {
      if (val.entries.length === 0) out.push(`${pad}${k}: {}`);
      else {
        out.push(`${pad}${k}:`);
        emitMap(val.entries, nextIndent(indent), out);
      }
    } else if (val.items.length === 0) {
      out.push(`${pad}${k}: []`);
    } else {
      out.push(`${pad}${k}:`);
      emitSeq(val.items, nextIndent(indent), out);
    }
  });
}

function emitSeq(items: readonly YamlTree[], indent: number, out: string[]): void {
  const dash = `${' '.repeat(indent)}- `;
  for (const item of items) {
    if (item.k === 'scalar') out.push(dash + item.text);
    else if (item.k === 'map' && item.entries.length > 0) emitMap(item.entries, indent + 2, out, dash);
    else if (item.k === 'map') out.push(`${dash}{}`);
    else if (item.items.length === 0) out.push(`${dash}[]`);
    else {
      // A nested sequence starts on the dash line in yaml.v3 as well.
      const inner: string[] = [];
      emitSeq(item.items, indent + 2, inner);
      inner[0] = dash + (inner[0] ?? '').trimStart();
      out.push(...inner);
    }
  }
}

/** The document text for a top-level mapping (each line newline-terminated, like yaml.Marshal). */
export function emitYamlDocument(root: ReadonlyArray<readonly [string, YamlTree]>): string {
  if (root.length === 0) return '{}\n';
  const out: string[] = [];
  emitMap(root, 0, out);
  return out.join('\n') + '\n';
}
