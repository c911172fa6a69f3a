import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { emptyTraceHeader, emptyTraceRecord, type TraceRecord } from '../workload/tracev2-types.js';
import { formatTraceCsv } from '../workload/tracev2-csv.js';
import { formatTraceHeaderYaml } from '../workload/tracev2-yaml.js';
import {
  computeComparison,
  formatItlCsv,
  mape,
  parseItlCsv,
  parseSimResults,
  pearsonCorrelation,
  percentileFromSorted,
  prepareCalibrationPairs,
  qualityRating,
  reportToJson,
  runCalibration,
  transferDelayUs,
  type SimResult,
} from './index.js';

function rec(id: number, send: number, first: number, last: number, extra: Partial<TraceRecord> = {}): TraceRecord {
  return { ...emptyTraceRecord(), requestId: id, sendTimeUs: send, firstChunkTimeUs: first, lastChunkTimeUs: last, inputTokens: 100, outputTokens: 50, status: 'ok', ...extra };
}

function sim(id: number, ttft: number, e2e: number, extra: Partial<SimResult> = {}): SimResult {
  return { requestId: id, ttftUs: ttft, e2eUs: e2e, inputTokens: 100, outputTokens: 50, sloClass: '', model: '', itlMeanUs: 0, ...extra };
}

describe('calibration statistics (hand-computed)', () => {
  const real = [100, 200, 300, 400];
  const simv = [110, 190, 330, 400];

  it('MAPE is the mean of |r - s| / r', () => {
    expect(mape(real, simv)).toBeCloseTo((0.1 + 0.05 + 0.1 + 0) / 4, 12);
    // real = 0 has no relative error and is left out
    expect(mape([0, 100], [5, 150])).toBeCloseTo(0.5, 12);
  });

  it('Pearson r from the centred sums, 0 when degenerate', () => {
    // dx = (-150, -50, 50, 150), dy = (-147.5, -67.5, 72.5, 142.5): Σdxdy = 50500, Σdx² = 50000, Σdy² = 51875
    expect(pearsonCorrelation(real, simv)).toBeCloseTo(50500 / Math.sqrt(50000 * 51875), 12);
    expect(pearsonCorrelation([1, 1, 1], [1, 2, 3])).toBe(0);
    expect(pearsonCorrelation([1, 2, 3], [6, 4, 2])).toBeCloseTo(-1, 12);
  });

  it('percentiles interpolate at p/100·(n−1)', () => {
    const s = [100, 200, 300, 400];
    expect(percentileFromSorted(s, 50)).toBe(250);
    expect(percentileFromSorted(s, 90)).toBeCloseTo(370, 9);
    expect(percentileFromSorted(s, 95)).toBeCloseTo(385, 9);
    expect(percentileFromSorted(s, 99)).toBeCloseTo(397, 9);
    expect(percentileFromSorted([7], 99)).toBe(7);
    expect(percentileFromSorted([], 50)).toBe(0);
  });

  it('quality grades use strict bounds on both MAPE and r', () => {
    expect(qualityRating(0.0625, 0.99)).toBe('excellent');
    expect(qualityRating(0.05, 0.95)).toBe('good');
    expect(qualityRating(0.1, 0.99)).toBe('good');
    expect(qualityRating(0.19, 0.86)).toBe('good');
    expect(qualityRating(0.2, 0.9)).toBe('fair');
    expect(qualityRating(0.34, 0.71)).toBe('fair');
    expect(qualityRating(0.35, 0.99)).toBe('poor');
    expect(qualityRating(0.01, 0.7)).toBe('poor');
  });

  it('a comparison reports means, errors, bias and grade', () => {
    const c = computeComparison(real, simv, 'ttft');
    expect(c.count).toBe(4);
    expect(c.workloadLevel.realMean).toBe(250);
    expect(c.workloadLevel.simMean).toBe(257.5);
    expect(c.workloadLevel.meanError).toBe(7.5);
    expect(c.workloadLevel.meanPercentError).toBeCloseTo(0.03, 12);
    expect(c.workloadLevel.realP50).toBe(250);
    expect(c.workloadLevel.simP50).toBe(260);
    expect(c.workloadLevel.p50PercentError).toBeCloseTo(0.04, 12);
    expect(c.requestLevel.biasDirection).toBe('over-predict');
    expect(c.requestLevel.quality).toBe('excellent');
    // two pairs: no Pearson r, so at best "poor"
    const two = computeComparison([100, 200], [100, 200], 'e2e');
    expect(two.requestLevel.pearsonR).toBe(0);
    expect(two.requestLevel.biasDirection).toBe('neutral');
    expect(two.requestLevel.quality).toBe('poor');
    expect(() => computeComparison([], [], 'x')).toThrow(/empty/);
  });
});

describe('pairing real rows with sim results', () => {
  it('skips warm-up, matches by id, adds RTT and transfer terms, counts mismatches', () => {
    const records = [
      rec(0, 0, 5000, 90000),
      rec(1, 1000, 21000, 101000),
      rec(2, 2000, 42000, 202000, { serverInputTokens: 120 }),
      rec(3, 3000, 1000, 5000), // first chunk before send: unmatched
      rec(4, 0, 10, 20), // no sim result
    ];
    const results = [sim(0, 1, 2), sim(1, 18000, 95000), sim(2, 30000, 150000), sim(3, 1, 2), sim(9, 1, 2)];
    const p = prepareCalibrationPairs(records, results, { warmUpRequests: 1, networkRttUs: 1000, bandwidthMbps: 8 });
    // 8 Mbps: 32 bits per token -> 4 µs per token; 100 in (400 µs), 50 out (200 µs)
    expect(transferDelayUs(8, 100)).toBeCloseTo(400, 9);
    expect(p.excludedWarmUp).toBe(1);
    expect(p.matchedCount).toBe(3);
    expect(p.unmatchedReal).toBe(2);
    expect(p.unmatchedSim).toBe(2);
    expect(p.tokenMismatchCount).toBe(1);
    expect(p.ttft.real).toEqual([20000, 40000]);
    expect(p.ttft.sim.map((x) => Math.round(x))).toEqual([19400, 31400]);
    expect(p.e2e.real).toEqual([100000, 200000]);
    expect(p.e2e.sim.map((x) => Math.round(x))).toEqual([96600, 151600]);
  });

  it('ITL: mean of non-negative chunk gaps vs (E2E − TTFT)/(out − 1); all-negative requests are dropped', () => {
    const records = [rec(0, 0, 100, 400), rec(1, 0, 100, 400)];
    const results = [sim(0, 100, 400, { outputTokens: 4 }), sim(1, 100, 400, { outputTokens: 4 })];
    const itl = parseItlCsv(formatItlCsv([
      { requestId: 0, chunkIndex: 2, timestampUs: 250 },
      { requestId: 0, chunkIndex: 0, timestampUs: 100 },
      { requestId: 0, chunkIndex: 1, timestampUs: 150 },
      { requestId: 0, chunkIndex: 3, timestampUs: 400 },
      { requestId: 1, chunkIndex: 0, timestampUs: 300 },
      { requestId: 1, chunkIndex: 1, timestampUs: 200 },
    ]), 'itl.csv');
    const p = prepareCalibrationPairs(records, results, { warmUpRequests: 0, networkRttUs: 0, bandwidthMbps: 0 }, itl);
    expect(p.itl.real).toEqual([100]);
    expect(p.itl.sim).toEqual([100]);
    expect(p.itlDropped).toBe(1);
  });
});

describe('report and CLI', () => {
  const header = { ...emptyTraceHeader(), traceVersion: 3, timeUnit: 'us', mode: 'real', warmUpRequests: 1, network: { measuredRttMs: 0.5 } };
  const records = Array.from({ length: 6 }, (_, i) => rec(i, i * 1000, i * 1000 + 10000 * (i + 1), i * 1000 + 100000 * (i + 1), { sloClass: i % 2 === 0 ? 'critical' : '' }));
  const results = records.map((r) => sim(r.requestId, 10000 * (r.requestId + 1) - 500, 100000 * (r.requestId + 1) - 500));

  it('defaults warm-up and RTT from the header and lays the JSON out like the reference', () => {
    const out = runCalibration({
      header,
      records,
      simResults: results,
      itl: [],
      warmUpRequests: -1,
      networkRttUs: -1,
      bandwidthMbps: 0,
      goodputTargets: new Map([['critical', { ttftMs: 25, itlMs: 0, e2eMs: 0 }]]),
      simCacheHitRate: null,
      hitRateTolerancePp: 5,
      ttftMapeThreshold: 0.15,
    });
    const j = reportToJson(out.report) as Record<string, Record<string, unknown>>;
    expect(Object.keys(j)).toEqual(['trace_info', 'metrics', 'config_match', 'known_limitations', 'goodput', 'ttft_tolerance']);
    expect(j['trace_info']).toEqual({ num_requests: 6, warm_up_excluded: 1, matched_pairs: 5, token_mismatches: 0 });
    expect(Object.keys(j['metrics'] ?? {})).toEqual(['e2e', 'ttft']);
    const ttft = (j['metrics'] as Record<string, Record<string, Record<string, unknown>>>)['ttft'];
    // RTT 0.5 ms exactly cancels the -500 µs: a perfect prediction
    expect(ttft?.['request_level']).toEqual({ mape: 0, pearson_r: 1, bias_direction: 'neutral', quality: 'excellent' });
    expect(Object.keys(ttft?.['workload_level'] ?? {}).slice(0, 4)).toEqual(['real_mean', 'sim_mean', 'mean_error', 'mean_percent_error']);
    expect(j['ttft_tolerance']).toEqual({ mape: 0, threshold: 0.15, within: true });
    const g = j['goodput'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(g['targets']).toEqual({ critical: { TTFTMs: 25, ITLMs: 0, E2EMs: 0 } });
    // matched critical rows: ids 2 and 4 (TTFT 30 ms, 50 ms): none within 25 ms
    expect(g['per_class']?.['critical']?.['count']).toBe(2);
    expect(g['per_class']?.['critical']?.['real_slo_attainment']).toBe(0);
    expect(out.summary.some((l) => l.includes('TTFT: MAPE=0.0%, PearsonR=1.000, Bias=neutral, Quality=excellent'))).toBe(true);
  });

  it('warns when the round trip it adds is longer than the shortest observed TTFT (the observations cannot contain it)', () => {
    const base = { header, records, simResults: results, itl: [], warmUpRequests: -1, bandwidthMbps: 0, goodputTargets: null, simCacheHitRate: null, hitRateTolerancePp: 5, ttftMapeThreshold: 0.15 };
    expect(runCalibration({ ...base, networkRttUs: -1 }).warnings).toEqual([]);
    // matched rows 1..5: the shortest observed TTFT is 20 ms
    const w = runCalibration({ ...base, networkRttUs: 25_000 }).warnings;
    expect(w).toEqual([expect.stringMatching(/^calibrate: the round trip added to every simulated latency \(25000 µs, --network-rtt-us\) exceeds the shortest observed TTFT \(20000 µs\)/)]);
    expect(runCalibration({ ...base, header: { ...header, network: { measuredRttMs: 30 } }, networkRttUs: -1 }).warnings[0]).toContain("the trace header's measured_rtt_ms");
  });

  it('blis calibrate writes the report and prints the summary; bad input is one error line, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blis-cal-'));
    writeFileSync(join(dir, 't.yaml'), formatTraceHeaderYaml(header));
    writeFileSync(join(dir, 't.csv'), formatTraceCsv(records, 'real'));
    writeFileSync(join(dir, 'r.json'), JSON.stringify(results.map((r) => ({ request_id: r.requestId, ttft_us: r.ttftUs, e2e_us: r.e2eUs, input_tokens: 100, output_tokens: 50 }))));
    const info: string[] = [];
    const errors: string[] = [];
    const io = { stdout: () => undefined, warn: () => undefined, error: (t: string) => void errors.push(t), info: (t: string) => void info.push(t) };
    const args = ['calibrate', '--trace-header', join(dir, 't.yaml'), '--trace-data', join(dir, 't.csv'), '--sim-results', join(dir, 'r.json'), '--report', join(dir, 'rep.json')];
    expect(await main(args, io)).toBe(0);
    const rep = JSON.parse(readFileSync(join(dir, 'rep.json'), 'utf8')) as { metrics: { e2e: { request_level: { quality: string } } } };
    expect(rep.metrics.e2e.request_level.quality).toBe('excellent');
    expect(info[0]).toContain('Calibration report written to');
    expect(await main([...args.slice(0, -2)], io)).toBe(2);
    expect(errors.pop()).toBe('--report is required');
    writeFileSync(join(dir, 'bad.json'), '[{"request_id": "x"}]');
    expect(await main([...args.slice(0, 5), '--sim-results', join(dir, 'bad.json'), '--report', join(dir, 'rep.json')], io)).toBe(2);
    expect(errors.pop()).toMatch(/element 0: "request_id" must be an integer/);
  });

  it('sim results parse leniently like encoding/json but reject wrong types', () => {
    expect(parseSimResults('[{"request_id": 3, "ttft_us": 1.5, "e2e_us": 9, "extra": true}]', 'r')).toEqual([sim(3, 1.5, 9, { inputTokens: 0, outputTokens: 0 })]);
    expect(() => parseSimResults('{}', 'r')).toThrow(/JSON array/);
    expect(() => parseItlCsv('request_id,chunk_index,timestamp_us\n1,2,-3\n', 'i')).toThrow(/non-negative/);
  });
});
