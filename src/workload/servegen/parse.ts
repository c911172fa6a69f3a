/**
 * Reading ServeGen data (the reference's `sim/workload/servegen.go`): chunk trace CSVs, chunk dataset JSONs with
 * Python-dict PDF strings, and the lognormal fit of a PDF. Pure: the files arrive as text.
 *
 *   chunk-<id>-trace.csv     start_s,rate,cv,pattern[,shape,scale]   one row per 10-minute window
 *   chunk-<id>-dataset.json  {"<start_s>": {"input_tokens": "{100: 0.5, ...}", "output_tokens": "...",
 *                             ["reason_ratio": "{\"0.0\": 0.1, ...}"]}, ...}
 */
import { BlisError } from '../../domain/errors.js';
import { goInt64 } from '../../gocompat/go-math.js';
import { goLog } from '../../gocompat/go-rand.js';
import { goParseFloat } from '../../gocompat/go-parse.js';
import { linePos, prescanJson } from '../../format/prescan.js';
import { goTrimSpace } from '../../gocompat/go-csv.js';
import { parseGoCsv } from '../csv-records.js';

/** A ServeGen directory that cannot be converted; the message names the file and the fix. */
export class ServeGenError extends BlisError {
  constructor(message: string, file?: string) {
    super('SERVEGEN_DATA', message, { file });
    this.name = 'ServeGenError';
  }
}

/** One row of a chunk trace: a window's start (s), mean rate (req/s), CV and fitted arrival pattern. */
export interface TraceRow {
  readonly startSec: number;
  readonly rate: number;
  readonly cv: number;
  /** "Gamma", "Weibull" or "" (Poisson). */
  readonly pattern: string;
  /** MLE shape and scale (s); 0 when the row has no 5th/6th column. */
  readonly shape: number;
  readonly scale: number;
}

export interface ParsedTrace {
  readonly rows: TraceRow[];
  /** Rows with fewer than 4 columns or a non-numeric start/rate/cv (the reference skips them). */
  readonly skipped: number;
}

function float(s: string): number | null {
  try {
    return goParseFloat(goTrimSpace(s));
  } catch {
    return null;
  }
}

/**
 * Go's encoding/csv with its default FieldsPerRecord (the first record fixes the column count; a row with
 * another count is an error), then the reference's row rules.
 * @throws ServeGenError for CSV syntax errors and rows whose column count differs from the first row's.
 */
export function parseServeGenTrace(text: string, file: string): ParsedTrace {
  let records;
  try {
    records = parseGoCsv(text, file);
  } catch (e) {
    throw new ServeGenError(`${(e as Error).message}`, file);
  }
  const rows: TraceRow[] = [];
  let skipped = 0;
  const width = records[0]?.fields.length ?? 0;
  for (const rec of records) {
    const f = rec.fields;
    if (f.length !== width) {
      throw new ServeGenError(`${file}:${rec.line}: this row has ${f.length} columns but the first row has ${width}; every row of a ServeGen trace needs the same columns (start_s,rate,cv,pattern,shape,scale)`, file);
    }
    if (f.length < 4) {
      skipped++;
      continue;
    }
    const start = float(f[0]!);
    const rate = float(f[1]!);
    const cv = float(f[2]!);
    if (start === null || rate === null || cv === null) {
      skipped++;
      continue;
    }
    let shape = 0;
    let scale = 0;
    if (f.length >= 6) {
      const sh = float(f[4]!);
      const sc = float(f[5]!);
      if (sh !== null && sc !== null) {
        shape = sh;
        scale = sc;
      }
    }
    rows.push({ startSec: start, rate, cv, pattern: goTrimSpace(f[3]!), shape, scale });
  }
  return { rows, skipped };
}

/** A dataset window's token-count PDFs (value → probability). */
export interface DatasetWindow {
  readonly input: ReadonlyMap<number, number>;
  readonly output: ReadonlyMap<number, number>;
}

/** A Python dict string of key: probability pairs; `key` reads a key (the reference truncates `363.0` to 363). */
function parseDict<K>(s: string, key: (text: string) => K, what: string): Map<K, number> {
  let body = goTrimSpace(s);
  if (!body.startsWith('{') || !body.endsWith('}')) throw new Error(`expected a dict string starting with '{' and ending with '}', got: ${body.slice(0, 40)}`);
  body = goTrimSpace(body.slice(1, -1));
  if (body === '') throw new Error(`empty ${what} dictionary`);
  const out = new Map<K, number>();
  for (const raw of body.split(',')) {
    const pair = goTrimSpace(raw);
    if (pair === '') continue;
    const colon = pair.indexOf(':');
    if (colon < 0) throw new Error(`invalid key:value pair "${pair}"`);
    const k = key(goTrimSpace(pair.slice(0, colon)));
    const valText = goTrimSpace(pair.slice(colon + 1));
    const v = float(valText);
    if (v === null) throw new Error(`invalid value "${valText}"`);
    out.set(k, v);
  }
  if (out.size === 0) throw new Error(`no valid entries in the ${what} dictionary`);
  return out;
}

/** `{100: 0.5, 200.0: 0.3}` → token count (truncated to an integer) → probability. */
export function parseServeGenPdf(s: string): Map<number, number> {
  return parseDict<number>(s, (t) => {
    const v = float(t);
    if (v === null) throw new Error(`invalid key "${t}"`);
    return goInt64(v);
  }, 'PDF');
}

/** `{"0.0": 0.1, "0.5": 0.3}` → reason ratio in [0, 1] → probability (>= 0). */
export function parseServeGenRatioPdf(s: string): Map<number, number> {
  const pdf = parseDict<number>(s, (t) => {
    const unq = t.replace(/^"+|"+$/g, '');
    const v = float(unq);
    if (v === null) throw new Error(`invalid key "${unq}"`);
    if (v < 0 || v > 1) throw new Error(`reason_ratio key ${v} outside [0.0, 1.0]`);
    return v;
  }, 'reason_ratio');
  for (const [k, p] of pdf) if (p < 0) throw new Error(`negative probability ${p} for key ${k}`);
  return pdf;
}

/** Go strconv.Atoi, then a float key truncated ("600.0"); null when neither reads it. */
function timestampKey(s: string): number | null {
  if (/^[+-]?\d+$/.test(s)) {
    const v = Number(s);
    if (Number.isSafeInteger(v)) return v;
  }
  try {
    return goInt64(goParseFloat(s));
  } catch {
    return null;
  }
}

type RawDataset = Record<string, Record<string, string>>;

/**
 * The dataset JSON as the reference unmarshals it (`map[string]map[string]string`): an object of objects of
 * strings; null values read as empty.
 * @throws ServeGenError for invalid JSON or values of another type.
 */
export function readDatasetJson(text: string, file: string): RawDataset {
  // Bounds before work (keys per object, values, depth, string length) before JSON.parse builds the tree.
  const scanned = prescanJson(text);
  if (scanned !== null) {
    const p = linePos(text, scanned.offset);
    throw new ServeGenError(`${file}:${p.line}:${p.col}: ${scanned.problem}; ${scanned.fix}`, file);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ServeGenError(`${file}: invalid JSON (${(e as Error).message}); a ServeGen dataset is an object of {"input_tokens": "...", "output_tokens": "..."} per window start`, file);
  }
  const bad = (where: string): never => {
    throw new ServeGenError(`${file}: ${where} must be ${where === 'the document' ? 'an object keyed by window start (seconds)' : 'a string (a Python dict of value: probability)'}`, file);
  };
  if (raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) return bad('the document');
  const out: RawDataset = {};
  for (const [ts, w] of Object.entries(raw)) {
    if (w === null) {
      out[ts] = {};
      continue;
    }
    if (typeof w !== 'object' || Array.isArray(w)) throw new ServeGenError(`${file}: window "${ts}" must be an object of PDF strings`, file);
    const win: Record<string, string> = {};
    for (const [k, v] of Object.entries(w as Record<string, unknown>)) {
      if (v === null) continue;
      if (typeof v !== 'string') bad(`window "${ts}" field "${k}"`);
      win[k] = v as string;
    }
    out[ts] = win;
  }
  return out;
}

/** True when any window carries a `reason_ratio` (the reasoning conversion path). */
export function hasReasonRatio(raw: RawDataset): boolean {
  return Object.values(raw).some((w) => Object.prototype.hasOwnProperty.call(w, 'reason_ratio'));
}

/**
 * Window start → PDFs. Windows whose input or output PDF is missing or `{}` are skipped, as are non-numeric keys.
 * @throws ServeGenError for a PDF string that does not parse.
 */
export function datasetWindows(raw: RawDataset, file: string, warn: (m: string) => void): Map<number, DatasetWindow> {
  const out = new Map<number, DatasetWindow>();
  for (const [key, w] of Object.entries(raw)) {
    const ts = timestampKey(key);
    if (ts === null) {
      warn(`${file}: skipping non-numeric window key "${key}"`);
      continue;
    }
    const inText = w['input_tokens'] ?? '';
    const outText = w['output_tokens'] ?? '';
    if (inText === '' || inText === '{}' || outText === '' || outText === '{}') continue;
    const parse = (text: string, field: string): Map<number, number> => {
      try {
        return parseServeGenPdf(text);
      } catch (e) {
        throw new ServeGenError(`${file}: window "${key}" ${field}: ${(e as Error).message}; expected a dict such as "{100: 0.5, 200: 0.5}"`, file);
      }
    };
    out.set(ts, { input: parse(inText, 'input_tokens'), output: parse(outText, 'output_tokens') });
  }
  return out;
}

/** The window at `t`, else the latest one before it (datasets are 6-hourly, traces 10-minutely). */
export function nearestDataset(t: number, windows: ReadonlyMap<number, DatasetWindow>): number | null {
  if (windows.has(t)) return t;
  let best = -1;
  for (const ts of windows.keys()) if (ts <= t && ts > best) best = ts;
  return best >= 0 ? best : null;
}

/**
 * Lognormal mu/sigma of log(tokens) weighted by the PDF (non-positive tokens and zero probabilities ignored).
 * @throws Error for a negative probability, no positive mass, or a clearly negative variance.
 */
export function fitLognormal(pdf: ReadonlyMap<number, number>): { mu: number; sigma: number } {
  if (pdf.size === 0) throw new Error('empty PDF');
  let sumP = 0;
  let sumL = 0;
  let sumL2 = 0;
  for (const value of [...pdf.keys()].sort((a, b) => a - b)) {
    const p = pdf.get(value)!;
    if (value <= 0) continue;
    if (p < 0) throw new Error(`negative probability ${p} for value ${value}`);
    if (p === 0) continue;
    const l = goLog(value);
    sumP += p;
    sumL += p * l;
    sumL2 += p * l * l;
  }
  if (sumP <= 0) throw new Error('the probabilities of positive token counts sum to zero');
  const mu = sumL / sumP;
  let variance = sumL2 / sumP - mu * mu;
  if (variance < 0) {
    if (variance > -1e-10) variance = 0;
    else throw new Error(`negative variance ${variance} (numerical instability)`);
  }
  return { mu, sigma: Math.sqrt(variance) };
}
