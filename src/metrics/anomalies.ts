/**
 * Anomaly detectors (policy-search-design §10 "Anomaly Types"): pure functions run once after a simulation
 * over the event records the cluster collects. Each detector turns records into {@link AnomalyEvent}s
 * `{type, timestampUs, description, requests, severity}`; `counts` is the number of EVENTS of each type for
 * every type (request counts live in the descriptions), and is never capped.
 *
 * Conventions shared by every rule (W = `windowUs`, default 1_000_000 µs):
 * - "Aligned window" = `[k·W, (k+1)·W)` containing the time (floor of time / W).
 * - "Within W" for a sliding window = a run of records whose first and last times differ by LESS than W
 *   (a half-open span of length W), so 10 preemptions 100 ms apart (span 900 ms) are a storm and 10
 *   preemptions 111.2 ms apart (span 1.0008 s) are not.
 * - Inputs are re-sorted (by time, then id / instance / other fields) before use, so the report does not
 *   depend on input order. Groups (instances, classes, deployments) are visited in sorted key order.
 * - `requests` lists at most `maxRequestsPerEvent` ids (default 10); the description carries the full count.
 * - At most `maxEventsPerType` events (default 100) are kept per type: the earliest, by (timestampUs,
 *   description). The report's events are sorted by timestampUs, then by the order of {@link ANOMALY_TYPES},
 *   then by description (UTF-16 code-unit order).
 *
 * The seven rules:
 *
 * 1. `priority_inversion` — only when `priorityScheduling` is true (the instance scheduler promises priority
 *    order). Per instance, request `a` (the victim, scheduled or never scheduled) is inverted by request `b`
 *    when `b` was scheduled (`b.scheduledUs` not null), `a` is more urgent (`a.priority < b.priority`; lower
 *    = more urgent, vLLM), `a` was already waiting (`a.arrivalUs <= b.scheduledUs`), and `b` went first
 *    (`b.scheduledUs < a.scheduledUs`, or `a` was never scheduled). One event per (instance, victim) with at
 *    least one such `b`: timestamp = the first such `b`'s scheduled time, requests = `[a, b…]` (the `b`s in
 *    scheduled order, then id), severity = the number of less urgent requests that jumped ahead of `a`.
 *    O(n log n) per instance: a max-priority segment tree over the scheduled order finds the jumpers, an
 *    offline Fenwick sweep (victims by decreasing priority) counts them.
 * 2. `slo_violation` — a request with any measured outcome (TTFT, mean ITL or E2E not null) is attributed to
 *    its class (`""` → `"default"`, targets looked up under that key, falling back to the raw class name) and
 *    to the aligned window of its outcome time: `arrivalUs + e2eUs` if finished, else `arrivalUs + ttftUs`,
 *    else `arrivalUs`. It violates when TTFT > ttftMs·1000, mean ITL > itlMs·1000 or E2E > e2eMs·1000 (a
 *    target of 0 or a missing class does not gate that dimension), or TTFT > `sloTargetUs` when that is > 0.
 *    Comparisons are strict: a latency exactly at its target meets it. One event per (class, window) with at
 *    least one violator: timestamp = window start, description = violators / requests with an outcome in
 *    that window and the worst ratio (dimension and request), severity = the worst measured/target ratio
 *    among the violated dimensions, requests = the violators by outcome time, then id.
 * 3. `cache_thrashing` — per instance, samples sorted by time; each consecutive pair contributes
 *    `max(0, cur - prev)` offloads and reloads to the aligned window of the later sample (the first sample is
 *    a baseline only: counts before it have unknown times). A window is thrashing when reloads >=
 *    `thrashingReloads` (default 32) AND reloads >= `thrashingReloadShare` (default 0.5) × offloads. One event
 *    per such window: timestamp = window start, severity = reloads / thrashingReloads, no requests.
 *    3b. With a storage tier, also per instance and aligned window: at least `thrashingReloads` reload
 *    cycles (a block reloaded into the GPU again within the cycle window of its previous reload; see
 *    tier-thrashing.ts) is one more event of this type.
 * 4. `shadow_divergence` — a routing diverges when `expectedHit !== actualHit`. Per (chosen instance,
 *    aligned window of the routing time) with at least one divergent routing, one event: timestamp = window
 *    start, severity = divergent / all routings to that instance in that window, requests = the divergent
 *    requests by time, then id; the description splits predicted-hit-but-missed and predicted-miss-but-hit.
 * 5. `scale_oscillation` — per deployment, scale events sorted by time; events with `to === from` are
 *    ignored. A flip is an event whose direction (sign of `to - from`) is opposite to the previous non-zero
 *    event's. Whenever `scaleOscillationFlips` (default 2) flips fall within 4 × W (first and last flip less
 *    than 4·W apart), that is an oscillation; overlapping oscillations (sharing a flip) merge into one
 *    episode. One event per episode: timestamp = its first flip, severity = flips in the episode /
 *    scaleOscillationFlips, description = the replica path from the event before the first flip, no requests.
 *    With the defaults, up-down-up (or down-up-down) whose two reversals are less than 4 s apart is one.
 * 6. `pd_backpressure` — per instance, samples sorted by time: a sample with `pending >=
 *    pdBackpressureQueue` (default 16) opens an episode, which lasts until the first sample with pending
 *    below it (or the end of the samples). One event per episode: timestamp = the opening sample, severity =
 *    peak pending / pdBackpressureQueue, requests = the distinct ids of the episode's samples in order of
 *    first appearance.
 * 7. `preemption_storm` — per instance, preemptions sorted by time (then request id): whenever at least
 *    `preemptionStormCount` (default 10) fall within W, that run is a burst; bursts sharing a preemption merge
 *    into one episode. One event per episode: timestamp = its first preemption, severity = preemptions in the
 *    episode / preemptionStormCount, requests = the distinct preempted ids in order of first preemption.
 *
 * Pure: no clock, no randomness, no output. Throws RangeError on invalid thresholds.
 */
import { sloClassKey } from './breakdowns.js';
import { detectTierThrashing, type TierCycleSample } from './tier-thrashing.js';

export type AnomalyType =
  | 'priority_inversion'
  | 'slo_violation'
  | 'cache_thrashing'
  | 'shadow_divergence'
  | 'scale_oscillation'
  | 'pd_backpressure'
  | 'preemption_storm';

export const ANOMALY_TYPES: readonly AnomalyType[] = Object.freeze([
  'priority_inversion',
  'slo_violation',
  'cache_thrashing',
  'shadow_divergence',
  'scale_oscillation',
  'pd_backpressure',
  'preemption_storm',
] as const);

export interface AnomalyEvent {
  readonly type: AnomalyType;
  readonly timestampUs: number;
  readonly description: string;
  readonly requests: readonly string[];
  readonly severity: number;
}

export interface AnomalyThresholds {
  /** Window (µs) for SLO/shadow aggregation, storms and thrashing; 4× it for scale oscillation. */
  windowUs: number;
  /** Preemptions on one instance within windowUs that make a storm. */
  preemptionStormCount: number;
  /** Reloads on one instance within an aligned window that (with the share) make thrashing. */
  thrashingReloads: number;
  /** ... and reloads >= this share of the offloads in that window. */
  thrashingReloadShare: number;
  /** Direction changes of one deployment within 4 × windowUs that make an oscillation. */
  scaleOscillationFlips: number;
  /** Pending prefill->decode KV transfers on one instance that open a backpressure episode. */
  pdBackpressureQueue: number;
  /** Request ids listed per event (the full count is in the description). */
  maxRequestsPerEvent: number;
  /** Events kept per type, the earliest (counts still count all). */
  maxEventsPerType: number;
}

export const DEFAULT_ANOMALY_THRESHOLDS: AnomalyThresholds = Object.freeze({
  windowUs: 1_000_000,
  preemptionStormCount: 10,
  thrashingReloads: 32,
  thrashingReloadShare: 0.5,
  scaleOscillationFlips: 2,
  pdBackpressureQueue: 16,
  maxRequestsPerEvent: 10,
  maxEventsPerType: 100,
});

/** The span, in windows, within which scale flips count together. */
export const SCALE_OSCILLATION_WINDOWS = 4;

export interface AnomalyRequestRecord {
  id: string;
  instance: string;
  sloClass: string;
  arrivalUs: number;
  /** First scheduled into a batch; null = never. */
  scheduledUs: number | null;
  ttftUs: number | null;
  itlMeanUs: number | null;
  e2eUs: number | null;
  /** vLLM convention: lower = more urgent. */
  priority: number;
  /** The request's own TTFT target, 0 = none. */
  sloTargetUs: number;
}

export interface AnomalyInputs {
  /** Per-request records, any order (sort as you need, deterministically: by time then id). */
  readonly requests: readonly AnomalyRequestRecord[];
  /** Per-class goodput targets in ms (0 = dimension not gated); null = none. */
  readonly sloTargets: ReadonlyMap<string, { ttftMs: number; itlMs: number; e2eMs: number }> | null;
  /** Whether the instance scheduler promises priority order (priority-aware scheduling in effect). Inversions are only reported when true. */
  readonly priorityScheduling: boolean;
  readonly preemptions: readonly { timeUs: number; instance: string; requestId: string }[];
  readonly routings: readonly { timeUs: number; requestId: string; instance: string; expectedHit: boolean; actualHit: boolean }[];
  /** Cumulative KV transfer counters sampled over time per instance (non-decreasing). */
  readonly kvSamples: readonly { timeUs: number; instance: string; offloads: number; reloads: number }[];
  /** Reload cycles across the KV tiers (only with a storage tier; rule 3b, tier-thrashing.ts). */
  readonly tierCycles?: readonly TierCycleSample[];
  readonly scaleEvents: readonly { timeUs: number; deployment: string; from: number; to: number }[];
  readonly pdQueueSamples: readonly { timeUs: number; instance: string; pending: number; requestIds: readonly string[] }[];
}

export interface AnomalyReport {
  readonly counts: Readonly<Record<AnomalyType, number>>;
  /** Sorted by timestampUs, then type order, then description. */
  readonly events: readonly AnomalyEvent[];
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpNum(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Groups by key; the keys come back sorted. */
function groupBy<T>(items: readonly T[], key: (t: T) => string): [string, T[]][] {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const a = m.get(k);
    if (a) a.push(it);
    else m.set(k, [it]);
  }
  return [...m.entries()].sort((x, y) => cmpStr(x[0], y[0]));
}

function windowStart(t: number, w: number): number {
  return Math.floor(t / w) * w;
}

/** First index i with a[i] >= x (a sorted ascending). */
function lowerBound(a: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2);
}

function distinctCapped(ids: Iterable<string>, cap: number): { list: string[]; total: number } {
  const seen = new Set<string>();
  const list: string[] = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    if (list.length < cap) list.push(id);
  }
  return { list, total: seen.size };
}

/**
 * Sliding-window bursts over ascending times: every run of >= minCount consecutive points whose first and
 * last times differ by less than span is a burst; bursts sharing a point merge. Returns inclusive index
 * ranges and the largest count seen in one window of each episode.
 */
function bursts(times: readonly number[], minCount: number, span: number): { start: number; end: number; peak: number }[] {
  const out: { start: number; end: number; peak: number }[] = [];
  let j = 0;
  let cur: { start: number; end: number; peak: number } | null = null;
  for (let i = 0; i < times.length; i++) {
    if (j < i) j = i;
    while (j + 1 < times.length && (times[j + 1] as number) - (times[i] as number) < span) j++;
    const n = j - i + 1;
    if (n < minCount) continue;
    if (cur !== null && i <= cur.end) {
      cur.end = Math.max(cur.end, j);
      cur.peak = Math.max(cur.peak, n);
    } else {
      cur = { start: i, end: j, peak: n };
      out.push(cur);
    }
  }
  return out;
}

function resolveThresholds(partial: Partial<AnomalyThresholds> | undefined): AnomalyThresholds {
  const t: AnomalyThresholds = { ...DEFAULT_ANOMALY_THRESHOLDS };
  if (partial) {
    for (const k of Object.keys(t) as (keyof AnomalyThresholds)[]) {
      const v = partial[k];
      if (v !== undefined) t[k] = v;
    }
  }
  const check = (k: keyof AnomalyThresholds, ok: (v: number) => boolean, what: string): void => {
    if (!ok(t[k])) throw new RangeError(`anomaly threshold ${k} must be ${what}, got ${t[k]}`);
  };
  const posFinite = (v: number): boolean => Number.isFinite(v) && v > 0;
  const nonNegInt = (v: number): boolean => Number.isInteger(v) && v >= 0;
  check('windowUs', posFinite, 'a positive finite number');
  check('preemptionStormCount', posFinite, 'a positive finite number');
  check('thrashingReloads', posFinite, 'a positive finite number');
  check('thrashingReloadShare', (v) => Number.isFinite(v) && v >= 0, 'a non-negative finite number');
  check('scaleOscillationFlips', posFinite, 'a positive finite number');
  check('pdBackpressureQueue', posFinite, 'a positive finite number');
  check('maxRequestsPerEvent', nonNegInt, 'a non-negative integer');
  check('maxEventsPerType', nonNegInt, 'a non-negative integer');
  return t;
}

// ---------------------------------------------------------------------------------------------------------
// 1. Priority inversion

/** Max-priority segment tree (iterative layout, size = power of two) with "first index > p in [lo, hi)". */
class MaxTree {
  private readonly size: number;
  private readonly t: Float64Array;
  constructor(values: ArrayLike<number>) {
    let size = 1;
    while (size < values.length) size *= 2;
    this.size = size;
    this.t = new Float64Array(2 * size).fill(-Infinity);
    for (let i = 0; i < values.length; i++) this.t[size + i] = values[i] as number;
    for (let i = size - 1; i >= 1; i--) this.t[i] = Math.max(this.t[2 * i] as number, this.t[2 * i + 1] as number);
  }
  /** First index in [lo, hi) whose value > p, or -1. */
  firstAbove(lo: number, hi: number, p: number): number {
    return this.find(1, 0, this.size, lo, hi, p);
  }
  private find(node: number, nl: number, nr: number, lo: number, hi: number, p: number): number {
    if (nr <= lo || hi <= nl || (this.t[node] as number) <= p) return -1;
    if (nr - nl === 1) return nl;
    const mid = (nl + nr) >>> 1;
    const l = this.find(2 * node, nl, mid, lo, hi, p);
    return l >= 0 ? l : this.find(2 * node + 1, mid, nr, lo, hi, p);
  }
}

class Fenwick {
  private readonly t: Int32Array;
  constructor(n: number) {
    this.t = new Int32Array(n + 1);
  }
  add(i: number): void {
    for (let x = i + 1; x < this.t.length; x += x & -x) this.t[x] = (this.t[x] as number) + 1;
  }
  /** Sum of [0, i). */
  prefix(i: number): number {
    let s = 0;
    for (let x = i; x > 0; x -= x & -x) s += this.t[x] as number;
    return s;
  }
}

function detectPriorityInversions(reqs: readonly AnomalyRequestRecord[], th: AnomalyThresholds, out: AnomalyEvent[]): void {
  for (const [instance, all] of groupBy(reqs, (r) => r.instance)) {
    const sched = all.filter((r) => r.scheduledUs !== null).sort((a, b) => cmpNum(a.scheduledUs as number, b.scheduledUs as number) || cmpStr(a.id, b.id));
    const n = sched.length;
    if (n === 0) continue;
    const times = Float64Array.from(sched, (r) => r.scheduledUs as number);
    const prios = Float64Array.from(sched, (r) => r.priority);
    const tree = new MaxTree(prios);
    // Victims with a non-empty candidate range [lo, hi) of the scheduled order.
    const victims: { r: AnomalyRequestRecord; lo: number; hi: number }[] = [];
    for (const r of all) {
      const lo = lowerBound(times, r.arrivalUs);
      const hi = r.scheduledUs === null ? n : lowerBound(times, r.scheduledUs);
      if (lo < hi && tree.firstAbove(lo, hi, r.priority) >= 0) victims.push({ r, lo, hi });
    }
    if (victims.length === 0) continue;
    // Offline count: victims by decreasing priority; insert scheduled requests strictly less urgent first.
    const byPrio = Array.from({ length: n }, (_, i) => i).sort((a, b) => cmpNum(prios[b] as number, prios[a] as number) || a - b);
    victims.sort((a, b) => cmpNum(b.r.priority, a.r.priority) || cmpStr(a.r.id, b.r.id));
    const bit = new Fenwick(n);
    let k = 0;
    for (const v of victims) {
      while (k < n && (prios[byPrio[k] as number] as number) > v.r.priority) bit.add(byPrio[k++] as number);
      const jumped = bit.prefix(v.hi) - bit.prefix(v.lo);
      const first = tree.firstAbove(v.lo, v.hi, v.r.priority);
      const requests: string[] = [];
      if (th.maxRequestsPerEvent > 0) requests.push(v.r.id);
      for (let i = first; i >= 0 && requests.length < th.maxRequestsPerEvent; i = tree.firstAbove(i + 1, v.hi, v.r.priority)) {
        requests.push((sched[i] as AnomalyRequestRecord).id);
      }
      const a = v.r;
      const fate = a.scheduledUs === null ? 'was never scheduled' : `was scheduled at ${a.scheduledUs}`;
      out.push({
        type: 'priority_inversion',
        timestampUs: times[first] as number,
        description: `instance ${instance}: request ${a.id} (priority ${a.priority}, arrived ${a.arrivalUs}) ${fate}; ${jumped} less urgent request(s) were scheduled ahead of it`,
        requests,
        severity: jumped,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 2. SLO violation

function detectSloViolations(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  interface Outcome { r: AnomalyRequestRecord; t: number; ratio: number; dim: string }
  const W = th.windowUs;
  const outcomes: Outcome[] = [];
  for (const r of inputs.requests) {
    if (r.ttftUs === null && r.itlMeanUs === null && r.e2eUs === null) continue;
    const t = r.e2eUs !== null ? r.arrivalUs + r.e2eUs : r.ttftUs !== null ? r.arrivalUs + r.ttftUs : r.arrivalUs;
    const cls = sloClassKey(r.sloClass);
    const tg = inputs.sloTargets?.get(cls) ?? inputs.sloTargets?.get(r.sloClass);
    let ratio = 0;
    let dim = '';
    const gate = (measured: number | null, targetUs: number, name: string): void => {
      if (measured === null || !(targetUs > 0) || !(measured > targetUs)) return;
      const q = measured / targetUs;
      if (q > ratio) {
        ratio = q;
        dim = name;
      }
    };
    if (tg) {
      gate(r.ttftUs, tg.ttftMs * 1000, 'TTFT');
      gate(r.itlMeanUs, tg.itlMs * 1000, 'ITL');
      gate(r.e2eUs, tg.e2eMs * 1000, 'E2E');
    }
    gate(r.ttftUs, r.sloTargetUs, 'request TTFT target');
    outcomes.push({ r, t, ratio, dim });
  }
  const groups = groupBy(outcomes, (o) => `${sloClassKey(o.r.sloClass)}\u0000${windowStart(o.t, W)}`);
  for (const [, g] of groups) {
    const bad = g.filter((o) => o.ratio > 0).sort((a, b) => cmpNum(a.t, b.t) || cmpStr(a.r.id, b.r.id));
    if (bad.length === 0) continue;
    let worst = bad[0] as Outcome;
    for (const o of bad) if (o.ratio > worst.ratio || (o.ratio === worst.ratio && cmpStr(o.r.id, worst.r.id) < 0)) worst = o;
    const ws = windowStart(worst.t, W);
    out.push({
      type: 'slo_violation',
      timestampUs: ws,
      description: `class ${sloClassKey(worst.r.sloClass)}: ${bad.length}/${g.length} requests with an outcome in [${ws}, ${ws + W}) missed their SLO; worst ${worst.dim} ${fmt(worst.ratio)}x target (request ${worst.r.id})`,
      requests: bad.slice(0, th.maxRequestsPerEvent).map((o) => o.r.id),
      severity: worst.ratio,
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. Cache thrashing

function detectCacheThrashing(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const W = th.windowUs;
  for (const [instance, samples] of groupBy(inputs.kvSamples, (s) => s.instance)) {
    samples.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpNum(a.offloads, b.offloads) || cmpNum(a.reloads, b.reloads));
    const windows: { start: number; offloads: number; reloads: number }[] = [];
    for (let i = 1; i < samples.length; i++) {
      const prev = samples[i - 1]!;
      const cur = samples[i]!;
      const start = windowStart(cur.timeUs, W);
      let w = windows[windows.length - 1];
      if (w?.start !== start) {
        w = { start, offloads: 0, reloads: 0 };
        windows.push(w);
      }
      w.offloads += Math.max(0, cur.offloads - prev.offloads);
      w.reloads += Math.max(0, cur.reloads - prev.reloads);
    }
    for (const w of windows) {
      if (w.reloads < th.thrashingReloads || w.reloads < th.thrashingReloadShare * w.offloads) continue;
      out.push({
        type: 'cache_thrashing',
        timestampUs: w.start,
        description: `instance ${instance}: ${w.reloads} CPU->GPU reloads and ${w.offloads} GPU->CPU offloads in [${w.start}, ${w.start + W})`,
        requests: [],
        severity: w.reloads / th.thrashingReloads,
      });
    }
  }
  for (const e of detectTierThrashing(inputs.tierCycles ?? [], W, th.thrashingReloads)) out.push({ type: 'cache_thrashing', requests: [], ...e });
}

// ---------------------------------------------------------------------------------------------------------
// 4. Shadow divergence

function detectShadowDivergence(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const W = th.windowUs;
  for (const [instance, rs] of groupBy(inputs.routings, (r) => r.instance)) {
    rs.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpStr(a.requestId, b.requestId) || cmpNum(Number(a.expectedHit), Number(b.expectedHit)) || cmpNum(Number(a.actualHit), Number(b.actualHit)));
    let i = 0;
    while (i < rs.length) {
      const start = windowStart(rs[i]!.timeUs, W);
      let j = i;
      let falseHit = 0;
      let falseMiss = 0;
      const ids: string[] = [];
      for (; j < rs.length && windowStart(rs[j]!.timeUs, W) === start; j++) {
        const r = rs[j]!;
        if (r.expectedHit === r.actualHit) continue;
        if (r.expectedHit) falseHit++;
        else falseMiss++;
        ids.push(r.requestId);
      }
      const total = j - i;
      i = j;
      const d = falseHit + falseMiss;
      if (d === 0) continue;
      out.push({
        type: 'shadow_divergence',
        timestampUs: start,
        description: `instance ${instance}: ${d}/${total} routings in [${start}, ${start + W}) diverged from the ShadowKV prediction (${falseHit} predicted hit but missed, ${falseMiss} predicted miss but hit)`,
        requests: ids.slice(0, th.maxRequestsPerEvent),
        severity: d / total,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Scale oscillation

function detectScaleOscillation(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const span = SCALE_OSCILLATION_WINDOWS * th.windowUs;
  for (const [deployment, evs] of groupBy(inputs.scaleEvents, (e) => e.deployment)) {
    evs.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpNum(a.from, b.from) || cmpNum(a.to, b.to));
    const moves = evs.filter((e) => e.to !== e.from);
    // flips[k] = index into moves of the k-th reversing move.
    const flips: number[] = [];
    for (let i = 1; i < moves.length; i++) {
      if (Math.sign(moves[i]!.to - moves[i]!.from) !== Math.sign(moves[i - 1]!.to - moves[i - 1]!.from)) flips.push(i);
    }
    const flipTimes = flips.map((i) => moves[i]!.timeUs);
    for (const b of bursts(flipTimes, th.scaleOscillationFlips, span)) {
      const first = flips[b.start]!;
      const last = flips[b.end]!;
      const n = b.end - b.start + 1;
      const path: number[] = [moves[first - 1]!.from];
      for (let i = first - 1; i <= last; i++) path.push(moves[i]!.to);
      const maxPath = Math.max(2, th.maxRequestsPerEvent + 1);
      const shown = path.length > maxPath ? `${path.slice(0, maxPath).join('->')}->...` : path.join('->');
      out.push({
        type: 'scale_oscillation',
        timestampUs: flipTimes[b.start]!,
        description: `deployment ${deployment}: ${n} scale direction changes between ${flipTimes[b.start]!} and ${flipTimes[b.end]!} (replicas ${shown})`,
        requests: [],
        severity: n / th.scaleOscillationFlips,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 6. PD backpressure

function detectPdBackpressure(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const Q = th.pdBackpressureQueue;
  for (const [instance, ss] of groupBy(inputs.pdQueueSamples, (s) => s.instance)) {
    ss.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpNum(a.pending, b.pending) || cmpStr(a.requestIds.join('\u0000'), b.requestIds.join('\u0000')));
    let i = 0;
    while (i < ss.length) {
      if (ss[i]!.pending < Q) {
        i++;
        continue;
      }
      const start = i;
      let peak = 0;
      for (; i < ss.length && ss[i]!.pending >= Q; i++) peak = Math.max(peak, ss[i]!.pending);
      const ep = ss.slice(start, i);
      const { list, total } = distinctCapped(
        ep.flatMap((s) => s.requestIds),
        th.maxRequestsPerEvent,
      );
      const t0 = ep[0]!.timeUs;
      const until = i < ss.length ? `until ${ss[i]!.timeUs}` : 'until the last sample';
      out.push({
        type: 'pd_backpressure',
        timestampUs: t0,
        description: `instance ${instance}: prefill->decode KV transfer queue at or above ${Q} from ${t0} ${until} (peak ${peak} pending over ${ep.length} sample(s), ${total} request(s))`,
        requests: list,
        severity: peak / Q,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 7. Preemption storm

function detectPreemptionStorms(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const W = th.windowUs;
  for (const [instance, ps] of groupBy(inputs.preemptions, (p) => p.instance)) {
    ps.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpStr(a.requestId, b.requestId));
    const times = ps.map((p) => p.timeUs);
    for (const b of bursts(times, th.preemptionStormCount, W)) {
      const n = b.end - b.start + 1;
      const { list, total } = distinctCapped(
        ps.slice(b.start, b.end + 1).map((p) => p.requestId),
        th.maxRequestsPerEvent,
      );
      out.push({
        type: 'preemption_storm',
        timestampUs: times[b.start]!,
        description: `instance ${instance}: ${n} preemptions of ${total} request(s) between ${times[b.start]!} and ${times[b.end]!} (peak ${b.peak} within ${W} us)`,
        requests: list,
        severity: n / th.preemptionStormCount,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------

/** Runs every detector; see the module comment for the rules. */
export function detectAnomalies(inputs: AnomalyInputs, thresholds?: Partial<AnomalyThresholds>): AnomalyReport {
  const th = resolveThresholds(thresholds);
  const raw: AnomalyEvent[] = [];
  if (inputs.priorityScheduling) detectPriorityInversions(inputs.requests, th, raw);
  detectSloViolations(inputs, th, raw);
  detectCacheThrashing(inputs, th, raw);
  detectShadowDivergence(inputs, th, raw);
  detectScaleOscillation(inputs, th, raw);
  detectPdBackpressure(inputs, th, raw);
  detectPreemptionStorms(inputs, th, raw);

  const order = new Map<AnomalyType, number>(ANOMALY_TYPES.map((t, i) => [t, i]));
  const cmp = (a: AnomalyEvent, b: AnomalyEvent): number =>
    cmpNum(a.timestampUs, b.timestampUs) || (order.get(a.type)! - order.get(b.type)!) || cmpStr(a.description, b.description);
  raw.sort(cmp);
  const counts = Object.fromEntries(ANOMALY_TYPES.map((t) => [t, 0])) as Record<AnomalyType, number>;
  const events: AnomalyEvent[] = [];
  for (const e of raw) {
    // raw is sorted, so the first maxEventsPerType of a type are its earliest by (timestamp, description).
    if (counts[e.type]++ < th.maxEventsPerType) events.push(e);
  }
  return { counts, events };
}
