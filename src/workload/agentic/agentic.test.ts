/**
 * The agentic converters against hand calculations: OTLP JSON, upstream's agent-trace JSON and WekaTrace lines
 * written here from the formats' public descriptions; every expected value is worked out in the comments.
 */
import { describe, expect, it } from 'vitest';
import { agenticTrace, encodeSession } from './encode.js';
import { splitDocuments } from './json-docs.js';
import { cappedArrivals, parseIsoMicros, readOtelSessions } from './otel.js';
import { readWekaSessions } from './weka.js';
import type { AgenticConvertOptions } from './types.js';

const OPTS: AgenticConvertOptions = { maxThinkTimeUs: 15_000_000, minRounds: 1, skipIncomplete: false };
const S = (n: number): string => String(1_700_000_000_000_000_000n + BigInt(Math.round(n * 1e9)));
const int = (key: string, v: number): object => ({ key, value: { intValue: String(v) } });
const strAttr = (key: string, v: string): object => ({ key, value: { stringValue: v } });
const chat = (trace: string, id: string, parent: string, start: number, input: number, output: number, extra: object[] = [], status?: object): object => ({
  traceId: trace, spanId: id, parentSpanId: parent, name: 'chat some-model', kind: 3, startTimeUnixNano: S(start), endTimeUnixNano: S(start + 0.5),
  attributes: [strAttr('gen_ai.operation.name', 'chat'), int('gen_ai.usage.input_tokens', input), int('gen_ai.usage.output_tokens', output), ...extra],
  ...(status === undefined ? {} : { status }),
});
const otlp = (spans: unknown[], resource: object[] = []): string => JSON.stringify({ resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: { name: 'agent' }, spans }] }] });

describe('blis convert otel: OTLP JSON lines', () => {
  // Line 1: session A's root span (invoke_agent, gen_ai.conversation.id conv-A) and two of its calls (they
  // inherit the conversation through parentSpanId), a failed call, a tool span, and session B's second call
  // (its own conversation id) listed before its first. Line 2: A's third call.
  const line1 = otlp([
    { traceId: 't1', spanId: 'root', name: 'invoke_agent coder', startTimeUnixNano: S(0), endTimeUnixNano: S(40), attributes: [strAttr('gen_ai.conversation.id', 'conv-A')] },
    chat('t1', 'a1', 'root', 0, 1000, 100),
    chat('t2', 'b2', '', 1.25, 400, 5, [strAttr('gen_ai.conversation.id', 'conv-B')]),
    chat('t2', 'b1', '', 1, 500, 20, [strAttr('gen_ai.conversation.id', 'conv-B')]),
    chat('t1', 'ax', 'root', 1, 9999, 9999, [], { code: 2, message: 'rate limited' }),
    { traceId: 't1', spanId: 'tool', parentSpanId: 'root', name: 'execute_tool grep', startTimeUnixNano: S(2), endTimeUnixNano: S(2.4), attributes: [strAttr('gen_ai.operation.name', 'execute_tool')] },
    chat('t1', 'a2', 'root', 2.5, 1300, 50),
  ]);
  const line2 = otlp([chat('t1', 'a3', 'root', 30, 1400, 10)]);
  const docs = splitDocuments('export.jsonl', `${line1}\n\n${line2}\n`, true);

  it('groups calls into sessions, orders them by start, and stores input deltas (hand-checked)', () => {
    const sessions = readOtelSessions(docs, OPTS);
    expect(sessions.map((s) => s.id)).toEqual(['conv-A', 'conv-B']);
    const { header, records } = agenticTrace(sessions, 'accumulate');
    expect(header).toMatchObject({ traceVersion: 3, timeUnit: 'microseconds', mode: 'generated', sessionContextGrowth: 'accumulate' });
    const rows = records.map((r) => [r.requestId, r.sessionId, r.roundIndex, r.inputTokens, r.outputTokens, r.arrivalTimeUs, r.status, r.model, r.thinkTimeUs]);
    expect(rows).toEqual([
      // A: starts 0, 2.5 s, 30 s. Deltas: 1000; 1300 − 1000 − 100 = 200; 1400 − 1300 − 50 = 50.
      // Gaps 2.5 s and 27.5 s; the second is capped at 15 s: arrivals 0, 2.5 s, 17.5 s. The failed call is dropped.
      [0, 'conv-A', 0, 1000, 100, 0, 'ok', '', 0],
      [1, 'conv-A', 1, 200, 50, 2_500_000, 'ok', '', 0],
      [2, 'conv-A', 2, 50, 10, 17_500_000, 'ok', '', 0],
      // B: starts 1 s and 1.25 s (listed the other way round): arrivals 0 and 0.25 s; the prompt shrank
      // (400 < 500 + 20), so the delta is clamped to 0.
      [3, 'conv-B', 0, 500, 20, 0, 'ok', '', 0],
      [4, 'conv-B', 1, 0, 5, 250_000, 'ok', '', 0],
    ]);
  });

  it('--include-errors keeps the failed call as status error; --min-rounds skips short sessions; no cap with 0', () => {
    const withErrors = agenticTrace(readOtelSessions(docs, { ...OPTS, includeErrors: true }), 'accumulate').records;
    // A's calls now start 0, 1 (the failure), 2.5, 30 s.
    expect(withErrors.filter((r) => r.sessionId === 'conv-A').map((r) => [r.inputTokens, r.status])).toEqual([[1000, 'ok'], [9999 - 1000 - 100, 'error'], [0, 'ok'], [1400 - 1300 - 50, 'ok']]);
    const warnings: string[] = [];
    expect(readOtelSessions(docs, { ...OPTS, minRounds: 3, warn: (m) => warnings.push(m) }).map((s) => s.id)).toEqual(['conv-A']);
    expect(warnings).toEqual(['--min-rounds 3: skipped 1 session(s) with fewer LLM calls']);
    expect(readOtelSessions(docs, { ...OPTS, maxThinkTimeUs: 0 })[0]!.rounds.map((r) => r.arrivalUs)).toEqual([0, 2_500_000, 30_000_000]);
  });

  it('--keep-offsets keeps each session\'s start relative to the first call of the input', () => {
    // A starts at 0 s, B at 1 s: B's arrivals become 1 s and 1.25 s; A's are unchanged (0, 2.5 s, 17.5 s capped).
    const s = readOtelSessions(docs, { ...OPTS, keepOffsets: true });
    expect(s.map((x) => x.rounds.map((r) => r.arrivalUs))).toEqual([[0, 2_500_000, 17_500_000], [1_000_000, 1_250_000]]);
  });

  it('independent growth keeps whole prompts and no header growth', () => {
    const t = agenticTrace(readOtelSessions(docs, OPTS), 'independent');
    expect(t.header.sessionContextGrowth).toBe('');
    expect(t.records.map((r) => r.inputTokens)).toEqual([1000, 1300, 1400, 500, 400]);
  });

  it('a span without a conversation id anywhere falls back to the resource session.id, then to its trace', () => {
    const text = otlp([chat('t9', 'x1', '', 0, 10, 1), chat('t9', 'x2', '', 1, 20, 1)], [strAttr('session.id', 'res-1')]);
    expect(readOtelSessions(splitDocuments('r.json', text, false), OPTS).map((s) => s.id)).toEqual(['res-1']);
    const bare = otlp([chat('t9', 'x1', '', 0, 10, 1)]);
    expect(readOtelSessions(splitDocuments('r.json', bare, false), OPTS).map((s) => s.id)).toEqual(['t9']);
  });

  it('refuses bad input with file:line and the field', () => {
    // A pretty-printed file: the offending span's attributes start on a known line.
    const missing = JSON.stringify(JSON.parse(otlp([chat('t1', 'a', '', 0, 10, 1), { ...(chat('t1', 'b', '', 1, 10, 1) as Record<string, unknown>), attributes: [strAttr('gen_ai.operation.name', 'chat'), int('gen_ai.usage.input_tokens', 7)] }])), null, 1);
    const attrLine = missing.split('\n').findIndex((l, i, all) => l.includes('"attributes"') && all.slice(i, i + 12).join('').includes('"gen_ai.usage.input_tokens"') && !all.slice(i, i + 40).join('').includes('output_tokens')) + 1;
    expect(attrLine).toBeGreaterThan(1);
    expect(() => readOtelSessions(splitDocuments('m.json', missing, false), OPTS)).toThrow(new RegExp(`^m\\.json:${attrLine}: gen_ai\\.usage\\.output_tokens: the LLM call "chat some-model" has no gen_ai\\.usage\\.output_tokens`));
    const lines = (spans: unknown[]): string => `${line1}\n${otlp(spans)}\n`;
    const cases: [string, RegExp][] = [
      [lines([{ ...(chat('t1', 'n', '', 1, 10, 1) as Record<string, unknown>), startTimeUnixNano: '-5000' }]), /^x\.jsonl:2: startTimeUnixNano: is before 1970/],
      [lines([{ ...(chat('t1', 'n', '', 1, 10, 1) as Record<string, unknown>), startTimeUnixNano: 'soon' }]), /^x\.jsonl:2: startTimeUnixNano: missing or not an integer/],
      [lines([{ ...(chat('t1', 'n', '', 1, 10, 1) as Record<string, unknown>), endTimeUnixNano: S(0.5) }]), /^x\.jsonl:2: endTimeUnixNano: the span ends before it starts/],
      [lines(['not a span']), /^x\.jsonl:2: span: each span must be an object/],
      [lines([chat('t1', 'n', '', 1, -3, 1)]), /^x\.jsonl:2: gen_ai\.usage\.input_tokens: must be a non-negative integer token count, got -3/],
      [lines([{ ...(chat('t1', 'n', '', 1, 3, 1) as Record<string, unknown>), traceId: '' }]), /^x\.jsonl:2: traceId: a span needs its traceId/],
      [`${line1}\n{"resourceSpans": [\n`, /^x\.jsonl:2: JSON: invalid JSON/],
      [`${line1}\n{"traces": []}\n`, /^x\.jsonl:2: resourceSpans: neither an OTLP JSON export/],
    ];
    for (const [text, msg] of cases) expect(() => readOtelSessions(splitDocuments('x.jsonl', text, true), OPTS)).toThrow(msg);
  });

  it('--skip-incomplete drops calls without token counts, with a warning', () => {
    const noOut = { ...(chat('t1', 'b', '', 1, 10, 1) as Record<string, unknown>), attributes: [strAttr('gen_ai.operation.name', 'chat'), int('gen_ai.usage.input_tokens', 7)] };
    const warnings: string[] = [];
    const s = readOtelSessions(splitDocuments('m.json', otlp([chat('t1', 'a', '', 0, 10, 1), noOut]), false), { ...OPTS, skipIncomplete: true, warn: (m) => warnings.push(m) });
    expect(s[0]!.rounds).toHaveLength(1);
    expect(warnings).toEqual(['--skip-incomplete: dropped 1 LLM call(s) without gen_ai.usage token counts']);
  });
});

describe('blis convert otel: upstream agent-trace JSON ({"spans": [...]})', () => {
  it('one document is one session (its session_id); ISO times with and without a zone', () => {
    const doc = JSON.stringify({
      spans: [
        { span_id: 's0', trace_id: 'tr', session_id: 'sess-9', name: 'agent run', start_time: '2026-03-01T10:00:00+02:00', attributes: {} },
        // 10:00:00.250000+02:00 = 08:00:00.25Z; the naive 08:00:03.000001 is UTC: 2.750001 s later.
        { span_id: 's1', trace_id: 'tr', name: 'chat m', start_time: '2026-03-01T10:00:00.25+02:00', attributes: { 'gen_ai.usage.input_tokens': 300, 'gen_ai.usage.output_tokens': 30 } },
        { span_id: 's2', trace_id: 'tr', name: 'llm', start_time: '2026-03-01T08:00:03.000001', attributes: { 'gen_ai.input.messages': '[]', 'gen_ai.usage.input_tokens': 400, 'gen_ai.usage.output_tokens': 40 } },
      ],
    });
    const s = readOtelSessions(splitDocuments('a.json', doc, false), OPTS);
    expect(s).toHaveLength(1);
    const recs = encodeSession(s[0]!, 7);
    // Deltas 300 and 400 − 300 − 30 = 70; arrivals 0 and 2_750_001 µs.
    expect(recs.map((r) => [r.requestId, r.sessionId, r.roundIndex, r.inputTokens, r.outputTokens, r.arrivalTimeUs])).toEqual([[7, 'sess-9', 0, 300, 30, 0], [8, 'sess-9', 1, 70, 40, 2_750_001]]);
  });

  it('parses ISO-8601 times to the microsecond', () => {
    expect(parseIsoMicros('1970-01-01T00:00:01Z')).toBe(1_000_000);
    expect(parseIsoMicros('1970-01-02T00:00:00.5-01:00')).toBe((86_400 + 3_600) * 1_000_000 + 500_000);
    expect(parseIsoMicros('2000-03-01T00:00:00Z')).toBe(951_868_800_000_000);
    expect(parseIsoMicros('yesterday')).toBeNull();
  });

  it('caps each recorded gap, not the distance from the previous capped arrival', () => {
    // Gaps 100 s and 1 s with a 15 s cap: 0, 15 s, 16 s.
    expect(cappedArrivals([0, 100e6, 101e6], 15e6)).toEqual([0, 15e6, 16e6]);
  });
});

describe('blis convert weka', () => {
  const session = {
    id: 'w-1', models: ['claude-x'],
    requests: [
      { type: 'n', t: 0, in: 1000, out: 100, api_time: 2, model: 'claude-x' },
      { type: 'subagent', t: 2.5, requests: [{ type: 'n', t: 2.6, in: 5, out: 5 }] },
      { type: 's', t: 10, in: 1500, out: 200, api_time: 3 },
      { type: 'n', t: 12, in: 1800, out: 50, api_time: 1 },
    ],
  };
  const text = `${JSON.stringify(session)}\n${JSON.stringify({ id: 'w-2', requests: [{ type: 'n', t: 0.5, in: 64, out: 8, api_time: 0.1 }] })}\n`;

  it('main turns in order, deltas, arrivals and recomputed think times (hand-checked)', () => {
    const t = agenticTrace(readWekaSessions(splitDocuments('w.jsonl', text, true), { ...OPTS, maxThinkTimeUs: 0 }), 'accumulate');
    expect(t.records.map((r) => [r.requestId, r.sessionId, r.roundIndex, r.inputTokens, r.outputTokens, r.arrivalTimeUs, r.thinkTimeUs, r.streaming, r.model])).toEqual([
      // Deltas 1000; 1500 − 1000 − 100 = 400; 1800 − 1500 − 200 = 100.
      // Think: 10 − 0 − 2 = 8 s; 12 − 10 − 3 = −1 s → 0. The sub-agent group is skipped.
      [0, 'w-1', 0, 1000, 100, 0, 0, false, ''],
      [1, 'w-1', 1, 400, 200, 10_000_000, 8_000_000, true, ''],
      [2, 'w-1', 2, 100, 50, 12_000_000, 0, false, ''],
      [3, 'w-2', 0, 64, 8, 500_000, 0, false, ''],
    ]);
    const capped = readWekaSessions(splitDocuments('w.jsonl', text, true), { ...OPTS, maxThinkTimeUs: 5_000_000 });
    expect(capped[0]!.rounds.map((r) => r.thinkUs)).toEqual([0, 5_000_000, 0]);
  });

  it('refuses bad input with file:line and the field', () => {
    const bad = (req: object): string => `${JSON.stringify(session)}\n${JSON.stringify({ id: 'w-2', requests: [req] })}\n`;
    const cases: [string, RegExp][] = [
      [bad({ type: 'n', t: 1, in: 3 }), /^w\.jsonl:2: out: main turn 0 has no "out" token count/],
      [bad({ type: 'n', t: -1, in: 3, out: 1 }), /^w\.jsonl:2: t: must be >= 0, got -1/],
      [bad({ type: 'n', t: 1, in: 2.5, out: 1 }), /^w\.jsonl:2: in: must be a whole number, got 2.5/],
      [bad({ type: 'n', t: 1, in: 3, out: 1, api_time: '2s' }), /^w\.jsonl:2: api_time: must be a finite number, got "2s"/],
      [`${JSON.stringify(session)}\n{"requests": []}\n`, /^w\.jsonl:2: id: a session needs a non-empty string "id"/],
      [`${JSON.stringify(session)}\n{"id": "x", "requests": {}}\n`, /^w\.jsonl:2: requests: must be a list/],
    ];
    for (const [t, msg] of cases) expect(() => readWekaSessions(splitDocuments('w.jsonl', t, true), OPTS)).toThrow(msg);
  });
});
