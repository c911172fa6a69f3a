/** Go-compatible text formatting for the reference output format. */
export { goFixed } from './go-fixed.js';

/**
 * JSON as Go's json.MarshalIndent(v, "", "  ") prints it. Number formatting already agrees (shortest
 * round-trip; exponent form below 1e-6 and from 1e21, with Go's exponent clean-up matching JS); Go also
 * escapes <, > and & in strings.
 */
export function goJsonIndent(v: unknown): string {
  return goEscape(JSON.stringify(v, null, 2));
}

function goEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Marks where {@link goJsonIndentChunks} splices a large array; cannot occur in rendered JSON text. */
const SPLICE = '\u0000blis-splice\u0000';

/**
 * {@link goJsonIndent} of `doc` with `doc[key]` replaced by the array `items` (`count` of them), as chunks: the
 * same bytes, without ever holding the whole text (a per-request array of millions of rows exceeds V8's longest
 * string). `doc` must already hold `key`, with any placeholder, where the array belongs in the key order.
 */
export function* goJsonIndentChunks(doc: Record<string, unknown>, key: string, items: Iterable<unknown>, count: number): Generator<string> {
  const head = goJsonIndent({ ...doc, [key]: SPLICE });
  const marker = JSON.stringify(SPLICE);
  const at = head.indexOf(marker);
  yield head.slice(0, at);
  yield* goJsonArrayChunks(items, count, 1);
  yield head.slice(at + marker.length);
}

/** A JSON array rendered as goJsonIndent renders it at nesting `depth`, one chunk per item. */
export function* goJsonArrayChunks(items: Iterable<unknown>, count: number, depth: number): Generator<string> {
  if (count === 0) {
    yield '[]';
    return;
  }
  const pad = '  '.repeat(depth + 1);
  let first = true;
  for (const item of items) {
    const text = goJsonIndent(item).replace(/\n/g, `\n${pad}`);
    yield `${first ? '[\n' : ',\n'}${pad}${text}`;
    first = false;
  }
  yield `\n${'  '.repeat(depth)}]`;
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
