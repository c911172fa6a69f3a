/**
 * Turns a finished simulation into the reference's report: the cluster (and per-instance) MetricsOutput and
 * the optional text sections, as an ordered list of sections that both output formats render.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import { aggregateViews, anomalyLines, buildMetricsFile, buildMetricsOutput, instanceView, kvCacheLines, type MetricsOutputJson, type MetricsView, type RawCounters } from '../metrics/output.js';
import { goJsonIndent } from '../metrics/go-format.js';

export type Section =
  | { readonly kind: 'metrics'; readonly header: string; readonly json: MetricsOutputJson }
  | { readonly kind: 'text'; readonly header: string; readonly key: string; readonly lines: readonly string[] };

export interface Report {
  readonly sections: readonly Section[];
  readonly aggregate: MetricsView;
  readonly clusterOutput: MetricsOutputJson;
}

export function buildReport(cs: ClusterSimulator): Report {
  const views = cs.instances.map((i) => instanceView(i.metrics));
  const agg = aggregateViews(views);
  const sections: Section[] = [];
  if (cs.instances.length > 1) {
    cs.instances.forEach((inst, k) => {
      sections.push({ kind: 'metrics', header: 'Simulation Metrics', json: buildMetricsOutput(views[k] as MetricsView, inst.id) });
    });
  }
  const clusterOutput = buildMetricsOutput(agg, 'cluster');
  sections.push({ kind: 'metrics', header: 'Simulation Metrics', json: clusterOutput });
  const counters: RawCounters = {
    priorityInversions: 0,
    holBlockingEvents: 0,
    rejectedRequests: cs.rejectedRequests,
    shedByTier: cs.shedByTier,
    routingRejections: cs.routingRejections,
    droppedUnservable: agg.droppedUnservable,
    timedOutRequests: agg.timedOutRequests,
    lengthCappedRequests: agg.lengthCappedRequests,
    preemptionRate: agg.completedRequests > 0 ? agg.preemptionCount / agg.completedRequests : 0,
    cacheHitRate: agg.cacheHitRate,
    kvThrashingRate: agg.kvThrashingRate,
  };
  const anomalies = anomalyLines(counters);
  if (anomalies) sections.push({ kind: 'text', header: 'Anomaly Counters', key: 'anomaly_counters', lines: anomalies });
  const kv = kvCacheLines(counters);
  if (kv) sections.push({ kind: 'text', header: 'KV Cache Metrics', key: 'kv_cache_metrics', lines: kv });
  return { sections, aggregate: agg, clusterOutput };
}

/** The reference's stdout, byte for byte. */
export function renderReferenceText(r: Report): string {
  let s = '';
  for (const sec of r.sections) {
    s += `=== ${sec.header} ===\n`;
    s += sec.kind === 'metrics' ? `${goJsonIndent(sec.json)}\n` : `${sec.lines.join('\n')}\n`;
  }
  return s;
}

/** `Label: value` text lines as a JSON object: snake_case keys, numbers parsed, indented lines nested. */
function linesToObject(lines: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let parent: Record<string, unknown> | null = null;
  for (const line of lines) {
    const m = /^(\s*)(.+?):\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = (m[2] as string).trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
    const raw = (m[3] as string).trim();
    const num = Number(raw);
    const val: unknown = raw !== '' && Number.isFinite(num) ? num : raw;
    if ((m[1] as string).length > 0 && parent) parent[key] = val;
    else if (raw === '') {
      parent = {};
      out[key] = parent;
    } else {
      out[key] = val;
      parent = null;
    }
  }
  return out;
}

/** The default stdout: one JSON document with the reference's field names, text sections as nested keys. */
export function renderJson(r: Report): string {
  const doc: Record<string, unknown> = {};
  const perInstance = r.sections.filter((s) => s.kind === 'metrics' && s.json['instance_id'] !== 'cluster');
  doc['simulation_metrics'] = r.clusterOutput;
  if (perInstance.length > 0) doc['instances'] = perInstance.map((s) => (s.kind === 'metrics' ? s.json : null));
  for (const sec of r.sections) if (sec.kind === 'text') doc[sec.key] = linesToObject(sec.lines);
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function renderMetricsFile(r: Report): string {
  return goJsonIndent(buildMetricsFile(r.aggregate, r.clusterOutput));
}
