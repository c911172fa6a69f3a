/**
 * The one way blis-ts reads CSV input (TraceV2 data, ITL files): bounded, and splitting records the way Go's
 * encoding/csv does with its default settings (comma ',', no comment character, strict quotes,
 * FieldsPerRecord = -1), so files written by the reference read back exactly.
 *
 * Before any record is split: the size is capped, a leading byte-order mark is accepted and stripped (spreadsheets
 * write one; Go would keep it glued to the first column name), and text holding NUL bytes is refused as binary
 * with its position — binary data is never echoed back, because every message quotes input through
 * `showValue` (domain/errors.ts).
 */
import { BlisError } from '../domain/errors.js';
import { INPUT_SYNTAX, INPUT_TOO_LARGE, formatBytes } from './yaml.js';

/** Largest CSV accepted: JavaScript strings stop at 2^29 characters; 256 MiB is about 1.7M trace rows. */
export const MAX_CSV_BYTES = 256 * 1024 * 1024;

export const INPUT_BINARY = 'INPUT_BINARY';

export interface CsvRow {
  /** 1-based line on which the record starts. */
  readonly line: number;
  readonly fields: string[];
}

/** Raises a located error in the caller's own error type (default: a {@link BlisError}). */
export type CsvFail = (line: number, problem: string, fix: string, code: string) => never;

export interface ReadCsvOptions {
  readonly maxBytes?: number;
  readonly fail?: CsvFail;
}

/** U+FEFF at the start of a text (a UTF-8 byte-order mark once decoded). */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Refuses text that holds a NUL character: no CSV, YAML or JSON input has one, and a file that does is binary
 * (an image, a compressed file, the wrong path). The message gives the position, never the bytes.
 */
export function checkNotBinary(text: string, file: string, fail?: (line: number, col: number, problem: string, fix: string) => never): void {
  const at = text.indexOf('\u0000');
  if (at < 0) return;
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const col = at - lineStart + 1;
  const problem = 'the file holds binary data (a NUL byte), not text';
  const fix = 'check the path: this option takes a text file';
  if (fail !== undefined) fail(line, col, problem, fix);
  throw new BlisError(INPUT_BINARY, `${file}:${line}:${col}: ${problem}; ${fix}`, { file, line, col });
}

/**
 * Splits CSV text into records like Go's csv.Reader (FieldsPerRecord = -1): CRLF counts as LF, blank lines are
 * skipped, quoted fields may span lines, and a stray quote is an error at its line.
 */
export function readCsv(input: string, file: string, options: ReadCsvOptions = {}): CsvRow[] {
  const fail: CsvFail = options.fail ?? ((line, problem, fix, code) => {
    throw new BlisError(code, `${file}:${line}: ${problem}; ${fix}`, { file, line });
  });
  const maxBytes = options.maxBytes ?? MAX_CSV_BYTES;
  if (input.length > maxBytes) {
    fail(1, `the file is larger than ${formatBytes(maxBytes)} (${formatBytes(input.length)})`, 'blis-ts refuses inputs this large — split it or pass a smaller file', INPUT_TOO_LARGE);
  }
  checkNotBinary(input, file, (line, col, problem, fix) => fail(line, `${problem} (column ${col})`, fix, INPUT_BINARY));
  let text = stripBom(input).replaceAll('\r\n', '\n');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  const n = text.length;
  const rows: CsvRow[] = [];
  let pos = 0;
  let line = 1;
  const syntax = (at: number, msg: string, fix: string): never => fail(at, msg, fix, INPUT_SYNTAX);

  while (pos < n) {
    if (text[pos] === '\n') {
      pos++;
      line++;
      continue;
    }
    const row: CsvRow = { line, fields: [] };
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
