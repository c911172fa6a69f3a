/** `## Counterfactual Analysis`: what the routing decisions cost against the best candidate at the time (regret, load). */
import type { CandidateScore, RoutingRecord, RunCtx } from './context.js';
import { median, ms, num, pct, sec, sortedNums } from './format.js';

export function candidateLoad(x: CandidateScore): number {
  return x.queueDepth + x.batchSize + x.inFlightRequests;
}

export function counterfactualLines(ctxs: readonly RunCtx[]): string[] {
  const lines: string[] = [];
  let n = 0;
  let positive = 0;
  let sum = 0;
  let max = 0;
  let maxAt: { c: RunCtx; r: RoutingRecord } | null = null;
  let scored = 0;
  for (const c of ctxs) {
    for (const r of c.routings) {
      n++;
      if (r.scored) scored++;
      sum += r.regret;
      if (r.regret > 0) positive++;
      if (r.regret > max) {
        max = r.regret;
        maxAt = { c, r };
      }
    }
  }
  if (n > 0 && positive > 0) {
    const unit = scored === n ? 'policy score units' : scored === 0 ? 'load units: the policy gives no scores, so score = −load' : 'score units; −load where the policy gives no scores';
    let line = `- Routing regret: mean ${num(sum / n)}, max ${num(max)} (${unit}); ${positive} of ${n} decisions (${pct(positive / n)}) had a better-scored alternative`;
    if (maxAt !== null) line += `; max at t=${sec(maxAt.r.clock)}s ${maxAt.r.requestId}${ctxs.length > 1 ? ` in ${maxAt.c.label}` : ''}`;
    lines.push(line);
  }
  // Prefix: an alternative held the prefix, the chosen instance held none.
  let cold = 0;
  let shorter = 0;
  let blocks = 0;
  let tokens = 0;
  const ttCold: number[] = [];
  const ttHolder: number[] = [];
  let audits = 0;
  for (const c of ctxs) {
    for (const a of c.audits) {
      audits++;
      const t = c.byId.get(a.requestId)?.ttftMs ?? null;
      if (a.bestBlocks > a.chosenBlocks) {
        shorter++;
        blocks += a.bestBlocks - a.chosenBlocks;
        tokens += (a.bestBlocks - a.chosenBlocks) * c.blockSize;
        if (a.chosenBlocks === 0) {
          cold++;
          if (t !== null) ttCold.push(t);
        }
      } else if (a.chosenBlocks > 0 && t !== null) ttHolder.push(t);
    }
  }
  if (cold > 0) {
    let line = `- ${cold} decisions where another instance held the prompt's prefix and the chosen instance held none (cache miss)`;
    if (ttCold.length > 0 && ttHolder.length > 0) line += `: median TTFT ${ms(median(sortedNums(ttCold)))} vs ${ms(median(sortedNums(ttHolder)))} when routed to the longest cached prefix`;
    lines.push(line);
  }
  if (shorter > 0) {
    lines.push(`- Routing each of the ${shorter} of ${audits} requests to the longest cached prefix would have reused ${blocks} more blocks (≈${tokens} prompt tokens of prefill)`);
  }
  // Load: chosen instance much busier than the least-loaded candidate.
  let loadMiss = 0;
  let loadN = 0;
  const ttLoad: number[] = [];
  const ttOk: number[] = [];
  for (const c of ctxs) {
    for (const r of c.routings) {
      if (r.candidates === null || r.candidates.length === 0) continue;
      const a = c.auditById.get(r.requestId);
      const chosenCand = r.candidates.find((x) => x.instanceId === r.chosenInstance);
      const chosenLoad = chosenCand !== undefined ? candidateLoad(chosenCand) : a?.chosenLoad;
      if (chosenLoad === undefined) continue;
      loadN++;
      const minLoad = Math.min(...r.candidates.map(candidateLoad));
      const t = c.byId.get(r.requestId)?.ttftMs ?? null;
      if (chosenLoad >= minLoad + 4) {
        loadMiss++;
        if (t !== null) ttLoad.push(t);
      } else if (t !== null) ttOk.push(t);
    }
  }
  if (loadMiss > 0) {
    let line = `- ${loadMiss} of ${loadN} decisions picked an instance with >= 4 more requests (queue + batch + in flight) than the least-loaded candidate`;
    if (ttLoad.length > 0 && ttOk.length > 0) line += `: median TTFT ${ms(median(sortedNums(ttLoad)))} vs ${ms(median(sortedNums(ttOk)))} otherwise`;
    lines.push(line);
  }
  return lines;
}
