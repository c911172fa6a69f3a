/**
 * The charts of a run report, as declarative Vega-Lite specs built from a {@link ReportData}. Each builder
 * returns null when it has nothing to draw (no SLO classes, no decision traces, no P/D pools...), so the page
 * shows a chart only with data in it. Times are in seconds of simulated time, latencies in ms.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { TimeSeriesData } from '../cluster/timeseries.js';
import { SERIES_NAMES } from '../cluster/timeseries.js';
import type { LatencyMetric, ReportData } from '../sim/report-data.js';
import type { AnomalyEvent } from './model.js';

export interface Chart {
  /** Stable id: the figure's anchor and `data-chart` attribute. */
  readonly id: string;
  readonly title: string;
  /** One line under the chart: what to read in it (docs/report.md explains each in depth). */
  readonly how: string;
  readonly spec: TopLevelSpec;
  /** Data rows the chart was built from (the page's `data-points`; always > 0). */
  readonly points: number;
}

export const WIDTH = 640;
export const HEIGHT = 200;

type Row = Record<string, number | string>;

export const LATENCY_TITLES: Readonly<Record<LatencyMetric, string>> = { ttft_ms: 'TTFT', itl_ms: 'ITL (per token)', e2e_ms: 'E2E latency' };

/** A single-view spec without its data (the builders below); typed loosely, checked by vega-lite when compiled. */
type SpecBody = Readonly<Record<string, unknown>>;

function chart(id: string, title: string, how: string, rows: Row[], spec: SpecBody): Chart | null {
  if (rows.length === 0) return null;
  return { id, title, how, points: rows.length, spec: { width: WIDTH, height: HEIGHT, ...spec, data: { values: rows } } as unknown as TopLevelSpec };
}

/** A step line per group: the empirical CDF read off the binned quantiles. */
export function cdfChart(id: string, title: string, how: string, rows: Row[], group: string, groupTitle: string): Chart | null {
  return chart(id, title, how, rows, {
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6 },
    encoding: {
      x: { field: 'ms', type: 'quantitative', title: 'latency (ms)' },
      y: { field: 'p', type: 'quantitative', title: 'fraction of requests ≤ x', scale: { domain: [0, 1] } },
      color: { field: group, type: 'nominal', title: groupTitle, sort: null },
    },
  });
}

export function cdfRows(data: ReportData, metric: LatencyMetric, key: string, label: string, groupField: string): Row[] {
  const c = data.latency[metric][key];
  if (c === undefined) return [];
  return c.values.map((v, i) => ({ ms: v, p: data.cdf_probabilities[i] as number, [groupField]: label }));
}

/** Long rows (t, group, value) of one column over time, skipping absent rows. */
export function seriesRows(ts: TimeSeriesData, values: Readonly<Record<string, readonly number[]>>, column: string, firstRow: number, group: string, groupField: string, perSecond = false): Row[] {
  const v = values[column];
  if (v === undefined) return [];
  return v.map((x, j) => {
    const k = firstRow + j;
    const t = ts.times[k] as number;
    const span = t - (k > 0 ? (ts.times[k - 1] as number) : 0);
    return { t: t / 1e6, [groupField]: group, value: perSecond ? (span > 0 ? Math.round((x * 1e6 * 1000) / span) / 1000 : 0) : x };
  });
}

export function lineChart(id: string, title: string, how: string, rows: Row[], yTitle: string, group: string, groupTitle: string, interpolate = 'step-after'): Chart | null {
  return chart(id, title, how, rows, {
    mark: { type: 'line', interpolate, strokeWidth: 1.4 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'simulated time (s)' },
      y: { field: 'value', type: 'quantitative', title: yTitle },
      color: { field: group, type: 'nominal', title: groupTitle, sort: null },
    },
  });
}

function latencyCharts(d: ReportData): Chart[] {
  return (['ttft_ms', 'itl_ms', 'e2e_ms'] as const).map((m) => {
    const keys = ['all', ...d.slo_classes.filter((c) => d.latency[m][c] !== undefined && d.slo_classes.length > 1)];
    const rows = keys.flatMap((k) => cdfRows(d, m, k, k, 'class'));
    const name = LATENCY_TITLES[m];
    return cdfChart(`cdf-${m.replace('_ms', '')}`, `${name} CDF, overall and per SLO class`, `Height at x = share of requests with ${name} at most x ms; a curve further left is faster, a long flat top is a tail.`, rows, 'class', 'SLO class');
  }).filter((c): c is Chart => c !== null);
}

const INSTANCE_PANELS: readonly [string, string, string, string][] = [
  ['queue_depth', 'Queue depth per instance', 'requests waiting', 'Requests waiting in each instance\'s queue at each sample; a line that climbs and stays up is an overloaded instance.'],
  ['batch_size', 'Running batch size per instance', 'requests in the batch', 'Requests in the running batch; flat at the max-num-seqs limit means the instance is batch-bound.'],
  ['kv_gpu_utilization', 'GPU KV-cache utilisation per instance', 'fraction of blocks used', 'Share of GPU KV blocks in use; near 1 the instance preempts or cannot admit new prefills.'],
  ['step_time_us', 'Mean step time per instance', 'µs per step', 'Mean duration of the engine steps in each interval; it grows with batch size and prefill tokens.'],
];

function instanceCharts(ts: TimeSeriesData): Chart[] {
  // Step time is undefined in an interval without steps: those rows are left out rather than drawn as 0.
  const rowsOf = (col: string): Row[] => ts.instances.flatMap((s) => seriesRows(ts, s.values, col, s.firstRow, s.id, 'instance').filter((r, j) => col !== 'step_time_us' || (s.values['steps']?.[j] ?? 0) > 0));
  const out: (Chart | null)[] = INSTANCE_PANELS.map(([col, title, y, how]) => lineChart(`instance-${col.replace(/_/g, '-')}`, title, how, rowsOf(col), y, 'instance', 'instance'));
  if ((ts.cluster['kv_cpu_utilization'] ?? []).some((v) => v > 0)) {
    out.push(lineChart('instance-kv-cpu-utilization', 'CPU KV-tier utilisation per instance', 'Share of CPU-tier KV blocks in use (tiered offload).', ts.instances.flatMap((s) => seriesRows(ts, s.values, 'kv_cpu_utilization', s.firstRow, s.id, 'instance')), 'fraction of blocks used', 'instance', 'instance'));
  }
  return out.filter((c): c is Chart => c !== null);
}

function clusterCharts(ts: TimeSeriesData): Chart[] {
  const c = ts.cluster;
  const flow = [...seriesRows(ts, c, 'arrivals', 0, 'arrivals', 'series', true), ...seriesRows(ts, c, 'completed', 0, 'completions', 'series', true)];
  const load = [...seriesRows(ts, c, 'in_flight', 0, 'in flight (routed, not finished)', 'series'), ...seriesRows(ts, c, 'queue_depth', 0, 'queued on instances', 'series')];
  if ((c['gateway_queue_depth'] ?? []).some((v) => v > 0)) load.push(...seriesRows(ts, c, 'gateway_queue_depth', 0, 'gateway queue', 'series'));
  return [
    lineChart('cluster-flow', 'Arrivals and completions per second', 'Arrivals above completions for long means a backlog is building; the gap closes when the cluster catches up.', flow, 'requests / s', 'series', 'series'),
    lineChart('cluster-throughput', 'Output-token throughput', 'Output tokens of the requests completed in each interval, per second of simulated time.', seriesRows(ts, c, 'throughput_tokens_per_s', 0, 'cluster', 'series'), 'tokens / s', 'series', 'series'),
    lineChart('cluster-load', 'Requests in the system', 'In-flight requests (routed, not finished), those queued on instances and, with flow control, those held in the gateway queue.', load, 'requests', 'series', 'series'),
  ].filter((x): x is Chart => x !== null);
}

const EVENT_COLUMNS: readonly [string, string][] = [
  ['preemptions', 'preemption'], ['timed_out', 'timeout'], ['dropped', 'dropped (unservable)'], ['admission_rejected', 'admission reject'],
  ['routing_rejected', 'routing reject'], ['gateway_rejected', 'gateway reject'], ['gateway_shed', 'gateway shed'], ['gateway_expired', 'gateway TTL expiry'], ['gateway_evicted', 'gateway eviction'],
];

function eventCharts(ts: TimeSeriesData | null, anomalies: readonly AnomalyEvent[]): Chart[] {
  const out: (Chart | null)[] = [];
  if (ts !== null) {
    const rows: Row[] = [];
    for (const [col, label] of EVENT_COLUMNS) for (const r of seriesRows(ts, ts.cluster, col, 0, label, 'event')) if ((r['value'] as number) > 0) rows.push(r);
    out.push(chart('events-timeline', 'Preemptions, timeouts, drops and rejections over time', 'Count of each event in each sampling interval; empty when the run had none.', rows, {
      mark: { type: 'bar', size: 4 },
      encoding: {
        x: { field: 't', type: 'quantitative', title: 'simulated time (s)' },
        y: { field: 'value', type: 'quantitative', title: 'events per interval', stack: 'zero' },
        color: { field: 'event', type: 'nominal', title: 'event', sort: null },
      },
    }));
  }
  const arows: Row[] = anomalies.map((a) => ({ t: a.timestamp_us / 1e6, type: a.type, severity: a.severity }));
  out.push(chart('anomalies-timeline', 'Anomalies detected', 'Each point is one detected anomaly episode at its start time; larger points are more severe (see policy_anomalies in the JSON output).', arows, {
    mark: { type: 'point', filled: true, opacity: 0.7 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'simulated time (s)' },
      y: { field: 'type', type: 'nominal', title: null },
      size: { field: 'severity', type: 'quantitative', title: 'severity' },
      color: { field: 'type', type: 'nominal', legend: null },
    },
  }));
  return out.filter((c): c is Chart => c !== null);
}

function routingCharts(d: ReportData): Chart[] {
  const rows: Row[] = d.routing.flatMap((r) => [{ instance: r.instance, kind: 'routed', value: r.routed }, { instance: r.instance, kind: 'completed', value: r.completed }]);
  const out: (Chart | null)[] = [chart('routing-distribution', 'Requests routed to and completed by each instance', 'Bars of equal height mean the router spread the load evenly; a short bar is an instance the policy avoided.', rows, {
    mark: 'bar',
    encoding: {
      x: { field: 'instance', type: 'nominal', title: null, sort: null },
      xOffset: { field: 'kind', sort: null },
      y: { field: 'value', type: 'quantitative', title: 'requests' },
      color: { field: 'kind', type: 'nominal', title: null, sort: null },
    },
  })];
  if (d.regret !== null) {
    const g = d.regret;
    const r: Row[] = g.time_us.flatMap((t, i) => [{ t: t / 1e6, series: 'mean regret', value: g.mean[i] as number }, { t: t / 1e6, series: 'max regret', value: g.max[i] as number }]);
    out.push(lineChart('routing-regret', 'Routing regret over time', 'Regret = best candidate\'s score minus the chosen one\'s (counterfactual top-k); 0 means the policy took its best option.', r, 'score difference', 'series', 'series', 'linear'));
  }
  return out.filter((c): c is Chart => c !== null);
}

/** Replica count and pool sizes (shown when pools exist or the replica count moved), and P/D series. */
function scalingCharts(ts: TimeSeriesData): Chart[] {
  const names = Object.keys(ts.cluster);
  const pools = names.filter((n) => n.startsWith(SERIES_NAMES.poolPrefix)).sort();
  const replicas = ts.cluster[SERIES_NAMES.replicas] ?? [];
  const moved = replicas.some((v) => v !== replicas[0]);
  const out: (Chart | null)[] = [];
  if (pools.length > 0 || moved) {
    const rows = [SERIES_NAMES.replicas, ...pools].flatMap((n) => seriesRows(ts, ts.cluster, n, 0, n, 'series'));
    out.push(lineChart('replicas-timeline', 'Replicas and pool membership', 'Serving replicas and the members of each pool over time; steps are scale-ups, scale-downs and pool moves.', rows, 'instances', 'series', 'series'));
  }
  const pd = names.filter((n) => n.startsWith(SERIES_NAMES.pdPrefix)).sort();
  if (pd.length > 0) {
    const rows = pd.flatMap((n) => seriesRows(ts, ts.cluster, n, 0, n.slice(SERIES_NAMES.pdPrefix.length), 'series'));
    out.push(lineChart('pd-timeline', 'Prefill/decode KV transfers', 'P/D disaggregation: transfers started and completed per interval, and transfers waiting.', rows, 'transfers', 'series', 'series'));
  }
  return out.filter((c): c is Chart => c !== null);
}

export interface RunCharts {
  readonly latency: readonly Chart[];
  readonly instances: readonly Chart[];
  readonly cluster: readonly Chart[];
  readonly routing: readonly Chart[];
  readonly events: readonly Chart[];
  readonly scaling: readonly Chart[];
}

export function runCharts(d: ReportData | null, anomalies: readonly AnomalyEvent[]): RunCharts {
  const ts = d?.timeseries ?? null;
  return {
    latency: d === null ? [] : latencyCharts(d),
    instances: ts === null ? [] : instanceCharts(ts),
    cluster: ts === null ? [] : clusterCharts(ts),
    routing: d === null ? [] : routingCharts(d),
    events: eventCharts(ts, anomalies),
    scaling: ts === null ? [] : scalingCharts(ts),
  };
}
