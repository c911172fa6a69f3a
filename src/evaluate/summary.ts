/**
 * Trace summarisation for LLM reflection (policy-search-design §11): turns finished runs (scenarios × seeds)
 * into a compact, actionable text — `## Outcome`, `## Key Issues`, `## Counterfactual Analysis`,
 * `## Worst Decisions`, `## Patterns`, `## Suggested Focus` — computed from the run's records, never canned.
 *
 * Every number comes from the run: requests (outcomes, tenants, classes), the cluster's decision records
 * (routing with top-k candidates and regret, admission), the recorder (prefix audits, preemptions, ShadowKV
 * routings, KV samples) and the anomaly report. Sections with nothing to say are left out (Outcome always
 * stays). The text is deterministic (every group is visited in sorted order) and bounded by `maxChars`
 * (whole lines are dropped from the end, then "… (truncated)" is appended).
 *
 * Definitions shared by the detectors (per run):
 * - population = the requests that arrived (`cs.arrivals`);
 * - a request is *gated* when its SLO class has a target (`slo[class]`, '' and 'default' interchangeable)
 *   with any dimension > 0; it *meets* its SLO when it completed and every gated dimension (TTFT, mean ITL,
 *   E2E, ms) is within target — exactly `sloAttainment`'s rule, so rejected or unfinished requests miss;
 * - *slow* = routed and TTFT > 2 × the run's median TTFT (or no first token at all);
 * - *bad* = SLO miss when the run has any gated request, else slow;
 * - the analysis window W is the smallest of 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600 s
 *   (then whole hours) that is >= the run's last arrival / 60, windows aligned at multiples of W.
 *
 * Issue detectors and thresholds:
 * - ROUTING: prefix audits where another instance held more cached leading blocks of the prompt than the
 *   chosen one; reported when >= 3 and >= 5% of the audited routings.
 * - ADMISSION (tenant bursts, >= 2 tenants): window k is a burst of tenant T when T's arrivals there are
 *   >= 5, >= 3 × T's mean per window and >= 50% of the window's arrivals; consecutive burst windows form an
 *   episode [s, e). Other tenants' requests arriving in [s, e + W) (the burst plus the window its queue takes
 *   to drain) that are bad are its victims. Reported when the victims total >= 3 and their rate is >= 20%
 *   and >= 2 × the other tenants' bad rate outside those windows.
 * - REJECTION: requests rejected, shed, expired or evicted at the gateway >= 5% of arrivals (and >= 3).
 * - PREEMPTION: any `preemption_storm` anomaly, or preemptions >= 10% of routed requests (and >= 10).
 * - KV_THRASHING: any `cache_thrashing` anomaly.
 * - PRIORITY: >= 3 `priority_inversion` anomalies.
 * - SHADOW: ShadowKV predictions that differed from the actual cache state >= 10% of routings (and >= 5).
 * - SLO: a class with >= 10 gated arrivals whose attainment is below 90%.
 * - LOAD_IMBALANCE: one instance received >= 2 × its fair share of routings (>= 2 instances, >= 20 routed).
 *
 * Patterns (pooled over runs; kept when the condition holds for >= 5 requests, its bad rate is >= 20% and
 * >= 2 × the rate without it): cluster mean queue depth at routing (top-k candidates) >= q for
 * q in {2, 4, 8, 16, 32, 64}; routed away from the longest cached prefix; prompts longer than the run's p90;
 * per tenant; per instance.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { PrefixAuditRecord, RunRecorder } from '../cluster/recorder.js';
import type { CandidateScore, RoutingRecord } from '../domain/decision-records.js';
import type { Request } from '../domain/request.js';
import type { AnomalyEvent, AnomalyReport } from '../metrics/anomalies.js';
import { percentileFromSorted } from '../metrics/stats.js';
import type { SloTargets } from './types.js';

export interface RunForSummary {
  readonly scenario: string;
  readonly seed: number;
  /** Finished; decisions traced (admission/routing records present, counterfactual-k 3). */
  readonly cs: ClusterSimulator;
  /** prefixAudit on. */
  readonly recorder: RunRecorder;
  readonly requests: readonly Request[];
  readonly anomalies: AnomalyReport;
  /** Per SLO class ('' / 'default' = requests without a class). */
  readonly slo: Readonly<Record<string, SloTargets>>;
  /** Raw objective values of this run (e.g. slo_attainment, ttft_p99_ms, throughput_tps, cache_hit_rate, jain_fairness). */
  readonly objectives: Readonly<Record<string, number>>;
  /** Normalised scores in [0, 1]. */
  readonly scores: Readonly<Record<string, number>>;
}

export type SummaryStrategy = 'issue_focused' | 'decision_audit' | 'counterfactual' | 'pattern_mining';

export interface SummaryOptions {
  /** Hard cap on each text (default 6000 ≈ 1500 tokens). */
  readonly maxChars?: number;
  /** Sections beyond Outcome (default all four). */
  readonly strategies?: readonly SummaryStrategy[];
  /** Worst decisions listed (default 3). */
  readonly examples?: number;
}

export interface ReflectionSummary {
  readonly summary: string;
  readonly worstDecisions: string;
  readonly issues: readonly { kind: string; count: number; description: string }[];
}

const DEFAULT_MAX_CHARS = 6000;
const ALL_STRATEGIES: readonly SummaryStrategy[] = ['issue_focused', 'decision_audit', 'counterfactual', 'pattern_mining'];
const TRUNCATED = '… (truncated)';

// ---------------------------------------------------------------------------------------------------------
// Formatting

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function trimZero(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** ms with 0–1 decimals (seconds above 10 s). */
function ms(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 10_000) return `${trimZero((x / 1000).toFixed(1))}s`;
  return Math.abs(x) >= 100 ? `${Math.round(x)}ms` : `${trimZero(x.toFixed(1))}ms`;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

/** A compact number: integers as is, else up to 2 significant decimals. */
function num(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 100) return String(Math.round(x));
  if (a >= 10) return trimZero(x.toFixed(1));
  return trimZero(x.toFixed(2));
}

/** Seconds from µs: 1 decimal below 100 s, whole seconds above; trailing ".0" dropped. */
function sec(us: number): string {
  const s = us / 1e6;
  return s >= 100 ? String(Math.round(s)) : trimZero(s.toFixed(1));
}

/** Seconds with 2 decimals (decision instants). */
function secFine(us: number): string {
  const s = us / 1e6;
  return s >= 100 ? s.toFixed(1) : s.toFixed(2);
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function span(startUs: number, endUs: number): string {
  return `${sec(startUs)}–${sec(endUs)}s`;
}

function ratio(a: number, b: number): string {
  if (b <= 0) return '∞';
  const q = a / b;
  return q >= 10 ? `${Math.round(q)}x` : `${trimZero(q.toFixed(1))}x`;
}

function sortedNums(xs: Iterable<number>): number[] {
  return [...xs].sort((a, b) => a - b);
}

function median(sorted: readonly number[]): number {
  return percentileFromSorted(sorted, 50);
}

function mean(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Whole lines up to `max` chars, then the truncation marker (the result never exceeds max). */
function capText(lines: readonly string[], max: number): string {
  const full = lines.join('\n');
  if (full.length <= max) return full;
  const out: string[] = [];
  let len = 0;
  for (const line of lines) {
    const add = (out.length === 0 ? 0 : 1) + line.length;
    if (len + add + 1 + TRUNCATED.length > max) break;
    out.push(line);
    len += add;
  }
  if (out.length === 0) return TRUNCATED.slice(0, Math.max(0, max));
  return `${out.join('\n')}\n${TRUNCATED}`;
}

/**
 * Sections separated by blank lines, at most `max` chars. Over the cap, the first section (Outcome) and the
 * `tail` (Suggested Focus) are kept whole when they fit, and the sections between are cut at a whole line
 * followed by the truncation marker; otherwise the whole text is cut at a whole line from the end.
 */
function assemble(sections: readonly (readonly string[])[], tail: readonly string[] | null, max: number): string {
  const all: string[] = [];
  for (const sec of tail === null ? sections : [...sections, tail]) {
    if (all.length > 0) all.push('');
    all.push(...sec);
  }
  const full = all.join('\n');
  if (full.length <= max) return full;
  const head = sections[0] ?? [];
  const tailText = tail === null ? '' : `\n\n${tail.join('\n')}`;
  const reserve = 1 + TRUNCATED.length + tailText.length;
  let len = head.join('\n').length;
  if (head.length === 0 || len + reserve > max) return capText(all, max);
  const out = [...head];
  let cut = false;
  for (const sec of sections.slice(1)) {
    for (const [i, line] of (['', ...sec] as string[]).entries()) {
      const add = 1 + line.length;
      if (len + add + reserve > max) {
        cut = true;
        // Do not leave a dangling blank line or a heading without content.
        if (i <= 2) out.splice(out.length - i, i);
        break;
      }
      out.push(line);
      len += add;
    }
    if (cut) break;
  }
  if (out[out.length - 1] === '') out.pop();
  return `${out.join('\n')}\n${TRUNCATED}${tailText}`;
}

// ---------------------------------------------------------------------------------------------------------
// Per-run context

interface ReqView {
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

interface RunCtx {
  readonly run: RunForSummary;
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
  readonly routingById: ReadonlyMap<string, RoutingRecord>;
  readonly auditById: ReadonlyMap<string, PrefixAuditRecord>;
}

function targetsFor(slo: Readonly<Record<string, SloTargets>>, cls: string): SloTargets | null {
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

function buildCtx(run: RunForSummary, index: number, label: string): RunCtx {
  const arrived = new Set<Request>(run.cs.arrivals);
  const reqs = arrived.size > 0 ? run.requests.filter((r) => arrived.has(r)) : [...run.requests];
  const views: ReqView[] = [];
  for (const r of reqs) {
    const cls = r.sloClass === '' ? 'default' : r.sloClass;
    const t = targetsFor(run.slo, cls);
    const ttftMs = r.hasTTFT ? r.ttft / 1000 : null;
    let good = r.hasE2E;
    let ttftMiss = false;
    if (t !== null && r.hasE2E) {
      if (t.ttftMs > 0 && !(r.hasTTFT && r.ttft / 1e3 <= t.ttftMs)) {
        good = false;
        ttftMiss = true;
      }
      if (t.itlMs > 0 && !(r.itlMean / 1e3 <= t.itlMs)) good = false;
      if (t.e2eMs > 0 && !(r.e2e / 1e3 <= t.e2eMs)) good = false;
    }
    const lost = r.outcome === 'rejected' || r.outcome === 'encode_rejected' || r.outcome.startsWith('gateway_');
    views.push({
      id: r.id,
      tenant: r.tenantId,
      cls,
      arrivalUs: r.arrivalTime,
      inputLen: r.inputLen,
      outputLen: r.outputLen,
      instance: r.assignedInstance,
      routed: r.assignedInstance !== '',
      completed: r.hasE2E,
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
  const routingById = new Map<string, RoutingRecord>();
  for (const rr of run.cs.routingRecords) routingById.set(rr.requestId, rr);
  const auditById = new Map<string, PrefixAuditRecord>();
  for (const a of run.recorder.prefixAudits) auditById.set(a.requestId, a);
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
    blockSize: run.cs.instances[0]?.kv.blockSize ?? 16,
    routingById,
    auditById,
  };
}

function runLabels(runs: readonly RunForSummary[]): string[] {
  return runs.map((r) => `${r.scenario} (seed ${r.seed})`);
}

/** "SLO miss" or "slow" wording of a run's bad outcome. */
function badWord(c: RunCtx): string {
  return c.hasTargets ? 'missed SLO' : 'were slow (TTFT > 2x median)';
}

// ---------------------------------------------------------------------------------------------------------
// Issues

interface Finding {
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

function windowOf(t: number, w: number): number {
  return Math.floor(t / w) * w;
}

/** The aligned window holding the most of `times` (earliest on ties). */
function peakWindow(times: readonly number[], w: number): { start: number; n: number } | null {
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

function detectRouting(c: RunCtx): Finding | null {
  const audits = c.run.recorder.prefixAudits;
  const n = audits.length;
  const misses = audits.filter((a) => a.bestBlocks > a.chosenBlocks);
  const m = misses.length;
  if (m < 3 || m < 0.05 * n) return null;
  const chosenAvg = mean(misses.map((a) => a.chosenBlocks));
  const bestAvg = mean(misses.map((a) => a.bestBlocks));
  const cold = misses.filter((a) => a.chosenBlocks === 0).length;
  const lostBlocks = misses.reduce((s, a) => s + (a.bestBlocks - a.chosenBlocks), 0);
  const missIds = new Set(misses.map((a) => a.requestId));
  const ttIn: number[] = [];
  const ttOut: number[] = [];
  for (const a of audits) {
    const t = c.byId.get(a.requestId)?.ttftMs;
    if (t === null || t === undefined) continue;
    (missIds.has(a.requestId) ? ttIn : ttOut).push(t);
  }
  const details: string[] = [];
  details.push(`${cold} of them held none of it while another instance did; ≈${lostBlocks * c.blockSize} prompt tokens recomputed (${lostBlocks} blocks)`);
  if (ttIn.length > 0 && ttOut.length > 0) {
    details.push(`median TTFT ${ms(median(sortedNums(ttIn)))} for these vs ${ms(median(sortedNums(ttOut)))} for the others`);
  }
  const pk = peakWindow(misses.map((a) => a.timeUs), c.windowUs);
  const loadChosen = mean(misses.map((a) => a.chosenLoad));
  const loadBest = mean(misses.map((a) => a.bestLoad));
  let where = `between ${sec(misses[0]!.timeUs)}s and ${sec(misses[m - 1]!.timeUs)}s`;
  if (pk !== null) where += `, peak ${span(pk.start, pk.start + c.windowUs)} (${pk.n})`;
  details.push(`${where}; load of the prefix holder ${num(loadBest)} vs ${num(loadChosen)} for the chosen instance (mean, router view)`);
  const busier = loadBest - loadChosen;
  const focus =
    busier > 4
      ? `Routing: balance prefix affinity against load — the prefix holder was on average ${num(busier)} requests busier, yet ${pct(m / n)} of routings lost a cached prefix (avg ${num(bestAvg)} blocks available)`
      : `Routing: raise cache/prefix affinity — ${m} of ${n} routings lost a cached prefix of avg ${num(bestAvg - chosenAvg)} blocks while the holder was ${busier <= 0 ? 'no busier' : `only ${num(busier)} requests busier`}`;
  return {
    kind: 'ROUTING',
    title: 'ROUTING',
    run: c,
    count: m,
    total: n,
    what: 'routed requests went to an instance holding a shorter prefix of their prompt than another instance',
    headline: `${m} of ${n} routed requests went to an instance holding a shorter prefix of their prompt than another instance (the chosen held ${num(chosenAvg)} blocks, the best ${num(bestAvg)} on average)`,
    details,
    severity: m / Math.max(1, n),
    focus,
  };
}

interface BurstEpisode {
  readonly tenant: string;
  readonly start: number;
  readonly end: number;
  readonly tenantArrivals: number;
  readonly allArrivals: number;
  readonly meanPerWindow: number;
  /** Victim window [start, end + W). */
  readonly victimEnd: number;
  readonly others: number;
  readonly victims: number;
  readonly victimsByClass: ReadonlyMap<string, { n: number; bad: number }>;
}

function detectTenantBursts(c: RunCtx): Finding[] {
  const tenants = [...new Set(c.views.map((v) => v.tenant).filter((t) => t !== ''))].sort(cmpStr);
  if (tenants.length < 2) return [];
  const W = c.windowUs;
  const nWin = Math.floor(c.lastArrivalUs / W) + 1;
  const total = new Map<number, number>();
  const per = new Map<string, Map<number, number>>();
  const tenantTotal = new Map<string, number>();
  for (const v of c.views) {
    const k = windowOf(v.arrivalUs, W);
    total.set(k, (total.get(k) ?? 0) + 1);
    if (v.tenant === '') continue;
    let m = per.get(v.tenant);
    if (m === undefined) per.set(v.tenant, (m = new Map<number, number>()));
    m.set(k, (m.get(k) ?? 0) + 1);
    tenantTotal.set(v.tenant, (tenantTotal.get(v.tenant) ?? 0) + 1);
  }
  const out: Finding[] = [];
  for (const tenant of tenants) {
    const counts = per.get(tenant) as Map<number, number>;
    const meanPer = (tenantTotal.get(tenant) ?? 0) / nWin;
    const burstStarts = [...counts.keys()]
      .filter((k) => {
        const n = counts.get(k) as number;
        return n >= 5 && n >= 3 * meanPer && n >= 0.5 * (total.get(k) as number);
      })
      .sort((a, b) => a - b);
    if (burstStarts.length === 0) continue;
    const episodes: { start: number; end: number }[] = [];
    for (const k of burstStarts) {
      const last = episodes[episodes.length - 1];
      if (last !== undefined && last.end === k) last.end = k + W;
      else episodes.push({ start: k, end: k + W });
    }
    const others = c.views.filter((v) => v.tenant !== tenant && v.judged);
    const inAny = (t: number): boolean => episodes.some((e) => t >= e.start && t < e.end + W);
    let outN = 0;
    let outBad = 0;
    for (const v of others) {
      if (inAny(v.arrivalUs)) continue;
      outN++;
      if (v.bad) outBad++;
    }
    const eps: BurstEpisode[] = episodes.map((e) => {
      let ta = 0;
      let all = 0;
      for (let k = e.start; k < e.end; k += W) {
        ta += counts.get(k) ?? 0;
        all += total.get(k) ?? 0;
      }
      const byClass = new Map<string, { n: number; bad: number }>();
      let n = 0;
      let bad = 0;
      for (const v of others) {
        if (v.arrivalUs < e.start || v.arrivalUs >= e.end + W) continue;
        n++;
        if (v.bad) bad++;
        let cc = byClass.get(v.cls);
        if (cc === undefined) byClass.set(v.cls, (cc = { n: 0, bad: 0 }));
        cc.n++;
        if (v.bad) cc.bad++;
      }
      return { tenant, start: e.start, end: e.end, tenantArrivals: ta, allArrivals: all, meanPerWindow: meanPer, victimEnd: e.end + W, others: n, victims: bad, victimsByClass: byClass };
    });
    // Victim windows may overlap when episodes are one window apart: count each request once.
    let inN = 0;
    let inBad = 0;
    for (const v of others) {
      if (!inAny(v.arrivalUs)) continue;
      inN++;
      if (v.bad) inBad++;
    }
    const inRate = inN > 0 ? inBad / inN : 0;
    const outRate = outN > 0 ? outBad / outN : 0;
    if (inBad < 3 || inRate < 0.2 || inRate < 2 * outRate) continue;
    const allOtherBad = inBad + outBad;
    const burstReqs = eps.reduce((s, e) => s + e.tenantArrivals, 0);
    const worst = [...eps].sort((a, b) => b.victims - a.victims || a.start - b.start).slice(0, 2);
    const details = worst.map((e) => {
      const classes = [...e.victimsByClass.entries()]
        .filter(([, x]) => x.bad > 0)
        .sort((a, b) => cmpStr(a[0], b[0]))
        .map(([k, x]) => `${k} ${x.bad}/${x.n}`)
        .join(', ');
      const rate = e.meanPerWindow > 0 ? e.tenantArrivals / ((e.end - e.start) / W) / e.meanPerWindow : 0;
      return `${span(e.start, e.end)}: "${tenant}" sent ${e.tenantArrivals} requests (${pct(e.tenantArrivals / Math.max(1, e.allArrivals))} of arrivals, ${trimZero(rate.toFixed(1))}x its mean rate); ${e.victims} of ${e.others} other-tenant requests arriving ${span(e.start, e.victimEnd)} ${badWord(c)}${classes === '' ? '' : ` (${classes})`}`;
    });
    out.push({
      kind: 'ADMISSION',
      title: 'ADMISSION',
      run: c,
      count: inBad,
      total: inN,
      what: `other-tenant requests arriving during a tenant's burst ${badWord(c)}`,
      headline: `bursty tenant "${tenant}" (${eps.length} burst${eps.length === 1 ? '' : 's'}, ${burstReqs} of its requests) coincided with other tenants' ${c.hasTargets ? 'SLO misses' : 'slow requests'}: ${inBad} of ${inN} of their requests in those windows ${badWord(c)} (${pct(inRate)} vs ${pct(outRate)} outside; ${pct(inBad / Math.max(1, allOtherBad))} of all their ${c.hasTargets ? 'misses' : 'slow requests'})`,
      details,
      severity: inRate - outRate,
      focus: `Admission: add per-tenant burst detection — throttle or delay tenant "${tenant}" when its arrival rate exceeds ~3x its mean (it reached ${ratio(Math.max(...eps.map((e) => e.tenantArrivals / ((e.end - e.start) / W))), meanPer)}) while other tenants' requests wait`,
    });
  }
  return out;
}

function detectRejections(c: RunCtx): Finding | null {
  const n = c.views.length;
  const lost = c.views.filter((v) => v.lost);
  if (lost.length < 3 || lost.length < 0.05 * n) return null;
  const byClass = new Map<string, number>();
  const byTenant = new Map<string, number>();
  for (const v of lost) {
    byClass.set(v.cls, (byClass.get(v.cls) ?? 0) + 1);
    if (v.tenant !== '') byTenant.set(v.tenant, (byTenant.get(v.tenant) ?? 0) + 1);
  }
  const top = (m: Map<string, number>): string =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1] || cmpStr(a[0], b[0]))
      .slice(0, 3)
      .map(([k, x]) => `${k} ${x}`)
      .join(', ');
  const details = [`by class: ${top(byClass)}${byTenant.size > 0 ? `; by tenant: ${top(byTenant)}` : ''}`];
  const pk = peakWindow(lost.map((v) => v.arrivalUs), c.windowUs);
  if (pk !== null) details.push(`peak ${span(pk.start, pk.start + c.windowUs)} (${pk.n} lost)`);
  const delays = c.run.cs.admissionDelays;
  if (delays > 0) details.push(`${delays} admission DELAYs issued, ${c.run.cs.delayLimitRejections} hit the delay limit`);
  const topClass = [...byClass.entries()].sort((a, b) => b[1] - a[1] || cmpStr(a[0], b[0]))[0]?.[0] ?? '';
  return {
    kind: 'REJECTION',
    title: 'REJECTION',
    run: c,
    count: lost.length,
    total: n,
    what: 'requests rejected or shed before being served',
    headline: `${lost.length} of ${n} requests (${pct(lost.length / Math.max(1, n))}) were rejected or shed before being served`,
    details,
    severity: lost.length / Math.max(1, n),
    focus: `Admission: ${pct(lost.length / Math.max(1, n))} of requests were turned away (mostly class ${topClass}) — admit more when capacity allows, or shed only sheddable classes`,
  };
}

const STORM_RE = /^instance (\S+): (\d+) preemptions of (\d+) request\(s\) between (\d+) and (\d+)/;

function detectPreemption(c: RunCtx): Finding | null {
  const storms = c.run.anomalies.counts.preemption_storm;
  const pre = c.run.recorder.preemptions;
  const routed = c.views.filter((v) => v.routed).length;
  if (storms === 0 && (pre.length < 10 || pre.length < 0.1 * routed)) return null;
  const victims = new Set(pre.map((p) => p.requestId)).size;
  const details: string[] = [];
  const evs = c.run.anomalies.events.filter((e) => e.type === 'preemption_storm');
  const top = [...evs].sort((a, b) => b.severity - a.severity || a.timestampUs - b.timestampUs).slice(0, 3);
  for (const e of top) {
    const m = STORM_RE.exec(e.description);
    details.push(m === null ? e.description : `${m[1]}: ${m[2]} preemptions of ${m[3]} requests in ${span(Number(m[4]), Number(m[5]))}`);
  }
  const byInst = new Map<string, number>();
  for (const p of pre) byInst.set(p.instance, (byInst.get(p.instance) ?? 0) + 1);
  const inst = [...byInst.entries()].sort((a, b) => b[1] - a[1] || cmpStr(a[0], b[0]));
  if (inst.length > 0) details.push(`by instance: ${inst.slice(0, 4).map(([k, x]) => `${k} ${x}`).join(', ')}`);
  return {
    kind: 'PREEMPTION',
    title: 'PREEMPTION',
    run: c,
    count: pre.length,
    total: 0,
    what: 'preemptions',
    headline: `${pre.length} preemptions of ${victims} requests${storms > 0 ? ` in ${storms} preemption storm${storms === 1 ? '' : 's'}` : ''}`,
    details,
    severity: pre.length / Math.max(1, routed),
    focus: `Scheduler/routing: ${pre.length} preemptions${storms > 0 ? ` (${storms} storms)` : ''} — avoid routing to or batching on instances near KV capacity, and pick cheaper preemption victims`,
  };
}

function detectThrashing(c: RunCtx): Finding | null {
  const n = c.run.anomalies.counts.cache_thrashing;
  if (n === 0) return null;
  const last = new Map<string, { offloads: number; reloads: number }>();
  for (const s of c.run.recorder.kvSamples) {
    const p = last.get(s.instance);
    if (p === undefined || s.offloads >= p.offloads) last.set(s.instance, { offloads: s.offloads, reloads: s.reloads });
  }
  let off = 0;
  let rel = 0;
  for (const v of last.values()) {
    off += v.offloads;
    rel += v.reloads;
  }
  const evs = c.run.anomalies.events.filter((e) => e.type === 'cache_thrashing');
  const insts = new Set<string>();
  for (const e of evs) {
    const m = /^instance (\S+):/.exec(e.description);
    if (m !== null) insts.add(m[1] as string);
  }
  const details: string[] = [];
  if (evs.length > 0) {
    const first = evs[0] as AnomalyEvent;
    const lastEv = evs[evs.length - 1] as AnomalyEvent;
    details.push(`thrashing windows starting ${sec(first.timestampUs)}s to ${sec(lastEv.timestampUs)}s, on ${[...insts].sort(cmpStr).join(', ')}`);
  }
  return {
    kind: 'KV_THRASHING',
    title: 'KV OFFLOAD',
    run: c,
    count: n,
    total: 0,
    what: 'windows of GPU↔CPU KV thrashing',
    headline: `${n} window${n === 1 ? '' : 's'} of GPU↔CPU thrashing (reloads >= half the offloads); ${off} offloads, ${rel} reloads in the run`,
    details,
    severity: Math.min(1, rel / Math.max(1, off)),
    focus: `KV: ${rel} CPU→GPU reloads against ${off} offloads — consider KV headroom/tier in routing and admit fewer long prompts onto nearly full instances`,
  };
}

function detectPriority(c: RunCtx): Finding | null {
  const n = c.run.anomalies.counts.priority_inversion;
  if (n < 3) return null;
  const evs = c.run.anomalies.events.filter((e) => e.type === 'priority_inversion');
  const worst = [...evs].sort((a, b) => b.severity - a.severity || a.timestampUs - b.timestampUs)[0];
  const details = worst === undefined ? [] : [`worst at t=${sec(worst.timestampUs)}s: ${worst.description.replace(/ \(priority[^)]*\)/, '')}`];
  return {
    kind: 'PRIORITY',
    title: 'PRIORITY',
    run: c,
    count: n,
    total: 0,
    what: 'priority inversions',
    headline: `${n} requests were overtaken by less urgent ones on their instance (priority inversions)`,
    details,
    severity: n / Math.max(1, c.views.length),
    focus: `Priority/scheduler: ${n} inversions — make the priority score and the scheduler order agree (urgent classes first), and avoid starving them behind long prefills`,
  };
}

function detectShadow(c: RunCtx): Finding | null {
  const rs = c.run.recorder.routings;
  const d = rs.filter((r) => r.expectedHit !== r.actualHit);
  if (d.length < 5 || d.length < 0.1 * rs.length) return null;
  const falseHit = d.filter((r) => r.expectedHit).length;
  return {
    kind: 'SHADOW',
    title: 'SHADOW KV',
    run: c,
    count: d.length,
    total: rs.length,
    what: 'routings where the ShadowKV prediction differed from the cache',
    headline: `ShadowKV prediction wrong in ${d.length} of ${rs.length} routings (${pct(d.length / Math.max(1, rs.length))}): ${falseHit} predicted hits missed, ${d.length - falseHit} predicted misses hit`,
    details: [],
    severity: d.length / Math.max(1, rs.length),
    focus: `Router state: ShadowKV expected-hit predictions were wrong ${pct(d.length / Math.max(1, rs.length))} of the time — prefer the observed cache signal (or discount predictions) when scoring prefix affinity`,
  };
}

function detectSlo(c: RunCtx): Finding[] {
  const classes = [...new Set(c.views.filter((v) => v.gated).map((v) => v.cls))].sort(cmpStr);
  const out: Finding[] = [];
  for (const cls of classes) {
    const vs = c.views.filter((v) => v.gated && v.cls === cls);
    const miss = vs.filter((v) => v.miss);
    const att = 1 - miss.length / vs.length;
    if (vs.length < 10 || att >= 0.9) continue;
    const t = targetsFor(c.run.slo, cls) as SloTargets;
    const unfinished = miss.filter((v) => !v.completed).length;
    const ttftM = miss.filter((v) => v.ttftMiss).length;
    const details: string[] = [];
    const parts: string[] = [];
    if (ttftM > 0) parts.push(`${ttftM} over the ${ms(t.ttftMs)} TTFT target`);
    if (unfinished > 0) parts.push(`${unfinished} never completed`);
    const other = miss.length - ttftM - unfinished;
    if (other > 0) parts.push(`${other} over the ITL/E2E target`);
    details.push(parts.join(', '));
    const tt = sortedNums(vs.filter((v) => v.ttftMs !== null).map((v) => v.ttftMs as number));
    if (tt.length > 0 && t.ttftMs > 0) details.push(`class TTFT p50 ${ms(median(tt))}, p99 ${ms(percentileFromSorted(tt, 99))} (target ${ms(t.ttftMs)})`);
    const pk = peakWindow(miss.map((v) => v.arrivalUs), c.windowUs);
    if (pk !== null) details.push(`worst window ${span(pk.start, pk.start + c.windowUs)}: ${pk.n} misses (by arrival)`);
    out.push({
      kind: 'SLO',
      title: 'SLO',
      run: c,
      count: miss.length,
      total: vs.length,
      what: 'requests missed their class SLO',
      headline: `class "${cls}" met its SLO for ${pct(att)} of ${vs.length} requests (${miss.length} misses)`,
      details,
      severity: 1 - att,
      focus: `SLO class "${cls}": ${pct(att)} attainment — give it precedence in priority/scheduling${ttftM > miss.length / 2 ? ' (mostly TTFT misses: queueing before the first token)' : ''}`,
    });
  }
  return out;
}

function detectImbalance(c: RunCtx): Finding | null {
  const nInst = c.run.cs.instances.length;
  const recs = c.run.cs.routingRecords;
  const routed = recs.length > 0 ? recs.map((r) => r.chosenInstance) : c.views.filter((v) => v.routed).map((v) => v.instance);
  if (nInst < 2 || routed.length < 20) return null;
  const m = new Map<string, number>();
  for (const id of routed) m.set(id, (m.get(id) ?? 0) + 1);
  const [topId, topN] = [...m.entries()].sort((a, b) => b[1] - a[1] || cmpStr(a[0], b[0]))[0] as [string, number];
  const fair = routed.length / nInst;
  if (topN < 2 * fair) return null;
  const slowOn = c.views.filter((v) => v.routed && v.instance === topId);
  const slowRate = slowOn.filter((v) => v.slow).length / Math.max(1, slowOn.length);
  const rest = c.views.filter((v) => v.routed && v.instance !== topId);
  const restRate = rest.filter((v) => v.slow).length / Math.max(1, rest.length);
  return {
    kind: 'LOAD_IMBALANCE',
    title: 'LOAD IMBALANCE',
    run: c,
    count: topN,
    total: routed.length,
    what: 'routings went to the busiest instance',
    headline: `${topId} received ${topN} of ${routed.length} routings (${ratio(topN, fair)} its fair share across ${nInst} instances)`,
    details: [`slow (TTFT > 2x median) on ${topId}: ${pct(slowRate)} vs ${pct(restRate)} elsewhere`],
    severity: topN / routed.length - 1 / nInst,
    focus: `Routing: ${topId} took ${pct(topN / routed.length)} of the traffic — add or raise a load term so affinity does not pile requests onto one instance`,
  };
}

function detectAll(c: RunCtx): Finding[] {
  const out: Finding[] = [];
  const push = (f: Finding | null): void => {
    if (f !== null) out.push(f);
  };
  push(detectRouting(c));
  out.push(...detectTenantBursts(c));
  push(detectRejections(c));
  push(detectPreemption(c));
  push(detectThrashing(c));
  push(detectPriority(c));
  push(detectShadow(c));
  out.push(...detectSlo(c));
  push(detectImbalance(c));
  return out;
}

interface Issue {
  readonly kind: string;
  readonly count: number;
  readonly description: string;
  readonly lines: readonly string[];
  readonly focus: string;
  readonly severity: number;
}

/** Findings of one kind across runs → one issue (several tenants/classes of one run stay separate lines). */
function aggregate(kind: string, fs: readonly Finding[], nRuns: number): Issue {
  const sorted = [...fs].sort((a, b) => b.severity - a.severity || a.run.index - b.run.index || cmpStr(a.headline, b.headline));
  const top = sorted[0] as Finding;
  const count = fs.reduce((s, f) => s + f.count, 0);
  const runs = new Set(fs.map((f) => f.run.index));
  const lines: string[] = [];
  let description: string;
  if (fs.length === 1) {
    description = `${top.headline} [${top.run.label}]`;
    lines.push(`${top.title}: ${description}`);
    for (const d of top.details) lines.push(`   - ${d}`);
  } else {
    const total = fs.reduce((s, f) => s + f.total, 0);
    const totalText = fs.every((f) => f.total > 0) ? ` of ${total}` : '';
    const scope = nRuns > 1 ? ` in ${runs.size} of ${nRuns} runs` : '';
    description = `${count}${totalText} ${top.what}${scope}; worst: ${top.run.label}`;
    lines.push(`${top.title}: ${description}`);
    sorted.slice(0, 3).forEach((f, i) => {
      lines.push(`   - ${f.run.label}: ${f.headline}`);
      for (const d of f.details.slice(0, i === 0 ? 3 : 1)) lines.push(`     - ${d}`);
    });
    if (sorted.length > 3) lines.push(`   - … ${sorted.length - 3} more`);
  }
  const severity = Math.max(...fs.map((f) => f.severity));
  const focus = runs.size > 1 ? `${top.focus} (${runs.size} runs; worst ${top.run.label})` : top.focus;
  return { kind, count, description, lines, focus, severity };
}

function collectIssues(ctxs: readonly RunCtx[]): Issue[] {
  const byKind = new Map<string, Finding[]>();
  for (const c of ctxs) {
    for (const f of detectAll(c)) {
      const a = byKind.get(f.kind);
      if (a) a.push(f);
      else byKind.set(f.kind, [f]);
    }
  }
  const issues = [...byKind.keys()].sort(cmpStr).map((k) => aggregate(k, byKind.get(k) as Finding[], ctxs.length));
  issues.sort((a, b) => b.severity - a.severity || cmpStr(a.kind, b.kind));
  return issues;
}

// ---------------------------------------------------------------------------------------------------------
// Outcome

const OBJECTIVE_ORDER = ['throughput_tps', 'ttft_p99_ms', 'tpot_p99_ms', 'itl_p99_ms', 'e2e_p99_ms', 'slo_attainment', 'goodput', 'cache_hit_rate', 'jain_fairness'];
const OBJECTIVE_LABELS: Readonly<Record<string, string>> = {
  throughput_tps: 'Throughput',
  ttft_p99_ms: 'P99 TTFT',
  tpot_p99_ms: 'P99 TPOT',
  itl_p99_ms: 'P99 ITL',
  e2e_p99_ms: 'P99 E2E',
  slo_attainment: 'SLO attainment',
  cache_hit_rate: 'Cache hit rate',
  jain_fairness: 'Fairness (Jain)',
};

function objectiveValue(name: string, v: number): string {
  if (name.endsWith('_ms')) return ms(v);
  if (name.endsWith('_tps')) return `${num(v)} tok/s`;
  if (/(attainment|_rate|_ratio|_pct|_share)$/.test(name) && v >= 0 && v <= 1) return pct(v);
  return num(v);
}

function outcomeLines(ctxs: readonly RunCtx[]): string[] {
  const lines: string[] = [];
  const names = new Set<string>();
  for (const c of ctxs) for (const k of Object.keys(c.run.objectives)) names.add(k);
  const ordered = [...OBJECTIVE_ORDER.filter((k) => names.has(k)), ...[...names].filter((k) => !OBJECTIVE_ORDER.includes(k)).sort(cmpStr)];
  for (const name of ordered) {
    const have = ctxs.filter((c) => Object.prototype.hasOwnProperty.call(c.run.objectives, name));
    const vals = have.map((c) => c.run.objectives[name] as number);
    const scored = have.filter((c) => Object.prototype.hasOwnProperty.call(c.run.scores, name));
    const scores = scored.map((c) => c.run.scores[name] as number);
    let line = `- ${OBJECTIVE_LABELS[name] ?? name}: ${objectiveValue(name, mean(vals))}`;
    if (have.length > 1) line += ' (mean)';
    if (scores.length > 0) {
      const s = mean(scores);
      line += ` — score ${trimZero(s.toFixed(2))} ${s >= 0.99 ? '✓' : '❌'}`;
      if (scored.length > 1 && s < 0.99) {
        let w = 0;
        for (let i = 1; i < scores.length; i++) if ((scores[i] as number) < (scores[w] as number)) w = i;
        const wc = scored[w] as RunCtx;
        line += ` (worst ${objectiveValue(name, wc.run.objectives[name] as number)} in ${wc.label})`;
      }
    }
    lines.push(line);
  }
  // SLO attainment per class, pooled over runs.
  const cls = new Map<string, { n: number; good: number }>();
  for (const c of ctxs) {
    for (const v of c.views) {
      if (!v.gated) continue;
      let a = cls.get(v.cls);
      if (a === undefined) cls.set(v.cls, (a = { n: 0, good: 0 }));
      a.n++;
      if (!v.miss) a.good++;
    }
  }
  if (cls.size > 0) {
    const parts = [...cls.keys()].sort(cmpStr).map((k) => {
      const a = cls.get(k) as { n: number; good: number };
      return `${pct(a.good / a.n)} ${k}`;
    });
    lines.push(`- SLO attainment by class: ${parts.join(', ')}`);
  }
  // Jain's index over the tenants' served tokens, per run.
  const jains: { c: RunCtx; j: number; n: number }[] = [];
  for (const c of ctxs) {
    const tok = new Map<string, number>();
    for (const v of c.views) {
      if (v.tenant === '') continue;
      if (!tok.has(v.tenant)) tok.set(v.tenant, 0);
      if (v.completed) tok.set(v.tenant, (tok.get(v.tenant) as number) + v.outputLen);
    }
    if (tok.size < 2) continue;
    let sx = 0;
    let sx2 = 0;
    for (const k of [...tok.keys()].sort(cmpStr)) {
      const x = tok.get(k) as number;
      sx += x;
      sx2 += x * x;
    }
    jains.push({ c, j: sx2 === 0 ? 1 : (sx * sx) / (tok.size * sx2), n: tok.size });
  }
  if (jains.length > 0) {
    const m = mean(jains.map((x) => x.j));
    let line = `- Fairness (Jain over tenants' served tokens): ${m.toFixed(2)}`;
    if (jains.length === 1) line += ` across ${(jains[0] as { n: number }).n} tenants`;
    else {
      const w = [...jains].sort((a, b) => a.j - b.j || a.c.index - b.c.index)[0] as { c: RunCtx; j: number };
      line += ` (mean; min ${w.j.toFixed(2)} in ${w.c.label})`;
    }
    lines.push(line);
  }
  // Volume and latency, pooled.
  let arrived = 0;
  let done = 0;
  let lost = 0;
  const tt: number[] = [];
  for (const c of ctxs) {
    for (const v of c.views) {
      arrived++;
      if (v.completed) done++;
      if (v.lost) lost++;
      if (v.ttftMs !== null) tt.push(v.ttftMs);
    }
  }
  const s = sortedNums(tt);
  let vol = `- Requests: ${arrived} arrived, ${done} completed`;
  if (lost > 0) vol += `, ${lost} rejected/shed`;
  if (s.length > 0) vol += `; TTFT p50 ${ms(median(s))}, p99 ${ms(percentileFromSorted(s, 99))}`;
  if (!names.has('throughput_tps')) {
    let tokens = 0;
    let spanUs = 0;
    for (const c of ctxs) {
      for (const v of c.views) if (v.completed) tokens += v.outputLen;
      spanUs += c.run.cs.clock;
    }
    if (spanUs > 0) vol += `; ${num(tokens / (spanUs / 1e6))} output tok/s`;
  }
  lines.push(vol);
  return lines;
}

// ---------------------------------------------------------------------------------------------------------
// Counterfactual analysis

function candidateLoad(x: CandidateScore): number {
  return x.queueDepth + x.batchSize + x.inFlightRequests;
}

function counterfactualLines(ctxs: readonly RunCtx[]): string[] {
  const lines: string[] = [];
  let n = 0;
  let positive = 0;
  let sum = 0;
  let max = 0;
  let maxAt: { c: RunCtx; r: RoutingRecord } | null = null;
  let scored = 0;
  for (const c of ctxs) {
    for (const r of c.run.cs.routingRecords) {
      n++;
      if (r.scores !== null) scored++;
      sum += r.regret;
      if (r.regret > 0) positive++;
      if (r.regret > max) {
        max = r.regret;
        maxAt = { c, r };
      }
    }
  }
  if (n > 0 && positive > 0) {
    const unit = scored === n ? 'policy score units' : scored === 0 ? 'load units: the policy gives no scores, so score = −load' : 'score units; −load where the policy gives no scores';
    let line = `- Routing regret: mean ${num(sum / n)}, max ${num(max)} (${unit}); ${positive} of ${n} decisions (${pct(positive / n)}) had a better-scored alternative`;
    if (maxAt !== null) line += `; max at t=${sec(maxAt.r.clock)}s ${maxAt.r.requestId}${ctxs.length > 1 ? ` in ${maxAt.c.label}` : ''}`;
    lines.push(line);
  }
  // Prefix: an alternative held the prefix, the chosen instance held none.
  let cold = 0;
  let shorter = 0;
  let blocks = 0;
  let tokens = 0;
  const ttCold: number[] = [];
  const ttHolder: number[] = [];
  let audits = 0;
  for (const c of ctxs) {
    for (const a of c.run.recorder.prefixAudits) {
      audits++;
      const t = c.byId.get(a.requestId)?.ttftMs ?? null;
      if (a.bestBlocks > a.chosenBlocks) {
        shorter++;
        blocks += a.bestBlocks - a.chosenBlocks;
        tokens += (a.bestBlocks - a.chosenBlocks) * c.blockSize;
        if (a.chosenBlocks === 0) {
          cold++;
          if (t !== null) ttCold.push(t);
        }
      } else if (a.chosenBlocks > 0 && t !== null) ttHolder.push(t);
    }
  }
  if (cold > 0) {
    let line = `- ${cold} decisions where another instance held the prompt's prefix and the chosen instance held none (cache miss)`;
    if (ttCold.length > 0 && ttHolder.length > 0) line += `: median TTFT ${ms(median(sortedNums(ttCold)))} vs ${ms(median(sortedNums(ttHolder)))} when routed to the longest cached prefix`;
    lines.push(line);
  }
  if (shorter > 0) {
    lines.push(`- Routing each of the ${shorter} of ${audits} requests to the longest cached prefix would have reused ${blocks} more blocks (≈${tokens} prompt tokens of prefill)`);
  }
  // Load: chosen instance much busier than the least-loaded candidate.
  let loadMiss = 0;
  let loadN = 0;
  const ttLoad: number[] = [];
  const ttOk: number[] = [];
  for (const c of ctxs) {
    for (const r of c.run.cs.routingRecords) {
      if (r.candidates === null || r.candidates.length === 0) continue;
      const a = c.auditById.get(r.requestId);
      const chosenCand = r.candidates.find((x) => x.instanceId === r.chosenInstance);
      const chosenLoad = chosenCand !== undefined ? candidateLoad(chosenCand) : a?.chosenLoad;
      if (chosenLoad === undefined) continue;
      loadN++;
      const minLoad = Math.min(...r.candidates.map(candidateLoad));
      const t = c.byId.get(r.requestId)?.ttftMs ?? null;
      if (chosenLoad >= minLoad + 4) {
        loadMiss++;
        if (t !== null) ttLoad.push(t);
      } else if (t !== null) ttOk.push(t);
    }
  }
  if (loadMiss > 0) {
    let line = `- ${loadMiss} of ${loadN} decisions picked an instance with >= 4 more requests (queue + batch + in flight) than the least-loaded candidate`;
    if (ttLoad.length > 0 && ttOk.length > 0) line += `: median TTFT ${ms(median(sortedNums(ttLoad)))} vs ${ms(median(sortedNums(ttOk)))} otherwise`;
    lines.push(line);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------------
// Worst decisions

interface Decision {
  readonly c: RunCtx;
  readonly id: string;
  readonly timeUs: number;
  readonly chosen: string;
  readonly ttftMs: number | null;
  readonly badness: number;
  readonly audit: PrefixAuditRecord | null;
  readonly rec: RoutingRecord | null;
  /** The better alternative's id and why. */
  readonly alt: string;
  readonly altLoadGap: number;
  readonly prefixGap: number;
}

function candOf(rec: RoutingRecord | null, id: string): CandidateScore | null {
  return rec?.candidates?.find((x) => x.instanceId === id) ?? null;
}

function instState(rec: RoutingRecord | null, id: string, load: number | null): string {
  const cand = candOf(rec, id);
  if (cand !== null) return `queue ${cand.queueDepth}, batch ${cand.batchSize}, in flight ${cand.inFlightRequests}, KV ${pct(cand.kvUtilization)}`;
  return load === null ? 'state not among the top-k candidates' : `load ${load} (queue + batch + in flight)`;
}

function findDecisions(ctxs: readonly RunCtx[]): Decision[] {
  const out: Decision[] = [];
  for (const c of ctxs) {
    const med = c.medianTtftMs;
    const seen = new Set<string>();
    for (const a of c.run.recorder.prefixAudits) {
      if (a.bestBlocks <= a.chosenBlocks) continue;
      const v = c.byId.get(a.requestId);
      if (v === undefined) continue;
      const t = v.ttftMs;
      const badness = t === null ? Infinity : med > 0 ? t / med : 0;
      if (t !== null && badness < 1.5) continue;
      seen.add(a.requestId);
      out.push({ c, id: a.requestId, timeUs: a.timeUs, chosen: a.chosen, ttftMs: t, badness, audit: a, rec: c.routingById.get(a.requestId) ?? null, alt: a.best, altLoadGap: a.chosenLoad - a.bestLoad, prefixGap: a.bestBlocks - a.chosenBlocks });
    }
    for (const r of c.run.cs.routingRecords) {
      if (seen.has(r.requestId) || r.candidates === null || r.candidates.length === 0) continue;
      const a = c.auditById.get(r.requestId) ?? null;
      const chosenCand = candOf(r, r.chosenInstance);
      const chosenLoad = chosenCand !== null ? candidateLoad(chosenCand) : a?.chosenLoad;
      if (chosenLoad === undefined) continue;
      const best = [...r.candidates].sort((x, y) => candidateLoad(x) - candidateLoad(y) || cmpStr(x.instanceId, y.instanceId))[0] as CandidateScore;
      const gap = chosenLoad - candidateLoad(best);
      if (gap < 4) continue;
      const v = c.byId.get(r.requestId);
      if (v === undefined) continue;
      const t = v.ttftMs;
      const badness = t === null ? Infinity : med > 0 ? t / med : 0;
      if (t !== null && badness < 1.5) continue;
      out.push({ c, id: r.requestId, timeUs: r.clock, chosen: r.chosenInstance, ttftMs: t, badness, audit: a, rec: r, alt: best.instanceId, altLoadGap: gap, prefixGap: 0 });
    }
  }
  out.sort((x, y) => y.badness - x.badness || y.prefixGap - x.prefixGap || x.c.index - y.c.index || x.timeUs - y.timeUs || cmpStr(x.id, y.id));
  return out;
}

function decisionLines(d: Decision, i: number, multi: boolean): string[] {
  const v = d.c.byId.get(d.id) as ReqView;
  const a = d.audit;
  const head = `${i + 1}. t=${secFine(d.timeUs)}s${multi ? ` | ${d.c.label}` : ''} | routed ${d.id} (prompt ${v.inputLen} tok${a !== null ? `, ${a.promptBlocks} blocks` : ''}${v.tenant !== '' ? `, tenant ${v.tenant}` : ''}${v.cls !== 'default' ? `, ${v.cls}` : ''}) → ${d.chosen}`;
  const lines = [head];
  if (d.prefixGap > 0 && a !== null) {
    lines.push(`   Context: ${d.chosen} held ${a.chosenBlocks}/${a.promptBlocks} prefix blocks, ${instState(d.rec, d.chosen, a.chosenLoad)}; ${a.best} held ${a.bestBlocks} blocks, ${instState(d.rec, a.best, a.bestLoad)}`);
  } else {
    const cand = candOf(d.rec, d.alt);
    lines.push(`   Context: ${d.chosen} ${instState(d.rec, d.chosen, a?.chosenLoad ?? null)}; least loaded ${d.alt} ${cand !== null ? instState(d.rec, d.alt, null) : ''}`.trimEnd());
  }
  const res = d.ttftMs === null ? 'no first token by the end of the run' : `TTFT ${ms(d.ttftMs)} = ${ratio(d.ttftMs, d.c.medianTtftMs)} the run median (${ms(d.c.medianTtftMs)})`;
  const outcome = v.lost ? ', then lost' : v.gated ? (v.miss ? ', missed SLO' : ', met SLO') : '';
  lines.push(`   Result: ${d.prefixGap > 0 && a !== null && a.chosenBlocks === 0 ? 'cache miss, ' : ''}${res}${outcome}`);
  if (d.prefixGap > 0) {
    const loadNote = d.altLoadGap > 0 ? `, and ${plural(d.altLoadGap, 'fewer request')}` : d.altLoadGap < 0 ? `, at ${plural(-d.altLoadGap, 'more request')}` : ', at equal load';
    lines.push(`   Better: ${d.alt} — ${d.prefixGap} more cached blocks (≈${d.prefixGap * d.c.blockSize} prompt tokens not recomputed)${loadNote}`);
  } else {
    lines.push(`   Better: ${d.alt} — ${plural(d.altLoadGap, 'fewer request')} ahead`);
  }
  return lines;
}

function worstDecisionLines(ctxs: readonly RunCtx[], k: number): string[] {
  if (k <= 0) return [];
  const ds = findDecisions(ctxs).slice(0, k);
  if (ds.length === 0) return [];
  const lines = [`## Worst Decisions (${ds.length} example${ds.length === 1 ? '' : 's'})`];
  ds.forEach((d, i) => lines.push(...decisionLines(d, i, ctxs.length > 1)));
  return lines;
}

// ---------------------------------------------------------------------------------------------------------
// Patterns

interface Tally {
  inN: number;
  inBad: number;
  outN: number;
  outBad: number;
}

function tally(): Tally {
  return { inN: 0, inBad: 0, outN: 0, outBad: 0 };
}

function add(t: Tally, cond: boolean, bad: boolean): void {
  if (cond) {
    t.inN++;
    if (bad) t.inBad++;
  } else {
    t.outN++;
    if (bad) t.outBad++;
  }
}

interface Pattern {
  readonly text: string;
  readonly lift: number;
  readonly diff: number;
  readonly key: string;
}

function pattern(key: string, t: Tally, describe: (inRate: number, outRate: number) => string): Pattern | null {
  if (t.inN < 5 || t.outN < 1) return null;
  const inRate = t.inBad / t.inN;
  const outRate = t.outBad / t.outN;
  if (inRate < 0.2 || inRate < 2 * outRate) return null;
  return { key, text: describe(inRate, outRate), lift: outRate > 0 ? inRate / outRate : Infinity, diff: inRate - outRate };
}

function patternLines(ctxs: readonly RunCtx[]): string[] {
  const pats: Pattern[] = [];
  // Routing state: cluster mean queue depth (top-k candidates) at routing → slow.
  const QS = [2, 4, 8, 16, 32, 64];
  const qt = QS.map(() => tally());
  const prefix = tally();
  for (const c of ctxs) {
    for (const r of c.run.cs.routingRecords) {
      const v = c.byId.get(r.requestId);
      if (v === undefined || !v.routed) continue;
      if (r.candidates !== null && r.candidates.length > 0) {
        const q = mean(r.candidates.map((x) => x.queueDepth));
        QS.forEach((th, i) => add(qt[i] as Tally, q >= th, v.slow));
      }
    }
    for (const a of c.run.recorder.prefixAudits) {
      const v = c.byId.get(a.requestId);
      if (v === undefined) continue;
      add(prefix, a.bestBlocks > a.chosenBlocks, v.slow);
    }
  }
  let bestQ: Pattern | null = null;
  QS.forEach((th, i) => {
    const p = pattern(`queue${th}`, qt[i] as Tally, (a, b) => `TTFT > 2x median in ${pct(a)} of requests routed when the cluster mean queue depth was >= ${th} (n=${(qt[i] as Tally).inN}) vs ${pct(b)} otherwise`);
    if (p !== null && (bestQ === null || p.diff > bestQ.diff)) bestQ = p;
  });
  if (bestQ !== null) pats.push(bestQ);
  const pp = pattern('prefix', prefix, (a, b) => `TTFT > 2x median in ${pct(a)} of requests routed away from the longest cached prefix (n=${prefix.inN}) vs ${pct(b)} of the others`);
  if (pp !== null) pats.push(pp);
  // Request attributes → bad (SLO miss when targets exist).
  const long = tally();
  const tenants = new Map<string, Tally>();
  const insts = new Map<string, Tally>();
  const anyTargets = ctxs.some((c) => c.hasTargets);
  for (const c of ctxs) {
    const lens = sortedNums(c.views.map((v) => v.inputLen));
    const p90 = percentileFromSorted(lens, 90);
    for (const v of c.views) {
      if (!v.judged) continue;
      add(long, v.inputLen > p90, v.bad);
    }
    const ts = new Set(c.views.map((v) => v.tenant));
    if (ts.size > 1) {
      for (const t of ts) {
        if (t === '') continue;
        let x = tenants.get(t);
        if (x === undefined) tenants.set(t, (x = tally()));
        for (const v of c.views) if (v.judged) add(x, v.tenant === t, v.bad);
      }
    }
    if (c.run.cs.instances.length > 1) {
      for (const inst of c.run.cs.instances) {
        let x = insts.get(inst.id);
        if (x === undefined) insts.set(inst.id, (x = tally()));
        for (const v of c.views) if (v.routed) add(x, v.instance === inst.id, v.slow);
      }
    }
  }
  const missWord = anyTargets ? 'miss their SLO' : 'are slow (TTFT > 2x median)';
  const lp = pattern('long', long, (a, b) => `long prompts (> p90 length) ${missWord} ${ratio(a, b)} as often (${pct(a)} vs ${pct(b)}, n=${long.inN})`);
  if (lp !== null) pats.push(lp);
  for (const t of [...tenants.keys()].sort(cmpStr)) {
    const x = tenants.get(t) as Tally;
    const p = pattern(`tenant:${t}`, x, (a, b) => `tenant "${t}" requests ${missWord} ${ratio(a, b)} as often as other tenants' (${pct(a)} vs ${pct(b)}, n=${x.inN})`);
    if (p !== null) pats.push(p);
  }
  for (const id of [...insts.keys()].sort(cmpStr)) {
    const x = insts.get(id) as Tally;
    const p = pattern(`inst:${id}`, x, (a, b) => `requests on ${id} are slow (TTFT > 2x median) ${ratio(a, b)} as often as elsewhere (${pct(a)} vs ${pct(b)}, n=${x.inN})`);
    if (p !== null) pats.push(p);
  }
  pats.sort((a, b) => b.diff - a.diff || cmpStr(a.key, b.key));
  return pats.slice(0, 5).map((p) => `- ${p.text}`);
}

// ---------------------------------------------------------------------------------------------------------

/**
 * The reflection summary of `runs` (one or more scenarios × seeds): see the module comment for the sections,
 * detectors and thresholds. Pure and deterministic; each text is at most `maxChars` characters.
 */
export function summarizeForReflection(runs: readonly RunForSummary[], opts: SummaryOptions = {}): ReflectionSummary {
  const maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  if (!(maxChars >= 0)) throw new RangeError(`maxChars must be >= 0, got ${maxChars}`);
  const strategies = new Set<SummaryStrategy>(opts.strategies ?? ALL_STRATEGIES);
  const examples = Math.max(0, Math.floor(opts.examples ?? 3));
  const labels = runLabels(runs);
  const ctxs = runs.map((r, i) => buildCtx(r, i, labels[i] as string));

  const issues = collectIssues(ctxs);
  const worst = worstDecisionLines(ctxs, examples);

  const scen = new Map<string, number>();
  for (const r of runs) scen.set(r.scenario, (scen.get(r.scenario) ?? 0) + 1);
  const scenNames = [...scen.keys()].sort(cmpStr);
  const shown = scenNames.slice(0, 6).map((k) => `${k} ×${scen.get(k) as number}`);
  if (scenNames.length > 6) shown.push(`… ${scenNames.length - 6} more scenarios`);
  const scope = runs.length === 0 ? ' (no runs)' : runs.length === 1 ? ` — ${labels[0] as string}` : ` — ${runs.length} runs: ${shown.join(', ')}`;
  const sections: string[][] = [[`## Outcome${scope}`, ...outcomeLines(ctxs)]];

  if (strategies.has('issue_focused')) {
    const sec: string[] = [`## Key Issues (${issues.length} detected)`];
    if (issues.length === 0) sec.push('- None found: no routing prefix misses, tenant bursts, rejections, preemption storms, KV thrashing, priority inversions, ShadowKV divergence, SLO shortfalls or load imbalance above thresholds.');
    issues.forEach((iss, i) => {
      const [first, ...rest] = iss.lines;
      sec.push(`${i + 1}. ${first as string}`, ...rest);
    });
    sections.push(sec);
  }
  if (strategies.has('counterfactual')) {
    const cf = counterfactualLines(ctxs);
    if (cf.length > 0) sections.push(['## Counterfactual Analysis', ...cf]);
  }
  if (strategies.has('decision_audit') && worst.length > 0) sections.push(worst);
  if (strategies.has('pattern_mining')) {
    const pl = patternLines(ctxs);
    if (pl.length > 0) sections.push(['## Patterns', ...pl]);
  }
  const focus = strategies.has('issue_focused') && issues.length > 0 ? ['## Suggested Focus', ...issues.map((i) => `- ${i.focus}`)] : null;
  return {
    summary: assemble(sections, focus, maxChars),
    worstDecisions: capText(worst, maxChars),
    issues: issues.map((i) => ({ kind: i.kind, count: i.count, description: i.description })),
  };
}
