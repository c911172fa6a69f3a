/**
 * `--session-mode fixed-accumulate`: every round at its recorded time, its prompt the previous prompt + the
 * previous output + the row's input (hand-checked lengths and token identity).
 */
import { describe, expect, it } from 'vitest';
import { buildFixedAccumulateReplay } from './replay-fixed-accumulate.js';
import { emptyTraceHeader, emptyTraceRecord, type TraceRecord, type TraceV2 } from './tracev2-types.js';

function row(id: number, session: string, round: number, input: number, output: number, arrival: number, extra: Partial<TraceRecord> = {}): TraceRecord {
  return { ...emptyTraceRecord(), requestId: id, sessionId: session, roundIndex: round, inputTokens: input, outputTokens: output, arrivalTimeUs: arrival, status: 'ok', ...extra };
}

function trace(records: TraceRecord[], growth = 'accumulate'): TraceV2 {
  return { header: { ...emptyTraceHeader(), traceVersion: 3, timeUnit: 'microseconds', mode: 'generated', sessionContextGrowth: growth }, records };
}

describe('buildFixedAccumulateReplay', () => {
  const records = [
    row(0, 'A', 0, 100, 20, 0, { prefixGroup: 'sys', prefixLength: 16 }),
    row(1, 'B', 0, 50, 5, 400_000),
    // Rows may come in any order; rounds are put in order per session.
    row(3, 'A', 2, 10, 7, 9_000_000),
    row(2, 'A', 1, 30, 4, 1_000_000),
    row(4, '', 0, 12, 3, 500_000),
  ];

  it('rebuilds each prompt as the previous prompt + output + the new input; arrivals are the recorded ones', () => {
    const reqs = buildFixedAccumulateReplay(trace(records), 7n, 't.csv');
    expect(reqs.map((r) => [r.id, r.sessionId, r.roundIndex, r.inputLen, r.outputTokens.length, r.arrivalTime])).toEqual([
      // A: 16 (prefix) + 100 = 116; 116 + 20 + 30 = 166; 166 + 4 + 10 = 180.
      ['request_0', 'A', 0, 116, 20, 0],
      ['request_2', 'A', 1, 166, 4, 1_000_000],
      ['request_3', 'A', 2, 180, 7, 9_000_000],
      ['request_1', 'B', 0, 50, 5, 400_000],
      // Outside sessions: built as in fixed mode.
      ['request_4', '', 0, 12, 3, 500_000],
    ]);
    const [a0, a1, a2] = reqs;
    // Round r's prompt starts with round r−1's whole prompt and then its output, token for token.
    expect([...a1!.inputTokens.subarray(0, 116)]).toEqual([...a0!.inputTokens]);
    expect([...a1!.inputTokens.subarray(116, 136)]).toEqual([...a0!.outputTokens]);
    expect([...a2!.inputTokens.subarray(0, 166)]).toEqual([...a1!.inputTokens]);
    expect([...a2!.inputTokens.subarray(166, 170)]).toEqual([...a1!.outputTokens]);
    // The prefix is folded into the prompt: session rounds name no group.
    expect(reqs.slice(0, 3).map((r) => [r.prefixGroup, r.prefixLength])).toEqual([['', 0], ['', 0], ['', 0]]);
    // Deterministic in the seed.
    expect([...buildFixedAccumulateReplay(trace(records), 7n)[2]!.inputTokens]).toEqual([...a2!.inputTokens]);
  });

  it('refuses a trace that does not accumulate, and gapped rounds', () => {
    expect(() => buildFixedAccumulateReplay(trace(records, ''), 1n, 't.csv')).toThrow(/fixed-accumulate needs a trace whose header says session_context_growth: accumulate/);
    expect(() => buildFixedAccumulateReplay(trace([row(0, 'A', 0, 5, 1, 0), row(1, 'A', 2, 5, 1, 1)]), 1n)).toThrow(/non-consecutive round indices \(expected 1, got 2\)/);
  });
});
