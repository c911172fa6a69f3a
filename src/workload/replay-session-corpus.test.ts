/** `--total-sessions`: the corpus cut or stretched with cache-busting copies (hand-checked names, lengths, tokens). */
import { describe, expect, it } from 'vitest';
import { buildClosedLoopReplay } from './replay-closed-loop.js';
import { expandSessionCorpus } from './replay-session-corpus.js';
import { emptyTraceHeader, emptyTraceRecord, type TraceRecord } from './tracev2-types.js';

function row(id: number, session: string, round: number, input: number, output: number, arrival: number, extra: Partial<TraceRecord> = {}): TraceRecord {
  return { ...emptyTraceRecord(), requestId: id, sessionId: session, roundIndex: round, inputTokens: input, outputTokens: output, arrivalTimeUs: arrival, ...extra };
}

describe('expandSessionCorpus', () => {
  const records = [
    row(0, 'A', 0, 10, 2, 0, { prefixGroup: 'sys', prefixLength: 4 }),
    row(1, 'A', 1, 3, 2, 1000),
    row(2, 'B', 0, 6, 1, 500),
    row(3, 'B', 1, 5, 1, 1500),
  ];
  const built = buildClosedLoopReplay({ header: { ...emptyTraceHeader(), sessionContextGrowth: 'accumulate' }, records }, 3n, null, 0);

  it('copies sessions in turn after the originals, one fresh token after the group prefix', () => {
    const { blueprints, roundZeros } = expandSessionCorpus(built.sessions, built.requests.slice(0, 2), 5, 11n);
    expect(blueprints.map((b) => b.sessionId)).toEqual(['A', 'B', 'A_dup1', 'B_dup2', 'A_dup3']);
    expect(roundZeros.map((r) => [r.id, r.sessionId, r.inputLen, r.arrivalTime])).toEqual([
      ['request_0', 'A', 14, 0], ['request_2', 'B', 6, 500],
      // A: 4 prefix + 10 input + 1 = 15; B: 6 + 1 = 7.
      ['request_0_dup1', 'A_dup1', 15, 0], ['request_2_dup2', 'B_dup2', 7, 500], ['request_0_dup3', 'A_dup3', 15, 0],
    ]);
    const [a, , a1] = roundZeros;
    // Same group prefix, then the busting token, then A's own tokens.
    expect([...a1!.inputTokens.subarray(0, 4)]).toEqual([...a!.inputTokens.subarray(0, 4)]);
    expect([...a1!.inputTokens.subarray(5)]).toEqual([...a!.inputTokens.subarray(4)]);
    expect(a1!.inputTokens[4]).not.toBe(a!.inputTokens[4]);
    // Each copy walks the recorded lengths from the start: A's follow-up input 3 for the source and both copies.
    expect([blueprints[0]!.inputSampler, blueprints[2]!.inputSampler, blueprints[4]!.inputSampler].map((s) => s.sample(blueprints[0]!.rng))).toEqual([3, 3, 3]);
  });

  it('cuts the corpus to a smaller total', () => {
    const { blueprints, roundZeros } = expandSessionCorpus(built.sessions, built.requests.slice(0, 2), 1, 11n);
    expect([blueprints.map((b) => b.sessionId), roundZeros.map((r) => r.id)]).toEqual([['A'], ['request_0']]);
  });
});
