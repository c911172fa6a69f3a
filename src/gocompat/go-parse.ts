/**
 * Go's `strconv.ParseFloat(s, 64)` and `time.ParseDuration` for the flags whose grammar the reference takes
 * from them (`--fitness-weights` values, `--slo-ttft/--slo-itl/--slo-e2e` durations), with the reference's
 * error texts, so a value accepted or rejected there is accepted or rejected here.
 */

/**
 * Go's error text for a value these parsers refuse. Not a BlisError (gocompat imports nothing of the
 * simulator): every caller catches it and throws its own error with the message.
 */
export class GoParseError extends Error {
  readonly code = 'go-parse';
  constructor(message: string) {
    super(message);
    this.name = 'GoParseError';
  }
}

/** strconv.Quote for the strings these errors echo (JSON escaping agrees on ASCII input). */
function strconvQuote(s: string): string {
  return JSON.stringify(s);
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/** Go's rule: an underscore must sit between digits (or after a base prefix). */
function underscoresOk(s: string): boolean {
  let t = s;
  if (t.startsWith('-') || t.startsWith('+')) t = t.slice(1);
  let saw = '^';
  let i = 0;
  let hex = false;
  if (t.length >= 2 && t[0] === '0' && /[bBoOxX]/.test(t[1] as string)) {
    i = 2;
    saw = '0';
    hex = /[xX]/.test(t[1] as string);
  }
  for (; i < t.length; i++) {
    const c = t[i] as string;
    if (isDigit(c) || (hex && isHex(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** Inf/Infinity (signed) and NaN (unsigned), case-insensitively, as whole strings. */
function special(s: string): number | null {
  const lower = s.toLowerCase();
  let sign = 1;
  let body = lower;
  if (body.startsWith('+') || body.startsWith('-')) {
    sign = body[0] === '-' ? -1 : 1;
    body = body.slice(1);
    if (body === 'inf' || body === 'infinity') return sign * Infinity;
    return null;
  }
  if (body === 'inf' || body === 'infinity') return Infinity;
  if (body === 'nan') return NaN;
  return null;
}

/** round(m · 2^e) to the nearest double, ties to even, subnormals included. */
function scaleBinary(m: bigint, e: number): number {
  if (m === 0n) return 0;
  const bits = m.toString(2).length;
  // The last kept bit's weight: 53 significant bits, but never below the smallest subnormal.
  const q = Math.max(bits + e - 53, -1074);
  let r = m;
  if (q > e) {
    const sh = BigInt(q - e);
    r = m >> sh;
    const rem = m - (r << sh);
    const half = 1n << (sh - 1n);
    if (rem > half || (rem === half && (r & 1n) === 1n)) r += 1n;
    return Number(r) * 2 ** q;
  }
  return Number(r) * 2 ** e;
}

/** Parses a Go hex float (`0x1.8p3`); null when malformed. */
function parseHexFloat(body: string): number | null {
  const m = /^0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9][0-9_]*)$/.exec(body);
  if (!m) return null;
  const int = (m[1] ?? '').replace(/_/g, '');
  const frac = (m[2] ?? '').replace(/_/g, '');
  if (int.length + frac.length === 0) return null;
  const mant = BigInt(`0x${int}${frac}` === '0x' ? '0x0' : `0x${int}${frac}`);
  const exp = Number((m[3] as string).replace(/_/g, ''));
  return scaleBinary(mant, Math.max(-100000, Math.min(100000, exp)) - 4 * frac.length);
}

const DECIMAL = /^(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?$/;

/** strconv.ParseFloat(s, 64). Throws GoParseError with Go's message on syntax or range errors. */
export function goParseFloat(s: string): number {
  const syntax = (): GoParseError => new GoParseError(`strconv.ParseFloat: parsing ${strconvQuote(s)}: invalid syntax`);
  const sp = special(s);
  if (sp !== null) return sp;
  let sign = 1;
  let body = s;
  if (body.startsWith('+') || body.startsWith('-')) {
    sign = body[0] === '-' ? -1 : 1;
    body = body.slice(1);
  }
  if (body.includes('_') && !underscoresOk(s)) throw syntax();
  let v: number | null;
  if (/^0[xX]./.test(body)) v = parseHexFloat(body);
  else if (DECIMAL.test(body) && /[0-9]/.test(body.split(/[eE]/)[0] as string)) v = Number(body.replace(/_/g, ''));
  else v = null;
  if (v === null || Number.isNaN(v)) throw syntax();
  if (!Number.isFinite(v)) throw new GoParseError(`strconv.ParseFloat: parsing ${strconvQuote(s)}: value out of range`);
  return sign * v;
}

/** time's own quoting: non-ASCII and control bytes as \xNN of their UTF-8 encoding. */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0x80 || cp < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
  }
  return `${out}"`;
}

const NS_UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1000n],
  ['\u00b5s', 1000n],
  ['\u03bcs', 1000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const TWO63 = 1n << 63n;
const MASK64 = (1n << 64n) - 1n;

/**
 * time.ParseDuration: a signed sequence of decimal numbers with optional fractions and unit suffixes
 * ("1.5h", "2h45m", "300ms"). Returns nanoseconds as a bigint (Go's int64 range). Arithmetic follows Go's
 * uint64 accumulator, including the float step for fractions, so results agree to the nanosecond.
 */
export function goParseDuration(input: string): bigint {
  const invalid = (): GoParseError => new GoParseError(`time: invalid duration ${timeQuote(input)}`);
  let s = input;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let d = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();
    let i = 0;
    let v = 0n;
    for (; i < s.length && isDigit(s[i]); i++) {
      if (v > TWO63 / 10n) throw invalid();
      v = v * 10n + BigInt((s[i] as string).charCodeAt(0) - 48);
      if (v > TWO63) throw invalid();
    }
    const pre = i > 0;
    s = s.slice(i);
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      // Digits past uint64 precision are consumed but ignored, as in Go.
      for (; j < s.length && isDigit(s[j]); j++) {
        if (overflow) continue;
        if (f > (TWO63 - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt((s[j] as string).charCodeAt(0) - 48);
        if (y > TWO63) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) throw invalid();
    let k = 0;
    while (k < s.length && !(s[k] === '.' || isDigit(s[k]))) k++;
    if (k === 0) throw new GoParseError(`time: missing unit in duration ${timeQuote(input)}`);
    const u = s.slice(0, k);
    s = s.slice(k);
    const unit = NS_UNITS.get(u);
    if (unit === undefined) throw new GoParseError(`time: unknown unit ${timeQuote(u)} in duration ${timeQuote(input)}`);
    if (v > TWO63 / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > TWO63) throw invalid();
    }
    // Go adds in uint64, which wraps at 2^64 before the range check.
    d = (d + v) & MASK64;
    if (d > TWO63) throw invalid();
  }
  if (neg) return -d;
  if (d > TWO63 - 1n) throw invalid();
  return d;
}
