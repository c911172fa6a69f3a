/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). LOAD_IMBALANCE: one instance received >= 2 × its fair share of routings (>= 2 instances, >= 20 routed).
 */
import type { Finding, RunCtx } from '../context.js';
import { cmpStr, pct, ratio } from '../format.js';

export function detectImbalance(c: RunCtx): Finding | null {
  const nInst = c.run.instances.length;
  const recs = c.routings;
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
