/**
 * CSV text -> records for the trace and ServeGen readers, as Go's csv.Reader splits them (the reader itself is
 * src/format/csv.ts), with their errors as TraceFormatError.
 */
import { readCsv, type CsvRow } from '../format/csv.js';
import { INPUT_SYNTAX } from '../format/yaml.js';
import { TraceFormatError } from './tracev2-types.js';

export type GoCsvRow = CsvRow;

/**
 * Splits CSV text into records the way csv.Reader does with FieldsPerRecord = -1 (src/format/csv.ts: bounded,
 * a leading byte-order mark stripped, binary refused).
 * @throws TraceFormatError with code TRACE_CSV_SYNTAX (TRACE_INPUT for size and binary data).
 */
export function parseGoCsv(input: string, file: string): GoCsvRow[] {
  return readCsv(input, file, {
    fail: (line, problem, fix, code) => {
      throw new TraceFormatError(code === INPUT_SYNTAX ? 'TRACE_CSV_SYNTAX' : 'TRACE_INPUT', file, line, '', `${file}:${line}: ${problem}; ${fix}`);
    },
  });
}
