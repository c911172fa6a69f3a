/**
 * A strict, position-keeping reader over a parsed YAML document that fills Go-shaped fields the way the
 * reference's decoder does (yaml.v3 with KnownFields):
 * - a string field takes any scalar's text (`scheduler: 5` is "5"); null leaves it "";
 * - a number field takes integers and floats but not quoted text; an integer field also takes a float and
 *   truncates it toward zero (yaml.v3 does; we add a warning);
 * - null leaves a struct field at its zero value, makes an optional field / map / list absent, and makes a map
 *   entry the value's zero; null list items and null map keys are dropped;
 * - `<<` merge keys are expanded after the explicit keys, which win;
 * - an unknown struct key, a duplicate key, or a value of the wrong kind is an error at its line:col.
 * With `strict` (--semantics corrected) numbers must be plain decimals (no `1_000`, `0x10`, or `010`, which
 * yaml.v3 reads as octal 8), an integer field refuses a fraction instead of truncating it, and a map entry
 * needs a value.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import type { Node as YamlNode, Scalar, YAMLMap } from 'yaml';
import { showValue } from '../domain/errors.js';
import type { ParsedYaml } from '../format/yaml.js';
import { PolicyConfigError, formatPolicyPath } from './errors.js';
import type { PolicyConfigErrorCode, PolicyPath, PolicyPosition } from './errors.js';
import { TagMismatch, resolveGoScalar } from '../gocompat/go-scalar.js';
import type { GoScalar } from '../gocompat/go-scalar.js';

export type Reader<T> = (node: YamlNode | null, path: PolicyPath) => T;

interface Located {
  readonly key: PolicyPosition;
  readonly value: PolicyPosition;
}

interface Entry {
  readonly key: string;
  readonly keyNode: YamlNode;
  readonly value: YamlNode | null;
}

export class PolicyDecoder {
  readonly warnings: string[] = [];
  private readonly located = new Map<string, Located>();

  constructor(
    private readonly parsed: ParsedYaml,
    readonly file: string,
    private readonly strict = false,
  ) {}

  /** Throws at `path`'s value (or key) position, falling back to the nearest enclosing node that exists. */
  fail(code: PolicyConfigErrorCode, path: PolicyPath, problem: string, fix: string, atKey = false): never {
    throw new PolicyConfigError(code, { file: this.file, pos: this.position(path, atKey) }, formatPolicyPath(path), problem, fix);
  }

  position(path: PolicyPath, atKey = false): PolicyPosition {
    for (let n = path.length; n >= 0; n--) {
      const hit = this.located.get(formatPolicyPath(path.slice(0, n)));
      if (hit !== undefined) return atKey && n === path.length ? hit.key : hit.value;
    }
    return { line: 1, col: 1 };
  }

  warn(path: PolicyPath, text: string): void {
    const p = this.position(path);
    this.warnings.push(`${this.file}:${p.line}:${p.col}: ${formatPolicyPath(path)}: ${text}`);
  }

  /** Records where a path's key and value are, so later range checks can point at them. */
  note(path: PolicyPath, keyNode: YamlNode | null, valueNode: YamlNode | null): void {
    const key = this.pos(keyNode ?? valueNode);
    // An empty value (`key:` with nothing after it) has no text of its own; point at its key instead.
    const empty = valueNode === null || (valueNode.range?.[0] ?? 0) === (valueNode.range?.[1] ?? 0);
    const value = empty ? key : this.pos(valueNode);
    this.located.set(formatPolicyPath(path), { key, value });
  }

  /** Aliases were resolved once by the loader: this is a map lookup, not a search of the document. */
  deref(node: YamlNode | null | undefined): YamlNode | null {
    return this.parsed.deref(node);
  }

  isNull(node: YamlNode | null, path: PolicyPath = []): boolean {
    const n = this.deref(node);
    return n === null || (isScalar(n) && this.scalar(n, path).kind === 'null');
  }

  // ---- scalars -------------------------------------------------------------------------------------------

  str(node: YamlNode | null, path: PolicyPath): string {
    const n = this.deref(node);
    if (n !== null && isScalar(n)) {
      const s = this.scalar(n, path);
      return s.kind === 'null' ? '' : this.text(n);
    }
    return this.typeError(n, path, 'a name (text)', 'write a single word such as fcfs');
  }

  /** A Go float64; null means "leave as is". */
  float(node: YamlNode | null, path: PolicyPath): number | null {
    const n = this.deref(node);
    if (n !== null && isScalar(n)) {
      const s = this.scalar(n, path);
      if (s.kind === 'null') return null;
      if (s.kind === 'int' || s.kind === 'float') {
        if (this.strict) this.requireDecimal(n, path);
        return s.value;
      }
    }
    return this.typeError(n, path, 'a number', 'write a plain number such as 0.5 (no quotes)');
  }

  /** A Go int; floats are truncated toward zero like the reference (which would wrap them in int64()). */
  int(node: YamlNode | null, path: PolicyPath): number | null {
    const n = this.deref(node);
    if (n !== null && isScalar(n)) {
      const s = this.scalar(n, path);
      if (s.kind === 'null') return null;
      if (this.strict && (s.kind === 'int' || s.kind === 'float')) {
        this.requireDecimal(n, path);
        if (s.kind === 'float' && !Number.isInteger(s.value)) {
          this.fail('POLICY_TYPE', path, `expected an integer, got ${this.text(n)}`, 'write a whole number such as 3');
        }
      }
      if (s.kind === 'int') return s.value;
      if (s.kind === 'float' && Number.isFinite(s.value) && Math.abs(s.value) < 2 ** 63) {
        const t = Math.trunc(s.value) + 0;
        if (t !== s.value) this.warn(path, `${this.text(n)} is not an integer; it is truncated to ${t} as the reference does`);
        return t;
      }
    }
    return this.typeError(n, path, 'an integer', 'write a whole number such as 3 (no quotes)');
  }

  bool(node: YamlNode | null, path: PolicyPath): boolean | null {
    const n = this.deref(node);
    if (n !== null && isScalar(n)) {
      const s = this.scalar(n, path);
      if (s.kind === 'null') return null;
      if (s.kind === 'bool') return s.value;
      // yaml.v3 accepts the YAML 1.1 words for a bool field, quoted or not.
      if (s.kind === 'str' && /^(y|Y|yes|Yes|YES|on|On|ON)$/.test(s.value)) return true;
      if (s.kind === 'str' && /^(n|N|no|No|NO|off|Off|OFF)$/.test(s.value)) return false;
    }
    return this.typeError(n, path, 'true or false', 'write true or false');
  }

  // ---- collections ---------------------------------------------------------------------------------------

  /**
   * A Go struct: every key must be in `fields`. Null (or an empty value) leaves the struct untouched.
   * `typeName` names the section in the unknown-key message.
   */
  struct(node: YamlNode | null, path: PolicyPath, typeName: string, fields: Readonly<Record<string, Reader<void>>>): void {
    const n = this.deref(node);
    if (this.isNull(n, path)) return;
    if (n === null || !isMap(n)) {
      this.typeError(n, path, `a mapping for ${typeName}`, 'indent its keys under the section name');
    }
    const allowed = Object.keys(fields);
    for (const { key, keyNode, value } of this.entries(n, path)) {
      const reader = Object.hasOwn(fields, key) ? fields[key] : undefined;
      const childPath = [...path, key];
      this.note(childPath, keyNode, value);
      if (reader === undefined) {
        this.fail('POLICY_UNKNOWN_KEY', childPath, `unknown key ${showValue(key)} in ${typeName}`, `remove it or use one of: ${allowed.join(', ')}`, true);
      }
      reader(value, childPath);
    }
  }

  /** A Go map[string]T in YAML order; null is "not set". A null entry value is T's zero via `zero`. */
  map<T>(node: YamlNode | null, path: PolicyPath, what: string, zero: T, read: Reader<T | null>): Map<string, T> | null {
    const n = this.deref(node);
    if (this.isNull(n, path)) return null;
    if (n === null || !isMap(n)) return this.typeError(n, path, `a mapping of ${what}`, 'write one `name: value` pair per line under it');
    const out = new Map<string, T>();
    for (const { key, keyNode, value } of this.entries(n, path)) {
      const childPath = [...path, key];
      this.note(childPath, keyNode, value);
      const v = read(value, childPath);
      if (v === null && this.strict) this.fail('POLICY_TYPE', childPath, `"${key}" has no value`, `give it a value or remove the entry`);
      out.set(key, v ?? zero);
    }
    return out;
  }

  /** A Go slice; null is "not set"; null items are dropped as the reference drops them. */
  seq<T>(node: YamlNode | null, path: PolicyPath, what: string, read: Reader<T>): T[] | null {
    const n = this.deref(node);
    if (this.isNull(n, path)) return null;
    if (n === null || !isSeq(n)) return this.typeError(n, path, `a list of ${what}`, 'write each item on its own line starting with "- "');
    const out: T[] = [];
    n.items.forEach((item, i) => {
      const childPath = [...path, out.length];
      if (this.isNull(item as YamlNode, [...path, i])) {
        this.note([...path, i], item as YamlNode, item as YamlNode);
        this.warn([...path, i], 'an empty list item is ignored, as the reference ignores it');
        return;
      }
      this.note(childPath, item as YamlNode, item as YamlNode);
      out.push(read(item as YamlNode, childPath));
    });
    return out;
  }

  // ---- internals -----------------------------------------------------------------------------------------

  /** Strict mode: a number written as a plain decimal (YAML 1.2's reading, not yaml.v3's Go literals). */
  private requireDecimal(n: Scalar, path: PolicyPath): void {
    const t = this.text(n);
    if (!/^[-+]?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?$/.test(t) && !/^[-+]?\.[0-9]+([eE][-+]?[0-9]+)?$/.test(t)) {
      this.fail('POLICY_TYPE', path, `${t} is not a plain decimal number`, 'write it in decimal digits, e.g. 8 or 0.5 (no underscores, prefixes or leading zeros)');
    }
  }

  /** Explicit keys in order, then merged-in keys that were not given explicitly. */
  private entries(map: YAMLMap, path: PolicyPath): Entry[] {
    const out: Entry[] = [];
    const seen = new Map<string, YamlNode>();
    const merges: YamlNode[] = [];
    for (const pair of map.items) {
      const keyNode = pair.key as YamlNode;
      const value = (pair.value ?? null) as YamlNode | null;
      const k = this.deref(keyNode);
      if (k !== null && isScalar(k) && k.type === 'PLAIN' && this.text(k) === '<<' && k.tag === undefined) {
        if (value !== null) merges.push(value);
        continue;
      }
      if (k === null || !isScalar(k)) {
        this.note(path, keyNode, keyNode);
        this.fail('POLICY_TYPE', path, 'a mapping key must be a plain name', 'use a name such as tenant-a as the key');
      }
      const name = this.text(k);
      const earlier = seen.get(name);
      if (earlier !== undefined) {
        this.note([...path, name], keyNode, keyNode);
        const first = this.pos(earlier);
        this.fail('POLICY_DUPLICATE_KEY', [...path, name], `key ${showValue(name)} appears twice (first at line ${first.line})`, 'keep one of them', true);
      }
      seen.set(name, keyNode);
      if (this.scalar(k, path).kind === 'null') {
        this.note(path, keyNode, keyNode);
        this.warn(path, 'an entry with an empty key is ignored, as the reference ignores it');
        continue;
      }
      out.push({ key: name, keyNode, value });
    }
    for (const m of merges) {
      const src = this.deref(m);
      const sources = src !== null && isSeq(src) ? src.items.map((i) => this.deref(i as YamlNode)) : [src];
      for (const s of sources) {
        if (s === null || !isMap(s)) {
          this.note(path, m, m);
          this.fail('POLICY_TYPE', path, 'a `<<` merge needs a mapping or a list of mappings', 'point the merge at an anchored mapping');
        }
        for (const e of this.entries(s, path)) {
          if (!seen.has(e.key)) {
            seen.set(e.key, e.keyNode);
            out.push(e);
          }
        }
      }
    }
    return out;
  }

  private scalar(n: Scalar, path: PolicyPath): GoScalar {
    const quoted = n.type !== undefined && n.type !== 'PLAIN';
    try {
      return resolveGoScalar(this.text(n), quoted, n.tag);
    } catch (e) {
      if (e instanceof TagMismatch) this.fail('POLICY_TYPE', path, e.message, 'remove the tag or fix the value');
      throw e;
    }
  }

  /** A scalar's text: with the failsafe schema the value is always the unquoted source string. */
  private text(n: Scalar): string {
    return typeof n.value === 'string' ? n.value : String(n.value);
  }

  private pos(node: YamlNode | null): PolicyPosition {
    const offset = node?.range?.[0];
    return offset === undefined ? { line: 1, col: 1 } : this.parsed.pos(offset);
  }

  private typeError(n: YamlNode | null, path: PolicyPath, want: string, fix: string): never {
    let got: string;
    if (n === null) got = 'nothing';
    else if (isMap(n)) got = 'a mapping';
    else if (isSeq(n)) got = 'a list';
    else if (isScalar(n)) got = describeScalar(this.scalar(n, path), this.text(n));
    else got = 'an unsupported node';
    this.fail('POLICY_TYPE', path, `expected ${want}, got ${got}`, fix);
  }
}

/** What a resolved scalar looks like in an error message. */
function describeScalar(s: GoScalar, text: string): string {
  switch (s.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return `the boolean ${text}`;
    case 'int':
      return `the integer ${text}`;
    case 'float':
      return `the number ${text}`;
    case 'timestamp':
      return `the timestamp ${text}`;
    case 'str':
      return `the string ${showValue(text)}`;
  }
}
