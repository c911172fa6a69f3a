/**
 * Go-compatible text formatting for the reference output format.
 *
 * `fmt`'s `%.Nf` rounds the exact binary value half-to-even; JS `toFixed` rounds exact ties up. The two
 * differ only on exact ties (e.g. 0.03125 at 4 places), which this detects from the exact expansion.
 */
export function goFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? '+Inf' : '-Inf';
  const wide = Math.abs(x).toFixed(Math.min(100, digits + 60));
  const dot = wide.indexOf('.');
  const tail = wide.slice(dot + 1 + digits);
  const isTie = /^50*$/.test(tail);
  let s = x.toFixed(digits);
  if (isTie) {
    // toFixed rounded away from zero; undo when the kept last digit would be odd after rounding half-even.
    const kept = wide.slice(0, dot + 1 + digits).replace(/\.$/, '');
    const lastDigit = Number(kept[kept.length - 1]);
    if (lastDigit % 2 === 0) s = (x < 0 ? '-' : '') + kept;
  }
  if (s === '-0' || /^-0\.0*$/.test(s)) return s; // Go prints negative zero with its sign too
  return s;
}

/**
 * JSON as Go's json.MarshalIndent(v, "", "  ") prints it. Number formatting already agrees (shortest
 * round-trip; exponent form below 1e-6 and from 1e21, with Go's exponent clean-up matching JS); Go also
 * escapes <, > and & in strings.
 */
export function goJsonIndent(v: unknown): string {
  return JSON.stringify(v, null, 2).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Go's string ordering (`sort.Strings`, `strings.Compare`, encoding/json map keys): bytewise over UTF-8,
 * which is code-point order. JS `<` compares UTF-16 code units, which disagrees for astral characters versus
 * U+E000–U+FFFF, so compare code points explicitly when either string leaves ASCII.
 */
export function goCompareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(a) && /^[\x00-\x7f]*$/.test(b)) return a < b ? -1 : 1;
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return x.length - y.length < 0 ? -1 : 1;
}

/** The keys of `m` in Go's sorted-string order. */
export function goSortedKeys(m: ReadonlyMap<string, unknown>): string[] {
  return [...m.keys()].sort(goCompareStrings);
}
