/**
 * `blis compare`: runs (or evaluation results) side by side. The table lists every numeric metric the results
 * share with the first result as the baseline: delta = value − baseline value, relative = delta / |baseline|
 * (null when the baseline is 0). The HTML report overlays the runs' CDFs and cluster timelines.
 */
import type { LatencyMetric } from '../sim/report-data.js';
import { cdfChart, cdfRows, endOf, lineChart, LATENCY_TITLES, seriesRows, tailChart, type Chart } from './charts.js';
import { esc, figures, fmt, note, page } from './html.js';
import { ReportInputError, type ResultView, type RunView } from './model.js';
import { HEADLINE_KEYS, REPORT_VERSION } from './run-report.js';

export interface CompareRow {
  readonly metric: string;
  /** One value per result (null when that result lacks the metric). */
  readonly values: readonly (number | null)[];
  /** value − baseline (null for the baseline itself or a missing value). */
  readonly deltas: readonly (number | null)[];
  /** delta / |baseline| (null when either is missing or the baseline is 0). */
  readonly relative: readonly (number | null)[];
  /** Which way is better for this metric (null: neither, e.g. request counts given by the workload). */
  readonly better: 'lower' | 'higher' | null;
  /** Per result against the baseline: better, worse or same (null for the baseline, a missing value or no direction). */
  readonly verdicts: readonly (Verdict | null)[];
}

export type Verdict = 'better' | 'worse' | 'same';

/**
 * Which way a metric is better, from its name: latencies, delays, losses (timed out, dropped, rejected,
 * preempted, still unfinished), costs and thrashing are better lower; completions, throughput, goodput,
 * attainment, hit rates and scores higher. Everything else (request and token counts the workload fixes, run
 * duration, MAP-Elites features) has no better side and gets no mark.
 */
export function betterDirection(metric: string): 'lower' | 'higher' | null {
  const m = metric.toLowerCase();
  if (m.startsWith('features.')) return null;
  // Evaluation scores are normalised so that higher is better, whatever they score.
  if (m.startsWith('scores.') || m === 'combined_score') return 'higher';
  if (/(^|[._])(injected|total_input_tokens|total_output_tokens|vllm_estimated_duration_s|count$)/.test(m) && !/preemption_count|timed_out|dropped/.test(m)) return null;
  if (/(_ms|_us|_s)$|latency|delay|ttft|itl|e2e|tpot|still_queued|still_running|timed_out|dropped|reject|shed|expired|evict|preempt|thrash|cost|regret|inversion|violation|imbalance|failures/.test(m)) return 'lower';
  if (/completed|per_sec|_rps$|throughput|goodput|attainment|hit_rate|score/.test(m)) return 'higher';
  return null;
}

function verdict(better: 'lower' | 'higher' | null, delta: number | null): Verdict | null {
  if (better === null || delta === null) return null;
  if (delta === 0) return 'same';
  return (delta < 0) === (better === 'lower') ? 'better' : 'worse';
}

export interface Comparison {
  readonly runs: readonly string[];
  readonly baseline: string;
  readonly kind: 'run' | 'evaluation';
  readonly metrics: readonly CompareRow[];
}

function numericEntries(v: ResultView): [string, number][] {
  if (v.kind === 'run') {
    const own = Object.entries(v.metrics).filter((e): e is [string, number] => typeof e[1] === 'number');
    const order = (k: string): number => {
      const i = HEADLINE_KEYS.indexOf(k);
      return i < 0 ? HEADLINE_KEYS.length : i;
    };
    // Headline metrics first, the rest in the output's own order (a stable sort keeps it).
    return own.sort((a, b) => order(a[0]) - order(b[0]));
  }
  return [
    ['combined_score', v.combinedScore],
    ...Object.entries(v.objectives).map(([k, x]) => [`objectives.${k}`, x] as [string, number]),
    ...Object.entries(v.scores).map(([k, x]) => [`scores.${k}`, x] as [string, number]),
    ...Object.entries(v.features).map(([k, x]) => [`features.${k}`, x] as [string, number]),
  ];
}

export function compareResults(views: readonly ResultView[]): Comparison {
  if (views.length < 2) throw new ReportInputError('blis compare needs at least two results, e.g. blis compare a.json b.json');
  const kind = (views[0] as ResultView).kind;
  const other = views.find((v) => v.kind !== kind);
  if (other !== undefined) throw new ReportInputError(`cannot compare ${kind === 'run' ? 'a run' : 'an evaluation'} result with ${other.kind === 'run' ? 'a run' : 'an evaluation'} result (${other.label}); compare runs with runs and evaluations with evaluations`);
  const maps = views.map((v) => new Map(numericEntries(v)));
  const names: string[] = [];
  for (const v of views) for (const [k] of numericEntries(v)) if (!names.includes(k)) names.push(k);
  const metrics = names.map((metric) => {
    const values = maps.map((m) => m.get(metric) ?? null);
    const base = values[0] ?? null;
    const deltas = values.map((x, i) => (i === 0 || x === null || base === null ? null : x - base));
    const relative = deltas.map((d) => (d === null || base === null || base === 0 ? null : d / Math.abs(base)));
    const better = betterDirection(metric);
    return { metric, values, deltas, relative, better, verdicts: deltas.map((d) => verdict(better, d)) };
  });
  return { runs: views.map((v) => v.label), baseline: (views[0] as ResultView).label, kind, metrics };
}

const cell = (v: number | null): string => (v === null ? '-' : fmt(v));
const pct = (v: number | null): string => (v === null ? '-' : `${v >= 0 ? '+' : ''}${(Math.round(v * 10000) / 100).toFixed(2)}%`);
const signed = (v: number | null): string => (v === null ? '-' : `${v > 0 ? '+' : ''}${fmt(v)}`);

/** Header and rows of the comparison as text cells (terminal and HTML share them). */
function cells(c: Comparison): { head: string[]; rows: string[][] } {
  const head = ['metric', ...c.runs];
  for (const r of c.runs.slice(1)) head.push(`Δ ${r}`, `Δ% ${r}`, `${r} is`);
  const rows = c.metrics.map((m) => {
    const row = [m.metric, ...m.values.map(cell)];
    for (let i = 1; i < c.runs.length; i++) row.push(signed(m.deltas[i] ?? null), pct(m.relative[i] ?? null), m.verdicts[i] ?? '');
    return row;
  });
  return { head, rows };
}

/** The terminal table: aligned columns, numbers right-aligned. */
export function formatComparisonText(c: Comparison): string {
  const { head, rows } = cells(c);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (r: readonly string[]): string => r.map((x, i) => (i === 0 ? x.padEnd(widths[i] as number) : x.padStart(widths[i] as number))).join('  ').trimEnd();
  return `baseline: ${c.baseline}\n${line(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`;
}

export function formatComparisonJson(c: Comparison): string {
  return `${JSON.stringify(c, null, 2)}\n`;
}

const TIMELINES: readonly [string, string, string, boolean][] = [
  ['queue_depth', 'Requests queued on instances', 'requests', false],
  ['in_flight', 'Requests in flight', 'requests', false],
  ['completed', 'Completions per second', 'requests / s', true],
  ['throughput_tokens_per_s', 'Output-token throughput', 'tokens / s', false],
  ['kv_gpu_utilization', 'Mean GPU KV-cache utilisation', 'fraction of blocks used', false],
];

function compareCharts(runs: readonly RunView[]): { cdfs: Chart[]; timelines: Chart[] } {
  const cdfs = (['ttft_ms', 'itl_ms', 'e2e_ms'] as LatencyMetric[]).flatMap((m) => {
    const rows = runs.flatMap((r) => (r.data === null ? [] : cdfRows(r.data, m, 'all', r.label, 'run')));
    const short = m.replace('_ms', '');
    return [
      cdfChart(`compare-cdf-${short}`, `${LATENCY_TITLES[m]} CDF`, 'One curve per result (log latency axis); the curve further left is faster at that percentile.', rows, 'run', 'result'),
      tailChart(`compare-tail-${short}`, `${LATENCY_TITLES[m]} tail`, 'Latency from p50 to p99.9, p90, p99 and p99.9 evenly spaced; the lower curve has the shorter tail.', rows, 'run', 'result'),
    ];
  });
  // One time axis for all: to the end of the longest run.
  const ends = runs.flatMap((r) => (r.data === null ? [] : [endOf(r.data)]));
  const endS = ends.length === 0 ? null : Math.max(...ends);
  const timelines = TIMELINES.map(([col, title, y, perSecond]) => {
    const rows = runs.flatMap((r) => (r.data?.timeseries ? seriesRows(r.data.timeseries, r.data.timeseries.cluster, col, 0, r.label, 'run', perSecond) : []));
    return lineChart(`compare-${col.replace(/_/g, '-')}`, title, 'Cluster-wide, one line per result, over simulated time.', rows, y, 'run', 'result', 'step-after', endS);
  });
  return { cdfs: cdfs.filter((x): x is Chart => x !== null), timelines: timelines.filter((x): x is Chart => x !== null) };
}

/** The comparison table with each verdict cell (and its row's Δ cells) coloured: green better, red worse. */
function markedTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const th = head.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((x, i) => {
    if (i === 0) return `<td>${esc(x)}</td>`;
    const mark = x === 'better' ? ' better' : x === 'worse' ? ' worse' : '';
    const text = x === 'better' ? '▲ better' : x === 'worse' ? '▼ worse' : x;
    return `<td class="num${mark}">${esc(text)}</td>`;
  }).join('')}</tr>`).join('\n');
  return `<table class="compare">\n<thead><tr>${th}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>\n`;
}

export async function renderComparisonReport(c: Comparison, views: readonly ResultView[]): Promise<string> {
  const { head, rows } = cells(c);
  const tbl = markedTable(head, rows);
  const sections = [{ id: 'table', title: 'Metrics', body: `<p>${esc(`Baseline: ${c.baseline}. Δ = value − baseline; Δ% = Δ / |baseline|. Better (green) and worse (red) follow each metric's direction: lower latency, delay, losses and cost are better; higher completions, throughput, goodput, attainment and scores are better; counts the workload fixes get no mark.`)}</p>\n${tbl}` }];
  const runs = views.filter((v): v is RunView => v.kind === 'run');
  if (runs.length > 0) {
    const ch = compareCharts(runs);
    const missing = runs.filter((r) => r.data === null).map((r) => r.label);
    const miss = missing.length === 0 ? '' : note(`No report data in ${missing.join(', ')}: save those runs with --report-data to draw them here.`);
    sections.push({ id: 'latency', title: 'Latency distributions', body: `${miss}${ch.cdfs.length === 0 ? note('No latency distributions to draw.') : await figures(ch.cdfs)}` });
    sections.push({ id: 'timelines', title: 'Timelines', body: `${miss}${ch.timelines.length === 0 ? note('No time series to draw.') : await figures(ch.timelines)}` });
  }
  return page(`blis compare: ${c.runs.join(' vs ')}`, `${c.runs.length} ${c.kind} results; baseline ${c.baseline}`, sections, `Generated by ${REPORT_VERSION}. Charts rendered with Vega-Lite at build time; this file has no scripts and loads nothing.`);
}
