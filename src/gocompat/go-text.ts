/**
 * The few Go text conversions whose output reaches decision traces or error messages: `%.Nf`, `%v` of a
 * float64, `%q` of a string, and strconv.ParseFloat's accepted syntax. Kept local so the routing layer depends
 * on nothing but the domain.
 */

export { goFixed } from './go-fixed.js';

/** Go's `%v` for a float64: shortest round-trip digits, exponent form when the decimal exponent is < -4 or >= 6. */
export function goFormatV(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mant, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    return `${mant}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  }
  return String(x);
}

/** Go's `%q` for the plain strings that appear in policy and scorer names. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

export type GoParseFloatResult =
  | { readonly ok: true; readonly value: number }
  | { readonly ok: false; readonly error: 'invalid syntax' | 'value out of range' };

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/;
const INF = /^([+-]?)inf(?:inity)?$/i;
const NAN = /^nan$/i;

/**
 * Go's rule for digit-separating underscores: each one must sit between two digits (a `0x` prefix counts as
 * a digit before it).
 */
function underscoresOk(s: string): boolean {
  const body = s.startsWith('+') || s.startsWith('-') ? s.slice(1) : s;
  const hex = /^0[xX]/.test(body);
  const isDigit = (c: string): boolean => /[0-9]/.test(c) || (hex && /[a-fA-F]/.test(c));
  let prev: 'start' | 'digit' | 'underscore' | 'other' = 'start';
  for (let i = hex ? 2 : 0; i < body.length; i++) {
    const c = body.charAt(i);
    if (isDigit(c)) {
      prev = 'digit';
    } else if (c === '_') {
      if (prev !== 'digit' && !(hex && i === 2)) return false;
      prev = 'underscore';
    } else {
      if (prev === 'underscore') return false;
      prev = 'other';
    }
  }
  return prev !== 'underscore';
}

/**
 * strconv.ParseFloat(s, 64) for the forms a user can type: decimal, hexadecimal with a `p` exponent,
 * inf/infinity (signed), nan, and digits separated by single underscores.
 */
export function goParseFloat(text: string): GoParseFloatResult {
  if (text.includes('_') && !underscoresOk(text)) return { ok: false, error: 'invalid syntax' };
  const s = text.replaceAll('_', '');
  const inf = INF.exec(s);
  if (inf !== null) return { ok: true, value: inf[1] === '-' ? -Infinity : Infinity };
  if (NAN.test(s)) return { ok: true, value: NaN };
  let value: number;
  if (DECIMAL.test(s)) {
    value = Number(s);
  } else {
    const hex = HEX.exec(s);
    if (hex === null) return { ok: false, error: 'invalid syntax' };
    const [, sign, intDigits = '', fracDigits = '', expDigits = '0'] = hex;
    if (intDigits === '' && fracDigits === '') return { ok: false, error: 'invalid syntax' };
    const mantissa = Number(BigInt(`0x${intDigits}${fracDigits}`));
    value = mantissa * 2 ** (Number(expDigits) - 4 * fracDigits.length);
    if (sign === '-') value = -value;
  }
  if (!Number.isFinite(value)) return { ok: false, error: 'value out of range' };
  return { ok: true, value };
}
