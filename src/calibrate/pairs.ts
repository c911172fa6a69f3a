/**
 * Matching real (observed) trace rows with simulated results by request id, with the client-side network
 * terms added to the simulated values so both sides measure the same interval (blis-cluster.md §11.4).
 */
import type { TraceRecord } from '../workload/tracev2-types.js';

/** One row of `blis replay --results-path`: server-side latencies in µs. */
export interface SimResult {
  requestId: number;
  ttftUs: number;
  e2eUs: number;
  inputTokens: number;
  outputTokens: number;
  /** '' when not set. */
  sloClass: string;
  model: string;
  /** 0 when not recorded. */
  itlMeanUs: number;
}

/** One streamed chunk's arrival (observe --record-itl). */
export interface ItlRecord {
  requestId: number;
  chunkIndex: number;
  timestampUs: number;
}

export interface CalibrationConfig {
  /** Rows with request_id below this are warm-up and left out. */
  readonly warmUpRequests: number;
  /**
   * --semantics corrected: the real ITL is per token, (last chunk − first chunk) / (output − 1), the quantity
   * the simulated ITL is, instead of the mean gap between chunks (which counts the closing usage chunk).
   */
  readonly perTokenItl?: boolean;
  /** Added to every simulated latency (client↔server round trip). */
  readonly networkRttUs: number;
  /** 0 = no transfer-time terms. */
  readonly bandwidthMbps: number;
}

export interface LatencyPair {
  real: number[];
  sim: number[];
}

export interface BreakdownPairs {
  ttft: LatencyPair;
  e2e: LatencyPair;
}

export interface CalibrationPairs {
  ttft: LatencyPair;
  e2e: LatencyPair;
  itl: LatencyPair;
  /** Keyed by the sim side's SLO class / model; only non-empty keys. */
  bySlo: Map<string, BreakdownPairs>;
  byModel: Map<string, BreakdownPairs>;
  tokenMismatchCount: number;
  excludedWarmUp: number;
  matchedCount: number;
  unmatchedReal: number;
  unmatchedSim: number;
  /** Requests whose every inter-chunk delta was negative (clock trouble), left out of ITL. */
  itlDropped: number;
}

/** Transfer time in µs of `tokens` 4-byte token ids at `mbps` megabits per second; 0 without a bandwidth. */
export function transferDelayUs(mbps: number, tokens: number): number {
  if (!(mbps > 0)) return 0;
  return (tokens * 4 * 8) / (mbps * 1e6) * 1e6;
}

function emptyPair(): LatencyPair {
  return { real: [], sim: [] };
}

function addBreakdown(m: Map<string, BreakdownPairs>, key: string, rt: number, st: number, re: number, se: number): void {
  if (key === '') return;
  let bp = m.get(key);
  if (bp === undefined) {
    bp = { ttft: emptyPair(), e2e: emptyPair() };
    m.set(key, bp);
  }
  bp.ttft.real.push(rt);
  bp.ttft.sim.push(st);
  bp.e2e.real.push(re);
  bp.e2e.sim.push(se);
}

/** Sim results by request id (a later duplicate id replaces an earlier one). */
export function indexSimResults(results: readonly SimResult[]): Map<number, SimResult> {
  const m = new Map<number, SimResult>();
  for (const r of results) m.set(r.requestId, r);
  return m;
}

/**
 * Matches rows to results. Real TTFT = first chunk − send, E2E = last chunk − send; a negative value marks
 * the row unmatched rather than corrupting the statistics. With `itl` given, adds the per-request mean ITL:
 * real = mean of the non-negative inter-chunk deltas (`perTokenItl`: {@link perTokenItlUs}), sim =
 * (E2E − TTFT) / (output − 1).
 */
export function prepareCalibrationPairs(
  records: readonly TraceRecord[],
  results: readonly SimResult[],
  cfg: CalibrationConfig,
  itl: readonly ItlRecord[] | null = null,
): CalibrationPairs {
  const simById = indexSimResults(results);
  const pairs: CalibrationPairs = {
    ttft: emptyPair(),
    e2e: emptyPair(),
    itl: emptyPair(),
    bySlo: new Map(),
    byModel: new Map(),
    tokenMismatchCount: 0,
    excludedWarmUp: 0,
    matchedCount: 0,
    unmatchedReal: 0,
    unmatchedSim: 0,
    itlDropped: 0,
  };
  const matched = new Set<number>();
  for (const rec of records) {
    if (rec.requestId < cfg.warmUpRequests) {
      pairs.excludedWarmUp++;
      continue;
    }
    const sr = simById.get(rec.requestId);
    if (sr === undefined) {
      pairs.unmatchedReal++;
      continue;
    }
    matched.add(rec.requestId);
    pairs.matchedCount++;
    // The server's own prompt count is the better truth when present (it includes template tokens).
    const realInput = rec.serverInputTokens > 0 ? rec.serverInputTokens : rec.inputTokens;
    if (realInput !== sr.inputTokens || rec.outputTokens !== sr.outputTokens) pairs.tokenMismatchCount++;
    const realTtft = rec.firstChunkTimeUs - rec.sendTimeUs;
    const realE2e = rec.lastChunkTimeUs - rec.sendTimeUs;
    if (realTtft < 0 || realE2e < 0) {
      pairs.unmatchedReal++;
      continue;
    }
    const up = transferDelayUs(cfg.bandwidthMbps, sr.inputTokens);
    const down = transferDelayUs(cfg.bandwidthMbps, sr.outputTokens);
    const simTtft = sr.ttftUs + cfg.networkRttUs + up;
    const simE2e = sr.e2eUs + cfg.networkRttUs + up + down;
    pairs.ttft.real.push(realTtft);
    pairs.ttft.sim.push(simTtft);
    pairs.e2e.real.push(realE2e);
    pairs.e2e.sim.push(simE2e);
    addBreakdown(pairs.bySlo, sr.sloClass, realTtft, simTtft, realE2e, simE2e);
    addBreakdown(pairs.byModel, sr.model, realTtft, simTtft, realE2e, simE2e);
  }
  for (const sr of results) if (!matched.has(sr.requestId)) pairs.unmatchedSim++;
  if (itl !== null && itl.length > 0) addItlPairs(pairs, records, simById, itl, cfg.warmUpRequests, cfg.perTokenItl === true);
  return pairs;
}

/** Chunk records grouped by request, each group in chunk order. */
export function groupItl(itl: readonly ItlRecord[]): Map<number, ItlRecord[]> {
  const by = new Map<number, ItlRecord[]>();
  for (const r of itl) {
    const g = by.get(r.requestId);
    if (g === undefined) by.set(r.requestId, [r]);
    else g.push(r);
  }
  for (const g of by.values()) g.sort((a, b) => a.chunkIndex - b.chunkIndex);
  return by;
}

/**
 * The observed time per output token after the first: the span from the first to the last chunk over
 * `output − 1` gaps, whatever the server coalesced into chunks (null when there is no gap, or the span is
 * negative: clock trouble). The closing usage chunk follows the last token within the same step.
 */
export function perTokenItlUs(chunks: readonly ItlRecord[] | undefined, outputTokens: number): number | null {
  if (chunks === undefined || chunks.length < 2 || outputTokens < 2) return null;
  const span = (chunks[chunks.length - 1] as ItlRecord).timestampUs - (chunks[0] as ItlRecord).timestampUs;
  return span < 0 ? null : span / (outputTokens - 1);
}

function addItlPairs(pairs: CalibrationPairs, records: readonly TraceRecord[], simById: ReadonlyMap<number, SimResult>, itl: readonly ItlRecord[], warmUp: number, perToken: boolean): void {
  const by = groupItl(itl);
  for (const rec of records) {
    if (rec.requestId < warmUp) continue;
    const sr = simById.get(rec.requestId);
    const chunks = by.get(rec.requestId);
    if (sr === undefined || chunks === undefined || chunks.length < 2) continue;
    if (perToken) {
      if (rec.outputTokens < 2 || sr.outputTokens < 2) continue;
      const real = perTokenItlUs(chunks, rec.outputTokens);
      if (real === null) {
        pairs.itlDropped++;
        continue;
      }
      pairs.itl.real.push(real);
      pairs.itl.sim.push((sr.e2eUs - sr.ttftUs) / (sr.outputTokens - 1));
      continue;
    }
    let sum = 0;
    let count = 0;
    for (let i = 1; i < chunks.length; i++) {
      const d = (chunks[i] as ItlRecord).timestampUs - (chunks[i - 1] as ItlRecord).timestampUs;
      if (d < 0) continue;
      sum += d;
      count++;
    }
    if (count === 0) {
      pairs.itlDropped++;
      continue;
    }
    pairs.itl.real.push(sum / count);
    pairs.itl.sim.push(sr.outputTokens > 1 ? (sr.e2eUs - sr.ttftUs) / (sr.outputTokens - 1) : 0);
  }
}
