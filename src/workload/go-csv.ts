/**
 * The parts of Go's encoding/csv (default settings: comma ',', no comment char, strict quotes) and of
 * strings.TrimSpace that the trace files depend on, so files round-trip byte for byte with the reference.
 */
import { TraceFormatError } from './tracev2-types.js';

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

export interface GoCsvRow {
  /** 1-based line on which the record starts. */
  line: number;
  fields: string[];
}

/**
 * Splits CSV text into records the way csv.Reader does with FieldsPerRecord = -1: CRLF counts as LF, blank
 * lines are skipped, quoted fields may span lines, and a stray quote is an error.
 * @throws TraceFormatError with code TRACE_CSV_SYNTAX.
 */
export function parseGoCsv(input: string, file: string): GoCsvRow[] {
  let text = input.replaceAll('\r\n', '\n');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  const n = text.length;
  const rows: GoCsvRow[] = [];
  let pos = 0;
  let line = 1;
  const syntax = (at: number, msg: string, fix: string): never => {
    throw new TraceFormatError('TRACE_CSV_SYNTAX', file, at, '', `${file}:${at}: ${msg}; ${fix}`);
  };

  while (pos < n) {
    if (text[pos] === '\n') {
      pos++;
      line++;
      continue;
    }
    const row: GoCsvRow = { line, fields: [] };
    rows.push(row);
    for (;;) {
      if (text[pos] === '"') {
        let buf = '';
        pos++;
        for (;;) {
          const close = text.indexOf('"', pos);
          if (close < 0) syntax(row.line, 'quoted field is never closed', 'add the closing double quote');
          const chunk = text.slice(pos, close);
          buf += chunk;
          for (let i = chunk.indexOf('\n'); i >= 0; i = chunk.indexOf('\n', i + 1)) line++;
          pos = close + 1;
          if (text[pos] === '"') {
            buf += '"';
            pos++;
            continue;
          }
          break;
        }
        row.fields.push(buf);
        const next = text[pos];
        if (next === ',') {
          pos++;
          continue;
        }
        if (next === undefined || next === '\n') {
          pos++;
          line++;
          break;
        }
        syntax(line, `extraneous character after a quoted field (column ${row.fields.length})`, 'put a comma right after the closing quote, or double any quote inside the field');
      } else {
        let end = pos;
        while (end < n && text[end] !== ',' && text[end] !== '\n') end++;
        const field = text.slice(pos, end);
        if (field.includes('"')) {
          syntax(line, `bare " in non-quoted field (column ${row.fields.length + 1})`, 'quote the whole field and double the inner quote ("")');
        }
        row.fields.push(field);
        if (text[end] === ',') {
          pos = end + 1;
          continue;
        }
        pos = end + 1;
        line++;
        break;
      }
    }
  }
  return rows;
}
