/**
 * Rows: one per point, in the sweep's order, whatever order the jobs finished in. JSON lines
 * (`{"params", "metrics"[, "error"]}`) or CSV (the parameters, then every metric any row has, then the error).
 */
import type { JobOutcome, ParamValue, PointResult, SweepPoint, SweepRow } from './types.js';

export function buildRows(points: readonly SweepPoint[], outcomes: readonly JobOutcome[]): SweepRow[] {
  return points.map((p, i) => {
    const o = outcomes[i] as JobOutcome;
    if (!o.ok) return { params: p.params, metrics: {}, error: o.error };
    const r = o.value as PointResult;
    return 'error' in r ? { params: p.params, metrics: {}, error: r.error } : { params: p.params, metrics: r.metrics };
  });
}

export function rowsJsonl(rows: readonly SweepRow[]): string {
  return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
}

/** RFC 4180 quoting (a field with a comma, quote or line break is quoted, quotes doubled). */
function cell(v: ParamValue | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const t = Array.isArray(v) ? v.join(',') : String(v);
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

export function rowsCsv(rows: readonly SweepRow[], params: readonly string[]): string {
  const metrics: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    for (const k of Object.keys(r.metrics)) {
      if (!seen.has(k)) {
        seen.add(k);
        metrics.push(k);
      }
    }
  }
  const header = [...params, ...metrics, 'error', 'error_message'].map((h) => cell(h)).join(',');
  const lines = rows.map((r) => [
    ...params.map((k) => cell(r.params[k])),
    ...metrics.map((k) => cell(r.metrics[k])),
    cell(r.error?.code),
    cell(r.error?.message),
  ].join(','));
  return `${[header, ...lines].join('\n')}\n`;
}
