/**
 * `blis observe` end to end, without flag parsing or file writes: calibrate prompts, optionally prewarm and
 * measure the round trip, dispatch the workload, and return the trace, ITL rows and summary.
 */
import type { SloDimTargets, TraceHeader, TraceObservedKvMetrics, TraceRecord } from '../workload/tracev2-types.js';
import type { ItlRecord } from '../calibrate/pairs.js';
import { SessionManager } from '../workload/sessions/manager.js';
import { REQUEST_START_HEADER, sendRequest, type ApiFormat, type ClientConfig } from './client.js';
import { runObservation, sleepUs, type ObservedRequest, type StatusCounts } from './orchestrator.js';
import { calibrateTokensPerWord, pendingFactory } from './prompts.js';
import { deriveObservedHitRate, scrapeMetrics } from './prom.js';
import { itlRecords, observeHeader, observeSummary, traceRecord } from './trace.js';
import type { ObserveWorkload } from './workload.js';

export interface ObserveOptions {
  readonly serverUrl: string;
  readonly model: string;
  readonly apiKey: string;
  readonly apiFormat: ApiFormat;
  readonly serverType: string;
  readonly workload: ObserveWorkload;
  readonly maxConcurrency: number;
  readonly warmupRequests: number;
  readonly noStreaming: boolean;
  readonly unconstrained: boolean;
  readonly recordItl: boolean;
  readonly timeoutSec: number;
  readonly rttMs: number;
  readonly measureRtt: boolean;
  readonly prewarmUs: number;
  readonly scrapeKv: { readonly url: string; readonly vllmCommit: string } | null;
  readonly goodput: ReadonlyMap<string, SloDimTargets> | null;
  /** Ends dispatching and aborts requests in flight (Ctrl-C). */
  readonly stop: AbortSignal;
  readonly warn: (msg: string) => void;
  readonly onDone?: (o: ObservedRequest, counts: Readonly<StatusCounts>, dispatched: number) => void;
}

export interface ObserveResult {
  readonly header: TraceHeader;
  /** Recorded rows (warm-up left out), by request id. */
  readonly records: TraceRecord[];
  readonly itl: ItlRecord[];
  readonly summary: Record<string, unknown>;
  readonly observed: readonly ObservedRequest[];
  readonly tokensPerWord: number;
}

function median(v: number[]): number {
  v.sort((a, b) => a - b);
  const n = v.length;
  return n === 0 ? 0 : n % 2 === 1 ? (v[(n - 1) / 2] as number) : ((v[n / 2 - 1] as number) + (v[n / 2] as number)) / 2;
}

/**
 * Median round trip (ms) of 20 small GETs (/health, or /v1/models when there is no /health), after 10
 * unmeasured ones: the first requests pay for connection setup and cold code paths.
 */
/**
 * How early to send each request: a server that starts requests at their `x-request-start` (blis serve, which
 * says so on /health) gets them a few ms ahead, stamped with their arrival, so the loopback path never makes
 * one miss the engine step it was due for. Other servers get requests at their arrival (0).
 */
async function requestStartLeadUs(baseUrl: string, apiKey: string): Promise<number> {
  try {
    const res = await fetch(`${baseUrl}/health`, { headers: apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.headers.get(REQUEST_START_HEADER) === 'honored' ? REQUEST_START_LEAD_US : 0;
  } catch {
    return 0;
  }
}

/** Covers the loopback path and the delays of a busy machine (the server accepts stamps up to 50 ms ahead). */
const REQUEST_START_LEAD_US = 20_000;

export async function measureRttMs(baseUrl: string, apiKey: string): Promise<number | string> {
  const headers = apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` };
  for (const path of ['/health', '/v1/models']) {
    const times: number[] = [];
    let ok = true;
    try {
      for (let i = 0; i < 30 && ok; i++) {
        const t = performance.now();
        const res = await fetch(`${baseUrl}${path}`, { headers, signal: AbortSignal.timeout(5000) });
        await res.arrayBuffer();
        ok = res.status === 200;
        if (i >= 10) times.push(performance.now() - t);
      }
    } catch {
      continue;
    }
    if (ok) return median(times);
  }
  return `neither ${baseUrl}/health nor ${baseUrl}/v1/models answered 200`;
}

/** Four workers sending small fixed requests until `us` has passed (warms caches, connections, JITs). */
async function prewarm(cfg: ClientConfig, us: number): Promise<{ sent: number; failed: number }> {
  const until = performance.now() + us / 1000;
  let sent = 0;
  let failed = 0;
  const prompt = 'warm '.repeat(256);
  const worker = async (): Promise<void> => {
    while (performance.now() < until && !cfg.stop.aborted) {
      const r = await sendRequest({ prompt, maxOutputTokens: 64, minTokens: 0, unconstrained: false, streaming: false, sloClass: '', vllmPriority: 0, tenantId: '', sloTargetUs: 0 }, cfg);
      sent++;
      if (r.status !== 'ok') {
        failed++;
        await sleepUs(500_000, cfg.stop);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return { sent, failed };
}

export async function observe(o: ObserveOptions): Promise<ObserveResult> {
  const base = o.serverUrl.replace(/\/+$/, '');
  let origin = performance.now();
  const cfg: ClientConfig = {
    baseUrl: base,
    model: o.model,
    apiKey: o.apiKey,
    apiFormat: o.apiFormat,
    timeoutMs: o.timeoutSec * 1000,
    clock: () => Math.round((performance.now() - origin) * 1000),
    stop: o.stop,
  };
  const tpw = await calibrateTokensPerWord(cfg);
  if (tpw.warning !== '') o.warn(tpw.warning);
  if (o.prewarmUs > 0) {
    const p = await prewarm(cfg, o.prewarmUs);
    if (p.sent === 0 || p.failed === p.sent) o.warn(`prewarm: ${p.failed}/${p.sent} requests failed (is the server reachable at ${base}?)`);
  }
  let rttMs = o.rttMs;
  let measured = false;
  if (o.measureRtt) {
    const m = await measureRttMs(base, o.apiKey);
    if (typeof m === 'string') o.warn(`--measure-rtt: ${m}; recording --rtt-ms ${o.rttMs}`);
    else {
      rttMs = Math.round(m * 1000) / 1000;
      measured = true;
    }
  }
  let kvStart: Map<string, number> | null = null;
  if (o.scrapeKv !== null) {
    const s = await scrapeMetrics(o.scrapeKv.url, o.apiKey, 10_000);
    if (typeof s === 'string') o.warn(`--scrape-kv-metrics: start-of-window scrape failed: ${s}; the observed hit rate is omitted`);
    else kvStart = s;
  }
  const wl = o.workload;
  const toPending = pendingFactory({
    tokensPerWord: tpw.ratio,
    seed: wl.seed,
    prefixGroups: wl.prefixGroups,
    unconstrained: o.unconstrained,
    streaming: (req) => o.recordItl || ((wl.streamAll || req.streaming) && !o.noStreaming),
  });
  let sessions: SessionManager | null = null;
  if (wl.sessions.length > 0) {
    sessions = new SessionManager(wl.sessions);
    if (wl.followUpBudget >= 0) sessions.setFollowUpBudget(wl.followUpBudget);
  }
  const lead = await requestStartLeadUs(base, o.apiKey);
  if (measured && lead > 0) {
    // The trace's send times are then the server's own start times (x-blis-arrival): the observed latencies hold
    // no way in, and what GET /health took on a busy machine is mostly the machine, not a path the requests
    // travelled. Calibrate adds the header's round trip to every simulated latency: record none.
    o.warn(`--measure-rtt: measured ${rttMs} ms, recorded 0: the server starts each request at its x-request-start stamp, so the trace's send times are the server's start times and its latencies contain no round trip (calibrate adds the header's measured_rtt_ms to every simulated latency; --network-rtt-us overrides it there)`);
    rttMs = 0;
  }
  origin = performance.now();
  let dispatched = 0;
  const observed = await runObservation(
    { requests: wl.requests, sessions, maxConcurrency: o.maxConcurrency, toPending },
    lead > 0 ? { ...cfg, leadUs: lead, epochUs: (t) => (performance.timeOrigin + origin) * 1000 + t, clockOfEpochUs: (e) => e - (performance.timeOrigin + origin) * 1000 } : cfg,
    { onDone: (ob, counts) => o.onDone?.(ob, counts, ++dispatched) },
  );
  const wallSec = (performance.now() - origin) / 1000;
  let observedKv: TraceObservedKvMetrics | null = null;
  if (o.scrapeKv !== null && kvStart !== null) {
    const end = await scrapeMetrics(o.scrapeKv.url, o.apiKey, 10_000);
    const d = typeof end === 'string' ? end : deriveObservedHitRate(kvStart, end, o.scrapeKv.vllmCommit);
    if (typeof d === 'string') o.warn(`--scrape-kv-metrics: ${d}; the observed hit rate is omitted`);
    else observedKv = d;
  }
  const kept = observed.filter((x) => x.index >= o.warmupRequests);
  const header = observeHeader({
    createdAt: new Date(),
    warmUpRequests: o.warmupRequests,
    workloadSeed: wl.seed,
    workloadSpec: wl.specLabel,
    serverType: o.serverType,
    model: o.model,
    rttMs,
    goodput: o.goodput,
    observedKv,
  });
  return { header, records: kept.map(traceRecord), itl: o.recordItl ? itlRecords(kept) : [], summary: observeSummary(kept, wallSec), observed, tokensPerWord: tpw.ratio };
}
