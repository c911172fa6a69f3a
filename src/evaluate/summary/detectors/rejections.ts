/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). REJECTION: requests rejected, shed, expired or evicted at the gateway >= 5% of arrivals (and >= 3).
 */
import { peakWindow, type Finding, type RunCtx } from '../context.js';
import { cmpStr, pct, span } from '../format.js';

export function detectRejections(c: RunCtx): Finding | null {
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
  const delays = c.run.admissionDelays;
  if (delays > 0) details.push(`${delays} admission DELAYs issued, ${c.run.delayLimitRejections} hit the delay limit`);
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
