/**
 * Arguments into the `strict` engine: host-side shape inference, conformance (filling the shared number buffer
 * and string tables) and the generation of per-shape decoders compiled inside the context. A shape that changes
 * is generalised or kept beside the previous ones; whatever does not fit goes as JSON text (strict.ts's module
 * comment, "Values in").
 */
import { MAX_RESULT_DEPTH } from './types.js';

/** The interned string table is rebuilt from scratch past these sizes. */
const MAX_INTERNED = 8192;
const MAX_INTERNED_CHARS = 1 << 20;


/**
 * n number, s string, b boolean, z null, v any scalar (tagged), j JSON text, x never (elements of an empty
 * array), u undefined (a top-level argument only), t tuple, a variable-length array, o object with fixed keys.
 */
export type Shape =
  | { readonly k: 'n' | 's' | 'b' | 'z' | 'v' | 'j' | 'x' | 'u'; readonly key: string }
  | { readonly k: 't'; readonly key: string; readonly items: readonly Shape[] }
  | { readonly k: 'a'; readonly key: string; readonly elem: Shape }
  | { readonly k: 'o'; readonly key: string; readonly keys: readonly string[]; readonly items: readonly Shape[] };

const LEAF = {
  n: { k: 'n', key: 'n' },
  s: { k: 's', key: 's' },
  b: { k: 'b', key: 'b' },
  z: { k: 'z', key: 'z' },
  v: { k: 'v', key: 'v' },
  j: { k: 'j', key: 'j' },
  x: { k: 'x', key: 'x' },
  u: { k: 'u', key: 'u' },
} as const satisfies Record<string, Shape>;

function tupleShape(items: readonly Shape[]): Shape {
  return { k: 't', key: `t(${items.map((s) => s.key).join(',')})`, items };
}
function arrayShape(elem: Shape): Shape {
  return { k: 'a', key: `a(${elem.key})`, elem };
}
function objectShape(keys: readonly string[], items: readonly Shape[]): Shape {
  return { k: 'o', key: `o(${keys.map((k, i) => `${JSON.stringify(k)}:${items[i]!.key}`).join(',')})`, keys, items };
}

/** Plain data as JSON sees it without calling anything (no toJSON, no exotic prototype). */
function isPlainObject(v: object): boolean {
  const p: unknown = Object.getPrototypeOf(v);
  return (p === Object.prototype || p === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** The shape of a value, or null when only JSON.stringify knows its meaning (the whole call then goes as JSON). */
function infer(v: unknown, depth: number): Shape | null {
  switch (typeof v) {
    case 'number': return Number.isFinite(v) ? LEAF.n : LEAF.z;
    case 'string': return LEAF.s;
    case 'boolean': return LEAF.b;
    case 'object': break;
    default: return null;
  }
  if (v === null) return LEAF.z;
  if (depth > MAX_RESULT_DEPTH) return null;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return null;
    const items: Shape[] = [];
    for (let i = 0; i < v.length; i++) {
      const s = infer(v[i], depth + 1);
      if (s === null) return null;
      items.push(s);
    }
    let elem: Shape = LEAF.x;
    for (const s of items) elem = merge(elem, s);
    return elem.k === 'j' && items.length > 1 ? tupleShape(items) : arrayShape(elem);
  }
  if (!isPlainObject(v)) return null;
  const keys = Object.keys(v);
  const items: Shape[] = [];
  for (const k of keys) {
    const s = infer((v as Record<string, unknown>)[k], depth + 1);
    if (s === null) return null;
    items.push(s);
  }
  return objectShape(keys, items);
}

/** How many parts of a shape go as JSON text. */
export function countJson(s: Shape): number {
  switch (s.k) {
    case 'j': return 1;
    case 't': case 'o': return s.items.reduce((n, x) => n + countJson(x), 0);
    case 'a': return countJson(s.elem);
    default: return 0;
  }
}

function isScalar(s: Shape): boolean {
  return s.k === 'n' || s.k === 's' || s.k === 'b' || s.k === 'z' || s.k === 'v';
}

/** The least general shape that accepts what either accepts. */
export function merge(a: Shape, b: Shape): Shape {
  if (a.key === b.key) return a;
  if (a.k === 'x') return b;
  if (b.k === 'x') return a;
  if (isScalar(a) && isScalar(b)) return LEAF.v;
  if (a.k === 'a' && b.k === 'a') return arrayShape(merge(a.elem, b.elem));
  if (a.k === 't' && b.k === 't' && a.items.length === b.items.length) return tupleShape(a.items.map((s, i) => merge(s, b.items[i]!)));
  if (a.k === 'o' && b.k === 'o' && a.keys.length === b.keys.length && a.keys.every((k, i) => k === b.keys[i])) {
    return objectShape(a.keys, a.items.map((s, i) => merge(s, b.items[i]!)));
  }
  return LEAF.j;
}

/** JavaScript source of a decoder `(n, S, T, P) => value` for a shape (`n` numbers, `S` strings, `T` texts). */
export function decoderSource(shape: Shape): string {
  const helpers: string[] = [];
  const expr = (s: Shape): string => {
    switch (s.k) {
      case 'n': return 'n[k++]';
      case 's': return 'S[n[k++]]';
      case 'b': return '(n[k++] !== 0)';
      case 'z': return 'null';
      case 'u': return 'undefined';
      case 'v': return 'v()';
      case 'j': return 'P(T[n[k++]])';
      case 'x': return 'null';
      case 't': return `[${s.items.map(expr).join(', ')}]`;
      case 'o': return `{ ${s.keys.map((k, i) => `${k === '__proto__' ? '["__proto__"]' : JSON.stringify(k)}: ${expr(s.items[i]!)}`).join(', ')} }`;
      case 'a': {
        const id = helpers.length;
        helpers.push('');
        helpers[id] = `function a${id}() { const len = n[k++], r = []; for (let i = 0; i < len; i++) r[i] = ${expr(s.elem)}; return r; }`;
        return `a${id}()`;
      }
    }
  };
  const top = expr(shape);
  return `(function () {
let n, S, T, P, k = 0;
function v() { const t = n[k++]; return t === 0 ? null : t === 1 ? n[k++] : t === 2 ? S[n[k++]] : t === 3; }
${helpers.join('\n')}
return function (n_, S_, T_, P_) { n = n_; S = S_; T = T_; P = P_; k = 0; return ${top}; };
})()`;
}

/** Writes values into the number buffer and string tables, in the order a decoder reads them. */
export class Filler {
  nums = new Float64Array(1024);
  count = 0;
  /** Interned strings (host side of the context's table). */
  private readonly interned = new Map<string, number>();
  private internedChars = 0;
  /** Strings to append to the table at the next call; `reset`: the table is rebuilt from empty. */
  added: string[] = [];
  reset = false;
  /** JSON texts of this call. */
  texts: string[] = [];

  begin(): void {
    this.count = 0;
    this.texts = [];
    if (this.interned.size > MAX_INTERNED || this.internedChars > MAX_INTERNED_CHARS) this.invalidate();
  }

  /** Forgets the interned strings: the next call rebuilds the context's table from empty. */
  invalidate(): void {
    this.interned.clear();
    this.internedChars = 0;
    this.added = [];
    this.reset = true;
  }

  /** Clears the per-call text list and number count after a failed attempt (interned strings are kept). */
  restart(): void {
    this.count = 0;
    this.texts = [];
  }

  private push(x: number): void {
    if (this.count === this.nums.length) {
      const bigger = new Float64Array(this.nums.length * 2);
      bigger.set(this.nums);
      this.nums = bigger;
    }
    this.nums[this.count++] = x;
  }

  private str(s: string): number {
    let i = this.interned.get(s);
    if (i === undefined) {
      i = this.interned.size;
      this.interned.set(s, i);
      this.internedChars += s.length;
      this.added.push(s);
    }
    return i;
  }

  private text(v: unknown): boolean {
    let t: string | undefined;
    try {
      t = JSON.stringify(v);
    } catch {
      return false;
    }
    if (t === undefined) return false;
    this.push(this.texts.length);
    this.texts.push(t);
    return true;
  }

  /** Whether `v` conforms to `s` (then written). */
  fill(v: unknown, s: Shape): boolean {
    switch (s.k) {
      case 'n':
        if (typeof v !== 'number' || !Number.isFinite(v)) return false;
        this.push(v === 0 ? 0 : v);
        return true;
      case 's':
        if (typeof v !== 'string') return false;
        this.push(this.str(v));
        return true;
      case 'b':
        if (typeof v !== 'boolean') return false;
        this.push(v ? 1 : 0);
        return true;
      case 'z':
        return v === null || (typeof v === 'number' && !Number.isFinite(v));
      case 'u':
        return v === undefined;
      case 'x':
        return false;
      case 'v':
        if (v === null || (typeof v === 'number' && !Number.isFinite(v))) this.push(0);
        else if (typeof v === 'number') {
          this.push(1);
          this.push(v === 0 ? 0 : v);
        } else if (typeof v === 'string') {
          this.push(2);
          this.push(this.str(v));
        } else if (typeof v === 'boolean') this.push(v ? 3 : 4);
        else return false;
        return true;
      case 'j':
        if (typeof v === 'object' && v !== null && !isPlainObject(v) && !(Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype)) return false;
        return this.text(v);
      case 't': {
        if (!Array.isArray(v) || v.length !== s.items.length || Object.getPrototypeOf(v) !== Array.prototype) return false;
        for (let i = 0; i < s.items.length; i++) if (!this.fill(v[i], s.items[i]!)) return false;
        return true;
      }
      case 'a': {
        if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
        this.push(v.length);
        for (let i = 0; i < v.length; i++) if (!this.fill(v[i], s.elem)) return false;
        return true;
      }
      case 'o': {
        if (typeof v !== 'object' || v === null || Array.isArray(v) || !isPlainObject(v)) return false;
        // for-in on a plain object: its own enumerable string keys, in Object.keys order (no array allocated).
        const keys = s.keys;
        let i = 0;
        for (const key in v) {
          if (i >= keys.length || key !== keys[i]) return false;
          if (!this.fill((v as Record<string, unknown>)[key], s.items[i]!)) return false;
          i++;
        }
        return i === keys.length;
      }
    }
  }

  /** Exact JSON semantics for anything: each top-level argument as JSON text (undefined stays undefined). */
  fillJson(args: readonly unknown[]): Shape {
    const items: Shape[] = [];
    for (const a of args) {
      if (a === undefined) {
        items.push(LEAF.u);
        continue;
      }
      const t = (JSON.stringify(a) as string | undefined) ?? 'null';
      this.push(this.texts.length);
      this.texts.push(t);
      items.push(LEAF.j);
    }
    return tupleShape(items);
  }

  /** The string-table update and JSON texts for the context, or null when there is nothing to send. */
  payload(): string | null {
    if (!this.reset && this.added.length === 0 && this.texts.length === 0) return null;
    const p = JSON.stringify([this.reset ? 1 : 0, this.added, this.texts]);
    this.reset = false;
    this.added = [];
    return p;
  }
}

/** Top-level arguments: like infer(), but undefined stays undefined. */
export function inferArgs(args: readonly unknown[]): Shape | null {
  const items: Shape[] = [];
  for (const a of args) {
    const s = a === undefined ? LEAF.u : infer(a, 1);
    if (s === null) return null;
    items.push(s);
  }
  return tupleShape(items);
}

