/**
 * `blis convert otel` (upstream PR #1485, after inference-perf's otel_trace_to_replay_graph.py): OpenTelemetry
 * spans of LLM calls → agentic sessions. Two input shapes:
 * - upstream's agent-trace JSON, `{"spans": [...]}` with `session_id`/`trace_id`, `name`, ISO-8601
 *   `start_time`, `status.code` and flat `attributes` — one document is one session (its first span's
 *   `session_id`, else its `trace_id`);
 * - OTLP JSON as collectors export it (`resourceSpans[].scopeSpans[].spans[]`, `startTimeUnixNano`, attributes
 *   as `{key, value: {stringValue|intValue|doubleValue|...}}`), one export per file or per line — spans are
 *   grouped into sessions across documents by `gen_ai.conversation.id` (or `session.id`) on the span, on its
 *   nearest ancestor that has one, or on the resource, else by trace id.
 * An LLM call is a span named `chat ...`, or carrying `gen_ai.input.messages`, or whose `gen_ai.operation.name`
 * is chat / text_completion / generate_content. Its tokens are `gen_ai.usage.input_tokens` / `output_tokens`
 * (the older `prompt_tokens` / `completion_tokens` accepted). Error spans (status code 2) are dropped unless
 * asked for. A session's calls are its rounds in start-time order (stable); arrival = start − the session's
 * first start, each gap capped at `maxThinkTimeUs` (with `keepOffsets`, plus the session's first start − the
 * input's first call, so sessions keep their recorded overlap). No think time is recorded (replay derives it
 * from the gaps).
 */
import { fieldError, isRecord, parseDocument } from './json-docs.js';
import type { AgenticConvertOptions, AgenticDocument, AgenticSession, NormalizedRound } from './types.js';

const LLM_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content']);
const SESSION_KEYS = ['gen_ai.conversation.id', 'session.id'];

/** One span, read: enough to check, group and order it. */
interface Span {
  readonly doc: AgenticDocument;
  readonly path: readonly (string | number)[];
  /** Where the attributes are (flat object or OTLP list), for messages. */
  readonly attrPath: readonly (string | number)[];
  readonly otlp: boolean;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly attrs: Map<string, unknown>;
  readonly resourceSession: string;
  /** Upstream shape: the document's session. */
  readonly docSession: string;
  readonly isError: boolean;
  readonly startUs: number;
  readonly order: number;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** An OTLP AnyValue as a JS scalar (ints may be strings, as protobuf JSON writes int64). */
function anyValue(v: unknown): unknown {
  if (!isRecord(v)) return undefined;
  if ('stringValue' in v) return v['stringValue'];
  if ('intValue' in v) return typeof v['intValue'] === 'string' && /^-?\d+$/.test(v['intValue']) ? Number(v['intValue']) : v['intValue'];
  if ('doubleValue' in v) return v['doubleValue'];
  if ('boolValue' in v) return v['boolValue'];
  return v;
}

function otlpAttributes(doc: AgenticDocument, list: unknown, path: readonly (string | number)[]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  if (list === undefined) return m;
  if (!Array.isArray(list)) throw fieldError(doc, path, 'attributes', 'must be a list of {key, value} (OTLP JSON)');
  list.forEach((a, i) => {
    if (!isRecord(a) || typeof a['key'] !== 'string') throw fieldError(doc, [...path, i], 'attributes', 'each attribute must be an object with a string "key" and a "value"');
    m.set(a['key'], anyValue(a['value']));
  });
  return m;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})?$/;

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** µs since the epoch of an ISO-8601 time (no zone = UTC, as upstream); null when unparseable. */
export function parseIsoMicros(s: string): number | null {
  const m = ISO.exec(s.trim());
  if (m === null) return null;
  const n = (i: number): number => Number(m[i]);
  const [y, mo, d, h, mi, se] = [n(1), n(2), n(3), n(4), n(5), n(6)];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return null;
  let secs = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    secs -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60;
  }
  const frac = (m[7] ?? '').padEnd(6, '0').slice(0, 6);
  return secs * 1_000_000 + Number(frac);
}

/** µs of an OTLP `*UnixNano` value (a decimal string or a number); null when absent, NaN when malformed. */
function unixNanoMicros(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const text = typeof v === 'number' && Number.isInteger(v) ? BigInt(v).toString() : typeof v === 'string' ? v.trim() : '';
  if (!/^-?\d+$/.test(text)) return NaN;
  return Number(BigInt(text) / 1000n);
}

function isErrorStatus(status: unknown): boolean {
  if (!isRecord(status)) return false;
  const c = status['code'];
  return c === 2 || c === 'STATUS_CODE_ERROR';
}

function readOtlpSpans(doc: AgenticDocument, root: Record<string, unknown>, out: Span[]): void {
  const rs = root['resourceSpans'];
  if (!Array.isArray(rs)) throw fieldError(doc, ['resourceSpans'], 'resourceSpans', 'must be a list (OTLP JSON)');
  rs.forEach((r, ri) => {
    if (!isRecord(r)) throw fieldError(doc, ['resourceSpans', ri], 'resourceSpans', 'each entry must be an object');
    const res = isRecord(r['resource']) ? otlpAttributes(doc, r['resource']['attributes'], ['resourceSpans', ri, 'resource', 'attributes']) : new Map<string, unknown>();
    const resourceSession = SESSION_KEYS.map((k) => str(res.get(k))).find((v) => v !== '') ?? '';
    const scopes = r['scopeSpans'] ?? r['instrumentationLibrarySpans'] ?? [];
    if (!Array.isArray(scopes)) throw fieldError(doc, ['resourceSpans', ri, 'scopeSpans'], 'scopeSpans', 'must be a list');
    scopes.forEach((sc, si) => {
      const scopeKey = 'scopeSpans' in r ? 'scopeSpans' : 'instrumentationLibrarySpans';
      if (!isRecord(sc)) throw fieldError(doc, ['resourceSpans', ri, scopeKey, si], 'scopeSpans', 'each entry must be an object');
      const spans = sc['spans'] ?? [];
      if (!Array.isArray(spans)) throw fieldError(doc, ['resourceSpans', ri, scopeKey, si, 'spans'], 'spans', 'must be a list');
      spans.forEach((sp, i) => {
        const path = ['resourceSpans', ri, scopeKey, si, 'spans', i];
        if (!isRecord(sp)) throw fieldError(doc, path, 'span', 'each span must be an object');
        if (typeof sp['traceId'] !== 'string' || sp['traceId'] === '') throw fieldError(doc, path, 'traceId', 'a span needs its traceId (OTLP JSON: a hex string)');
        const attrs = otlpAttributes(doc, sp['attributes'], [...path, 'attributes']);
        const start = unixNanoMicros(sp['startTimeUnixNano']);
        out.push({
          doc, path, attrPath: [...path, 'attributes'], otlp: true,
          traceId: sp['traceId'], spanId: str(sp['spanId']), parentSpanId: str(sp['parentSpanId']), name: str(sp['name']),
          attrs, resourceSession, docSession: '', isError: isErrorStatus(sp['status']),
          startUs: start === null ? NaN : start, order: out.length,
        });
        const end = unixNanoMicros(sp['endTimeUnixNano']);
        if (start !== null && end !== null && !Number.isNaN(start) && !Number.isNaN(end) && end < start) {
          throw fieldError(doc, [...path, 'endTimeUnixNano'], 'endTimeUnixNano', `the span ends before it starts (${end} µs < ${start} µs); fix the span's times`);
        }
      });
    });
  });
}

function readFlatSpans(doc: AgenticDocument, root: Record<string, unknown>, out: Span[]): void {
  const spans = root['spans'];
  if (!Array.isArray(spans)) throw fieldError(doc, ['spans'], 'spans', 'must be a list of spans');
  let docSession = '';
  for (const sp of spans) {
    if (!isRecord(sp)) continue;
    docSession = str(sp['session_id']) || str(sp['trace_id']);
    if (docSession !== '') break;
  }
  spans.forEach((sp, i) => {
    const path = ['spans', i];
    if (!isRecord(sp)) throw fieldError(doc, path, 'span', 'each span must be an object');
    if (docSession === '') throw fieldError(doc, path, 'session_id', 'no span of this trace has a session_id or trace_id; give the spans one');
    const a = sp['attributes'] ?? {};
    if (!isRecord(a)) throw fieldError(doc, [...path, 'attributes'], 'attributes', 'must be an object of attribute names to values');
    if (sp['name'] !== undefined && typeof sp['name'] !== 'string') throw fieldError(doc, [...path, 'name'], 'name', 'must be a string');
    const startText = sp['start_time'];
    const start = typeof startText === 'string' ? parseIsoMicros(startText) : null;
    out.push({
      doc, path, attrPath: [...path, 'attributes'], otlp: false,
      traceId: str(sp['trace_id']), spanId: str(sp['span_id']), parentSpanId: str(sp['parent_span_id']), name: str(sp['name']),
      attrs: new Map(Object.entries(a)), resourceSession: '', docSession, isError: isErrorStatus(sp['status']),
      startUs: start === null ? NaN : start, order: out.length,
    });
  });
}

function isLlmSpan(s: Span): boolean {
  return s.name.startsWith('chat ') || s.attrs.has('gen_ai.input.messages') || LLM_OPERATIONS.has(str(s.attrs.get('gen_ai.operation.name')));
}

/** The session an OTLP span belongs to: its own conversation id, an ancestor's, the resource's, else its trace. */
function otlpSession(s: Span, byId: Map<string, Span>): string {
  for (let cur: Span | undefined = s, hops = 0; cur !== undefined && hops < 10_000; hops++) {
    for (const k of SESSION_KEYS) {
      const v = str(cur.attrs.get(k));
      if (v !== '') return v;
    }
    cur = cur.parentSpanId === '' ? undefined : byId.get(`${cur.traceId}/${cur.parentSpanId}`);
  }
  return s.resourceSession !== '' ? s.resourceSession : s.traceId;
}

/** A non-negative integer token count, or undefined when absent. @throws for any other value. */
function tokenCount(s: Span, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    if (!s.attrs.has(k)) continue;
    const v = s.attrs.get(k);
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw fieldError(s.doc, s.attrPath, k, `must be a non-negative integer token count, got ${JSON.stringify(v) ?? String(v)}`);
    }
    return v;
  }
  return undefined;
}

/** Caps each recorded gap between consecutive calls at `cap` µs (0 = no cap); arrivals relative to the first. */
export function cappedArrivals(startsUs: readonly number[], cap: number): number[] {
  const out: number[] = [];
  startsUs.forEach((t, i) => {
    if (i === 0) out.push(0);
    else {
      const gap = t - startsUs[i - 1]!;
      out.push(out[i - 1]! + (cap > 0 && gap > cap ? cap : gap));
    }
  });
  return out;
}

/**
 * The sessions of every document, in first-appearance order.
 * @throws AgenticTraceError naming `file:line` and the field: invalid JSON, a document that is neither shape,
 *   a malformed span, an LLM span without token counts (unless `skipIncomplete`), a missing, unparseable or
 *   negative start time.
 */
export function readOtelSessions(docs: Iterable<AgenticDocument>, opts: AgenticConvertOptions): AgenticSession[] {
  const spans: Span[] = [];
  for (const doc of docs) {
    const root = parseDocument(doc);
    if (isRecord(root) && 'resourceSpans' in root) readOtlpSpans(doc, root, spans);
    else if (isRecord(root) && 'spans' in root) readFlatSpans(doc, root, spans);
    else throw fieldError(doc, [], 'resourceSpans', 'neither an OTLP JSON export (resourceSpans) nor an agent trace ({"spans": [...]})');
  }
  const byId = new Map<string, Span>();
  for (const s of spans) if (s.otlp && s.spanId !== '') byId.set(`${s.traceId}/${s.spanId}`, s);

  const groups = new Map<string, { span: Span; input: number; output: number }[]>();
  let dropped = 0;
  for (const s of spans) {
    if (!isLlmSpan(s)) continue;
    if (s.isError && opts.includeErrors !== true) continue;
    const input = tokenCount(s, ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens']);
    const output = tokenCount(s, ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens']);
    if (input === undefined || output === undefined) {
      if (opts.skipIncomplete) {
        dropped++;
        continue;
      }
      const key = input === undefined ? 'gen_ai.usage.input_tokens' : 'gen_ai.usage.output_tokens';
      throw fieldError(s.doc, s.attrPath, key, `the LLM call ${JSON.stringify(s.name)} has no ${key}; a call without token counts cannot be replayed (add it, or pass --skip-incomplete to drop such calls)`);
    }
    const timeKey = s.otlp ? 'startTimeUnixNano' : 'start_time';
    if (Number.isNaN(s.startUs)) throw fieldError(s.doc, [...s.path, timeKey], timeKey, s.otlp ? 'missing or not an integer count of nanoseconds since the epoch' : 'missing or not an ISO-8601 time (e.g. 2026-01-02T03:04:05.123456Z)');
    if (s.startUs < 0) throw fieldError(s.doc, [...s.path, timeKey], timeKey, `is before 1970 (negative, ${s.startUs} µs); fix the span's time`);
    const id = s.otlp ? otlpSession(s, byId) : s.docSession;
    let g = groups.get(id);
    if (g === undefined) groups.set(id, (g = []));
    g.push({ span: s, input, output });
  }
  if (dropped > 0) opts.warn?.(`--skip-incomplete: dropped ${dropped} LLM call(s) without gen_ai.usage token counts`);

  const sessions: AgenticSession[] = [];
  let short = 0;
  let origin = Infinity;
  for (const calls of groups.values()) for (const c of calls) origin = Math.min(origin, c.span.startUs);
  for (const [id, calls] of groups) {
    if (calls.length < opts.minRounds) {
      short++;
      continue;
    }
    calls.sort((a, b) => a.span.startUs - b.span.startUs || a.span.order - b.span.order);
    const offset = opts.keepOffsets === true ? calls[0]!.span.startUs - origin : 0;
    const arrivals = cappedArrivals(calls.map((c) => c.span.startUs), opts.maxThinkTimeUs).map((t) => t + offset);
    const rounds: NormalizedRound[] = calls.map((c, i) => ({ inputTokensAbs: c.input, outputTokens: c.output, arrivalUs: arrivals[i]!, thinkUs: 0, status: c.span.isError ? 'error' : 'ok', streaming: false }));
    sessions.push({ id, rounds });
  }
  if (short > 0) opts.warn?.(`--min-rounds ${opts.minRounds}: skipped ${short} session(s) with fewer LLM calls`);
  return sessions;
}
