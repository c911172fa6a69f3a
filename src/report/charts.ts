/**
 * The charts of a run report, as declarative Vega-Lite specs built from a {@link ReportData}. Each builder
 * returns null when it has nothing to draw (no SLO classes, no decision traces, no P/D pools...), so the page
 * shows a chart only with data in it. Times are in seconds of simulated time, latencies in ms.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { TimeSeriesData } from '../cluster/timeseries.js';
import { SERIES_NAMES } from '../cluster/timeseries.js';
import type { ClassOverTime, LatencyMetric, ReportData } from '../sim/report-data.js';
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

/** Vega's category10, then, past 10 series, hues spaced by the golden angle at alternating lightness. */
const CATEGORY10 = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

/** `n` distinct colours, the same for the same `n` (no two series share one, however many there are). */
export function palette(n: number): string[] {
  if (n <= CATEGORY10.length) return CATEGORY10.slice(0, Math.max(n, 1));
  return Array.from({ length: n }, (_, i) => {
    const hue = Math.round((i * 137.508) % 360);
    const light = [42, 58, 34, 66][i % 4] as number;
    const sat = [70, 55, 80][i % 3] as number;
    return `hsl(${hue},${sat}%,${light}%)`;
  });
}

/** A colour channel for a nominal field: the series in row order, each its own colour, labels never cut. */
export function colorBy(rows: readonly Row[], field: string, title: string | null, all?: readonly string[]): Record<string, unknown> {
  // A fixed list (every instance) keeps one colour per series across charts that draw only some of them; the
  // legend lists only the series drawn.
  const present = [...new Set(rows.map((r) => String(r[field])))];
  const fixed = all === undefined ? present : [...all];
  const colours = palette(fixed.length);
  const domain = all === undefined ? present : fixed.filter((x) => present.includes(x));
  const range = domain.map((x) => colours[fixed.indexOf(x)] as string);
  return {
    field, type: 'nominal', title, sort: null,
    scale: { domain, range },
    legend: { labelLimit: 0, ...(domain.length > 12 ? { columns: Math.ceil(domain.length / 12), symbolLimit: 0 } : { symbolLimit: 0 }) },
  };
}

/** The time axis of every timeline: simulated seconds from 0 to the end of the run (no padding past it). */
export function timeAxis(endS: number | null): Record<string, unknown> {
  return { field: 't', type: 'quantitative', title: 'simulated time (s)', ...(endS !== null && endS > 0 ? { scale: { domain: [0, endS], nice: false, zero: true } } : {}) };
}

/**
 * A step line per group: the empirical CDF read off the binned quantiles, on a log latency axis (so the body
 * and a long tail are both readable).
 */
export function cdfChart(id: string, title: string, how: string, rows: Row[], group: string, groupTitle: string): Chart | null {
  const pos = rows.filter((r) => (r['ms'] as number) > 0);
  return chart(id, title, how, pos, {
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6 },
    encoding: {
      x: { field: 'ms', type: 'quantitative', title: 'latency (ms, log scale)', scale: { type: 'log' } },
      y: { field: 'p', type: 'quantitative', title: 'fraction of requests ≤ x', scale: { domain: [0, 1] } },
      color: colorBy(pos, group, groupTitle),
    },
  });
}

/** Percentile ticks of the tail view: x = −log10(1 − p), so p90, p99, p99.9 are evenly spaced. */
const NINES: readonly [number, string][] = [[Math.log10(2), 'p50'], [1, 'p90'], [Math.log10(20), 'p95'], [2, 'p99'], [3, 'p99.9']];

/**
 * The tail view: latency from p50 to p99.9, with percentiles on a "nines" axis (p50, p90, p99, p99.9 evenly
 * spaced, so the top 1% gets as much room as the 40% below p90). The max (p100) is left out: it has no place on
 * the axis (the table gives it).
 */
export function tailChart(id: string, title: string, how: string, rows: Row[], group: string, groupTitle: string): Chart | null {
  const tail = rows.filter((r) => (r['p'] as number) >= 0.5 && (r['p'] as number) < 1).map((r) => ({ ...r, nines: Math.round(-Math.log10(1 - (r['p'] as number)) * 1e6) / 1e6 }));
  const labels = NINES.map(([v, l]) => `abs(datum.value - ${Math.round(v * 1e6) / 1e6}) < 1e-6 ? '${l}'`).join(' : ');
  return chart(id, title, how, tail, {
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6 },
    encoding: {
      x: { field: 'nines', type: 'quantitative', title: 'percentile (p50 → p99.9, evenly spaced nines)', scale: { domain: [Math.round(Math.log10(2) * 1e6) / 1e6, 3], nice: false }, axis: { values: NINES.map(([v]) => Math.round(v * 1e6) / 1e6), labelExpr: `${labels} : ''` } },
      y: { field: 'ms', type: 'quantitative', title: 'latency (ms)', scale: { zero: false } },
      color: colorBy(tail, group, groupTitle),
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

export function lineChart(id: string, title: string, how: string, rows: Row[], yTitle: string, group: string, groupTitle: string, interpolate = 'step-after', endS: number | null = null, y: Record<string, unknown> = {}, groups?: readonly string[]): Chart | null {
  return chart(id, title, how, rows, {
    mark: { type: 'line', interpolate, strokeWidth: 1.4 },
    encoding: {
      x: timeAxis(endS),
      y: { field: 'value', type: 'quantitative', title: yTitle, ...y },
      color: colorBy(rows, group, groupTitle, groups),
    },
  });
}

/** End of the time axes (s): the run's end, or the last sample when that is later (it closes the last interval). */
export function endOf(d: ReportData): number {
  const ts = d.timeseries;
  const last = ts === null || ts.times.length === 0 ? 0 : (ts.times[ts.times.length - 1] as number);
  return Math.max(d.run_end_us, last) / 1e6;
}

function latencyCharts(d: ReportData): Chart[] {
  return (['ttft_ms', 'itl_ms', 'e2e_ms'] as const).flatMap((m) => {
    const keys = ['all', ...d.slo_classes.filter((c) => d.latency[m][c] !== undefined && d.slo_classes.length > 1)];
    const rows = keys.flatMap((k) => cdfRows(d, m, k, k, 'class'));
    const name = LATENCY_TITLES[m];
    const short = m.replace('_ms', '');
    return [
      cdfChart(`cdf-${short}`, `${name} CDF, overall and per SLO class`, `Height at x = share of requests with ${name} at most x ms (log axis: each gridline is 10× the last); a curve further left is faster.`, rows, 'class', 'SLO class'),
      tailChart(`tail-${short}`, `${name} tail: latency at each percentile`, `The tail view: ${name} (ms) from p50 to p99.9 with p90, p99 and p99.9 evenly spaced; a curve that bends up sharply on the right is a long tail.`, rows, 'class', 'SLO class'),
    ];
  }).filter((c): c is Chart => c !== null);
}

/** p90 TTFT and E2E, and SLO attainment, of the requests arriving in each time bin, per class. */
function overTimeCharts(d: ReportData): Chart[] {
  const lt = d.latency_over_time;
  if (lt === null) return [];
  const endS = endOf(d);
  const rowsOf = (pick: (c: ClassOverTime) => readonly (number | null)[] | null): Row[] =>
    Object.entries(lt.classes).flatMap(([cls, c]) => {
      const v = pick(c);
      if (v === null) return [];
      const rows: Row[] = v.flatMap((x, i) => (x === null ? [] : [{ t: (lt.time_us[i] as number) / 1e6, class: cls, value: x }]));
      // A step per bin: each value holds from its bin's start to the next; the last one to its bin's end.
      const last = v.reduce<number>((k, x, i) => (x === null ? k : i), -1);
      if (last >= 0) rows.push({ t: ((lt.time_us[last] as number) + lt.bin_us) / 1e6, class: cls, value: v[last] as number });
      return rows;
    });
  const bin = `${fmtS(lt.bin_us)} s`;
  // One colour per class in every chart (the attainment chart has no 'all' line).
  const classes = Object.keys(lt.classes);
  return [
    lineChart('latency-ttft-over-time', 'TTFT p90 over time, per SLO class', `p90 TTFT (ms) of the requests arriving in each ${bin} bin: the question an autoscaling study asks (does latency rise with the load, and recover?).`, rowsOf((c) => c.ttft_p90_ms), 'TTFT p90 (ms)', 'class', 'SLO class', 'step-after', endS, {}, classes),
    lineChart('latency-e2e-over-time', 'E2E latency p90 over time, per SLO class', `p90 end-to-end latency (ms) of the completed requests arriving in each ${bin} bin.`, rowsOf((c) => c.e2e_p90_ms), 'E2E p90 (ms)', 'class', 'SLO class', 'step-after', endS, {}, classes),
    lineChart('slo-attainment-over-time', 'SLO attainment over time, per SLO class', `Share of the requests arriving in each ${bin} bin that completed within every target of their class (goodput targets); 1 = all met.`, rowsOf((c) => c.attainment), 'share meeting the SLO', 'class', 'SLO class', 'step-after', endS, { scale: { domain: [0, 1] } }, classes),
  ].filter((c): c is Chart => c !== null);
}

function fmtS(us: number): string {
  return String(Math.round(us / 1000) / 1000);
}

const INSTANCE_PANELS: readonly [string, string, string, string][] = [
  ['queue_depth', 'Queue depth per instance', 'requests waiting', 'Requests waiting in each instance\'s queue at each sample; a line that climbs and stays up is an overloaded instance.'],
  ['batch_size', 'Running batch size per instance', 'requests in the batch', 'Requests in the running batch; flat at the max-num-seqs limit means the instance is batch-bound.'],
  ['kv_gpu_utilization', 'GPU KV-cache utilisation per instance', 'fraction of blocks used', 'Share of GPU KV blocks in use; near 1 the instance preempts or cannot admit new prefills.'],
  ['step_time_us', 'Mean step time per instance', 'µs per step', 'Mean duration of the engine steps in each interval; it grows with batch size and prefill tokens.'],
];

function instanceCharts(ts: TimeSeriesData, endS: number): Chart[] {
  const ids = ts.instances.map((s) => s.id);
  // Step time is undefined in an interval without steps: those rows are left out rather than drawn as 0.
  const rowsOf = (col: string): Row[] => ts.instances.flatMap((s) => seriesRows(ts, s.values, col, s.firstRow, s.id, 'instance').filter((r, j) => col !== 'step_time_us' || (s.values['steps']?.[j] ?? 0) > 0));
  const out: (Chart | null)[] = INSTANCE_PANELS.map(([col, title, y, how]) => lineChart(`instance-${col.replace(/_/g, '-')}`, title, how, rowsOf(col), y, 'instance', 'instance', 'step-after', endS, {}, ids));
  if ((ts.cluster['kv_cpu_utilization'] ?? []).some((v) => v > 0)) {
    out.push(lineChart('instance-kv-cpu-utilization', 'CPU KV-tier utilisation per instance', 'Share of CPU-tier KV blocks in use (tiered offload).', ts.instances.flatMap((s) => seriesRows(ts, s.values, 'kv_cpu_utilization', s.firstRow, s.id, 'instance')), 'fraction of blocks used', 'instance', 'instance', 'step-after', endS, {}, ids));
  }
  return out.filter((c): c is Chart => c !== null);
}

function clusterCharts(ts: TimeSeriesData, endS: number): Chart[] {
  const c = ts.cluster;
  const flow = [...seriesRows(ts, c, 'arrivals', 0, 'arrivals', 'series', true), ...seriesRows(ts, c, 'completed', 0, 'completions', 'series', true)];
  const load = [...seriesRows(ts, c, 'in_flight', 0, 'in flight (routed, not finished)', 'series'), ...seriesRows(ts, c, 'queue_depth', 0, 'queued on instances', 'series')];
  if ((c['gateway_queue_depth'] ?? []).some((v) => v > 0)) load.push(...seriesRows(ts, c, 'gateway_queue_depth', 0, 'gateway queue', 'series'));
  return [
    lineChart('cluster-flow', 'Arrivals and completions per second', 'Arrivals above completions for long means a backlog is building; the gap closes when the cluster catches up.', flow, 'requests / s', 'series', 'series', 'step-after', endS),
    lineChart('cluster-throughput', 'Output-token throughput', 'Output tokens of the requests completed in each interval, per second of simulated time.', seriesRows(ts, c, 'throughput_tokens_per_s', 0, 'cluster', 'series'), 'tokens / s', 'series', 'series', 'step-after', endS),
    lineChart('cluster-load', 'Requests in the system', 'In-flight requests (routed, not finished), those queued on instances and, with flow control, those held in the gateway queue.', load, 'requests', 'series', 'series', 'step-after', endS),
  ].filter((x): x is Chart => x !== null);
}

const EVENT_COLUMNS: readonly [string, string][] = [
  ['preemptions', 'preemption'], ['timed_out', 'timeout'], ['dropped', 'dropped (unservable)'], ['admission_rejected', 'admission reject'],
  ['routing_rejected', 'routing reject'], ['gateway_rejected', 'gateway reject'], ['gateway_shed', 'gateway shed'], ['gateway_expired', 'gateway TTL expiry'], ['gateway_evicted', 'gateway eviction'],
];

function eventCharts(ts: TimeSeriesData | null, anomalies: readonly AnomalyEvent[], endS: number | null): Chart[] {
  const out: (Chart | null)[] = [];
  if (ts !== null) {
    const rows: Row[] = [];
    for (const [col, label] of EVENT_COLUMNS) for (const r of seriesRows(ts, ts.cluster, col, 0, label, 'event')) if ((r['value'] as number) > 0) rows.push(r);
    out.push(chart('events-timeline', 'Preemptions, timeouts, drops and rejections over time', 'Count of each event in each sampling interval; empty when the run had none.', rows, {
      mark: { type: 'bar', size: 4 },
      encoding: {
        x: timeAxis(endS),
        y: { field: 'value', type: 'quantitative', title: 'events per interval', stack: 'zero' },
        color: colorBy(rows, 'event', 'event'),
      },
    }));
  }
  const arows: Row[] = anomalies.map((a) => ({ t: a.timestamp_us / 1e6, type: a.type, severity: a.severity }));
  out.push(chart('anomalies-timeline', 'Anomalies detected', 'Each point is one detected anomaly episode at its start time; larger points are more severe (see policy_anomalies in the JSON output).', arows, {
    mark: { type: 'point', filled: true, opacity: 0.7 },
    encoding: {
      x: timeAxis(endS === null ? null : Math.max(endS, ...arows.map((r) => r['t'] as number))),
      y: { field: 'type', type: 'nominal', title: null },
      size: { field: 'severity', type: 'quantitative', title: 'severity' },
      color: { field: 'type', type: 'nominal', legend: null },
    },
  }));
  return out.filter((c): c is Chart => c !== null);
}

function routingCharts(d: ReportData): Chart[] {
  const rows: Row[] = d.routing.flatMap((r) => [{ instance: r.instance, kind: 'routed', value: r.routed }, { instance: r.instance, kind: 'completed', value: r.completed }]);
  // Horizontal bars: one row per instance, so any number of instances keeps whole, readable labels.
  const out: (Chart | null)[] = [chart('routing-distribution', 'Requests routed to and completed by each instance', 'Bars of equal length mean the router spread the load evenly; a short bar is an instance the policy avoided.', rows, {
    height: Math.max(HEIGHT / 2, d.routing.length * 22),
    mark: 'bar',
    encoding: {
      y: { field: 'instance', type: 'nominal', title: null, sort: null, axis: { labelLimit: 0 } },
      yOffset: { field: 'kind', sort: null },
      x: { field: 'value', type: 'quantitative', title: 'requests' },
      color: colorBy(rows, 'kind', null),
    },
  })];
  if (d.regret !== null) {
    const g = d.regret;
    const r: Row[] = g.time_us.flatMap((t, i) => [{ t: t / 1e6, series: 'mean regret', value: g.mean[i] as number }, { t: t / 1e6, series: 'max regret', value: g.max[i] as number }]);
    out.push(lineChart('routing-regret', 'Routing regret over time', 'Regret = best candidate\'s score minus the chosen one\'s (counterfactual top-k); 0 means the policy took its best option.', r, 'score difference', 'series', 'series', 'linear', endOf(d)));
  }
  return out.filter((c): c is Chart => c !== null);
}

/** Replica count and pool sizes (shown when pools exist or the replica count moved), and P/D series. */
function scalingCharts(ts: TimeSeriesData, endS: number): Chart[] {
  const names = Object.keys(ts.cluster);
  const pools = names.filter((n) => n.startsWith(SERIES_NAMES.poolPrefix)).sort();
  const replicas = ts.cluster[SERIES_NAMES.replicas] ?? [];
  const routable = ts.cluster[ROUTABLE];
  const moved = replicas.some((v) => v !== replicas[0]) || (routable !== undefined && routable.some((v, i) => v !== replicas[i]));
  const out: (Chart | null)[] = [];
  if (pools.length > 0 || moved) {
    // Placed replicas (loading, warming up, active or draining) beside the routable ones (taking traffic).
    const rows = [
      ...seriesRows(ts, ts.cluster, SERIES_NAMES.replicas, 0, 'placed (live) replicas', 'series'),
      ...seriesRows(ts, ts.cluster, ROUTABLE, 0, 'routable replicas', 'series'),
      ...pools.flatMap((n) => seriesRows(ts, ts.cluster, n, 0, n, 'series')),
    ];
    out.push(lineChart('replicas-timeline', 'Replicas placed and routable, and pool membership', 'Placed replicas hold GPUs (loading, warming up, active or draining); routable ones take traffic. The gap between the two lines is capacity paid for but not serving; steps are scale-ups, scale-downs and pool moves.', rows, 'instances', 'series', 'series', 'step-after', endS));
  }
  const pd = names.filter((n) => n.startsWith(SERIES_NAMES.pdPrefix)).sort();
  if (pd.length > 0) {
    const rows = pd.flatMap((n) => seriesRows(ts, ts.cluster, n, 0, n.slice(SERIES_NAMES.pdPrefix.length), 'series'));
    out.push(lineChart('pd-timeline', 'Prefill/decode KV transfers', 'P/D disaggregation: transfers started and completed per interval, and transfers waiting.', rows, 'transfers', 'series', 'series', 'step-after', endS));
  }
  return out.filter((c): c is Chart => c !== null);
}

/** Routable replicas (gauge), written beside `replicas` when instances have lifecycles. */
export const ROUTABLE = 'replicas_routable';

export interface RunCharts {
  readonly latency: readonly Chart[];
  /** Latency and SLO attainment over time per class. */
  readonly overTime: readonly Chart[];
  readonly instances: readonly Chart[];
  readonly cluster: readonly Chart[];
  readonly routing: readonly Chart[];
  readonly events: readonly Chart[];
  readonly scaling: readonly Chart[];
}

export function runCharts(d: ReportData | null, anomalies: readonly AnomalyEvent[]): RunCharts {
  const ts = d?.timeseries ?? null;
  const endS = d === null ? null : endOf(d);
  return {
    latency: d === null ? [] : latencyCharts(d),
    overTime: d === null ? [] : overTimeCharts(d),
    instances: ts === null ? [] : instanceCharts(ts, endS as number),
    cluster: ts === null ? [] : clusterCharts(ts, endS as number),
    routing: d === null ? [] : routingCharts(d),
    events: eventCharts(ts, anomalies, endS),
    scaling: ts === null ? [] : scalingCharts(ts, endS as number),
  };
}
