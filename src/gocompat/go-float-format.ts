/**
 * Go `strconv.FormatFloat(x, fmt, -1, 64)` for the two formats the trace files use: 'f' (CSV reason_ratio)
 * and 'g' (YAML floats, via yaml.v3). Both print the shortest digit string that round-trips, which is also what
 * JavaScript's number-to-string conversion picks, so only the layout differs.
 */

interface ShortestDigits {
  readonly neg: boolean;
  /** Significant decimal digits, no leading/trailing zeros (except "0" for zero). */
  readonly digits: string;
  /** Decimal exponent of the first digit: value = 0.d1d2… × 10^(exp+1). */
  readonly exp: number;
}

function shortestDigits(x: number): ShortestDigits {
  const neg = x < 0 || Object.is(x, -0);
  const s = Math.abs(x).toExponential(); // shortest round-trip digits, "d.ddde±x"
  const eAt = s.indexOf('e');
  const mantissa = s.slice(0, eAt).replace('.', '');
  return { neg, digits: mantissa, exp: Number(s.slice(eAt + 1)) };
}

function special(x: number): string | null {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return '+Inf';
  if (x === Number.NEGATIVE_INFINITY) return '-Inf';
  return null;
}

function fixed(d: ShortestDigits): string {
  const { digits, exp } = d;
  let body: string;
  if (exp < 0) {
    body = `0.${'0'.repeat(-exp - 1)}${digits}`;
  } else if (digits.length <= exp + 1) {
    body = digits + '0'.repeat(exp + 1 - digits.length);
  } else {
    body = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  return (d.neg ? '-' : '') + body;
}

/** `strconv.FormatFloat(x, 'f', -1, 64)`. */
export function formatFloatF(x: number): string {
  return special(x) ?? fixed(shortestDigits(x));
}

/** `strconv.FormatFloat(x, 'g', -1, 64)`: exponent form when the exponent is < -4 or >= 6 (shortest mode). */
export function formatFloatG(x: number): string {
  const sp = special(x);
  if (sp !== null) return sp;
  const d = shortestDigits(x);
  if (x !== 0 && (d.exp < -4 || d.exp >= 6)) {
    const frac = d.digits.length > 1 ? `.${d.digits.slice(1)}` : '';
    const e = Math.abs(d.exp);
    return `${d.neg ? '-' : ''}${d.digits[0] ?? '0'}${frac}e${d.exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  }
  return fixed(d);
}
