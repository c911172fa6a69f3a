/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). SLO: a class with >= 10 gated arrivals whose attainment is below 90%.
 */
import type { SloTargets } from '../../types.js';
import { percentileFromSorted } from '../../../metrics/stats.js';
import { peakWindow, targetsFor, type Finding, type RunCtx } from '../context.js';
import { cmpStr, median, ms, pct, sortedNums, span } from '../format.js';

export function detectSlo(c: RunCtx): Finding[] {
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
