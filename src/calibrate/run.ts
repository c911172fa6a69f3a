/**
 * `blis calibrate` without the file system: trace + sim results (+ ITL, sim cache hit rate) in, the report and
 * a readable summary out.
 */
import type { SloDimTargets, TraceHeader, TraceRecord } from '../workload/tracev2-types.js';
import { goCompareStrings } from '../gocompat/go-format.js';
import { CalibrateInputError } from './io.js';
import { indexSimResults, prepareCalibrationPairs, type BreakdownPairs, type CalibrationPairs, type ItlRecord, type SimResult } from './pairs.js';
import { buildCalibrationReport, compareHitRate, computeGoodputComparison, type CalibrationReport } from './report.js';
import { mape, type MetricComparison } from './stats.js';

export interface CalibrateInput {
  readonly header: TraceHeader;
  readonly records: readonly TraceRecord[];
  readonly simResults: readonly SimResult[];
  readonly itl: readonly ItlRecord[];
  /** Warm-up rows to skip; -1 = the header's warm_up_requests. */
  readonly warmUpRequests: number;
  /** -1 = the header's network.measured_rtt_ms × 1000. */
  readonly networkRttUs: number;
  readonly bandwidthMbps: number;
  /** Merged CLI/header goodput targets; null = no goodput comparison. */
  readonly goodputTargets: ReadonlyMap<string, SloDimTargets> | null;
  /** The simulator's aggregate cache hit rate (replay --metrics-path), or null when not supplied. */
  readonly simCacheHitRate: number | null;
  readonly hitRateTolerancePp: number;
  readonly ttftMapeThreshold: number;
  /** --semantics corrected: per-token real ITL (see CalibrationConfig.perTokenItl). */
  readonly perTokenItl?: boolean;
}

export interface CalibrateOutput {
  readonly report: CalibrationReport;
  readonly pairs: CalibrationPairs;
  /** Warnings (one line each) and the summary lines, for stderr. */
  readonly warnings: string[];
  readonly summary: string[];
}

export function resolveRttUs(flag: number, header: TraceHeader): number {
  if (flag !== -1) {
    if (flag < 0) throw new CalibrateInputError(`--network-rtt-us must be >= 0 (or omit it to use the trace header), got ${flag}`);
    return flag;
  }
  const ms = header.network?.measuredRttMs ?? 0;
  return ms > 0 ? Math.trunc(ms * 1000) : 0;
}

export function runCalibration(inp: CalibrateInput): CalibrateOutput {
  if (inp.simResults.length === 0) throw new CalibrateInputError('no sim results: cannot calibrate with empty data (produce them with blis replay --results-path)');
  if (!Number.isFinite(inp.bandwidthMbps)) throw new CalibrateInputError(`--network-bandwidth-mbps must be a finite number, got ${inp.bandwidthMbps}`);
  if (!(inp.hitRateTolerancePp >= 0) || !Number.isFinite(inp.hitRateTolerancePp)) throw new CalibrateInputError(`--hit-rate-tolerance-pp must be a finite number >= 0, got ${inp.hitRateTolerancePp}`);
  if (!(inp.ttftMapeThreshold >= 0) || !Number.isFinite(inp.ttftMapeThreshold)) throw new CalibrateInputError(`--ttft-mape-threshold must be a finite number >= 0, got ${inp.ttftMapeThreshold}`);
  const warmUp = inp.warmUpRequests === -1 ? inp.header.warmUpRequests : inp.warmUpRequests;
  const rtt = resolveRttUs(inp.networkRttUs, inp.header);
  const pairs = prepareCalibrationPairs(inp.records, inp.simResults, { warmUpRequests: warmUp, networkRttUs: rtt, bandwidthMbps: inp.bandwidthMbps, perTokenItl: inp.perTokenItl === true }, inp.itl);
  if (pairs.matchedCount === 0) throw new CalibrateInputError('no matching request ids between the trace and the sim results; check that both come from the same trace (request_id = replay request_<n>)');
  if (pairs.ttft.real.length === 0) throw new CalibrateInputError('no valid latency pairs after filtering: every matched row has a negative TTFT or E2E (first/last chunk before send)');
  const warnings: string[] = [];
  // Every observed TTFT contains the whole round trip, so one longer than the shortest TTFT is not in them.
  let shortest = Infinity;
  for (const v of pairs.ttft.real) if (v < shortest) shortest = v;
  if (rtt > shortest) warnings.push(`calibrate: the round trip added to every simulated latency (${rtt} µs, ${inp.networkRttUs === -1 ? "the trace header's measured_rtt_ms" : '--network-rtt-us'}) exceeds the shortest observed TTFT (${shortest} µs), so the observed latencies cannot contain it; pass --network-rtt-us with the round trip they do contain (0 when the server started requests at their send time)`);
  if (pairs.itlDropped > 0) warnings.push(`calibrate: ${pairs.itlDropped} request(s) dropped from ITL (every inter-chunk delta negative)`);
  const report = buildCalibrationReport(pairs);

  if (inp.goodputTargets !== null && inp.goodputTargets.size > 0) {
    const simById = indexSimResults(inp.simResults);
    const matched = new Set<number>();
    for (const rec of inp.records) if (rec.requestId >= warmUp && simById.has(rec.requestId)) matched.add(rec.requestId);
    let firstSend = -1;
    let lastChunk = 0;
    for (const rec of inp.records) {
      if (!matched.has(rec.requestId)) continue;
      if (firstSend === -1 || rec.sendTimeUs < firstSend) firstSend = rec.sendTimeUs;
      if (rec.lastChunkTimeUs > lastChunk) lastChunk = rec.lastChunkTimeUs;
    }
    const runtimeSec = firstSend >= 0 && lastChunk > firstSend ? (lastChunk - firstSend) / 1e6 : 0;
    report.goodput = computeGoodputComparison(inp.records, simById, matched, inp.itl, inp.goodputTargets, runtimeSec, inp.perTokenItl === true);
    if (report.goodput?.skippedItl) warnings.push('calibrate goodput: ITL gating skipped (ITL data missing on the real or sim side); TTFT/E2E rows still computed');
  }

  const obs = inp.header.observedKvMetrics;
  if (obs !== null) {
    if (inp.simCacheHitRate === null) {
      warnings.push(`calibrate: the trace header carries an observed KV hit rate (source=${obs.source}, ${obs.hitRate.toFixed(4)}) but no sim cache_hit_rate was given; skipping the hit-rate comparison (pass --sim-metrics from blis replay --metrics-path)`);
    } else {
      report.hitRate = compareHitRate(obs.hitRate, inp.simCacheHitRate, inp.hitRateTolerancePp, obs.source);
    }
  }
  const ttft = report.metrics.get('ttft');
  if (ttft !== undefined) {
    report.ttftTolerance = { mape: ttft.requestLevel.mape, threshold: inp.ttftMapeThreshold, within: ttft.requestLevel.mape <= inp.ttftMapeThreshold };
  }
  return { report, pairs, warnings, summary: summaryLines(report, pairs) };
}

const us = (x: number): string => `${Math.round(x)}µs`;
const signedUs = (x: number): string => `${x >= 0 ? '+' : ''}${Math.round(x)}µs`;
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function aggregateLines(label: string, m: MetricComparison): string[] {
  const w = m.workloadLevel;
  const row = (name: string, r: number, s: number, e: number, pe: number): string => `        ${name}: Real=${us(r)}, Sim=${us(s)}, Error=${signedUs(e)} (${pct(pe)})`;
  return [
    `  ${label} Real mean=${us(w.realMean)}, Sim mean=${us(w.simMean)}, Error=${signedUs(w.meanError)} (${pct(w.meanPercentError)})`,
    row('P50', w.realP50, w.simP50, w.p50Error, w.p50PercentError),
    row('P90', w.realP90, w.simP90, w.p90Error, w.p90PercentError),
    row('P95', w.realP95, w.simP95, w.p95Error, w.p95PercentError),
    row('P99', w.realP99, w.simP99, w.p99Error, w.p99PercentError),
  ];
}

const LABELS: readonly [string, string][] = [
  ['ttft', 'TTFT:'],
  ['e2e', 'E2E: '],
  ['itl', 'ITL: '],
];

/** The human-readable summary (stderr), in the reference's order. */
export function summaryLines(report: CalibrationReport, pairs: CalibrationPairs): string[] {
  const out = [
    `Matched pairs: ${pairs.matchedCount} (warm-up excluded: ${pairs.excludedWarmUp}, unmatched real: ${pairs.unmatchedReal}, unmatched sim: ${pairs.unmatchedSim}, token mismatches: ${pairs.tokenMismatchCount})`,
    'Workload-level aggregate metrics:',
  ];
  for (const [k, label] of LABELS) {
    const m = report.metrics.get(k);
    if (m !== undefined) out.push(...aggregateLines(label, m));
  }
  out.push('Request-level prediction quality:');
  for (const [k, label] of LABELS) {
    const m = report.metrics.get(k);
    if (m === undefined) continue;
    const q = m.requestLevel;
    out.push(`  ${label} MAPE=${pct(q.mape)}, PearsonR=${q.pearsonR.toFixed(3)}, Bias=${q.biasDirection}, Quality=${q.quality}`);
  }
  const hr = report.hitRate;
  if (hr !== null) {
    out.push(`KV hit-rate (source=${hr.source}): Real=${hr.realHitRate.toFixed(4)} Sim=${hr.simHitRate.toFixed(4)} AbsErr=${hr.absErrorPp.toFixed(2)}pp (tolerance ${hr.tolerancePp.toFixed(2)}pp) [${hr.within ? 'WITHIN' : 'EXCEEDS'}]`);
  }
  const tv = report.ttftTolerance;
  if (tv !== null) out.push(`TTFT MAPE=${pct(tv.mape)} (threshold ${pct(tv.threshold)}) [${tv.within ? 'WITHIN' : 'EXCEEDS'}]`);
  const breakdown = (title: string, key: string, m: ReadonlyMap<string, BreakdownPairs>): void => {
    if (m.size === 0) return;
    out.push(title);
    for (const k of [...m.keys()].sort(goCompareStrings)) {
      const p = m.get(k);
      if (p === undefined || p.ttft.real.length === 0) continue;
      out.push(`  ${key}=${k}: n=${p.ttft.real.length} TTFT-MAPE=${pct(mape(p.ttft.real, p.ttft.sim))} E2E-MAPE=${pct(mape(p.e2e.real, p.e2e.sim))}`);
    }
  };
  breakdown('Per-SLO-class calibration:', 'SLO', pairs.bySlo);
  const g = report.goodput;
  if (g !== null && g.perClass.size > 0) {
    out.push('Per-SLO-class goodput (real vs sim):');
    for (const [cls, c] of [...g.perClass].sort((a, b) => goCompareStrings(a[0], b[0]))) {
      out.push(`  ${cls}: count=${c.count} real_attain=${c.realSloAttainment.toFixed(3)} sim_attain=${c.simSloAttainment.toFixed(3)} real_rps=${c.realGoodputRps.toFixed(3)} sim_rps=${c.simGoodputRps.toFixed(3)}`);
    }
  }
  breakdown('Per-model calibration:', 'model', pairs.byModel);
  return out;
}
