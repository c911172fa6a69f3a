/**
 * Turns a finished simulation into the reference's report: per-instance and cluster MetricsOutput JSON, then
 * the text sections in the reference's order (Fitness, Anomaly Counters, KV Cache, Per-SLO, Per-Model,
 * Per-Tenant, Session, Trace Summary). Both output formats render the same section list.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import { breakdownSections } from '../metrics/sections.js';
import { collectRawMetrics, instanceRawView } from '../metrics/cluster-metrics.js';
import { computeFitness, fitnessLines } from '../metrics/fitness.js';
import { applyGoodput, computeGoodput, type SloDimTargets } from '../metrics/goodput.js';
import { aggregateViews, anomalyLines, buildMetricsFile, buildMetricsOutput, instanceView, kvCacheLines, metricsFileChunks, withAdapters, type MetricsOutputJson, type MetricsView } from '../metrics/output.js';
import { goJsonIndent } from '../gocompat/go-format.js';
import type { DecisionTrace } from '../domain/decision-records.js';
import { summarizeTrace, traceSummaryLines } from '../metrics/trace-summary.js';
import { pdAggregate, pdMetricsLines, summarizePd } from '../metrics/pd.js';
import { pdData } from '../metrics/section-data.js';
import { pdCorrections } from '../cluster/pd/project.js';
import { PoolRole } from '../cluster/pd/pools.js';

export type Section =
  | { readonly kind: 'metrics'; readonly header: string; readonly json: MetricsOutputJson }
  /** `data`: the section in the JSON output (absent: its lines as an object, see {@link renderJson}). */
  | { readonly kind: 'text'; readonly header: string; readonly key: string; readonly lines: readonly string[]; readonly data?: object };

export interface Report {
  readonly sections: readonly Section[];
  /** JSON-only sections (see ReportOptions.jsonExtras). */
  readonly jsonExtras: Readonly<Record<string, unknown>>;
  readonly aggregate: MetricsView;
  readonly clusterOutput: MetricsOutputJson;
  /** Built under --semantics corrected. */
  readonly corrected: boolean;
}

export interface ReportOptions {
  /** Resolved instance scheduler (priority inversions are only counted under priority-fcfs). */
  readonly scheduler: string;
  /** `--fitness-weights` (run only); null = no fitness section. */
  readonly fitnessWeights: ReadonlyMap<string, number> | null;
  /** Merged goodput targets; null = none configured. */
  readonly goodputTargets: ReadonlyMap<string, SloDimTargets> | null;
  /** Decision records, when `--trace-level decisions`; printed as a summary with `summarizeTrace`. */
  readonly trace: DecisionTrace | null;
  readonly summarizeTrace: boolean;
  /**
   * Extra top-level keys of the JSON output only (policy, policy_anomalies, trace); never in the reference text.
   * A function is called once, when the report's `jsonExtras` is first read (only the JSON rendering reads it).
   */
  readonly jsonExtras?: Readonly<Record<string, unknown>> | (() => Readonly<Record<string, unknown>>);
  /** --semantics corrected: the metrics corrections of docs/reference-differences.md (E5, E6, M2-M4). */
  readonly corrected?: boolean;
}

export const DEFAULT_REPORT_OPTIONS: ReportOptions = {
  scheduler: 'fcfs', fitnessWeights: null, goodputTargets: null, trace: null, summarizeTrace: false,
};

function text(header: string, key: string, lines: readonly string[] | null, out: Section[], data?: object): void {
  if (lines) out.push({ kind: 'text', header, key, lines, ...(data === undefined ? {} : { data }) });
}

export function buildReport(cs: ClusterSimulator, opts: ReportOptions = DEFAULT_REPORT_OPTIONS): Report {
  const corrected = opts.corrected === true;
  const views = cs.instances.map((i) => instanceView(i.metrics));
  const pd = cs.pd;
  const agg = pd === null ? aggregateViews(views) : pdAggregate(aggregateViews(views), pdCorrections(pd), pd.parents.map((p) => p.req));
  const sections: Section[] = [];
  if (cs.configuredInstances > 1) {
    cs.instances.forEach((inst, k) => {
      sections.push({ kind: 'metrics', header: 'Simulation Metrics', json: withAdapters(buildMetricsOutput(views[k] as MetricsView, inst.id, corrected), views[k] as MetricsView) });
    });
  }
  const goodput = computeGoodput(agg.requests, cs.injectedByClass, agg.simEndedTime, opts.goodputTargets, corrected);
  const clusterOutput = withAdapters(applyGoodput(buildMetricsOutput(agg, 'cluster', corrected), goodput), agg);
  sections.push({ kind: 'metrics', header: 'Simulation Metrics', json: clusterOutput });
  const raw = collectRawMetrics({
    aggregate: agg,
    perInstance: cs.instances.map((i) => instanceRawView(i.metrics)),
    scheduler: opts.scheduler,
    rejectedRequests: cs.rejectedRequests,
    routingRejections: cs.routingRejections,
    encodeRoutingRejections: cs.encodeRoutingRejections,
    injectedByClass: cs.injectedByClass,
    shedByTier: cs.shedByTier,
    gateway: cs.gatewayCounters(),
    corrected,
  });
  if (opts.fitnessWeights) text('Fitness Evaluation', 'fitness', fitnessLines(computeFitness(raw, opts.fitnessWeights)), sections);
  text('Anomaly Counters', 'anomaly_counters', anomalyLines(raw), sections);
  text('KV Cache Metrics', 'kv_cache_metrics', kvCacheLines(raw), sections);
  for (const s of breakdownSections(agg.requests, agg.simEndedTime, opts.goodputTargets !== null, corrected)) text(s.header, s.key, s.lines, sections, s.data);
  if (pd !== null) {
    const contention = pd.contentionEnabled;
    const summary = summarizePd({
      parents: pd.parents.map((p) => ({ id: p.id, transferStartTime: p.transferStartTime, transferCompleteTime: p.transferCompleteTime, req: p.req })),
      instances: cs.instances.map((inst, i) => ({ completedRequests: inst.metrics.completedRequests, prefill: pd.inPool(i, PoolRole.Prefill), decode: pd.inPool(i, PoolRole.Decode) })),
      simEndedTime: agg.simEndedTime,
      contention,
      peakConcurrentTransfers: pd.peakConcurrentTransfers,
      meanTransferQueueDepth: pd.meanTransferQueueDepth,
      ...(corrected ? { droppedAtDecodeKV: pd.droppedAtDecodeKV } : {}),
    });
    text('PD Metrics', 'pd_metrics', pdMetricsLines(summary, contention), sections, summary === null ? undefined : pdData(summary, contention));
  }
  if (opts.trace && opts.summarizeTrace) text('Trace Summary', 'trace_summary', traceSummaryLines(summarizeTrace(opts.trace)), sections);
  const extras = opts.jsonExtras ?? {};
  if (typeof extras !== 'function') return { sections, aggregate: agg, clusterOutput, jsonExtras: extras, corrected };
  let computed: Readonly<Record<string, unknown>> | null = null;
  return {
    sections,
    aggregate: agg,
    clusterOutput,
    corrected,
    get jsonExtras() {
      return (computed ??= extras());
    },
  };
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

function snake(label: string): string {
  return label.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/**
 * A text section without data of its own as a JSON object: `Label: value` lines become snake_case keys with
 * numbers parsed; a line ending in ':' opens a nested object holding the more-indented lines under it.
 */
function linesToObject(lines: readonly string[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const stack: { indent: number; obj: Record<string, unknown> }[] = [{ indent: -1, obj: root }];
  for (const line of lines) {
    const m = /^(\s*)(.+?):\s*(.*)$/.exec(line);
    if (!m) continue;
    const indent = (m[1] as string).length;
    while (stack.length > 1 && (stack[stack.length - 1] as { indent: number }).indent >= indent) stack.pop();
    const parent = (stack[stack.length - 1] as { obj: Record<string, unknown> }).obj;
    const key = snake(m[2] as string);
    const raw = (m[3] as string).trim();
    if (raw === '') {
      const obj: Record<string, unknown> = {};
      parent[key] = obj;
      stack.push({ indent, obj });
    } else {
      const num = Number(raw);
      parent[key] = Number.isFinite(num) ? num : raw;
    }
  }
  return root;
}

/**
 * The default stdout: one JSON document with the reference's field names; the breakdown and P/D sections as
 * their data (metrics/section-data.ts), the other text sections as nested keys.
 */
export function renderJson(r: Report): string {
  const doc: Record<string, unknown> = {};
  const perInstance = r.sections.filter((s) => s.kind === 'metrics' && s.json['instance_id'] !== 'cluster');
  doc['simulation_metrics'] = r.clusterOutput;
  if (perInstance.length > 0) doc['instances'] = perInstance.map((s) => (s.kind === 'metrics' ? s.json : null));
  for (const sec of r.sections) if (sec.kind === 'text') doc[sec.key] = sec.data ?? linesToObject(sec.lines);
  for (const [k, v] of Object.entries(r.jsonExtras)) doc[k] = v;
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function renderMetricsFile(r: Report): string {
  return goJsonIndent(buildMetricsFile(r.aggregate, r.clusterOutput, r.corrected));
}

/** {@link renderMetricsFile}'s bytes as chunks, built one request row at a time (for files of any size). */
export function metricsFileText(r: Report): Iterable<string> {
  return metricsFileChunks(r.aggregate, r.clusterOutput, r.corrected);
}
