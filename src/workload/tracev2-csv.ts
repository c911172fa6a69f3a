/**
 * TraceV2 CSV: writer byte-identical to the reference's (Go encoding/csv, optional columns only when needed)
 * and a strict reader.
 *
 * The reference reads rows positionally and only looks up the optional columns by name, so a header in a
 * different order would be silently misread. This reader therefore also checks that the header row has the
 * standard layout and reports a mismatch instead of guessing; everything the reference writes is accepted.
 * Unlike the reference, it also refuses what would otherwise be dropped or misread silently
 * (docs/reference-differences.md, "Inputs blis-ts refuses"): header columns it does not know, rows with more or
 * fewer cells than the header, a repeated request_id, negative times and an unknown status.
 */
import { formatFloatF } from '../gocompat/go-float-format.js';
import { goCsvField, goTrimSpace } from '../gocompat/go-csv.js';
import { parseGoCsv, type GoCsvRow } from './csv-records.js';
import { showValue } from '../domain/errors.js';
import { MAX_REQUEST_TOKENS } from '../domain/units.js';
import { TraceFormatError, emptyTraceRecord } from './tracev2-types.js';
import type { TraceRecord } from './tracev2-types.js';

/** Always-present columns, in file order (optional ones are spliced in by name). */
export const TRACE_V2_BASE_COLUMNS: readonly string[] = [
  'request_id', 'client_id', 'tenant_id', 'slo_class', 'session_id', 'round_index',
  'prefix_group', 'prefix_length', 'streaming', 'input_tokens', 'output_tokens',
  'text_tokens', 'image_tokens', 'audio_tokens', 'video_tokens', 'reason_ratio',
  'model', 'deadline_us', 'server_input_tokens',
  'arrival_time_us', 'send_time_us', 'first_chunk_time_us', 'last_chunk_time_us',
  'num_chunks', 'status', 'error_message', 'finish_reason',
];

interface Layout {
  vllmPriority: boolean;
  sloTarget: boolean;
  xRequestId: boolean;
  adapter: boolean;
  thinkTime: boolean;
}

/** Column list for the given optional-column choices, in the reference's order. */
function columnsFor(l: Layout): string[] {
  const cols: string[] = [];
  for (const c of TRACE_V2_BASE_COLUMNS) {
    cols.push(c);
    if (c === 'slo_class' && l.vllmPriority) cols.push('vllm_priority');
    if (c === 'deadline_us' && l.sloTarget) cols.push('slo_target_us');
  }
  if (l.xRequestId) cols.push('x_request_id');
  if (l.adapter) cols.push('adapter');
  if (l.thinkTime) cols.push('think_time_us');
  return cols;
}

function intText(n: number): string {
  return n === 0 ? '0' : String(n);
}

/**
 * The CSV the reference writes for `records`. `mode` is the header's mode: x_request_id, and vllm_priority for
 * class-tagged rows, are only written for real (observed) traces.
 */
export function formatTraceCsv(records: readonly TraceRecord[], mode = 'generated'): string {
  return [...formatTraceCsvChunks(records, mode)].join('');
}

/** {@link formatTraceCsv}'s text as chunks of about 10,000 rows (for files of any size). */
export function* formatTraceCsvChunks(records: readonly TraceRecord[], mode = 'generated'): Generator<string> {
  const real = mode === 'real';
  const layout: Layout = {
    vllmPriority: records.some((r) => r.vllmPriority !== 0 || (r.sloClass !== '' && real)),
    sloTarget: records.some((r) => r.sloTargetUs > 0),
    xRequestId: real && records.some((r) => r.xRequestId !== ''),
    adapter: records.some((r) => r.adapter !== ''),
    thinkTime: records.some((r) => r.thinkTimeUs !== 0),
  };
  let lines: string[] = [columnsFor(layout).map(goCsvField).join(',')];
  for (const r of records) {
    const row: string[] = [intText(r.requestId), r.clientId, r.tenantId, r.sloClass];
    if (layout.vllmPriority) row.push(intText(r.vllmPriority));
    row.push(
      r.sessionId, intText(r.roundIndex), r.prefixGroup, intText(r.prefixLength), r.streaming ? 'true' : 'false',
      intText(r.inputTokens), intText(r.outputTokens), intText(r.textTokens), intText(r.imageTokens),
      intText(r.audioTokens), intText(r.videoTokens), formatFloatF(r.reasonRatio), r.model, intText(r.deadlineUs),
    );
    if (layout.sloTarget) row.push(intText(r.sloTargetUs));
    row.push(
      intText(r.serverInputTokens), intText(r.arrivalTimeUs), intText(r.sendTimeUs), intText(r.firstChunkTimeUs),
      intText(r.lastChunkTimeUs), intText(r.numChunks), r.status, r.errorMessage, r.finishReason,
    );
    if (layout.xRequestId) row.push(r.xRequestId);
    if (layout.adapter) row.push(r.adapter);
    if (layout.thinkTime) row.push(intText(r.thinkTimeUs));
    lines.push(row.map(goCsvField).join(','));
    if (lines.length >= 10_000) {
      yield lines.join('\n') + '\n';
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join('\n') + '\n';
}

/** The statuses the reference writes: observe (ok, error, timeout) and session replay (incomplete). */
export const TRACE_STATUSES: readonly string[] = ['ok', 'error', 'timeout', 'incomplete'];
/** Optional columns found by name anywhere after the positional ones. */
const NAMED_COLUMNS: readonly string[] = ['x_request_id', 'adapter', 'think_time_us'];

/** Largest token count of one request a trace may give (input, output, per modality). */
export const MAX_TRACE_TOKENS = MAX_REQUEST_TOKENS;

const INT_RE = /^[+-]?[0-9]+$/;
const FLOAT_RE = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Reads one row's cells by column with errors that point at the file, line and column. */
class RowReader {
  constructor(
    private readonly file: string,
    private readonly row: GoCsvRow,
    private readonly names: readonly string[],
  ) {}

  fail(col: number, problem: string, fix: string): never {
    const name = this.names[col] ?? `#${col + 1}`;
    throw new TraceFormatError(
      'TRACE_CSV_VALUE',
      this.file,
      this.row.line,
      name,
      `${this.file}:${this.row.line}: column ${showValue(name)}: ${problem}; ${fix}`,
    );
  }

  str(col: number): string {
    return this.row.fields[col] ?? '';
  }

  /** A token count: non-negative and at most {@link MAX_TRACE_TOKENS}. */
  tokens(col: number): number {
    const v = this.int(col, true);
    if (v > MAX_TRACE_TOKENS) this.fail(col, `${v} tokens exceed the largest request blis-ts simulates (${MAX_TRACE_TOKENS.toLocaleString('en-US')} tokens)`, 'check the value');
    return v;
  }

  int(col: number, nonNegative: boolean): number {
    const s = this.str(col);
    if (!INT_RE.test(s)) this.fail(col, `${showValue(s)} is not an integer`, 'write a base-10 integer such as 0 or 512');
    const big = BigInt(s);
    if (big < INT64_MIN || big > INT64_MAX) this.fail(col, `${s} is out of the 64-bit integer range`, 'use a smaller value');
    if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail(col, `${s} exceeds 2^53, which this simulator cannot represent exactly`, 'use a value below 9007199254740992');
    }
    const v = Number(big);
    if (nonNegative && v < 0) this.fail(col, `negative value ${s} not allowed`, 'use 0 or a positive integer');
    return v;
  }

  bool(col: number): boolean {
    const s = this.str(col);
    if (s === '1' || s === 't' || s === 'T' || s === 'TRUE' || s === 'true' || s === 'True') return true;
    if (s === '0' || s === 'f' || s === 'F' || s === 'FALSE' || s === 'false' || s === 'False') return false;
    return this.fail(col, `${showValue(s)} is not a boolean`, 'write true or false');
  }

  ratio(col: number): number {
    const s = this.str(col);
    if (!FLOAT_RE.test(s)) this.fail(col, `${showValue(s)} is not a number`, 'write a decimal number such as 0 or 0.25');
    const v = Number(s);
    if (!Number.isFinite(v) || v < 0 || v > 1) this.fail(col, `${s} is outside [0.0, 1.0]`, 'write a fraction between 0 and 1');
    return v;
  }
}

/**
 * Parses a TraceV2 CSV. `fileLabel` names the file in error messages.
 * @throws TraceFormatError on malformed CSV, an unexpected header layout, short rows or bad values.
 */
/** The line each parsed record started on, for messages about a record found after parsing (replay's checks). */
const recordLines = new WeakMap<TraceRecord, number>();

/** The CSV line `rec` was parsed from, when it came from {@link parseTraceCsv}. */
export function traceRecordLine(rec: TraceRecord): number | undefined {
  return recordLines.get(rec);
}

export function parseTraceCsv(text: string, fileLabel: string): TraceRecord[] {
  const rows = parseGoCsv(text, fileLabel);
  const head = rows[0];
  if (head === undefined) {
    throw new TraceFormatError(
      'TRACE_CSV_EMPTY', fileLabel, 0, '',
      `${fileLabel}: no header row; a TraceV2 CSV starts with the column header "${TRACE_V2_BASE_COLUMNS.join(',')}"`,
    );
  }
  const h = head.fields;
  const lastIndex = (name: string): number => h.lastIndexOf(name);
  const layout: Layout = {
    vllmPriority: h.includes('vllm_priority'),
    sloTarget: h.includes('slo_target_us'),
    xRequestId: lastIndex('x_request_id') >= 0,
    adapter: lastIndex('adapter') >= 0,
    thinkTime: lastIndex('think_time_us') >= 0,
  };
  const positional = columnsFor({ ...layout, xRequestId: false, adapter: false, thinkTime: false });
  for (let i = 0; i < positional.length; i++) {
    const want = positional[i] ?? '';
    if (h[i] !== want) {
      const got = h[i] === undefined ? 'missing' : showValue(h[i]!);
      throw new TraceFormatError(
        'TRACE_CSV_HEADER', fileLabel, head.line, want,
        `${fileLabel}:${head.line}: header column ${i + 1} is ${got} but the TraceV2 layout has "${want}" there; ` +
          `columns are read by position, so restore the standard order: ${positional.join(',')}`,
      );
    }
  }
  for (let i = positional.length; i < h.length; i++) {
    const name = h[i]!;
    if (!NAMED_COLUMNS.includes(name) || h.indexOf(name, positional.length) !== i) {
      const why = NAMED_COLUMNS.includes(name) ? 'appears twice' : 'is not a TraceV2 column';
      throw new TraceFormatError(
        'TRACE_CSV_HEADER', fileLabel, head.line, name,
        `${fileLabel}:${head.line}: header column ${i + 1} ${showValue(name)} ${why}; its values would be ignored, so remove ` +
          `the column (after ${positional[positional.length - 1] ?? ''}, only ${NAMED_COLUMNS.join(', ')} may follow, once each)`,
      );
    }
  }
  const names = h.slice();
  const width = h.length;
  const seenIds = new Map<number, number>();
  const xIdx = lastIndex('x_request_id');
  const adapterIdx = lastIndex('adapter');
  const thinkIdx = lastIndex('think_time_us');
  const p = layout.vllmPriority ? 1 : 0;

  const records: TraceRecord[] = [];
  for (let k = 1; k < rows.length; k++) {
    const row = rows[k];
    if (row === undefined) continue;
    if (row.fields.length !== width) {
      const extra = row.fields.length > width ? ` (the first extra value is ${showValue(row.fields[width]!)})` : '';
      throw new TraceFormatError(
        'TRACE_CSV_COLUMNS', fileLabel, row.line, '',
        `${fileLabel}:${row.line}: row has ${row.fields.length} columns, expected ${width} as in the header${extra}; ` +
          'every row needs exactly one value per header column (use an empty value for unset text fields)',
      );
    }
    const rd = new RowReader(fileLabel, row, names);
    const r = emptyTraceRecord();
    r.requestId = rd.int(0, true);
    const firstLine = seenIds.get(r.requestId);
    if (firstLine !== undefined) rd.fail(0, `request_id ${r.requestId} appears again (first on line ${firstLine})`, 'give every row its own request_id');
    seenIds.set(r.requestId, row.line);
    r.clientId = rd.str(1);
    r.tenantId = rd.str(2);
    r.sloClass = rd.str(3);
    if (layout.vllmPriority) r.vllmPriority = rd.int(4, true);
    r.sessionId = rd.str(4 + p);
    r.roundIndex = rd.int(5 + p, false);
    r.prefixGroup = rd.str(6 + p);
    r.prefixLength = rd.tokens(7 + p);
    r.streaming = rd.bool(8 + p);
    r.inputTokens = rd.tokens(9 + p);
    r.outputTokens = rd.tokens(10 + p);
    r.textTokens = rd.tokens(11 + p);
    r.imageTokens = rd.tokens(12 + p);
    r.audioTokens = rd.tokens(13 + p);
    r.videoTokens = rd.tokens(14 + p);
    r.reasonRatio = rd.ratio(15 + p);
    r.model = rd.str(16 + p);
    r.deadlineUs = rd.int(17 + p, true);
    const q = p + (layout.sloTarget ? 1 : 0);
    if (layout.sloTarget) r.sloTargetUs = rd.int(18 + p, true);
    r.serverInputTokens = rd.tokens(18 + q);
    r.arrivalTimeUs = rd.int(19 + q, true);
    r.sendTimeUs = rd.int(20 + q, true);
    r.firstChunkTimeUs = rd.int(21 + q, true);
    r.lastChunkTimeUs = rd.int(22 + q, true);
    r.numChunks = rd.int(23 + q, true);
    if (r.deadlineUs > 0 && r.arrivalTimeUs > 0 && r.deadlineUs < r.arrivalTimeUs) {
      rd.fail(17 + p, `deadline ${r.deadlineUs} precedes arrival_time_us ${r.arrivalTimeUs}`, 'use 0 for no deadline or a time >= the arrival');
    }
    r.status = rd.str(24 + q);
    if (!TRACE_STATUSES.includes(r.status)) {
      rd.fail(24 + q, `unknown status ${showValue(r.status)}`, `use one of ${TRACE_STATUSES.join(', ')}`);
    }
    r.errorMessage = goTrimSpace(rd.str(25 + q));
    r.finishReason = goTrimSpace(rd.str(26 + q));
    if (xIdx >= 0) r.xRequestId = goTrimSpace(rd.str(xIdx));
    if (adapterIdx >= 0) r.adapter = goTrimSpace(rd.str(adapterIdx));
    if (thinkIdx >= 0) {
      const s = goTrimSpace(rd.str(thinkIdx));
      if (s !== '') {
        const trimmed: GoCsvRow = { line: row.line, fields: [s] };
        r.thinkTimeUs = new RowReader(fileLabel, trimmed, ['think_time_us']).int(0, true);
      }
    }
    recordLines.set(r, row.line);
    records.push(r);
  }
  return records;
}
