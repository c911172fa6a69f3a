/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). PREEMPTION: any `preemption_storm` anomaly, or preemptions >= 10% of routed requests (and >= 10).
 */
import type { Finding, RunCtx } from '../context.js';
import { cmpStr, span } from '../format.js';

const STORM_RE = /^instance (\S+): (\d+) preemptions of (\d+) request\(s\) between (\d+) and (\d+)/;

export function detectPreemption(c: RunCtx): Finding | null {
  const storms = c.run.anomalyCounts['preemption_storm'] ?? 0;
  const pre = c.preemptions;
  const routed = c.views.filter((v) => v.routed).length;
  if (storms === 0 && (pre.length < 10 || pre.length < 0.1 * routed)) return null;
  const victims = new Set(pre.map((p) => p.requestId)).size;
  const details: string[] = [];
  const evs = c.run.anomalyEvents.filter((e) => e.type === 'preemption_storm');
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
