/**
 * The HTML report of one run (or replay) and of one evaluation: tables of the configuration and headline
 * metrics, then the charts of charts.ts grouped by question (how fast, how loaded, where did requests go,
 * what went wrong, how did the fleet change).
 */
import { cdfAt } from '../metrics/cdf.js';
import type { LatencyMetric, ReportData } from '../sim/report-data.js';
import { LATENCY_TITLES, runCharts, type Chart } from './charts.js';
import { esc, figures, fmt, note, page, table, type PageSection } from './html.js';
import type { EvaluationView, ResultView, RunView, ScenarioView } from './model.js';

export const REPORT_VERSION = 'blis-ts 0.1.0';

/** Headline metrics, in reading order (keys of simulation_metrics). */
export const HEADLINE_KEYS: readonly string[] = [
  'injected_requests', 'completed_requests', 'still_queued', 'still_running', 'timed_out_requests', 'dropped_unservable', 'preemption_count',
  'responses_per_sec', 'tokens_per_sec', 'ttft_mean_ms', 'ttft_p90_ms', 'ttft_p99_ms', 'itl_mean_ms', 'itl_p90_ms', 'itl_p99_ms',
  'e2e_mean_ms', 'e2e_p90_ms', 'e2e_p99_ms', 'scheduling_delay_p99_ms', 'vllm_estimated_duration_s',
];

const NO_DATA = 'This result has no report data: rerun with --report FILE.html, or save it with --report-data, to get latency distributions and timelines.';

function flatten(prefix: string, v: unknown, out: [string, unknown][]): void {
  if (v === undefined) return;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) flatten(prefix === '' ? k : `${prefix}.${k}`, x, out);
  } else if (!Array.isArray(v)) {
    out.push([prefix, v]);
  }
}

/** The unit a metric's name says (its suffix or its kind); '' for counts and names. */
export function unitOf(key: string): string {
  const k = key.toLowerCase();
  if (/_ms$|\.ms$/.test(k)) return 'ms';
  if (/_us$|\.us$|_us_|timestamp_us/.test(k)) return 'µs';
  if (/_s$|_seconds?$|duration_s/.test(k)) return 's';
  if (/tokens_per_sec|tokens_per_s$|throughput_tokens/.test(k)) return 'tokens/s';
  if (/per_sec|_rps$|_per_s$/.test(k)) return 'requests/s';
  if (/rate$|ratio$|attainment|utilization|utilisation|fraction|share/.test(k)) return 'fraction (0–1)';
  if (/tokens$/.test(k)) return 'tokens';
  if (/gpu_hours$/.test(k)) return 'GPU-hours';
  if (/_gb$/.test(k)) return 'GB';
  if (/bytes$/.test(k)) return 'bytes';
  if (/cost|dollars|usd/.test(k)) return '$';
  if (/requests$|count$|_count_|preemptions$|blocks$|instances$|replicas$|^still_|unservable$|actions$|fired$|killed$|redirected$|divergences?$/.test(k)) return 'count';
  return '';
}

function metricRows(entries: readonly (readonly [string, unknown])[], fallback = ''): unknown[][] {
  return entries.map(([k, x]) => [k, x, unitOf(k) || fallback]);
}

function resolvedBody(d: ReportData): string {
  const r = d.resolved;
  let s = `<p>${esc(`Semantics: ${r.semantics} (reference = the reference's behaviour, bugs included; corrected = docs/reference-differences.md).`)}</p>\n`;
  s += table(['instances', 'count', 'pool role', 'model', 'GPU', 'TP', 'GPU KV blocks', 'CPU KV blocks', 'latency model'], r.groups.map((g) => [g.instances, g.count, g.role === '' ? '-' : g.role, g.model, g.gpu, g.tp, g.kv_blocks, g.cpu_kv_blocks, g.latency_model]), 1);
  return s;
}

function latencyTable(d: ReportData): string {
  const rows: unknown[][] = [];
  for (const m of ['ttft_ms', 'itl_ms', 'e2e_ms'] as LatencyMetric[]) {
    // With one class its rows would repeat the overall ones.
    for (const [cls, c] of Object.entries(d.latency[m])) if (cls === 'all' || d.slo_classes.length > 1) rows.push([LATENCY_TITLES[m], cls, c.count, c.mean, cdfAt(c, 0.5), cdfAt(c, 0.9), cdfAt(c, 0.99), cdfAt(c, 1)]);
  }
  return table(['metric', 'class', 'samples', 'mean (ms)', 'p50 (ms)', 'p90 (ms)', 'p99 (ms)', 'max (ms)'], rows, 2);
}

function summaryBody(v: RunView): string {
  let s = '';
  const opts = v.data?.options;
  if (v.data !== null) s += `<h3>Resolved configuration</h3>\n${resolvedBody(v.data)}`;
  s += '<h3>Options given</h3>\n';
  s += opts === undefined ? note('Options were not recorded in this result (save it with --report-data to keep them).') : Object.keys(opts).length === 0 ? note('All options at their defaults.') : table(['option', 'value'], Object.entries(opts).map(([k, x]) => [`--${k}`, x]), 2);
  s += '<h3>Headline metrics</h3>\n';
  s += table(['metric', 'value', 'unit'], metricRows(HEADLINE_KEYS.filter((k) => v.metrics[k] !== undefined).map((k) => [k, v.metrics[k]] as const)));
  if (v.instances.length > 0) {
    const cols = ['completed_requests', 'injected_requests', 'preemption_count', 'timed_out_requests', 'ttft_p99_ms', 'e2e_p99_ms', 'kv_allocation_failures'].filter((k) => v.instances.some((i) => i[k] !== undefined));
    s += '<h3>Per instance</h3>\n';
    // The column names end in their unit (_ms) or are counts.
    s += table(['instance', ...cols], v.instances.map((i) => [i['instance_id'], ...cols.map((k) => i[k])]));
  }
  return s;
}

async function section(id: string, title: string, intro: string, charts: readonly Chart[], empty: string, extra = '', idPrefix = ''): Promise<PageSection> {
  const body = `<p>${esc(intro)}</p>\n${charts.length === 0 ? note(empty) : await figures(charts, idPrefix)}${extra}`;
  return { id: `${idPrefix}${id}`, title, body };
}

/** The chart sections of one run's data (also used per scenario of an evaluation). */
async function chartSections(d: ReportData | null, anomalies: RunView['anomalies'], counters: unknown, idPrefix = ''): Promise<PageSection[]> {
  const c = runCharts(d, anomalies);
  const ts = d?.timeseries ?? null;
  const noSeries = d === null ? NO_DATA : 'No time series in this result.';
  const sections: PageSection[] = [
    await section('latency', 'Latency distributions', 'Cumulative distributions of time to first token, inter-token latency and end-to-end latency, for all requests and per SLO class.', c.latency, NO_DATA, d === null ? '' : latencyTable(d), idPrefix),
    await section('over-time', 'Latency and SLO attainment over time', 'Requests grouped by arrival time: p90 TTFT and E2E per bin and, with goodput targets (goodput_slo_targets or --slo-*), the share that met their class\'s SLO.', c.overTime, d === null ? NO_DATA : 'No requests arrived.', '', idPrefix),
    await section('instances', 'Per-instance timelines', `Sampled every ${ts === null ? '?' : fmt(ts.intervalUs / 1000)} ms of simulated time (state at each sample; see docs/report.md).`, c.instances, noSeries, '', idPrefix),
    await section('cluster', 'Cluster timelines', 'Cluster-wide flow of requests and tokens over simulated time.', c.cluster, noSeries, '', idPrefix),
    await section('routing', 'Routing', 'Where the router sent requests and, with decision traces and counterfactual candidates (--trace-level decisions --counterfactual-k N), how far each choice was from the best-scored one.', c.routing, d === null ? NO_DATA : 'No routing data.', '', idPrefix),
  ];
  const counterRows: [string, unknown][] = [];
  flatten('', counters, counterRows);
  sections.push(await section('events', 'Events and anomalies', 'Preemptions, timeouts, drops, rejections and detected anomalies on the run\'s timeline.', c.events, 'No events to draw: the run had no preemptions, timeouts, drops, rejections or detected anomalies (or no time series was recorded).', counterRows.length > 0 ? `<h3>Anomaly counters</h3>\n${table(['counter', 'value', 'unit'], metricRows(counterRows, 'count'))}` : '', idPrefix));
  if (c.scaling.length > 0) sections.push(await section('scaling', 'Replicas, pools and P/D transfers', 'How the fleet changed over the run: replica count, pool membership and prefill/decode KV transfers.', c.scaling, '', '', idPrefix));
  return sections;
}

export async function renderRunReport(v: RunView): Promise<string> {
  const sections: PageSection[] = [{ id: 'summary', title: 'Run', body: summaryBody(v) }];
  sections.push(...(await chartSections(v.data, v.anomalies, { ...(v.sections['anomaly_counters'] as object | undefined), ...v.anomalyCounts })));
  const other: [string, unknown][] = [];
  for (const [k, x] of Object.entries(v.sections)) if (k !== 'anomaly_counters') flatten(k, x, other);
  if (other.length > 0) sections.push({ id: 'other', title: 'Other metrics', body: table(['metric', 'value', 'unit'], metricRows(other)) });
  const src = v.data?.source ?? 'run';
  return page(`blis report: ${v.label}`, `${src} · ${fmt(v.metrics['completed_requests'])} of ${fmt(v.metrics['injected_requests'])} requests completed`, sections, `Generated by ${REPORT_VERSION}. Charts rendered with Vega-Lite at build time; this file has no scripts and loads nothing.`);
}

async function scenarioBlock(s: ScenarioView, i: number): Promise<string> {
  const head = table(['metric', 'value'], Object.entries(s.objectives).map(([k, x]) => [`objective ${k}`, x]));
  if (s.data === null) return `<details><summary>${esc(`${s.scenario}@${s.seed}: score ${fmt(s.score)}`)}</summary>\n${head}${note(NO_DATA)}</details>\n`;
  const secs = await chartSections(s.data, [], undefined, `s${i}-`);
  return `<details${i === 0 ? ' open' : ''}><summary>${esc(`${s.scenario}@${s.seed}: score ${fmt(s.score)}`)}</summary>\n${head}${secs.map((x) => `<h3>${esc(x.title)}</h3>\n${x.body}`).join('')}</details>\n`;
}

export async function renderEvaluationReport(v: EvaluationView): Promise<string> {
  let summary = table(['', 'value'], [['candidate', v.candidate], ['suite', v.suite], ['combined_score', v.combinedScore], ...(v.error === null ? [] : [['error', v.error]])]);
  summary += '<h3>Objectives</h3>\n';
  summary += table(['objective', 'raw value', 'score'], Object.keys(v.objectives).map((k) => [k, v.objectives[k], v.scores[k]]));
  summary += '<h3>Features</h3>\n';
  summary += table(['feature', 'value'], Object.entries(v.features));
  const runs = table(['scenario', 'seed', 'score', ...Object.keys(v.scenarios[0]?.objectives ?? {})], v.scenarios.map((s) => [s.scenario, s.seed, s.score, ...Object.values(s.objectives)]), 1);
  let per = '';
  for (let i = 0; i < v.scenarios.length; i++) per += await scenarioBlock(v.scenarios[i] as ScenarioView, i);
  return page(`blis evaluation report: ${v.label}`, `candidate ${v.candidate} on suite ${v.suite} · combined score ${fmt(v.combinedScore)}`, [
    { id: 'summary', title: 'Evaluation', body: summary },
    { id: 'scenarios', title: 'Scenario runs', body: `${runs}${per}` },
  ], `Generated by ${REPORT_VERSION}. Charts rendered with Vega-Lite at build time; this file has no scripts and loads nothing.`);
}

export function renderResultReport(v: ResultView): Promise<string> {
  return v.kind === 'run' ? renderRunReport(v) : renderEvaluationReport(v);
}
