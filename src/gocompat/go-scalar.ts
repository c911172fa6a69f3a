/**
 * How the reference's YAML library (yaml.v3) reads a scalar before handing it to a Go field. The document is
 * parsed with the failsafe schema so every scalar arrives as its text, and the text is resolved here by
 * yaml.v3's rules rather than YAML 1.2 core's, because they differ in ways a bundle can hit: `1_000` and
 * `0b101` are integers, `010` is octal 8, `08` is the float 8, and quoted or block scalars are always strings.
 */
export type GoScalar =
  | { readonly kind: 'null' }
  | { readonly kind: 'bool'; readonly value: boolean }
  /** int64 or uint64 in the reference; exact only up to 2^53 here. */
  | { readonly kind: 'int'; readonly value: number }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'str'; readonly value: string };

/** A tag that asks for a kind the text does not have (`!!int abc`); the reference fails the whole decode. */
export class TagMismatch extends Error {}

const CORE_TAG_PREFIX = 'tag:yaml.org,2002:';
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const TRUES = new Set(['true', 'True', 'TRUE']);
const FALSES = new Set(['false', 'False', 'FALSE']);
const NANS = new Set(['.nan', '.NaN', '.NAN']);
const POS_INFS = new Set(['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']);
const NEG_INFS = new Set(['-.inf', '-.Inf', '-.INF']);
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** `!!int` for the long core form; any other tag is returned as written. */
export function shortTag(tag: string | undefined): string {
  if (tag === undefined) return '';
  return tag.startsWith(CORE_TAG_PREFIX) ? `!!${tag.slice(CORE_TAG_PREFIX.length)}` : tag;
}

/**
 * Resolves a scalar. `quoted` covers quoted and block (literal / folded) styles, which the reference never
 * resolves. Tags other than the core scalar ones leave the text a string.
 */
export function resolveGoScalar(text: string, quoted: boolean, tag: string | undefined): GoScalar {
  const t = shortTag(tag);
  if (t === '!!str' || t === '!!binary' || (quoted && (t === '' || t === '!'))) return { kind: 'str', value: text };
  if (!['', '!!bool', '!!int', '!!float', '!!null', '!!timestamp'].includes(t)) return { kind: 'str', value: text };
  const plain = resolvePlain(text, t === '' || t === '!!timestamp');
  if (t === '') return plain;
  const want = t.slice(2);
  if (plain.kind === want) return plain;
  if (want === 'float' && plain.kind === 'int') return { kind: 'float', value: plain.value };
  throw new TagMismatch(`cannot decode !!${plain.kind} \`${text}\` as a ${t}`);
}

function resolvePlain(text: string, allowTimestamp: boolean): GoScalar {
  if (NULLS.has(text)) return { kind: 'null' };
  const c = text[0] ?? '';
  const digit = c >= '0' && c <= '9';
  if (digit || c === '+' || c === '-' || c === '.' || 'yYnNtTfFoO~'.includes(c)) {
    if (TRUES.has(text)) return { kind: 'bool', value: true };
    if (FALSES.has(text)) return { kind: 'bool', value: false };
    if (NANS.has(text)) return { kind: 'float', value: NaN };
    if (POS_INFS.has(text)) return { kind: 'float', value: Infinity };
    if (NEG_INFS.has(text)) return { kind: 'float', value: -Infinity };
  }
  if (c === '.') {
    // Go's ParseFloat on the raw text: only a plain decimal fraction can start with a dot.
    if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text)) return finiteFloat(text) ?? { kind: 'str', value: text };
    return { kind: 'str', value: text };
  }
  if (!(digit || c === '+' || c === '-')) return { kind: 'str', value: text };
  if (allowTimestamp && isTimestamp(text)) return { kind: 'timestamp' };
  const noUnderscores = text.replaceAll('_', '');
  const int = parseGoInt(noUnderscores);
  if (int !== null) return { kind: 'int', value: Number(int) };
  if (YAML_STYLE_FLOAT.test(noUnderscores)) {
    const f = finiteFloat(noUnderscores);
    if (f !== null) return f;
  }
  return { kind: 'str', value: text };
}

/** A float Go would parse without a range error (overflow to ±Inf is one). */
function finiteFloat(text: string): GoScalar | null {
  const v = Number(text);
  return Number.isFinite(v) ? { kind: 'float', value: v } : null;
}

/**
 * strconv.ParseInt(s, 0, 64), falling back to ParseUint for values above int64: sign, then 0x / 0o / 0b
 * prefixes or a leading 0 for octal, decimal otherwise.
 */
function parseGoInt(s: string): bigint | null {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (m === null) return null;
  const sign = m[1] ?? '';
  const body = m[2] ?? '0';
  let magnitude: bigint;
  if (/^0[oO]/.test(body)) magnitude = BigInt(`0o${body.slice(2)}`);
  else if (/^0[xXbB]/.test(body)) magnitude = BigInt(body.toLowerCase());
  else if (body.length > 1 && body.startsWith('0')) magnitude = BigInt(`0o${body.slice(1)}`);
  else magnitude = BigInt(body);
  const v = sign === '-' ? -magnitude : magnitude;
  if (v >= INT64_MIN && v <= INT64_MAX) return v;
  // ParseUint takes no sign at all.
  if (sign === '' && v <= UINT64_MAX) return v;
  return null;
}

/** The date forms yaml.v3 tries with time.Parse; close enough to know a scalar is not a number. */
function isTimestamp(s: string): boolean {
  if (!/^[0-9]{4}-/.test(s)) return false;
  return (
    /^\d{4}-\d{1,2}-\d{1,2}$/.test(s) ||
    /^\d{4}-\d{1,2}-\d{1,2}[Tt]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) ||
    /^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?$/.test(s)
  );
}
