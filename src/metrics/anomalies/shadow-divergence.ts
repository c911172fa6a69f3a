/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `shadow_divergence` — a routing diverges when `expectedHit !== actualHit`. Per (chosen instance,
 * aligned window of the routing time) with at least one divergent routing, one event: timestamp = window
 * start, severity = divergent / all routings to that instance in that window, requests = the divergent
 * requests by time, then id; the description splits predicted-hit-but-missed and predicted-miss-but-hit.
 */
import type { AnomalyEvent, AnomalyInputs, AnomalyThresholds } from './types.js';
import { cmpNum, cmpStr, groupBy, windowStart } from './util.js';

export function detectShadowDivergence(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
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
