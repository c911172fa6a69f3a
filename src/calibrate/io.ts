/**
 * File formats calibrate reads and observe writes: the SimResult JSON of `blis replay --results-path` and
 * the per-chunk ITL CSV of `blis observe --record-itl`. Errors name the file, the row and the field.
 */
import type { ItlRecord, SimResult } from './pairs.js';
import { BlisError, showValue } from '../domain/errors.js';
import { readCsv } from '../format/csv.js';
import { parseJson } from '../format/json.js';

export class CalibrateInputError extends BlisError {
  constructor(message: string) {
    super('calibrate-input', message);
    this.name = 'CalibrateInputError';
  }
}

function num(o: Record<string, unknown>, key: string, where: string, integer: boolean, required: boolean): number {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw new CalibrateInputError(`${where}: missing ${showValue(key)}`);
    return 0;
  }
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new CalibrateInputError(`${where}: ${showValue(key)} must be ${integer ? 'an integer' : 'a number'}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function str(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new CalibrateInputError(`${where}: ${showValue(key)} must be a string, got ${JSON.stringify(v)}`);
  return v;
}

/** Parses a SimResult[] document; unknown keys are ignored (as encoding/json does). */
export function parseSimResults(text: string, label: string): SimResult[] {
  let doc: unknown;
  try {
    doc = parseJson(text, label);
  } catch (e) {
    if (e instanceof BlisError) throw new CalibrateInputError(e.message);
    throw e;
  }
  if (!Array.isArray(doc)) throw new CalibrateInputError(`${label}: expected a JSON array of sim results (blis replay --results-path)`);
  return doc.map((row: unknown, i) => {
    const where = `${label}: element ${i}`;
    if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new CalibrateInputError(`${where}: expected an object`);
    const o = row as Record<string, unknown>;
    return {
      requestId: num(o, 'request_id', where, true, true),
      ttftUs: num(o, 'ttft_us', where, false, true),
      e2eUs: num(o, 'e2e_us', where, false, true),
      inputTokens: num(o, 'input_tokens', where, true, false),
      outputTokens: num(o, 'output_tokens', where, true, false),
      sloClass: str(o, 'slo_class', where),
      model: str(o, 'model', where),
      itlMeanUs: num(o, 'itl_mean_us', where, false, false),
    };
  });
}

export const ITL_CSV_HEADER = 'request_id,chunk_index,timestamp_us';

export function formatItlCsv(records: readonly ItlRecord[]): string {
  const lines = [ITL_CSV_HEADER];
  for (const r of records) lines.push(`${r.requestId},${r.chunkIndex},${r.timestampUs}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Parses an ITL CSV: the header row, then three non-negative decimal integers per row (bounded, through
 * src/format/csv.ts; a row with more or fewer cells is an error rather than silently cut).
 */
export function parseItlCsv(text: string, label: string): ItlRecord[] {
  const rows = readCsv(text, label, {
    fail: (line, problem, fix) => {
      throw new CalibrateInputError(`${label}:${line}: ${problem}; ${fix}`);
    },
  });
  const head = rows[0];
  if (head === undefined) throw new CalibrateInputError(`${label}: empty ITL file; expected the header ${showValue(ITL_CSV_HEADER)}`);
  if (head.fields.join(',') !== ITL_CSV_HEADER) {
    throw new CalibrateInputError(`${label}:${head.line}: the header is ${showValue(head.fields.join(','))}; an ITL file (blis observe --record-itl) starts with ${showValue(ITL_CSV_HEADER)}`);
  }
  const out: ItlRecord[] = [];
  for (const row of rows.slice(1)) {
    const f = row.fields.map((x) => x.trim());
    if (f.length !== 3) throw new CalibrateInputError(`${label}:${row.line}: row has ${f.length} columns, expected 3 (${ITL_CSV_HEADER})`);
    const v = f.map((x) => (/^\d+$/.test(x) ? Number(x) : NaN));
    if (v.some((x) => !Number.isSafeInteger(x))) throw new CalibrateInputError(`${label}:${row.line}: ${showValue(f.join(','))} must hold three non-negative integers`);
    out.push({ requestId: v[0] as number, chunkIndex: v[1] as number, timestampUs: v[2] as number });
  }
  return out;
}
