/**
 * The parts of Go's encoding/csv (the writer; the reader is src/format/csv.ts, bound to the trace errors in
 * src/workload/csv-records.ts) and of strings.TrimSpace that the trace files depend on, so files round-trip
 * byte for byte with the reference.
 */

/** Go's unicode.IsSpace. */
export function goIsSpace(cp: number): boolean {
  switch (cp) {
    case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0x85: case 0xa0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

/** Go's strings.TrimSpace (JS trim differs: it strips U+FEFF and keeps U+0085). */
export function goTrimSpace(s: string): string {
  const cps = Array.from(s);
  let a = 0;
  let b = cps.length;
  while (a < b && goIsSpace(cps[a]?.codePointAt(0) ?? 0)) a++;
  while (b > a && goIsSpace(cps[b - 1]?.codePointAt(0) ?? 0)) b--;
  return a === 0 && b === cps.length ? s : cps.slice(a, b).join('');
}

/** One field as csv.Writer writes it: quoted only when it has to be. */
export function goCsvField(field: string): string {
  if (field === '') return field;
  let quote = field === '\\.' || /[\n\r",]/.test(field);
  if (!quote) quote = goIsSpace(field.codePointAt(0) ?? 0);
  return quote ? `"${field.replaceAll('"', '""')}"` : field;
}
