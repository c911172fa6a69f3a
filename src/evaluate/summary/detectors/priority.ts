/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). PRIORITY: >= 3 `priority_inversion` anomalies.
 */
import type { Finding, RunCtx } from '../context.js';
import { sec } from '../format.js';

export function detectPriority(c: RunCtx): Finding | null {
  const n = c.run.anomalyCounts['priority_inversion'] ?? 0;
  if (n < 3) return null;
  const evs = c.run.anomalyEvents.filter((e) => e.type === 'priority_inversion');
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
