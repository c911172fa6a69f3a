/**
 * `## Patterns`: conditions pooled over runs whose bad rate is >= 20% and >= 2 × the rate without them
 * (queue depth at routing, routed away from the longest cached prefix, long prompts, per tenant, per instance).
 */
import { percentileFromSorted } from '../../metrics/stats.js';
import type { RunCtx } from './context.js';
import { cmpStr, mean, pct, ratio, sortedNums } from './format.js';

interface Tally {
  inN: number;
  inBad: number;
  outN: number;
  outBad: number;
}

function tally(): Tally {
  return { inN: 0, inBad: 0, outN: 0, outBad: 0 };
}

function add(t: Tally, cond: boolean, bad: boolean): void {
  if (cond) {
    t.inN++;
    if (bad) t.inBad++;
  } else {
    t.outN++;
    if (bad) t.outBad++;
  }
}

interface Pattern {
  readonly text: string;
  readonly lift: number;
  readonly diff: number;
  readonly key: string;
}

function pattern(key: string, t: Tally, describe: (inRate: number, outRate: number) => string): Pattern | null {
  if (t.inN < 5 || t.outN < 1) return null;
  const inRate = t.inBad / t.inN;
  const outRate = t.outBad / t.outN;
  if (inRate < 0.2 || inRate < 2 * outRate) return null;
  return { key, text: describe(inRate, outRate), lift: outRate > 0 ? inRate / outRate : Infinity, diff: inRate - outRate };
}

export function patternLines(ctxs: readonly RunCtx[]): string[] {
  const pats: Pattern[] = [];
  // Routing state: cluster mean queue depth (top-k candidates) at routing → slow.
  const QS = [2, 4, 8, 16, 32, 64];
  const qt = QS.map(() => tally());
  const prefix = tally();
  for (const c of ctxs) {
    for (const r of c.routings) {
      const v = c.byId.get(r.requestId);
      if (v === undefined || !v.routed) continue;
      if (r.candidates !== null && r.candidates.length > 0) {
        const q = mean(r.candidates.map((x) => x.queueDepth));
        QS.forEach((th, i) => add(qt[i] as Tally, q >= th, v.slow));
      }
    }
    for (const a of c.audits) {
      const v = c.byId.get(a.requestId);
      if (v === undefined) continue;
      add(prefix, a.bestBlocks > a.chosenBlocks, v.slow);
    }
  }
  let bestQ: Pattern | null = null;
  QS.forEach((th, i) => {
    const p = pattern(`queue${th}`, qt[i] as Tally, (a, b) => `TTFT > 2x median in ${pct(a)} of requests routed when the cluster mean queue depth was >= ${th} (n=${(qt[i] as Tally).inN}) vs ${pct(b)} otherwise`);
    if (p !== null && (bestQ === null || p.diff > bestQ.diff)) bestQ = p;
  });
  if (bestQ !== null) pats.push(bestQ);
  const pp = pattern('prefix', prefix, (a, b) => `TTFT > 2x median in ${pct(a)} of requests routed away from the longest cached prefix (n=${prefix.inN}) vs ${pct(b)} of the others`);
  if (pp !== null) pats.push(pp);
  // Request attributes → bad (SLO miss when targets exist).
  const long = tally();
  const tenants = new Map<string, Tally>();
  const insts = new Map<string, Tally>();
  const anyTargets = ctxs.some((c) => c.hasTargets);
  for (const c of ctxs) {
    const lens = sortedNums(c.views.map((v) => v.inputLen));
    const p90 = percentileFromSorted(lens, 90);
    for (const v of c.views) {
      if (!v.judged) continue;
      add(long, v.inputLen > p90, v.bad);
    }
    const ts = new Set(c.views.map((v) => v.tenant));
    if (ts.size > 1) {
      for (const t of ts) {
        if (t === '') continue;
        let x = tenants.get(t);
        if (x === undefined) tenants.set(t, (x = tally()));
        for (const v of c.views) if (v.judged) add(x, v.tenant === t, v.bad);
      }
    }
    if (c.run.instances.length > 1) {
      for (const instId of c.run.instances) {
        let x = insts.get(instId);
        if (x === undefined) insts.set(instId, (x = tally()));
        for (const v of c.views) if (v.routed) add(x, v.instance === instId, v.slow);
      }
    }
  }
  const missWord = anyTargets ? 'miss their SLO' : 'are slow (TTFT > 2x median)';
  const lp = pattern('long', long, (a, b) => `long prompts (> p90 length) ${missWord} ${ratio(a, b)} as often (${pct(a)} vs ${pct(b)}, n=${long.inN})`);
  if (lp !== null) pats.push(lp);
  for (const t of [...tenants.keys()].sort(cmpStr)) {
    const x = tenants.get(t) as Tally;
    const p = pattern(`tenant:${t}`, x, (a, b) => `tenant "${t}" requests ${missWord} ${ratio(a, b)} as often as other tenants' (${pct(a)} vs ${pct(b)}, n=${x.inN})`);
    if (p !== null) pats.push(p);
  }
  for (const id of [...insts.keys()].sort(cmpStr)) {
    const x = insts.get(id) as Tally;
    const p = pattern(`inst:${id}`, x, (a, b) => `requests on ${id} are slow (TTFT > 2x median) ${ratio(a, b)} as often as elsewhere (${pct(a)} vs ${pct(b)}, n=${x.inN})`);
    if (p !== null) pats.push(p);
  }
  pats.sort((a, b) => b.diff - a.diff || cmpStr(a.key, b.key));
  return pats.slice(0, 5).map((p) => `- ${p.text}`);
}
