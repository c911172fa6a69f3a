/**
 * What a report draws for one run, as plain JSON (`report_data` in the JSON output with `--report-data`, and
 * the input of the HTML report): binned latency CDFs overall and per SLO class, the sampled time series
 * (coarsened to at most {@link REPORT_MAX_ROWS} rows), requests routed per instance and routing regret over
 * time. Sized by the number of instances and rows, never by the number of requests.
 */
import type { TimeSeriesData, InstanceSeries } from '../cluster/timeseries.js';
import type { Request } from '../domain/request.js';
import { binnedCdf, weightedCdf, CDF_PROBABILITIES, type BinnedCdf } from '../metrics/cdf.js';
import type { FlagValues } from './options.js';
import type { Semantics } from '../domain/semantics.js';
import type { ClusterSimulator } from '../cluster/cluster.js';
import { roleName } from '../cluster/pd/pools.js';
import type { SloDimTargets } from '../metrics/goodput.js';
import { semanticsFlag } from './resolve-engine.js';

/** What the report data is drawn from: the finished cluster, every request, the sampled series. */
export interface ReportDataInput {
  readonly cluster: ClusterSimulator;
  readonly requests: readonly Request[];
  readonly timeseries: TimeSeriesData | null;
  /** Merged goodput targets per SLO class (absent or null: none, no attainment series). */
  readonly goodputTargets?: ReadonlyMap<string, SloDimTargets> | null;
}

export const REPORT_DATA_VERSION = 2;
/** Requests per latency-over-time bin on average (at most {@link LATENCY_BINS} bins). */
export const LATENCY_BIN_REQUESTS = 20;
export const LATENCY_BINS = 100;
/** Time-series rows kept in report data. */
export const REPORT_MAX_ROWS = 512;
/** Time bins of the regret series. */
export const REGRET_BINS = 200;

export type LatencyMetric = 'ttft_ms' | 'itl_ms' | 'e2e_ms';

export interface ReportData {
  readonly version: number;
  readonly source: 'run' | 'replay';
  /** Options given explicitly (name -> value text), in option-table order. */
  readonly options: Readonly<Record<string, string>>;
  readonly cdf_probabilities: readonly number[];
  /** Per metric: `all`, then each SLO class (`default` for requests without one). */
  readonly latency: Readonly<Record<LatencyMetric, Readonly<Record<string, BinnedCdf>>>>;
  readonly slo_classes: readonly string[];
  readonly routing: readonly { readonly instance: string; readonly routed: number; readonly completed: number }[];
  /** Mean and max counterfactual regret of the routing decisions in each time bin (decision traces only). */
  readonly regret: { readonly time_us: readonly number[]; readonly mean: readonly number[]; readonly max: readonly number[]; readonly decisions: readonly number[] } | null;
  readonly timeseries: TimeSeriesData | null;
  /** End of the run (µs): the latest instance clock, as `vllm_estimated_duration_s`; the time axes end here. */
  readonly run_end_us: number;
  /** The configuration the run actually used, resolved (defaults and deployment pools included). */
  readonly resolved: ResolvedConfig;
  /** Latency and SLO attainment of the requests by arrival time, overall and per SLO class. */
  readonly latency_over_time: LatencyOverTime | null;
}

/** Instances sharing one resolved configuration. */
export interface ResolvedGroup {
  /** Instance ids: all of them, or the first and last with the count between when there are more than 4. */
  readonly instances: string;
  readonly count: number;
  /** P/D pool role (`prefill`, `decode`, `prefill-decode`, `encode`), or '' without pools. */
  readonly role: string;
  readonly model: string;
  readonly gpu: string;
  readonly tp: number;
  readonly kv_blocks: number;
  readonly cpu_kv_blocks: number;
  readonly latency_model: string;
}

export interface ResolvedConfig {
  readonly semantics: string;
  readonly groups: readonly ResolvedGroup[];
}

export interface ClassOverTime {
  /** Requests that arrived in each bin. */
  readonly count: readonly number[];
  /** p90 (nearest rank) of the TTFT / E2E of those that have one, in ms; null for none. */
  readonly ttft_p90_ms: readonly (number | null)[];
  readonly e2e_p90_ms: readonly (number | null)[];
  /** Share of the bin's arrivals that completed within every target of their class; null without targets. */
  readonly attainment: readonly (number | null)[] | null;
}

export interface LatencyOverTime {
  readonly bin_us: number;
  /** Start of each bin (µs); bin i is [time_us[i], time_us[i] + bin_us). */
  readonly time_us: readonly number[];
  /** `all`, then each SLO class. */
  readonly classes: Readonly<Record<string, ClassOverTime>>;
}

/** Options that only say where or how outputs go: not part of the run's configuration. */
const OUTPUT_ONLY = new Set(['report-data', 'output-format', 'metrics-path', 'timeseries-path', 'timeseries-format', 'trace-output', 'results-path', 'log', 'summarize-trace']);

const classOf = (r: Request): string => (r.sloClass === '' ? 'default' : r.sloClass);

/** Token-level ITLs of completed requests (the reference's AllITLs) per class, as step values × use counts. */
function itlCdfs(out: ReportDataInput, classes: readonly string[]): Record<string, BinnedCdf> {
  const values: number[] = [];
  const offset = new Map<string, number>();
  for (const inst of out.cluster.instances) {
    offset.set(inst.id, values.length);
    for (const v of inst.metrics.stepItl.toArray()) values.push(v);
  }
  const weights = new Map<string, Int32Array>([['all', new Int32Array(values.length)]]);
  for (const c of classes) weights.set(c, new Int32Array(values.length));
  const pd = out.cluster.pd;
  for (const req of out.requests) {
    // A split request's tokens were decoded by its decode half.
    const r = pd?.completedParent(req) === true ? (pd.parentOf(req)?.decode ?? req) : req;
    if (r.outcome !== 'completed' || !r.hasE2E) continue;
    const base = offset.get(r.assignedInstance);
    if (base === undefined) continue;
    const all = weights.get('all') as Int32Array;
    const own = weights.get(classOf(req)) as Int32Array;
    // Earlier runs of ITL steps, then the last one (see Request.itlFirst).
    const runs = r.itlCount > 0 ? [...(r.itlRuns ?? []), r.itlFirst, r.itlLast] : (r.itlRuns ?? []);
    for (let i = 0; i < runs.length; i += 2) {
      for (let s = runs[i] as number; s <= (runs[i + 1] as number); s++) {
        all[base + s - 1] = (all[base + s - 1] as number) + 1;
        own[base + s - 1] = (own[base + s - 1] as number) + 1;
      }
    }
  }
  const res: Record<string, BinnedCdf> = {};
  for (const [c, w] of weights) {
    const cdf = weightedCdf(values, w, 1e-3);
    if (cdf !== null) res[c] = cdf;
  }
  return res;
}

function perClass(requests: readonly Request[], classes: readonly string[], pick: (r: Request) => number | null): Record<string, BinnedCdf> {
  const groups = new Map<string, number[]>([['all', []], ...classes.map((c) => [c, []] as [string, number[]])]);
  for (const r of requests) {
    const v = pick(r);
    if (v === null) continue;
    (groups.get('all') as number[]).push(v);
    (groups.get(classOf(r)) as number[]).push(v);
  }
  const res: Record<string, BinnedCdf> = {};
  for (const [c, vs] of groups) {
    const cdf = binnedCdf(vs, 1e-3);
    if (cdf !== null) res[c] = cdf;
  }
  return res;
}

function regretSeries(out: ReportDataInput): ReportData['regret'] {
  const recs = out.cluster.routingRecords;
  if (recs.length === 0 || recs.every((r) => r.candidates === null)) return null;
  const end = Math.max(1, ...recs.map((r) => r.clock));
  const width = Math.max(1, Math.ceil((end + 1) / REGRET_BINS));
  const n = Math.ceil((end + 1) / width);
  const sum = new Array<number>(n).fill(0);
  const max = new Array<number>(n).fill(0);
  const cnt = new Array<number>(n).fill(0);
  for (const r of recs) {
    const b = Math.floor(r.clock / width);
    sum[b] = (sum[b] as number) + r.regret;
    max[b] = Math.max(max[b] as number, r.regret);
    cnt[b] = (cnt[b] as number) + 1;
  }
  const keep = cnt.map((c, i) => (c > 0 ? i : -1)).filter((i) => i >= 0);
  const r6 = (v: number): number => Math.round(v * 1e6) / 1e6;
  return {
    time_us: keep.map((i) => (i + 1) * width),
    mean: keep.map((i) => r6((sum[i] as number) / (cnt[i] as number))),
    max: keep.map((i) => r6(max[i] as number)),
    decisions: keep.map((i) => cnt[i] as number),
  };
}

/** Merges groups of consecutive rows: counters summed, gauges as at the group's end, derived columns recomputed. */
export function coarsenSeries(ts: TimeSeriesData, maxRows: number): TimeSeriesData {
  const factor = Math.ceil(ts.times.length / maxRows);
  if (factor <= 1) return ts;
  const n = Math.ceil(ts.times.length / factor);
  const times = Array.from({ length: n }, (_, g) => ts.times[Math.min(ts.times.length - 1, (g + 1) * factor - 1)] as number);
  const merge = (cols: Readonly<Record<string, readonly number[]>>, firstRow: number): Record<string, number[]> => {
    const len = (Object.values(cols)[0] ?? []).length;
    const out: Record<string, number[]> = {};
    const firstGroup = Math.floor(firstRow / factor);
    const groups = len === 0 ? 0 : Math.floor((firstRow + len - 1) / factor) - firstGroup + 1;
    for (const [name, v] of Object.entries(cols)) {
      const kind = ts.columns[name];
      const o = new Array<number>(groups).fill(0);
      for (let j = 0; j < len; j++) {
        const g = Math.floor((firstRow + j) / factor) - firstGroup;
        if (kind === 'counter') o[g] = (o[g] as number) + (v[j] as number);
        else o[g] = v[j] as number;
      }
      out[name] = o;
    }
    // Step time: mean over the group's steps; throughput: the group's tokens over its span.
    const st = cols['step_time_us'];
    const steps = cols['steps'];
    if (st !== undefined && steps !== undefined) {
      const tot = new Array<number>(groups).fill(0);
      for (let j = 0; j < len; j++) {
        const g = Math.floor((firstRow + j) / factor) - firstGroup;
        tot[g] = (tot[g] as number) + (st[j] as number) * (steps[j] as number);
      }
      out['step_time_us'] = tot.map((t, g) => ((out['steps']?.[g] ?? 0) > 0 ? Math.round((t / (out['steps']?.[g] as number)) * 1000) / 1000 : 0));
    }
    if (out['output_tokens'] !== undefined && out['throughput_tokens_per_s'] !== undefined) {
      out['throughput_tokens_per_s'] = (out['output_tokens']).map((v, g) => {
        const k = firstGroup + g;
        const span = (times[k] as number) - (k > 0 ? (times[k - 1] as number) : 0);
        return span > 0 ? Math.round(((v * 1e6) / span) * 1000) / 1000 : 0;
      });
    }
    return out;
  };
  const instances: InstanceSeries[] = ts.instances.map((s) => ({ id: s.id, firstRow: Math.floor(s.firstRow / factor), values: merge(s.values, s.firstRow) }));
  return { intervalUs: ts.intervalUs * factor, times, columns: ts.columns, cluster: merge(ts.cluster, 0), instances };
}

/** End of the run (µs): the latest instance clock (as `vllm_estimated_duration_s`). */
function runEnd(cs: ClusterSimulator): number {
  let end = 0;
  for (const inst of cs.instances) end = Math.max(end, inst.metrics.simEndedTime);
  return end;
}

/** Columns that are values per interval (0 in an interval where nothing ran), though stored as gauges. */
const PER_INTERVAL = new Set(['step_time_us', 'throughput_tokens_per_s']);

/**
 * The series cut at the end of the run: trailing rows in which nothing moved (no counter counted, no gauge of
 * the cluster or of an instance changed) are dropped once a row reaches `endUs`. A no-op event long after the
 * last request (a request's stale timeout) moves the cluster clock and the sampler with it; what it adds is
 * empty rows, and totals are unchanged by dropping them.
 */
export function trimSeries(ts: TimeSeriesData, endUs: number): TimeSeriesData {
  const n = ts.times.length;
  const moved = (cols: Readonly<Record<string, readonly number[]>>, j: number): boolean => {
    for (const [name, v] of Object.entries(cols)) {
      const x = v[j] as number;
      // Per-interval columns (step time, throughput) are 0 in an interval where nothing ran, like counters.
      if (ts.columns[name] === 'counter' || PER_INTERVAL.has(name) ? x !== 0 : j > 0 && x !== v[j - 1]) return true;
    }
    return false;
  };
  let keep = n;
  while (keep > 1) {
    const k = keep - 1;
    if ((ts.times[k - 1] as number) < endUs) break;
    if (moved(ts.cluster, k)) break;
    if (ts.instances.some((s) => k - s.firstRow >= 1 && k - s.firstRow < (Object.values(s.values)[0] ?? []).length && moved(s.values, k - s.firstRow))) break;
    keep--;
  }
  if (keep === n) return ts;
  const cut = (cols: Readonly<Record<string, readonly number[]>>, len: number): Record<string, number[]> => Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, v.slice(0, Math.max(0, len))]));
  return {
    ...ts,
    times: ts.times.slice(0, keep),
    cluster: cut(ts.cluster, keep),
    instances: ts.instances.filter((s) => s.firstRow < keep).map((s) => ({ ...s, values: cut(s.values, keep - s.firstRow) })),
  };
}

function idRange(ids: readonly string[]): string {
  return ids.length <= 4 ? ids.join(', ') : `${ids[0] as string} … ${ids[ids.length - 1] as string}`;
}

/** The configuration each instance ran with, grouped: model, GPU, TP, KV blocks, latency model, P/D role. */
function resolvedConfig(cs: ClusterSimulator, semantics: Semantics): ResolvedConfig {
  const groups = new Map<string, { ids: string[]; g: Omit<ResolvedGroup, 'instances' | 'count'> }>();
  cs.instances.forEach((inst, i) => {
    const facts = cs.facts[i];
    const role = cs.pd === null ? '' : roleName(cs.pd.role(i));
    const g = {
      role,
      model: facts?.model ?? '',
      gpu: inst.hardware?.gpu ?? facts?.gpuType ?? '',
      tp: inst.hardware?.tp ?? facts?.tpDegree ?? 0,
      kv_blocks: inst.kv.totalBlocks,
      cpu_kv_blocks: inst.kv.tierStats().cpuTotalBlocks,
      latency_model: inst.latencyModelName,
    };
    const key = JSON.stringify(g);
    const e = groups.get(key);
    if (e === undefined) groups.set(key, { ids: [inst.id], g });
    else e.ids.push(inst.id);
  });
  return { semantics, groups: [...groups.values()].map(({ ids, g }) => ({ instances: idRange(ids), count: ids.length, ...g })) };
}

/** Nearest-rank p90 of `v` (sorted in place) in ms, 3 decimals; null for none. */
function p90Ms(v: number[]): number | null {
  if (v.length === 0) return null;
  v.sort((a, b) => a - b);
  return Math.round((v[Math.min(v.length - 1, Math.max(0, Math.ceil(0.9 * v.length) - 1))] as number)) / 1000;
}

/** One arrived request as the latency-over-time bins see it (times in µs). */
export interface LatencyPoint {
  readonly cls: string;
  readonly arrival: number;
  readonly ttft: number | null;
  /** E2E of a completed request; null otherwise. */
  readonly e2e: number | null;
  /** Completed within every target of its class (false without targets or when not completed). */
  readonly met: boolean;
}

/**
 * Per arrival-time bin and SLO class: arrivals, p90 TTFT and E2E, and (for classes with targets) the share of
 * arrivals that completed within every target of their class — `slo_attainment`'s rule, whose denominator is
 * arrivals too. Bins: about {@link LATENCY_BIN_REQUESTS} arrivals each on average, at most {@link LATENCY_BINS},
 * spanning [0, last arrival].
 */
export function binLatencies(points: readonly LatencyPoint[], classes: readonly string[], targeted: ReadonlySet<string>): LatencyOverTime | null {
  if (points.length === 0) return null;
  let end = 1;
  for (const p of points) end = Math.max(end, p.arrival + 1);
  const nb = Math.max(1, Math.min(LATENCY_BINS, Math.floor(points.length / LATENCY_BIN_REQUESTS)));
  const width = Math.max(1, Math.ceil(end / nb));
  const bins = Math.max(1, Math.ceil(end / width));
  const build = (cls: string): ClassOverTime => {
    const count = new Array<number>(bins).fill(0);
    const met = new Array<number>(bins).fill(0);
    const ttft: number[][] = Array.from({ length: bins }, () => []);
    const e2e: number[][] = Array.from({ length: bins }, () => []);
    for (const p of points) {
      if (cls !== 'all' && p.cls !== cls) continue;
      const b = Math.min(bins - 1, Math.floor(p.arrival / width));
      count[b] = (count[b] as number) + 1;
      if (p.ttft !== null) (ttft[b] as number[]).push(p.ttft);
      if (p.e2e !== null) (e2e[b] as number[]).push(p.e2e);
      if (p.met) met[b] = (met[b] as number) + 1;
    }
    return {
      count,
      ttft_p90_ms: ttft.map(p90Ms),
      e2e_p90_ms: e2e.map(p90Ms),
      attainment: !targeted.has(cls) ? null : met.map((m, b) => ((count[b] as number) > 0 ? Math.round((m / (count[b] as number)) * 1e6) / 1e6 : null)),
    };
  };
  const keys = ['all', ...(classes.length > 1 || targeted.size > 0 ? classes : [])];
  return { bin_us: width, time_us: Array.from({ length: bins }, (_, b) => b * width), classes: Object.fromEntries(keys.map((k) => [k, build(k)])) };
}

function latencyOverTime(out: ReportDataInput, classes: readonly string[], done: (r: Request) => boolean): LatencyOverTime | null {
  const targets = out.goodputTargets ?? null;
  const pd = out.cluster.pd;
  // Every request that arrived (rejected ones included: they missed their SLO).
  const points = out.cluster.arrivals.map((r): LatencyPoint => {
    const cls = classOf(r);
    const t = targets?.get(cls) ?? null;
    const ok = done(r);
    // The ITL of a split request is its decode half's.
    const itl = pd?.completedParent(r) === true ? (pd.parentOf(r)?.decode ?? r).itlMean : r.itlMean;
    const met = t !== null && ok && (t.ttftMs <= 0 || (r.hasTTFT && r.ttft / 1e3 <= t.ttftMs)) && (t.itlMs <= 0 || itl / 1e3 <= t.itlMs) && (t.e2eMs <= 0 || r.e2e / 1e3 <= t.e2eMs);
    return { cls, arrival: r.arrivalTime, ttft: r.hasTTFT ? r.ttft : null, e2e: ok ? r.e2e : null, met };
  });
  return binLatencies(points, classes, new Set(classes.filter((c) => targets?.has(c) === true)));
}

/** What the report data says about the options of a run: the options given, the semantics in effect. */
export interface ReportDataOptions {
  /** The options set explicitly, as [name, value text], in option-table order. */
  readonly options: readonly (readonly [string, string])[];
  readonly semantics: Semantics;
}

export function reportDataOptions(f: FlagValues): ReportDataOptions {
  return { options: f.explicitOptions(), semantics: semanticsFlag(f) };
}

/** The report data of a finished run or replay. */
export function buildReportData(out: ReportDataInput, o: ReportDataOptions, source: 'run' | 'replay'): ReportData {
  const classes = [...new Set(out.requests.map(classOf))].sort();
  // A split request keeps no outcome of its own: its parent record says whether it completed.
  const done = (r: Request): boolean => r.hasE2E && (r.outcome === 'completed' || out.cluster.pd?.completedParent(r) === true);
  const end = runEnd(out.cluster);
  return {
    version: REPORT_DATA_VERSION,
    source,
    options: Object.fromEntries(o.options.filter(([name]) => !OUTPUT_ONLY.has(name))),
    cdf_probabilities: CDF_PROBABILITIES,
    latency: {
      ttft_ms: perClass(out.requests, classes, (r) => (r.hasTTFT && r.registered ? r.ttft : null)),
      itl_ms: itlCdfs(out, classes),
      e2e_ms: perClass(out.requests, classes, (r) => (done(r) ? r.e2e : null)),
    },
    slo_classes: classes,
    routing: out.cluster.instances.map((i) => ({ instance: i.id, routed: i.metrics.requests.length, completed: i.metrics.completedRequests })),
    regret: regretSeries(out),
    timeseries: out.timeseries === null ? null : coarsenSeries(trimSeries(out.timeseries, end), REPORT_MAX_ROWS),
    run_end_us: end,
    resolved: resolvedConfig(out.cluster, o.semantics),
    latency_over_time: latencyOverTime(out, classes, done),
  };
}
