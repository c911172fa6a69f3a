/**
 * Helpers shared by the anomaly detectors: comparators, grouping in sorted key order, aligned windows,
 * sliding-window bursts, capped id lists, and the thresholds' resolution and checks.
 */
import { DEFAULT_ANOMALY_THRESHOLDS, type AnomalyThresholds } from './types.js';

export function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function cmpNum(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Groups by key; the keys come back sorted. */
export function groupBy<T>(items: readonly T[], key: (t: T) => string): [string, T[]][] {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const a = m.get(k);
    if (a) a.push(it);
    else m.set(k, [it]);
  }
  return [...m.entries()].sort((x, y) => cmpStr(x[0], y[0]));
}

export function windowStart(t: number, w: number): number {
  return Math.floor(t / w) * w;
}

/** First index i with a[i] >= x (a sorted ascending). */
export function lowerBound(a: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2);
}

export function distinctCapped(ids: Iterable<string>, cap: number): { list: string[]; total: number } {
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
export function bursts(times: readonly number[], minCount: number, span: number): { start: number; end: number; peak: number }[] {
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

export function resolveThresholds(partial: Partial<AnomalyThresholds> | undefined): AnomalyThresholds {
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
