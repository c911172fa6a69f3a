import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../domain/units.js';
import {
  REPLAY_DEFAULT_HORIZON_US,
  buildReplayRequests,
  defaultReplayHorizon,
  effectiveInputTokenCount,
  horizonFromMaxArrival,
  injectionTime,
} from './replay.js';
import { emptyTraceRecord, parseTraceCsv } from './tracev2.js';
import type { TraceRecord } from './tracev2.js';
import type { Request } from '../domain/request.js';
import { PARITY_SKIP_NOTE, flagValue, parityCases, readCaseFile } from '../../test/parity/workload-fixtures.js';

function rec(over: Partial<TraceRecord>): TraceRecord {
  return { ...emptyTraceRecord(), status: 'ok', ...over };
}

/** A position-weighted checksum of every token id, computed the same way by a Go math/rand program. */
function tokenChecksum(reqs: readonly Request[]): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const r of reqs) {
    r.inputTokens.forEach((t, i) => {
      sum += t * ((i % 7) + 1);
      count++;
    });
    r.outputTokens.forEach((t, i) => {
      sum += t * ((i % 5) + 1);
      count++;
    });
  }
  return { sum, count };
}

interface SimResult {
  request_id: number;
  input_tokens: number;
  output_tokens: number;
}

describe(`replay requests agree with the reference replay results${PARITY_SKIP_NOTE}`, () => {
  for (const c of parityCases()) {
    it(c.name, () => {
      const records = parseTraceCsv(readCaseFile(c, 'trace.csv'), 'trace.csv');
      const seed = BigInt(flagValue(c.replayArgv, 'seed') ?? '42');
      const reqs = buildReplayRequests(records, seed);
      expect(reqs).toHaveLength(records.length);
      const byId = new Map(reqs.map((r) => [r.id, r]));
      records.forEach((row, i) => {
        const r = reqs[i];
        expect(r?.id).toBe(`request_${row.requestId}`);
        expect(r?.arrivalTime).toBe(row.sendTimeUs);
        expect(r?.deadline).toBe(row.deadlineUs);
        expect(r?.inputLen).toBe(row.prefixLength + row.inputTokens);
        expect([r?.sloClass, r?.tenantId, r?.clientId, r?.streaming]).toEqual([row.sloClass, row.tenantId, row.clientId, row.streaming]);
      });
      const results = JSON.parse(readCaseFile(c, 'results.json')) as SimResult[];
      for (const res of results) {
        const r = byId.get(`request_${res.request_id}`);
        expect(r, `request_${res.request_id}`).toBeDefined();
        expect([r?.inputLen, r?.outputLen, r?.maxOutputLen]).toEqual([res.input_tokens, res.output_tokens, res.output_tokens]);
      }
      // Prefix groups share one token prefix.
      const firstOfGroup = new Map<string, Int32Array>();
      for (const r of reqs) {
        if (r.prefixGroup === '') continue;
        const head = r.inputTokens.slice(0, r.prefixLength);
        const seen = firstOfGroup.get(r.prefixGroup);
        if (seen === undefined) firstOfGroup.set(r.prefixGroup, head);
        else expect(Array.from(head)).toEqual(Array.from(seen));
      }
    });
  }

  // Values printed by a standalone Go program that draws with math/rand in the reference's order.
  const golden = [
    { prefix: 'p01-', seed: 7n, sum: 48730667469, count: 202536, head: [57886, 5870, 103853], last: 69584, out0: 107103 },
    { prefix: 'p07b-', seed: 72n, sum: 105070914161, count: 428664, head: [122420, 33986, 96880], last: 37924, out0: 119589 },
  ];
  for (const g of golden) {
    const c = parityCases().find((x) => x.name.startsWith(g.prefix));
    it.skipIf(c === undefined)(`${g.prefix} token ids match Go math/rand`, () => {
      if (c === undefined) return;
      const reqs = buildReplayRequests(parseTraceCsv(readCaseFile(c, 'trace.csv'), 'trace.csv'), g.seed);
      expect(tokenChecksum(reqs)).toEqual({ sum: g.sum, count: g.count });
      const r0 = reqs[0];
      expect(Array.from(r0?.inputTokens.slice(0, 3) ?? [])).toEqual(g.head);
      expect(r0?.inputTokens[r0.inputTokens.length - 1]).toBe(g.last);
      expect(r0?.outputTokens[0]).toBe(g.out0);
    });
  }
});

describe('replay rules', () => {
  it('picks the input length and injection time like the reference', () => {
    expect(effectiveInputTokenCount({ inputTokens: 10, serverInputTokens: 14, prefixGroup: '' })).toBe(14);
    expect(effectiveInputTokenCount({ inputTokens: 10, serverInputTokens: 14, prefixGroup: 'g' })).toBe(10);
    expect(effectiveInputTokenCount({ inputTokens: 10, serverInputTokens: 0, prefixGroup: '' })).toBe(10);
    expect(injectionTime({ sendTimeUs: 7, arrivalTimeUs: 3 })).toBe(7);
    expect(injectionTime({ sendTimeUs: 0, arrivalTimeUs: 3 })).toBe(3);
    expect(injectionTime({ sendTimeUs: -5, arrivalTimeUs: 3 })).toBe(3);
  });

  it('shares a prefix per group sized by its first positive prefix_length, and copies tags', () => {
    const reqs = buildReplayRequests(
      [
        rec({ requestId: 4, prefixGroup: 'g', prefixLength: 0, inputTokens: 2, outputTokens: 1 }),
        rec({ requestId: 5, prefixGroup: 'g', prefixLength: 3, inputTokens: 2, outputTokens: 1, serverInputTokens: 9 }),
        rec({ requestId: 6, prefixGroup: 'g', prefixLength: 5, inputTokens: 1, outputTokens: 0, sloClass: 'batch', model: 'm', deadlineUs: 99, arrivalTimeUs: 50, sloTargetUs: 7, sessionId: 's', roundIndex: 2, reasonRatio: 0.5 }),
        rec({ requestId: 7, inputTokens: 1, serverInputTokens: 4, outputTokens: 2 }),
      ],
      1n,
    );
    expect(reqs.map((r) => r.id)).toEqual(['request_4', 'request_5', 'request_6', 'request_7']);
    expect(reqs.map((r) => r.inputLen)).toEqual([5, 5, 4, 4]);
    expect(reqs.map((r) => r.prefixLength)).toEqual([0, 3, 5, 0]);
    expect(Array.from(reqs[0]?.inputTokens.slice(0, 3) ?? [])).toEqual(Array.from(reqs[2]?.inputTokens.slice(0, 3) ?? []));
    const r6 = reqs[2];
    expect([r6?.sloClass, r6?.model, r6?.deadline, r6?.arrivalTime, r6?.sloTargetUs, r6?.sessionId, r6?.roundIndex, r6?.reasonRatio, r6?.maxOutputLen])
      .toEqual(['batch', 'm', 99, 50, 7, 's', 2, 0.5, 0]);
    expect(() => buildReplayRequests([], 1n)).toThrow(/no records/);
  });

  it('computes the default horizon', () => {
    expect(horizonFromMaxArrival(0)).toBe(REPLAY_DEFAULT_HORIZON_US);
    expect(horizonFromMaxArrival(-3)).toBe(600_000_000);
    expect(horizonFromMaxArrival(1234)).toBe(2468);
    expect(horizonFromMaxArrival(MAX_INT64)).toBe(MAX_INT64);
    expect(defaultReplayHorizon([])).toBe(MAX_INT64);
    expect(defaultReplayHorizon([{ arrivalTime: 10 }, { arrivalTime: 40 }, { arrivalTime: 20 }])).toBe(80);
  });
});
