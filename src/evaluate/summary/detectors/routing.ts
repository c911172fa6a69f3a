/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). ROUTING: prefix audits where another instance held more cached leading blocks of the prompt than the
 * chosen one; reported when >= 3 and >= 5% of the audited routings.
 */
import { peakWindow, type Finding, type RunCtx } from '../context.js';
import { mean, median, ms, num, pct, sec, sortedNums, span } from '../format.js';

export function detectRouting(c: RunCtx): Finding | null {
  const audits = c.audits;
  const n = audits.length;
  const misses = audits.filter((a) => a.bestBlocks > a.chosenBlocks);
  const m = misses.length;
  if (m < 3 || m < 0.05 * n) return null;
  const chosenAvg = mean(misses.map((a) => a.chosenBlocks));
  const bestAvg = mean(misses.map((a) => a.bestBlocks));
  const cold = misses.filter((a) => a.chosenBlocks === 0).length;
  const lostBlocks = misses.reduce((s, a) => s + (a.bestBlocks - a.chosenBlocks), 0);
  const missIds = new Set(misses.map((a) => a.requestId));
  const ttIn: number[] = [];
  const ttOut: number[] = [];
  for (const a of audits) {
    const t = c.byId.get(a.requestId)?.ttftMs;
    if (t === null || t === undefined) continue;
    (missIds.has(a.requestId) ? ttIn : ttOut).push(t);
  }
  const details: string[] = [];
  details.push(`${cold} of them held none of it while another instance did; ≈${lostBlocks * c.blockSize} prompt tokens recomputed (${lostBlocks} blocks)`);
  if (ttIn.length > 0 && ttOut.length > 0) {
    details.push(`median TTFT ${ms(median(sortedNums(ttIn)))} for these vs ${ms(median(sortedNums(ttOut)))} for the others`);
  }
  const pk = peakWindow(misses.map((a) => a.timeUs), c.windowUs);
  const loadChosen = mean(misses.map((a) => a.chosenLoad));
  const loadBest = mean(misses.map((a) => a.bestLoad));
  let where = `between ${sec(misses[0]!.timeUs)}s and ${sec(misses[m - 1]!.timeUs)}s`;
  if (pk !== null) where += `, peak ${span(pk.start, pk.start + c.windowUs)} (${pk.n})`;
  details.push(`${where}; load of the prefix holder ${num(loadBest)} vs ${num(loadChosen)} for the chosen instance (mean, router view)`);
  const busier = loadBest - loadChosen;
  const focus =
    busier > 4
      ? `Routing: balance prefix affinity against load — the prefix holder was on average ${num(busier)} requests busier, yet ${pct(m / n)} of routings lost a cached prefix (avg ${num(bestAvg)} blocks available)`
      : `Routing: raise cache/prefix affinity — ${m} of ${n} routings lost a cached prefix of avg ${num(bestAvg - chosenAvg)} blocks while the holder was ${busier <= 0 ? 'no busier' : `only ${num(busier)} requests busier`}`;
  return {
    kind: 'ROUTING',
    title: 'ROUTING',
    run: c,
    count: m,
    total: n,
    what: 'routed requests went to an instance holding a shorter prefix of their prompt than another instance',
    headline: `${m} of ${n} routed requests went to an instance holding a shorter prefix of their prompt than another instance (the chosen held ${num(chosenAvg)} blocks, the best ${num(bestAvg)} on average)`,
    details,
    severity: m / Math.max(1, n),
    focus,
  };
}
