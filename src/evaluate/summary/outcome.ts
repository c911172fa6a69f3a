/** `## Outcome`: the objectives and request outcomes of each run (or pooled over runs). */
import { percentileFromSorted } from '../../metrics/stats.js';
import type { RunCtx } from './context.js';
import { cmpStr, mean, median, ms, num, pct, sortedNums, trimZero } from './format.js';

const OBJECTIVE_ORDER = ['throughput_tps', 'ttft_p99_ms', 'tpot_p99_ms', 'itl_p99_ms', 'e2e_p99_ms', 'slo_attainment', 'goodput', 'cache_hit_rate', 'jain_fairness'];
const OBJECTIVE_LABELS: Readonly<Record<string, string>> = {
  throughput_tps: 'Throughput',
  ttft_p99_ms: 'P99 TTFT',
  tpot_p99_ms: 'P99 TPOT',
  itl_p99_ms: 'P99 ITL',
  e2e_p99_ms: 'P99 E2E',
  slo_attainment: 'SLO attainment',
  cache_hit_rate: 'Cache hit rate',
  jain_fairness: 'Fairness (Jain)',
};

function objectiveValue(name: string, v: number): string {
  if (name.endsWith('_ms')) return ms(v);
  if (name.endsWith('_tps')) return `${num(v)} tok/s`;
  if (/(attainment|_rate|_ratio|_pct|_share)$/.test(name) && v >= 0 && v <= 1) return pct(v);
  return num(v);
}

export function outcomeLines(ctxs: readonly RunCtx[]): string[] {
  const lines: string[] = [];
  const names = new Set<string>();
  for (const c of ctxs) for (const k of Object.keys(c.run.objectives)) names.add(k);
  const ordered = [...OBJECTIVE_ORDER.filter((k) => names.has(k)), ...[...names].filter((k) => !OBJECTIVE_ORDER.includes(k)).sort(cmpStr)];
  for (const name of ordered) {
    const have = ctxs.filter((c) => Object.prototype.hasOwnProperty.call(c.run.objectives, name));
    const vals = have.map((c) => c.run.objectives[name] as number);
    const scored = have.filter((c) => Object.prototype.hasOwnProperty.call(c.run.scores, name));
    const scores = scored.map((c) => c.run.scores[name] as number);
    let line = `- ${OBJECTIVE_LABELS[name] ?? name}: ${objectiveValue(name, mean(vals))}`;
    if (have.length > 1) line += ' (mean)';
    if (scores.length > 0) {
      const s = mean(scores);
      line += ` — score ${trimZero(s.toFixed(2))} ${s >= 0.99 ? '✓' : '❌'}`;
      if (scored.length > 1 && s < 0.99) {
        let w = 0;
        for (let i = 1; i < scores.length; i++) if ((scores[i] as number) < (scores[w] as number)) w = i;
        const wc = scored[w] as RunCtx;
        line += ` (worst ${objectiveValue(name, wc.run.objectives[name] as number)} in ${wc.label})`;
      }
    }
    lines.push(line);
  }
  // SLO attainment per class, pooled over runs.
  const cls = new Map<string, { n: number; good: number }>();
  for (const c of ctxs) {
    for (const v of c.views) {
      if (!v.gated) continue;
      let a = cls.get(v.cls);
      if (a === undefined) cls.set(v.cls, (a = { n: 0, good: 0 }));
      a.n++;
      if (!v.miss) a.good++;
    }
  }
  if (cls.size > 0) {
    const parts = [...cls.keys()].sort(cmpStr).map((k) => {
      const a = cls.get(k) as { n: number; good: number };
      return `${pct(a.good / a.n)} ${k}`;
    });
    lines.push(`- SLO attainment by class: ${parts.join(', ')}`);
  }
  // Jain's index over the tenants' served tokens, per run.
  const jains: { c: RunCtx; j: number; n: number }[] = [];
  for (const c of ctxs) {
    const tok = new Map<string, number>();
    for (const v of c.views) {
      if (v.tenant === '') continue;
      if (!tok.has(v.tenant)) tok.set(v.tenant, 0);
      if (v.completed) tok.set(v.tenant, (tok.get(v.tenant) as number) + v.outputLen);
    }
    if (tok.size < 2) continue;
    let sx = 0;
    let sx2 = 0;
    for (const k of [...tok.keys()].sort(cmpStr)) {
      const x = tok.get(k) as number;
      sx += x;
      sx2 += x * x;
    }
    jains.push({ c, j: sx2 === 0 ? 1 : (sx * sx) / (tok.size * sx2), n: tok.size });
  }
  if (jains.length > 0) {
    const m = mean(jains.map((x) => x.j));
    let line = `- Fairness (Jain over tenants' served tokens): ${m.toFixed(2)}`;
    if (jains.length === 1) line += ` across ${(jains[0] as { n: number }).n} tenants`;
    else {
      const w = [...jains].sort((a, b) => a.j - b.j || a.c.index - b.c.index)[0] as { c: RunCtx; j: number };
      line += ` (mean; min ${w.j.toFixed(2)} in ${w.c.label})`;
    }
    lines.push(line);
  }
  // Volume and latency, pooled.
  let arrived = 0;
  let done = 0;
  let lost = 0;
  const tt: number[] = [];
  for (const c of ctxs) {
    for (const v of c.views) {
      arrived++;
      if (v.completed) done++;
      if (v.lost) lost++;
      if (v.ttftMs !== null) tt.push(v.ttftMs);
    }
  }
  const s = sortedNums(tt);
  let vol = `- Requests: ${arrived} arrived, ${done} completed`;
  if (lost > 0) vol += `, ${lost} rejected/shed`;
  if (s.length > 0) vol += `; TTFT p50 ${ms(median(s))}, p99 ${ms(percentileFromSorted(s, 99))}`;
  if (!names.has('throughput_tps')) {
    let tokens = 0;
    let spanUs = 0;
    for (const c of ctxs) {
      for (const v of c.views) if (v.completed) tokens += v.outputLen;
      spanUs += c.run.endUs;
    }
    if (spanUs > 0) vol += `; ${num(tokens / (spanUs / 1e6))} output tok/s`;
  }
  lines.push(vol);
  return lines;
}
