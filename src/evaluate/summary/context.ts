/**
 * The per-run context every section of the reflection summary reads (`RunCtx`, built once per run from its
 * digest: request views with their slow/bad/judged flags, routing records, prefix audits, preemptions, the
 * analysis window), and the shared `Finding` type with the window helpers the issue detectors use.
 */
import type { PrefixAuditRecord } from '../../cluster/recorder.js';
import type { RunDigest } from '../digest.js';
import type { SloTargets } from '../types.js';
import { percentileFromSorted } from '../../metrics/stats.js';
import { cmpStr, median, sortedNums } from './format.js';

export interface ReqView {
  readonly id: string;
  readonly tenant: string;
  /** Class key: '' → 'default'. */
  readonly cls: string;
  readonly arrivalUs: number;
  readonly inputLen: number;
  readonly outputLen: number;
  readonly instance: string;
  readonly routed: boolean;
  readonly completed: boolean;
  readonly ttftMs: number | null;
  readonly lost: boolean;
  /** The class has a target. */
  readonly gated: boolean;
  /** Gated and missed (any gated dimension, or never completed). */
  readonly miss: boolean;
  /** Gated, completed and TTFT above its target. */
  readonly ttftMiss: boolean;
  slow: boolean;
  bad: boolean;
  /** Counted in bad rates (gated when the run has targets, else routed). */
  judged: boolean;
}

export interface RunCtx {
  readonly run: RunDigest;
  readonly index: number;
  readonly label: string;
  readonly views: readonly ReqView[];
  readonly byId: ReadonlyMap<string, ReqView>;
  readonly medianTtftMs: number;
  readonly p99TtftMs: number;
  readonly windowUs: number;
  readonly lastArrivalUs: number;
  /** Any request is gated: "bad" means SLO miss. */
  readonly hasTargets: boolean;
  readonly blockSize: number;
  readonly routings: readonly RoutingRecord[];
  readonly audits: readonly PrefixAuditRecord[];
  readonly preemptions: readonly { readonly instance: string; readonly requestId: string }[];
  readonly routingById: ReadonlyMap<string, RoutingRecord>;
  readonly auditById: ReadonlyMap<string, PrefixAuditRecord>;
}

/** A routing record as the digest keeps it (the fields the summary reads). */
export interface CandidateScore {
  readonly instanceId: string;
  readonly queueDepth: number;
  readonly batchSize: number;
  readonly inFlightRequests: number;
  readonly kvUtilization: number;
}

export interface RoutingRecord {
  readonly requestId: string;
  readonly clock: number;
  readonly chosenInstance: string;
  /** The policy gave scores. */
  readonly scored: boolean;
  readonly regret: number;
  readonly candidates: readonly CandidateScore[] | null;
}

export function targetsFor(slo: Readonly<Record<string, SloTargets>>, cls: string): SloTargets | null {
  const own = Object.prototype.hasOwnProperty.call(slo, cls) ? slo[cls] : undefined;
  let t = own;
  if (t === undefined && cls === 'default') t = Object.prototype.hasOwnProperty.call(slo, '') ? slo[''] : undefined;
  if (t === undefined) return null;
  return t.ttftMs > 0 || t.itlMs > 0 || t.e2eMs > 0 ? t : null;
}

const WINDOW_STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

function analysisWindowUs(lastArrivalUs: number): number {
  const want = lastArrivalUs / 60 / 1e6;
  for (const s of WINDOW_STEPS_S) if (s >= want) return s * 1e6;
  return Math.ceil(want / 3600) * 3600 * 1e6;
}

function routingRecords(run: RunDigest): RoutingRecord[] {
  const str = run.strings;
  const r = run.routings;
  const out: RoutingRecord[] = [];
  for (let i = 0; i < r.requestId.length; i++) {
    const n = r.candN[i] as number;
    let candidates: CandidateScore[] | null = null;
    if (n >= 0) {
      candidates = [];
      for (let k = r.candStart[i] as number, end = k + n; k < end; k++) {
        candidates.push({
          instanceId: str[r.candInstance[k] as number] as string,
          queueDepth: r.candQueueDepth[k] as number,
          batchSize: r.candBatchSize[k] as number,
          inFlightRequests: r.candInFlight[k] as number,
          kvUtilization: r.candKvUtilization[k] as number,
        });
      }
    }
    out.push({
      requestId: str[r.requestId[i] as number] as string,
      clock: r.clockUs[i] as number,
      chosenInstance: str[r.chosen[i] as number] as string,
      scored: r.scored[i] === 1,
      regret: r.regret[i] as number,
      candidates,
    });
  }
  return out;
}

function prefixAudits(run: RunDigest): PrefixAuditRecord[] {
  const str = run.strings;
  const a = run.audits;
  const out: PrefixAuditRecord[] = [];
  for (let i = 0; i < a.requestId.length; i++) {
    out.push({
      timeUs: a.timeUs[i] as number,
      requestId: str[a.requestId[i] as number] as string,
      chosen: str[a.chosen[i] as number] as string,
      chosenBlocks: a.chosenBlocks[i] as number,
      best: str[a.best[i] as number] as string,
      bestBlocks: a.bestBlocks[i] as number,
      promptBlocks: a.promptBlocks[i] as number,
      chosenLoad: a.chosenLoad[i] as number,
      bestLoad: a.bestLoad[i] as number,
    });
  }
  return out;
}

export function buildCtx(run: RunDigest, index: number, label: string): RunCtx {
  const str = run.strings;
  const rq = run.requests;
  const views: ReqView[] = [];
  // Targets by interned class string.
  const targets = new Map<number, SloTargets | null>();
  for (let i = 0; i < rq.id.length; i++) {
    const sloClass = str[rq.sloClass[i] as number] as string;
    const cls = sloClass === '' ? 'default' : sloClass;
    let t = targets.get(rq.sloClass[i] as number);
    if (t === undefined) targets.set(rq.sloClass[i] as number, (t = targetsFor(run.slo, cls)));
    const ttftUs = rq.ttftUs[i] as number;
    const e2eUs = rq.e2eUs[i] as number;
    const hasTTFT = ttftUs >= 0;
    const hasE2E = e2eUs >= 0;
    const ttftMs = hasTTFT ? ttftUs / 1000 : null;
    let good = hasE2E;
    let ttftMiss = false;
    if (t !== null && hasE2E) {
      if (t.ttftMs > 0 && !(hasTTFT && ttftUs / 1e3 <= t.ttftMs)) {
        good = false;
        ttftMiss = true;
      }
      if (t.itlMs > 0 && !((rq.itlMeanUs[i] as number) / 1e3 <= t.itlMs)) good = false;
      if (t.e2eMs > 0 && !(e2eUs / 1e3 <= t.e2eMs)) good = false;
    }
    const outcome = str[rq.outcome[i] as number] as string;
    const instance = str[rq.instance[i] as number] as string;
    const lost = outcome === 'rejected' || outcome === 'encode_rejected' || outcome.startsWith('gateway_');
    views.push({
      id: str[rq.id[i] as number] as string,
      tenant: str[rq.tenant[i] as number] as string,
      cls,
      arrivalUs: rq.arrivalUs[i] as number,
      inputLen: rq.inputLen[i] as number,
      outputLen: rq.outputLen[i] as number,
      instance,
      routed: instance !== '',
      completed: hasE2E,
      ttftMs,
      lost,
      gated: t !== null,
      miss: t !== null && !good,
      ttftMiss,
      slow: false,
      bad: false,
      judged: false,
    });
  }
  views.sort((a, b) => a.arrivalUs - b.arrivalUs || cmpStr(a.id, b.id));
  const ttfts = sortedNums(views.filter((v) => v.ttftMs !== null).map((v) => v.ttftMs as number));
  const med = median(ttfts);
  const hasTargets = views.some((v) => v.gated);
  for (const v of views) {
    v.slow = v.routed && (v.ttftMs === null || (ttfts.length > 0 && v.ttftMs > 2 * med));
    v.judged = hasTargets ? v.gated : v.routed;
    v.bad = hasTargets ? v.miss : v.slow;
  }
  const byId = new Map<string, ReqView>();
  for (const v of views) byId.set(v.id, v);
  const routings = routingRecords(run);
  const audits = prefixAudits(run);
  const routingById = new Map<string, RoutingRecord>();
  for (const rr of routings) routingById.set(rr.requestId, rr);
  const auditById = new Map<string, PrefixAuditRecord>();
  for (const a of audits) auditById.set(a.requestId, a);
  const preemptions: { instance: string; requestId: string }[] = [];
  for (let i = 0; i < run.preemptions.length; i += 2) preemptions.push({ instance: str[run.preemptions[i] as number] as string, requestId: str[run.preemptions[i + 1] as number] as string });
  const lastArrivalUs = views.length > 0 ? (views[views.length - 1] as ReqView).arrivalUs : 0;
  return {
    run,
    index,
    label,
    views,
    byId,
    medianTtftMs: med,
    p99TtftMs: percentileFromSorted(ttfts, 99),
    windowUs: analysisWindowUs(lastArrivalUs),
    lastArrivalUs,
    hasTargets,
    blockSize: run.blockSize,
    routings,
    audits,
    preemptions,
    routingById,
    auditById,
  };
}

export function runLabels(runs: readonly RunDigest[]): string[] {
  return runs.map((r) => `${r.scenario} (seed ${r.seed})`);
}

/** "SLO miss" or "slow" wording of a run's bad outcome. */
export function badWord(c: RunCtx): string {
  return c.hasTargets ? 'missed SLO' : 'were slow (TTFT > 2x median)';
}

// ---------------------------------------------------------------------------------------------------------
// Issues

export interface Finding {
  readonly kind: string;
  /** Heading label (KV OFFLOAD for KV_THRASHING, ...). */
  readonly title: string;
  readonly run: RunCtx;
  readonly count: number;
  /** Denominator of count (0 = none). */
  readonly total: number;
  /** What `count of total` counts, for multi-run headlines. */
  readonly what: string;
  readonly headline: string;
  readonly details: readonly string[];
  readonly severity: number;
  readonly focus: string;
}

export function windowOf(t: number, w: number): number {
  return Math.floor(t / w) * w;
}

/** The aligned window holding the most of `times` (earliest on ties). */
export function peakWindow(times: readonly number[], w: number): { start: number; n: number } | null {
  if (times.length === 0) return null;
  const m = new Map<number, number>();
  for (const t of times) {
    const k = windowOf(t, w);
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  let best = { start: Infinity, n: 0 };
  for (const [k, n] of m) if (n > best.n || (n === best.n && k < best.start)) best = { start: k, n };
  return best;
}
