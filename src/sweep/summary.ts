/**
 * The sweep's summary: rows grouped by their parameters without `seed` (the mean over the seeds), the best
 * group under each objective and the Pareto front over all of them. A group with a failed row is not
 * ranked (it is listed under `failed_points`). Ties go to the earlier point: deterministic.
 */
import { paretoRanks } from '../evaluate/fitness.js';
import { canonicalJson } from './jobs.js';
import { metricValue } from './metrics.js';
import type { ParamValue, SweepObjective, SweepRow } from './types.js';

export interface RankedPoint {
  readonly params: Readonly<Record<string, ParamValue>>;
  /** The objectives' values (means over the seeds). */
  readonly objectives: Readonly<Record<string, number>>;
}

export interface SweepSummary {
  readonly rows: number;
  /** Points after grouping the seeds. */
  readonly points: number;
  readonly failed_rows: number;
  /** Parameters averaged over (`seed`), when a seed was varied. */
  readonly averaged_over: readonly string[];
  readonly objectives: readonly SweepObjective[];
  readonly objectives_stated: boolean;
  /** Per objective metric: the best point and its value (null when no point has the metric). */
  readonly best: Readonly<Record<string, { readonly params: Readonly<Record<string, ParamValue>>; readonly value: number } | null>>;
  /** Points no other point beats on every objective, in sweep order. */
  readonly pareto_front: readonly RankedPoint[];
  /** Up to 20 failed points with their first error. */
  readonly failed_points: readonly { readonly params: Readonly<Record<string, ParamValue>>; readonly error: { readonly code: string; readonly message: string } }[];
}

interface Group {
  readonly params: Record<string, ParamValue>;
  readonly rows: SweepRow[];
}

export function summarize(rows: readonly SweepRow[], objectives: readonly SweepObjective[], stated: boolean): SweepSummary {
  const seeded = rows.some((r) => 'seed' in r.params);
  const groups = new Map<string, Group>();
  for (const r of rows) {
    const params = Object.fromEntries(Object.entries(r.params).filter(([k]) => k !== 'seed'));
    const key = canonicalJson(params);
    let g = groups.get(key);
    if (g === undefined) {
      g = { params, rows: [] };
      groups.set(key, g);
    }
    g.rows.push(r);
  }
  const ranked: RankedPoint[] = [];
  const failed: SweepSummary['failed_points'][number][] = [];
  for (const g of groups.values()) {
    const bad = g.rows.find((r) => r.error !== undefined);
    if (bad !== undefined) {
      if (failed.length < 20) failed.push({ params: g.params, error: bad.error! });
      continue;
    }
    const values: Record<string, number> = {};
    for (const o of objectives) {
      let sum = 0;
      let ok = true;
      for (const r of g.rows) {
        const v = metricValue(r.metrics, o.metric);
        if (v === null) ok = false;
        else sum += v;
      }
      if (ok) values[o.metric] = sum / g.rows.length;
    }
    ranked.push({ params: g.params, objectives: values });
  }
  const best: Record<string, { params: Record<string, ParamValue>; value: number } | null> = {};
  for (const o of objectives) {
    let top: { params: Record<string, ParamValue>; value: number } | null = null;
    for (const p of ranked) {
      const v = p.objectives[o.metric];
      if (v === undefined) continue;
      if (top === null || (o.direction === 'minimize' ? v < top.value : v > top.value)) top = { params: { ...p.params }, value: v };
    }
    best[o.metric] = top;
  }
  const complete = ranked.filter((p) => objectives.every((o) => p.objectives[o.metric] !== undefined));
  const ranks = paretoRanks(complete.map((p) => objectives.map((o) => (o.direction === 'minimize' ? -(p.objectives[o.metric] as number) : (p.objectives[o.metric] as number)))));
  return {
    rows: rows.length,
    points: groups.size,
    failed_rows: rows.filter((r) => r.error !== undefined).length,
    averaged_over: seeded ? ['seed'] : [],
    objectives,
    objectives_stated: stated,
    best,
    pareto_front: complete.filter((_, i) => ranks[i] === 1),
    failed_points: failed,
  };
}

/** A few lines for a terminal. */
export function summaryText(s: SweepSummary): string {
  const fmt = (p: Readonly<Record<string, ParamValue>>): string => Object.entries(p).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`).join(' ') || '(base)';
  const lines = [`sweep: ${s.rows} rows, ${s.points} points${s.averaged_over.length > 0 ? ' (means over seeds)' : ''}, ${s.failed_rows} failed`];
  for (const o of s.objectives) {
    const b = s.best[o.metric];
    lines.push(`best ${o.metric} (${o.direction}): ${b === null || b === undefined ? 'none' : `${b.value} at ${fmt(b.params)}`}`);
  }
  lines.push(`pareto front (${s.objectives.map((o) => o.metric).join(', ')}): ${s.pareto_front.length} point(s)`);
  for (const p of s.pareto_front.slice(0, 10)) lines.push(`  ${fmt(p.params)}: ${s.objectives.map((o) => `${o.metric}=${p.objectives[o.metric]}`).join(' ')}`);
  return `${lines.join('\n')}\n`;
}
