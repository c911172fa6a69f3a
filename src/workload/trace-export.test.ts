import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Request, RequestState } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import {
  buildReplayTraceHeader,
  buildRunTraceHeader,
  buildRunTraceRecords,
  buildRunTraceRecordsFromRequests,
  outcomeFromRequest,
} from './trace-export.js';
import type { ArrivalOutcome, TraceArrival } from './trace-export.js';
import { formatTraceCsv, formatTraceHeaderYaml, parseTraceCsv } from './tracev2.js';
import type { SloDimTargets, TraceRecord } from './tracev2.js';
import { generateDistributionWorkload } from './distribution.js';
import { DEFAULT_DISTRIBUTION } from './presets.js';
import { PARITY_SKIP_NOTE, flagValue, parityCases, readCaseFile } from '../../test/parity/workload-fixtures.js';

/** The outcome a trace row implies (inverse of the export rule). */
function outcomeOfRow(row: TraceRecord): ArrivalOutcome {
  const state = row.status === 'ok' ? RequestState.Completed : row.status === 'timeout' ? RequestState.TimedOut : RequestState.Queued;
  const ttftSet = row.firstChunkTimeUs !== 0;
  return {
    state,
    ttftSet,
    firstTokenTime: ttftSet ? row.firstChunkTimeUs - row.arrivalTimeUs : 0,
    itlSum: ttftSet ? row.lastChunkTimeUs - row.firstChunkTimeUs : 0,
  };
}

/** A request with the row's tags and lengths (token ids are irrelevant to the export). */
function requestOfRow(row: TraceRecord): Request {
  const req = new Request(`x_${row.requestId}`, new Int32Array(row.prefixLength + row.inputTokens), new Int32Array(row.outputTokens), row.arrivalTimeUs, row.outputTokens, row.deadlineUs);
  Object.assign(req, {
    clientId: row.clientId, tenantId: row.tenantId, sloClass: row.sloClass, sessionId: row.sessionId, roundIndex: row.roundIndex,
    prefixGroup: row.prefixGroup, prefixLength: row.prefixLength, streaming: row.streaming, model: row.model,
    textTokens: row.textTokens, imageTokens: row.imageTokens, audioTokens: row.audioTokens, videoTokens: row.videoTokens,
    reasonRatio: row.reasonRatio, sloTargetUs: row.sloTargetUs,
  });
  return req;
}

/** Goodput targets the reference resolved for a case: from its workload spec (no case passes --slo-* flags). */
function goodputTargetsOf(c: ReturnType<typeof parityCases>[number]): Map<string, SloDimTargets> {
  const out = new Map<string, SloDimTargets>();
  if (flagValue(c.argv, 'workload-spec') === undefined) return out;
  const spec = parseYaml(readCaseFile(c, 'workload.yaml')) as { goodput_slo_targets?: Record<string, Record<string, number>> };
  for (const [cls, t] of Object.entries(spec.goodput_slo_targets ?? {})) {
    out.set(cls, { ttftMs: t['ttft_ms'] ?? 0, itlMs: t['itl_ms'] ?? 0, e2eMs: t['e2e_ms'] ?? 0 });
  }
  return out;
}

describe(`run trace export reproduces the reference files${PARITY_SKIP_NOTE}`, () => {
  for (const c of parityCases()) {
    it(`${c.name}: header`, () => {
      const seed = BigInt(flagValue(c.argv, 'seed') ?? '42');
      const header = buildRunTraceHeader({ workloadSeed: seed, goodputSloTargets: goodputTargetsOf(c) });
      expect(formatTraceHeaderYaml(header)).toBe(readCaseFile(c, 'trace.yaml'));
    });
    it(`${c.name}: records from request outcomes`, () => {
      const csv = readCaseFile(c, 'trace.csv');
      const rows = parseTraceCsv(csv, 'trace.csv');
      const arrivals: TraceArrival[] = rows.map((row) => ({ request: requestOfRow(row), outcome: outcomeOfRow(row) }));
      expect(formatTraceCsv(buildRunTraceRecords(arrivals), 'generated')).toBe(csv);
    });
  }

  const p01 = parityCases().find((c) => c.name.startsWith('p01-'));
  it.skipIf(p01 === undefined)('p01: generated workload + outcomes gives the exact trace.csv', () => {
    if (p01 === undefined) return;
    const csv = readCaseFile(p01, 'trace.csv');
    const rows = parseTraceCsv(csv, 'trace.csv');
    const reqs = generateDistributionWorkload({
      seed: 7n, rate: 8, numRequests: 400, horizon: MAX_INT64, prefixTokens: 256, timeoutUs: 300_000_000,
      prompt: { mean: 128, stdev: 64, min: 8, max: 512 }, output: { mean: 128, stdev: 64, min: 4, max: 512 },
    });
    const arrivals = reqs.map((request, i) => {
      const row = rows[i];
      if (row === undefined) throw new Error(`missing row ${i}`);
      return { request, outcome: outcomeOfRow(row) };
    });
    expect(formatTraceCsv(buildRunTraceRecords(arrivals))).toBe(csv);
  });
});

describe('run trace export rules', () => {
  const base = (): Request => {
    const [r] = generateDistributionWorkload({
      seed: 1n, rate: 1, numRequests: 1, horizon: MAX_INT64, prefixTokens: 16, timeoutUs: 1000,
      prompt: DEFAULT_DISTRIBUTION.prompt, output: { mean: 4, stdev: 0, min: 1, max: 8 },
    });
    if (r === undefined) throw new Error('no request');
    return r;
  };

  it('maps completed, timed-out and unfinished requests', () => {
    const done = base();
    done.state = RequestState.Completed;
    done.ttftSet = true;
    done.firstTokenTime = 500;
    done.itlSum = 60;
    done.itlCount = 3;
    const timedOutEarly = base();
    timedOutEarly.state = RequestState.TimedOut;
    const running = base();
    running.state = RequestState.Running;
    running.ttftSet = true;
    running.firstTokenTime = 700;
    running.itlSum = 5;
    running.itlCount = 1;
    const rejected = base();
    const [a, b, c, d] = buildRunTraceRecordsFromRequests([done, timedOutEarly, running, rejected]);
    const t = done.arrivalTime;
    expect([a?.status, a?.firstChunkTimeUs, a?.lastChunkTimeUs]).toEqual(['ok', t + 500, t + 560]);
    expect([b?.status, b?.firstChunkTimeUs, b?.lastChunkTimeUs]).toEqual(['timeout', 0, 0]);
    expect([c?.status, c?.firstChunkTimeUs, c?.lastChunkTimeUs]).toEqual(['incomplete', t + 700, t + 705]);
    expect([d?.status, d?.firstChunkTimeUs, d?.lastChunkTimeUs, d?.requestId]).toEqual(['incomplete', 0, 0, 3]);
    expect(a?.inputTokens).toBe(done.inputLen - 16);
    expect(a?.prefixLength).toBe(16);
    expect(a?.sendTimeUs).toBe(t);
    expect(a?.deadlineUs).toBe(t + 1000);
    expect(a?.numChunks).toBe(0);
    expect(outcomeFromRequest(done)).toEqual({ state: RequestState.Completed, ttftSet: true, firstTokenTime: 500, itlSum: 60 });
  });

  it('falls back to no prefix when the prefix length exceeds the input', () => {
    const r = new Request('r', new Int32Array(3), new Int32Array(1), 5);
    r.prefixGroup = 'g';
    r.prefixLength = 10;
    const [rec] = buildRunTraceRecordsFromRequests([r]);
    expect([rec?.inputTokens, rec?.prefixLength, rec?.prefixGroup]).toEqual([3, 0, 'g']);
  });

  it('builds the replay header', () => {
    const h = buildReplayTraceHeader({ goodputSloTargets: new Map([['critical', { ttftMs: 100, itlMs: 0, e2eMs: 0 }]]) });
    expect(formatTraceHeaderYaml(h)).toBe(
      'trace_version: 3\ntime_unit: microseconds\nmode: replayed\nwarm_up_requests: 0\ngoodput_slo_targets:\n    critical:\n        ttft_ms: 100\n',
    );
  });
});
