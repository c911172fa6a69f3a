import { describe, expect, it } from 'vitest';
import { GoRand } from '../gocompat/go-rand.js';
import { buildClosedLoopReplay, closedLoopFollowUpHorizon, SequenceSampler } from './replay-closed-loop.js';
import { ConstantSampler } from './spec/length.js';
import { emptyTraceHeader, emptyTraceRecord, type TraceRecord, type TraceV2 } from './tracev2-types.js';

function row(over: Partial<TraceRecord>): TraceRecord {
  return { ...emptyTraceRecord(), inputTokens: 10, outputTokens: 4, ...over };
}

function trace(records: TraceRecord[], growth = ''): TraceV2 {
  return { header: { ...emptyTraceHeader(), sessionContextGrowth: growth }, records };
}

// Session a: rounds at 100, 1100, 1600 (gaps 1000, 500); session b: one round; one row outside sessions.
const ROWS = [
  row({ requestId: 0, sessionId: 'a', roundIndex: 0, arrivalTimeUs: 100, tenantId: 't', adapter: 'x', deadlineUs: 900 }),
  row({ requestId: 1, arrivalTimeUs: 300 }),
  row({ requestId: 2, sessionId: 'b', roundIndex: 0, arrivalTimeUs: 700 }),
  row({ requestId: 3, sessionId: 'a', roundIndex: 1, arrivalTimeUs: 1100, inputTokens: 20, outputTokens: 5 }),
  row({ requestId: 4, sessionId: 'a', roundIndex: 2, arrivalTimeUs: 1600, inputTokens: 30, outputTokens: 6 }),
];

describe('closed-loop replay', () => {
  it('injects round 0 of each session (first-appearance order), then rows outside sessions', () => {
    const { requests, sessions } = buildClosedLoopReplay(trace(ROWS), 5n, null, 0);
    expect(requests.map((r) => [r.id, r.arrivalTime, r.sessionId])).toEqual([['request_0', 100, 'a'], ['request_2', 700, 'b'], ['request_1', 300, '']]);
    expect(requests[0]!.deadline).toBe(900);
    expect(requests[0]!.adapter).toBe('x');
    expect(sessions.map((s) => [s.sessionId, s.maxRounds, s.tenantId, s.adapter, s.timeout])).toEqual([['a', 3, 't', 'x', null], ['b', 1, '', '', null]]);
  });

  it('regenerates later rounds with the recorded lengths and the arrival gaps as think times', () => {
    const { sessions } = buildClosedLoopReplay(trace(ROWS), 5n, null, 0);
    const a = sessions[0]!;
    const rng = new GoRand(1n);
    expect([a.inputSampler.sample(rng), a.inputSampler.sample(rng)]).toEqual([20, 30]);
    expect([a.outputSampler.sample(rng), a.outputSampler.sample(rng)]).toEqual([5, 6]);
    expect([a.thinkTimeSampler!.sample(rng), a.thinkTimeSampler!.sample(rng)]).toEqual([1000, 500]);
    expect(sessions[1]!.thinkTimeSampler).toBeNull();
  });

  it('prefers a given sampler, then a recorded think_time_us column, over the gaps', () => {
    const given = new ConstantSampler(42);
    expect(buildClosedLoopReplay(trace(ROWS), 5n, given, 0).sessions[0]!.thinkTimeSampler).toBe(given);
    const recorded = ROWS.map((r) => (r.requestId === 4 ? { ...r, thinkTimeUs: 77 } : r));
    const s = buildClosedLoopReplay(trace(recorded), 5n, null, 0).sessions[0]!.thinkTimeSampler!;
    expect([s.sample(new GoRand(1n)), s.sample(new GoRand(1n))]).toEqual([0, 77]);
  });

  it('bounds follow-ups by twice the latest round-0 / non-session arrival (not of all rows)', () => {
    expect(closedLoopFollowUpHorizon(ROWS)).toBe(1400);
    expect(buildClosedLoopReplay(trace(ROWS), 5n, null, 1400).sessions[0]!.horizon).toBe(1400);
  });

  it('passes the header growth mode on and refuses unknown ones', () => {
    expect(buildClosedLoopReplay(trace(ROWS, 'accumulate'), 5n, null, 0).sessions[0]!.contextGrowth).toBe('accumulate');
    expect(() => buildClosedLoopReplay(trace(ROWS, 'Accumulate'), 5n, null, 0, 't.csv')).toThrow(/session_context_growth: unknown value "Accumulate"/);
  });

  it('refuses sessions whose rounds are not 0, 1, 2, ... and empty traces', () => {
    const gap = ROWS.filter((r) => r.requestId !== 3);
    expect(() => buildClosedLoopReplay(trace(gap), 5n, null, 0)).toThrow(/session "a" has non-consecutive round indices \(expected 1, got 2\)/);
    expect(() => buildClosedLoopReplay(trace([]), 5n, null, 0)).toThrow(/empty trace/);
  });

  it('replays sequences in order and wraps; an empty sequence yields 1', () => {
    const s = new SequenceSampler([3, 0]);
    expect([s.sample(), s.sample(), s.sample()]).toEqual([3, 0, 3]);
    expect(new SequenceSampler([]).sample()).toBe(1);
  });
});
