/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `priority_inversion` — only when `priorityScheduling` is true (the instance scheduler promises priority
 * order). Per instance, request `a` (the victim, scheduled or never scheduled) is inverted by request `b`
 * when `b` was scheduled (`b.scheduledUs` not null), `a` is more urgent (`a.priority < b.priority`; lower
 * = more urgent, vLLM), `a` was already waiting (`a.arrivalUs <= b.scheduledUs`), and `b` went first
 * (`b.scheduledUs < a.scheduledUs`, or `a` was never scheduled). One event per (instance, victim) with at
 * least one such `b`: timestamp = the first such `b`'s scheduled time, requests = `[a, b…]` (the `b`s in
 * scheduled order, then id), severity = the number of less urgent requests that jumped ahead of `a`.
 * O(n log n) per instance: a max-priority segment tree over the scheduled order finds the jumpers, an
 * offline Fenwick sweep (victims by decreasing priority) counts them.
 */
import type { AnomalyEvent, AnomalyRequestRecord, AnomalyThresholds } from './types.js';
import { cmpNum, cmpStr, groupBy, lowerBound } from './util.js';

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

export function detectPriorityInversions(reqs: readonly AnomalyRequestRecord[], th: AnomalyThresholds, out: AnomalyEvent[]): void {
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
