/** `## Worst Decisions`: the routing decisions behind the worst requests, with the candidates' state at the time. */
import type { PrefixAuditRecord } from '../../cluster/recorder.js';
import type { CandidateScore, ReqView, RoutingRecord, RunCtx } from './context.js';
import { candidateLoad } from './counterfactual.js';
import { cmpStr, ms, pct, plural, ratio, secFine } from './format.js';

interface Decision {
  readonly c: RunCtx;
  readonly id: string;
  readonly timeUs: number;
  readonly chosen: string;
  readonly ttftMs: number | null;
  readonly badness: number;
  readonly audit: PrefixAuditRecord | null;
  readonly rec: RoutingRecord | null;
  /** The better alternative's id and why. */
  readonly alt: string;
  readonly altLoadGap: number;
  readonly prefixGap: number;
}

function candOf(rec: RoutingRecord | null, id: string): CandidateScore | null {
  return rec?.candidates?.find((x) => x.instanceId === id) ?? null;
}

function instState(rec: RoutingRecord | null, id: string, load: number | null): string {
  const cand = candOf(rec, id);
  if (cand !== null) return `queue ${cand.queueDepth}, batch ${cand.batchSize}, in flight ${cand.inFlightRequests}, KV ${pct(cand.kvUtilization)}`;
  return load === null ? 'state not among the top-k candidates' : `load ${load} (queue + batch + in flight)`;
}

function findDecisions(ctxs: readonly RunCtx[]): Decision[] {
  const out: Decision[] = [];
  for (const c of ctxs) {
    const med = c.medianTtftMs;
    const seen = new Set<string>();
    for (const a of c.audits) {
      if (a.bestBlocks <= a.chosenBlocks) continue;
      const v = c.byId.get(a.requestId);
      if (v === undefined) continue;
      const t = v.ttftMs;
      const badness = t === null ? Infinity : med > 0 ? t / med : 0;
      if (t !== null && badness < 1.5) continue;
      seen.add(a.requestId);
      out.push({ c, id: a.requestId, timeUs: a.timeUs, chosen: a.chosen, ttftMs: t, badness, audit: a, rec: c.routingById.get(a.requestId) ?? null, alt: a.best, altLoadGap: a.chosenLoad - a.bestLoad, prefixGap: a.bestBlocks - a.chosenBlocks });
    }
    for (const r of c.routings) {
      if (seen.has(r.requestId) || r.candidates === null || r.candidates.length === 0) continue;
      const a = c.auditById.get(r.requestId) ?? null;
      const chosenCand = candOf(r, r.chosenInstance);
      const chosenLoad = chosenCand !== null ? candidateLoad(chosenCand) : a?.chosenLoad;
      if (chosenLoad === undefined) continue;
      const best = [...r.candidates].sort((x, y) => candidateLoad(x) - candidateLoad(y) || cmpStr(x.instanceId, y.instanceId))[0] as CandidateScore;
      const gap = chosenLoad - candidateLoad(best);
      if (gap < 4) continue;
      const v = c.byId.get(r.requestId);
      if (v === undefined) continue;
      const t = v.ttftMs;
      const badness = t === null ? Infinity : med > 0 ? t / med : 0;
      if (t !== null && badness < 1.5) continue;
      out.push({ c, id: r.requestId, timeUs: r.clock, chosen: r.chosenInstance, ttftMs: t, badness, audit: a, rec: r, alt: best.instanceId, altLoadGap: gap, prefixGap: 0 });
    }
  }
  out.sort((x, y) => y.badness - x.badness || y.prefixGap - x.prefixGap || x.c.index - y.c.index || x.timeUs - y.timeUs || cmpStr(x.id, y.id));
  return out;
}

function decisionLines(d: Decision, i: number, multi: boolean): string[] {
  const v = d.c.byId.get(d.id) as ReqView;
  const a = d.audit;
  const head = `${i + 1}. t=${secFine(d.timeUs)}s${multi ? ` | ${d.c.label}` : ''} | routed ${d.id} (prompt ${v.inputLen} tok${a !== null ? `, ${a.promptBlocks} blocks` : ''}${v.tenant !== '' ? `, tenant ${v.tenant}` : ''}${v.cls !== 'default' ? `, ${v.cls}` : ''}) → ${d.chosen}`;
  const lines = [head];
  if (d.prefixGap > 0 && a !== null) {
    lines.push(`   Context: ${d.chosen} held ${a.chosenBlocks}/${a.promptBlocks} prefix blocks, ${instState(d.rec, d.chosen, a.chosenLoad)}; ${a.best} held ${a.bestBlocks} blocks, ${instState(d.rec, a.best, a.bestLoad)}`);
  } else {
    const cand = candOf(d.rec, d.alt);
    lines.push(`   Context: ${d.chosen} ${instState(d.rec, d.chosen, a?.chosenLoad ?? null)}; least loaded ${d.alt} ${cand !== null ? instState(d.rec, d.alt, null) : ''}`.trimEnd());
  }
  const res = d.ttftMs === null ? 'no first token by the end of the run' : `TTFT ${ms(d.ttftMs)} = ${ratio(d.ttftMs, d.c.medianTtftMs)} the run median (${ms(d.c.medianTtftMs)})`;
  const outcome = v.lost ? ', then lost' : v.gated ? (v.miss ? ', missed SLO' : ', met SLO') : '';
  lines.push(`   Result: ${d.prefixGap > 0 && a !== null && a.chosenBlocks === 0 ? 'cache miss, ' : ''}${res}${outcome}`);
  if (d.prefixGap > 0) {
    const loadNote = d.altLoadGap > 0 ? `, and ${plural(d.altLoadGap, 'fewer request')}` : d.altLoadGap < 0 ? `, at ${plural(-d.altLoadGap, 'more request')}` : ', at equal load';
    lines.push(`   Better: ${d.alt} — ${d.prefixGap} more cached blocks (≈${d.prefixGap * d.c.blockSize} prompt tokens not recomputed)${loadNote}`);
  } else {
    lines.push(`   Better: ${d.alt} — ${plural(d.altLoadGap, 'fewer request')} ahead`);
  }
  return lines;
}

export function worstDecisionLines(ctxs: readonly RunCtx[], k: number): string[] {
  if (k <= 0) return [];
  const ds = findDecisions(ctxs).slice(0, k);
  if (ds.length === 0) return [];
  const lines = [`## Worst Decisions (${ds.length} example${ds.length === 1 ? '' : 's'})`];
  ds.forEach((d, i) => lines.push(...decisionLines(d, i, ctxs.length > 1)));
  return lines;
}
