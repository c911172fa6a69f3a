/**
 * `--semantics`: calibrate's ITL (docs/reference-differences.md C1). The same observation and replay compared
 * in both modes.
 */
import { describe, expect, it } from 'vitest';
import { prepareCalibrationPairs, type ItlRecord, type SimResult } from '../../src/calibrate/index.js';
import { computeGoodputComparison } from '../../src/calibrate/report.js';
import { emptyTraceRecord, type TraceRecord } from '../../src/workload/tracev2-types.js';

/** A streamed request of `out` tokens 1 ms apart from t = 10 ms, then vLLM's usage chunk 50 µs later. */
function observed(id: number, out: number): { rec: TraceRecord; chunks: ItlRecord[] } {
  const times = [...Array.from({ length: out }, (_, i) => 10_000 + 1000 * i), 10_050 + 1000 * (out - 1)];
  const rec = { ...emptyTraceRecord(), requestId: id, sendTimeUs: 0, firstChunkTimeUs: times[0]!, lastChunkTimeUs: times[times.length - 1]!, inputTokens: 100, outputTokens: out, status: 'ok', sloClass: 'chat' };
  return { rec, chunks: times.map((t, i) => ({ requestId: id, chunkIndex: i, timestampUs: t })) };
}

/** A simulation that got every latency exactly right: TTFT 10 ms, then 1 ms per token. */
function exact(id: number, out: number): SimResult {
  return { requestId: id, ttftUs: 10_000, e2eUs: 10_000 + 1000 * (out - 1), inputTokens: 100, outputTokens: out, sloClass: 'chat', model: '', itlMeanUs: 1000 };
}

describe('calibrate ITL under --semantics (C1)', () => {
  const outs = [2, 4, 8];
  const obs = outs.map((o, i) => observed(i, o));
  const records = obs.map((o) => o.rec);
  const itl = obs.flatMap((o) => o.chunks);
  const sims = outs.map((o, i) => exact(i, o));

  it('compares the mean chunk gap with the per-token ITL (reference) or per-token with per-token (corrected)', () => {
    const ref = prepareCalibrationPairs(records, sims, { warmUpRequests: 0, networkRttUs: 0, bandwidthMbps: 0 }, itl);
    const cor = prepareCalibrationPairs(records, sims, { warmUpRequests: 0, networkRttUs: 0, bandwidthMbps: 0, perTokenItl: true }, itl);
    // The usage chunk adds a 50 µs gap: (out − 1) ms + 50 µs over `out` gaps, against the simulator's exact 1 ms
    // (ITL MAPE 27.7 %); per token the same span is over out − 1 gaps (MAPE 2.5 %, the usage chunk's 50 µs).
    expect(ref.itl.real).toEqual([525, 762.5, 881.25]);
    expect(ref.itl.sim).toEqual([1000, 1000, 1000]);
    expect(cor.itl.real.map((x) => Math.round(x * 100) / 100)).toEqual([1050, 1016.67, 1007.14]);
    expect(cor.itl.sim).toEqual([1000, 1000, 1000]);
  });

  it('judges the ITL target on the mean chunk gap (reference) or per token (corrected)', () => {
    const targets = new Map([['chat', { ttftMs: 0, itlMs: 0.9, e2eMs: 0 }]]);
    const matched = new Set([0, 1, 2]);
    const simById = new Map(sims.map((s) => [s.requestId, s]));
    const attainment = (perToken: boolean) => {
      const g = computeGoodputComparison(records, simById, matched, itl, targets, 1, perToken)!.perClass.get('chat')!;
      return [g.realSloAttainment, g.simSloAttainment];
    };
    // A 0.9 ms target: every request misses it per token, real and simulated; the reference's mean chunk gap
    // (0.53, 0.76, 0.88 ms) passes all 3 real ones.
    expect(attainment(false)).toEqual([1, 0]);
    expect(attainment(true)).toEqual([0, 0]);
  });
});
