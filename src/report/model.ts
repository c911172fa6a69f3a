/**
 * What reports are drawn from: a run's (or replay's) JSON output, optionally with `report_data`, or an
 * evaluation result. Saved files are read back through the bounded JSON loader and checked here, so a report
 * of a live run and of the same run saved and reloaded are built from identical views (and are the same bytes).
 */
import { z } from 'zod';
import { BlisError } from '../domain/errors.js';
import { parseJson } from '../format/json.js';
import { REPORT_DATA_VERSION, type ReportData } from '../sim/report-data.js';

export class ReportInputError extends BlisError {
  constructor(message: string, file?: string) {
    super('bad-report-input', message, file === undefined ? {} : { file });
    this.name = 'ReportInputError';
  }
}

export interface AnomalyEvent {
  readonly type: string;
  readonly timestamp_us: number;
  readonly severity: number;
  readonly description: string;
}

export interface RunView {
  readonly kind: 'run';
  /** How the run is named in reports (its file name, or "run"). */
  readonly label: string;
  /** `simulation_metrics`: the cluster's MetricsOutput. */
  readonly metrics: Readonly<Record<string, unknown>>;
  /** Per-instance MetricsOutput (multi-instance runs). */
  readonly instances: readonly Readonly<Record<string, unknown>>[];
  /** The text sections as objects (anomaly counters, KV cache metrics, per-SLO metrics...). */
  readonly sections: Readonly<Record<string, unknown>>;
  readonly anomalies: readonly AnomalyEvent[];
  /** Detected anomalies by type (`policy_anomalies.counts`). */
  readonly anomalyCounts: Readonly<Record<string, number>>;
  readonly data: ReportData | null;
}

export interface ScenarioView {
  readonly scenario: string;
  readonly seed: number;
  readonly score: number;
  readonly metrics: Readonly<Record<string, number>>;
  readonly objectives: Readonly<Record<string, number>>;
  readonly data: ReportData | null;
}

export interface EvaluationView {
  readonly kind: 'evaluation';
  readonly label: string;
  readonly combinedScore: number;
  readonly objectives: Readonly<Record<string, number>>;
  readonly scores: Readonly<Record<string, number>>;
  readonly features: Readonly<Record<string, number>>;
  readonly candidate: string;
  readonly suite: string;
  readonly error: string | null;
  readonly scenarios: readonly ScenarioView[];
}

export type ResultView = RunView | EvaluationView;

const cdf = z.object({ count: z.number(), mean: z.number(), values: z.array(z.number()) });
const series = z.record(z.string(), z.array(z.number()));
const reportDataSchema = z.object({
  version: z.literal(REPORT_DATA_VERSION),
  source: z.enum(['run', 'replay']),
  options: z.record(z.string(), z.string()),
  cdf_probabilities: z.array(z.number()),
  latency: z.object({ ttft_ms: z.record(z.string(), cdf), itl_ms: z.record(z.string(), cdf), e2e_ms: z.record(z.string(), cdf) }),
  slo_classes: z.array(z.string()),
  routing: z.array(z.object({ instance: z.string(), routed: z.number(), completed: z.number() })),
  regret: z.object({ time_us: z.array(z.number()), mean: z.array(z.number()), max: z.array(z.number()), decisions: z.array(z.number()) }).nullable(),
  timeseries: z.object({
    intervalUs: z.number(),
    times: z.array(z.number()),
    columns: z.record(z.string(), z.enum(['gauge', 'counter'])),
    cluster: series,
    instances: z.array(z.object({ id: z.string(), firstRow: z.number(), values: series })),
  }).nullable(),
  run_end_us: z.number(),
  resolved: z.object({
    semantics: z.string(),
    groups: z.array(z.object({ instances: z.string(), count: z.number(), role: z.string(), model: z.string(), gpu: z.string(), tp: z.number(), kv_blocks: z.number(), cpu_kv_blocks: z.number(), latency_model: z.string() })),
  }),
  latency_over_time: z.object({
    bin_us: z.number(),
    time_us: z.array(z.number()),
    classes: z.record(z.string(), z.object({
      count: z.array(z.number()),
      ttft_p90_ms: z.array(z.number().nullable()),
      e2e_p90_ms: z.array(z.number().nullable()),
      attainment: z.array(z.number().nullable()).nullable(),
    })),
  }).nullable(),
});

function reportData(raw: unknown, where: string): ReportData | null {
  if (raw === undefined || raw === null) return null;
  const r = reportDataSchema.safeParse(raw);
  if (!r.success) throw new ReportInputError(`${where}: report_data is not what this blis-ts writes (version ${REPORT_DATA_VERSION}): ${z.prettifyError(r.error).split('\n').slice(0, 3).join('; ')}; regenerate it with --report-data`);
  return r.data;
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const nums = (v: unknown): Record<string, number> => Object.fromEntries(Object.entries(obj(v)).filter(([, x]) => typeof x === 'number')) as Record<string, number>;

const RUN_KEYS = new Set(['simulation_metrics', 'instances', 'policy_anomalies', 'report_data', 'trace', 'policy']);

/** A run view from a parsed run/replay JSON document. */
export function runView(doc: Record<string, unknown>, label: string): RunView {
  const pa = obj(doc['policy_anomalies']);
  const events = Array.isArray(pa['events']) ? (pa['events'] as unknown[]) : [];
  return {
    kind: 'run',
    label,
    metrics: obj(doc['simulation_metrics']),
    instances: Array.isArray(doc['instances']) ? (doc['instances'] as unknown[]).map(obj) : [],
    sections: Object.fromEntries(Object.entries(doc).filter(([k]) => !RUN_KEYS.has(k))),
    anomalies: events.map(obj).map((e) => ({ type: str(e['type']), timestamp_us: num(e['timestamp_us']), severity: num(e['severity']), description: str(e['description']) })),
    anomalyCounts: nums(pa['counts']),
    data: reportData(doc['report_data'], label),
  };
}

export function evaluationView(doc: Record<string, unknown>, label: string): EvaluationView {
  const scen = Array.isArray(doc['scenarios']) ? (doc['scenarios'] as unknown[]).map(obj) : [];
  const err = obj(doc['error']);
  return {
    kind: 'evaluation',
    label,
    combinedScore: num(doc['combined_score']),
    objectives: nums(doc['objectives']),
    scores: nums(doc['scores']),
    features: nums(doc['features']),
    candidate: str(obj(doc['candidate'])['id']),
    suite: str(obj(doc['suite'])['name']),
    error: doc['error'] === undefined ? null : `${str(err['code'])}: ${str(err['message'])}`,
    scenarios: scen.map((s) => ({
      scenario: str(s['scenario']),
      seed: num(s['seed']),
      score: num(s['score']),
      metrics: nums(s['metrics']),
      objectives: nums(s['objectives']),
      data: reportData(s['report_data'], `${label} ${str(s['scenario'])}@${num(s['seed'])}`),
    })),
  };
}

/** Reads a saved result: `blis run|replay` JSON output or a `blis evaluate` result. */
export function loadResult(text: string, file: string, label: string): ResultView {
  const doc = parseJson(text, file);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new ReportInputError(`${file}: expected a JSON object (blis run/replay JSON output or a blis evaluate result)`, file);
  const d = doc as Record<string, unknown>;
  if (d['simulation_metrics'] !== undefined) return runView(d, label);
  if (typeof d['combined_score'] === 'number' && Array.isArray(d['scenarios'])) return evaluationView(d, label);
  throw new ReportInputError(`${file}: neither a blis run/replay JSON output (no simulation_metrics) nor a blis evaluate result (no combined_score); save one with blis run ... --report-data > result.json`, file);
}
