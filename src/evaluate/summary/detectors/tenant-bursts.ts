/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). ADMISSION (tenant bursts, >= 2 tenants): window k is a burst of tenant T when T's arrivals there are
 * >= 5, >= 3 × T's mean per window and >= 50% of the window's arrivals; consecutive burst windows form an
 * episode [s, e). Other tenants' requests arriving in [s, e + W) (the burst plus the window its queue takes
 * to drain) that are bad are its victims. Reported when the victims total >= 3 and their rate is >= 20%
 * and >= 2 × the other tenants' bad rate outside those windows.
 */
import { badWord, type Finding, type RunCtx, windowOf } from '../context.js';
import { cmpStr, pct, ratio, span, trimZero } from '../format.js';

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

export function detectTenantBursts(c: RunCtx): Finding[] {
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
