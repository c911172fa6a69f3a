/**
 * Fitness (policy-search-design §9): RawMetrics of one run, objectives normalised to [0, 1] scores, the
 * combined score, and Pareto ranks with crowding distances over a population.
 *
 * Normalisations are chosen so differences survive: `linear` over a documented range and `ratio` against a
 * target keep a 2x improvement visible, where the reference's 1/(1 + x/1000) squeezes every latency above a
 * few seconds towards 0 (kept as `reference_inverse` for parity with `--fitness-weights`).
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { Request } from '../domain/request.js';
import { percentilesMs } from '../metrics/stats.js';
import { closestNames, didYouMean } from '../domain/suggest.js';
import type { Constraint, ConstraintCheck, Direction, Normalization, Objective, RawMetrics, SloTargets } from './types.js';

/** The numeric fields of the cluster MetricsOutput copied into RawMetrics. */
const OUTPUT_FIELDS = [
  'ttft_mean_ms', 'ttft_p90_ms', 'ttft_p95_ms', 'ttft_p99_ms', 'e2e_mean_ms', 'e2e_p90_ms', 'e2e_p95_ms', 'e2e_p99_ms',
  'itl_mean_ms', 'itl_p90_ms', 'itl_p95_ms', 'itl_p99_ms', 'tokens_per_sec', 'responses_per_sec', 'completed_requests',
  'injected_requests', 'preemption_count', 'timed_out_requests', 'dropped_unservable', 'scheduling_delay_p99_ms',
] as const;

export interface RunFacts {
  readonly cs: ClusterSimulator;
  /** The cluster MetricsOutput (simulation_metrics). */
  readonly output: Readonly<Record<string, unknown>>;
  /** Anomaly counts by type. */
  readonly anomalies: Readonly<Record<string, number>>;
  /** End of the simulated run (µs). */
  readonly simEndedUs: number;
  /** GPU-hours, dollars and time-weighted mean live replicas of the run (autoscaled replicas counted while they live). */
  readonly usage: { readonly gpuHours: number; readonly cost: number; readonly replicasMean: number };
  readonly slo: Readonly<Record<string, SloTargets>>;
}

function targetsFor(slo: Readonly<Record<string, SloTargets>>, cls: string): SloTargets | undefined {
  return slo[cls === '' ? 'default' : cls] ?? (cls === '' ? slo[''] : undefined);
}

/** Whether `r` completed; a request split into P/D halves keeps no outcome of its own (its parent record knows). */
function completed(cs: ClusterSimulator, r: Request): boolean {
  return r.outcome === 'completed' || cs.pd?.completedParent(r) === true;
}

/** Whether a completed request met its class's targets (a class without targets: completed is enough). */
function meets(r: Request, t: SloTargets | undefined): boolean {
  if (t === undefined) return true;
  if (t.ttftMs > 0 && !(r.ttft <= t.ttftMs * 1000)) return false;
  if (t.itlMs > 0 && r.outputLen > 1 && !(r.itlMean <= t.itlMs * 1000)) return false;
  if (t.e2eMs > 0 && !(r.e2e <= t.e2eMs * 1000)) return false;
  if (r.sloTargetUs > 0 && !(r.ttft <= r.sloTargetUs)) return false;
  return true;
}

/**
 * Jain's index of `xs`: 1 for fewer than two values; 0 when every value is 0 (nobody was served: starving every
 * tenant alike earns no fairness credit, so rejecting everything cannot score on fairness).
 */
export function jain(xs: readonly number[]): number {
  if (xs.length < 2) return 1;
  let s = 0;
  let q = 0;
  for (const x of xs) {
    s += x;
    q += x * x;
  }
  return q === 0 ? 0 : (s * s) / (xs.length * q);
}

/** Percentiles reported per class (latencies in ms over the class's completed requests). */
const CLASS_PERCENTILES = [50, 90, 95, 99] as const;

/** Per-request latency series of one class: TTFT, E2E, TPOT (the request's mean inter-token latency), all µs. */
interface ClassTally {
  n: number;
  done: number;
  good: number;
  rejected: number;
  ttft: number[];
  e2e: number[];
  tpot: number[];
}

const REJECTED = new Set(['rejected', 'encode_rejected', 'gateway_rejected']);

function latencyStats(m: Record<string, number>, name: string, us: number[], suffix: string): void {
  if (us.length === 0) return;
  let sum = 0;
  for (const v of us) sum += v;
  m[`${name}_mean_ms${suffix}`] = sum / us.length / 1000;
  const ps = percentilesMs(us, CLASS_PERCENTILES);
  CLASS_PERCENTILES.forEach((p, i) => {
    m[`${name}_p${p}_ms${suffix}`] = ps[i] as number;
  });
}

/**
 * RawMetrics of one run: the MetricsOutput latencies and throughput, SLO attainment overall and per class
 * (every request that arrived counts; rejected, timed-out and unfinished ones miss), goodput, completed share and
 * drop rate, admission rate, cache hit rate, Jain fairness of the tenants' service ratios (completed / arrived),
 * GPU-hours and anomaly counts (`anomaly_<type>`). Per SLO class `c` (`default` for requests without one), the
 * same names with `@c`: arrivals, completions, completed share, drop and rejection rates, SLO attainment, goodput,
 * and TTFT, E2E and TPOT mean and percentiles in ms over the class's completed requests (absent when none
 * completed).
 */
export function rawMetrics(f: RunFacts): RawMetrics {
  const m: Record<string, number> = {};
  for (const k of OUTPUT_FIELDS) {
    const v = f.output[k];
    m[k] = typeof v === 'number' && Number.isFinite(v) ? v : 0;
  }
  const arrivals = f.cs.arrivals;
  const classes = new Map<string, ClassTally>();
  const tenants = new Map<string, { n: number; done: number }>();
  const all: ClassTally = { n: 0, done: 0, good: 0, rejected: 0, ttft: [], e2e: [], tpot: [] };
  for (const r of arrivals) {
    const done = completed(f.cs, r);
    const ok = done && meets(r, targetsFor(f.slo, r.sloClass));
    const key = r.sloClass === '' ? 'default' : r.sloClass;
    let c = classes.get(key);
    if (c === undefined) {
      c = { n: 0, done: 0, good: 0, rejected: 0, ttft: [], e2e: [], tpot: [] };
      classes.set(key, c);
    }
    for (const t of [c, all]) {
      t.n++;
      if (ok) t.good++;
      if (REJECTED.has(r.outcome)) t.rejected++;
      if (done) {
        t.done++;
        t.ttft.push(r.ttft);
        t.e2e.push(r.e2e);
        if (r.outputLen > 1) t.tpot.push(r.itlMean);
      }
    }
    const t = tenants.get(r.tenantId) ?? { n: 0, done: 0 };
    t.n++;
    if (done) t.done++;
    tenants.set(r.tenantId, t);
  }
  const n = arrivals.length;
  const secs = f.simEndedUs / 1e6;
  m['arrived_requests'] = n;
  m['slo_attainment'] = n === 0 ? 0 : all.good / n;
  m['goodput_rps'] = secs > 0 ? all.good / secs : 0;
  m['completed_share'] = n === 0 ? 0 : all.done / n;
  m['drop_rate'] = n === 0 ? 0 : 1 - all.done / n;
  latencyStats(m, 'tpot', all.tpot, '');
  for (const k of [...classes.keys()].sort()) {
    const c = classes.get(k) as ClassTally;
    m[`slo_attainment_${k}`] = c.good / c.n;
    const at = `@${k}`;
    m[`arrived_requests${at}`] = c.n;
    m[`completed_requests${at}`] = c.done;
    m[`completed_share${at}`] = c.done / c.n;
    m[`drop_rate${at}`] = 1 - c.done / c.n;
    m[`rejection_rate${at}`] = c.rejected / c.n;
    m[`slo_attainment${at}`] = c.good / c.n;
    m[`goodput_rps${at}`] = secs > 0 ? c.good / secs : 0;
    latencyStats(m, 'ttft', c.ttft, at);
    latencyStats(m, 'e2e', c.e2e, at);
    latencyStats(m, 'tpot', c.tpot, at);
  }
  const g = f.cs.gatewayCounters();
  const rejected = f.cs.rejectedRequests + f.cs.routingRejections + f.cs.encodeRoutingRejections + g.queueRejected + g.queueShed + g.expired;
  m['rejected_requests'] = rejected;
  m['rejection_rate'] = n === 0 ? 0 : rejected / n;
  m['admission_rate'] = n === 0 ? 1 : (n - rejected) / n;
  let hits = 0;
  for (const inst of f.cs.instances) hits += inst.kv.cacheHitRate();
  m['cache_hit_rate'] = f.cs.instances.length === 0 ? 0 : hits / f.cs.instances.length;
  const ratios = [...tenants.keys()].sort().map((k) => {
    const t = tenants.get(k) as { n: number; done: number };
    return t.done / t.n;
  });
  m['jain_fairness'] = jain(ratios);
  const perInstance = f.cs.instances.map((i) => i.metrics.completedRequests);
  const mean = perInstance.reduce((a, b) => a + b, 0) / Math.max(perInstance.length, 1);
  const sd = Math.sqrt(perInstance.reduce((a, b) => a + (b - mean) * (b - mean), 0) / Math.max(perInstance.length, 1));
  m['load_imbalance'] = mean > 0 ? sd / mean : 0;
  m['replicas'] = f.usage.replicasMean;
  m['gpu_hours'] = f.usage.gpuHours;
  m['cost'] = f.usage.cost;
  m['admission_delays'] = f.cs.admissionDelays;
  for (const k of Object.keys(f.anomalies).sort()) m[`anomaly_${k}`] = f.anomalies[k] as number;
  return m;
}

/** Metrics measured over completed requests only (ms): an objective on one is gated by the completed share. */
const LATENCY_METRIC = /^(ttft|e2e|itl|tpot|scheduling_delay)_(mean|p\d+)_ms$/;

const STATS = ['mean', ...CLASS_PERCENTILES.map((p) => `p${p}`)];

/** Per-SLO-class metrics, written `name@class` (`default` = requests without a class). */
const PER_CLASS_METRICS: readonly string[] = [
  'arrived_requests', 'completed_requests', 'completed_share', 'drop_rate', 'rejection_rate', 'slo_attainment', 'goodput_rps',
  ...['ttft', 'e2e', 'tpot'].flatMap((x) => STATS.map((s) => `${x}_${s}_ms`)),
];

const RUN_METRICS: readonly string[] = [
  ...OUTPUT_FIELDS, 'arrived_requests', 'slo_attainment', 'goodput_rps', 'completed_share', 'drop_rate', 'rejected_requests',
  'rejection_rate', 'admission_rate', 'cache_hit_rate', 'jain_fairness', 'load_imbalance', 'replicas', 'gpu_hours', 'cost',
  'admission_delays', ...STATS.map((s) => `tpot_${s}_ms`),
];

/** Every metric an objective or constraint can name (`<class>`, `<type>`: any SLO class or anomaly type). */
export const RAW_METRIC_NAMES: readonly string[] = [
  ...RUN_METRICS, 'slo_attainment_<class>', 'anomaly_<type>', ...PER_CLASS_METRICS.map((x) => `${x}@<class>`),
];

/** Metrics where less is better (the default direction of an objective written on the command line). */
const LOWER_IS_BETTER = /^(ttft_|e2e_|itl_|tpot_|scheduling_delay_|drop_rate|rejection_rate|rejected_requests|timed_out_requests|dropped_unservable|preemption_count|load_imbalance|replicas|gpu_hours|cost|admission_delays|anomaly_)/;

export interface MetricInfo {
  /** The metric without its class. */
  readonly base: string;
  /** The SLO class of `name@class`, or null. */
  readonly cls: string | null;
  /** Measured over completed requests (ms): gated by the completed share. */
  readonly latency: boolean;
  /** The better direction. */
  readonly direction: Direction;
}

/** What `metric` is, or a message saying why it names no metric (with the valid names). */
export function metricInfo(metric: string): MetricInfo | string {
  const at = metric.indexOf('@');
  const base = at < 0 ? metric : metric.slice(0, at);
  const cls = at < 0 ? null : metric.slice(at + 1);
  const direction: Direction = LOWER_IS_BETTER.test(base) ? 'minimize' : 'maximize';
  if (cls !== null) {
    if (!/^[A-Za-z0-9_.-]+$/.test(cls)) return `metric ${JSON.stringify(metric)}: write name@class with an SLO class name after @ (e.g. ttft_p99_ms@critical)`;
    if (!PER_CLASS_METRICS.includes(base)) {
      if (/^itl_(mean|p\d+)_ms$/.test(base)) return `metric ${JSON.stringify(metric)}: per class, inter-token latency is ${base.replace('itl_', 'tpot_')} (each request's mean inter-token latency)`;
      return `metric ${JSON.stringify(metric)}: ${didYouMean(closestNames(base, PER_CLASS_METRICS, 4))}${JSON.stringify(base)} has no per-class value; per-class metrics: ${PER_CLASS_METRICS.join(', ')}`;
    }
    return { base, cls, latency: LATENCY_METRIC.test(base), direction };
  }
  if (RUN_METRICS.includes(base) || /^slo_attainment_[A-Za-z0-9_.-]+$/.test(base) || /^anomaly_[a-z0-9_]+$/.test(base)) {
    return { base, cls: null, latency: LATENCY_METRIC.test(base), direction };
  }
  return `unknown metric ${JSON.stringify(metric)}; ${didYouMean(closestNames(base, RUN_METRICS, 4))}metrics: ${RAW_METRIC_NAMES.join(', ')}`;
}

const clamp01 = (x: number): number => (Number.isNaN(x) ? 0 : x < 0 ? 0 : x > 1 ? 1 : x);

/** An objective's raw value as a score in [0, 1], higher is better. */
export function normalize(v: number, direction: Direction, n: Normalization): number {
  switch (n.kind) {
    case 'linear': {
      const span = n.best - n.worst;
      return span === 0 ? (v === n.best ? 1 : 0) : clamp01((v - n.worst) / span);
    }
    case 'ratio':
      if (direction === 'maximize') return n.target <= 0 ? 1 : clamp01(v / n.target);
      return v <= n.target ? 1 : clamp01(n.target / v);
    case 'reference_inverse':
      return direction === 'minimize' ? 1 / (1 + Math.max(v, 0) / 1000) : clamp01(v / (v + 1000));
  }
}

/** The fewest completed requests a latency objective needs (per objective: `min_completed`). */
export const DEFAULT_MIN_COMPLETED = 1;

/** One run's objective values and scores and its weighted score before constraints. */
export interface RunScore {
  /** Raw values; a latency objective without enough completed requests, or on a class with no arrivals, has none. */
  readonly objectives: Record<string, number>;
  /** Scores in [0, 1]; an objective on a class that sent nothing in this run has none (it does not count). */
  readonly scores: Record<string, number>;
  readonly score: number;
}

/**
 * Raw objective values and scores of one run, and its combined score (weighted mean of the scores), by the rules of
 * docs/evaluate.md "How a score is made": a latency objective (measured over completed requests) scores its
 * normalised value times the square of the completed share of the requests it covers (a request that does not
 * complete scores the worst, and the load it shed made the others faster: it counts twice), and 0 (its worst)
 * with fewer than `minCompleted` completed requests; an objective on an SLO class that sent no request in the run
 * does not count.
 */
export function scoreRun(metrics: RawMetrics, objectives: readonly Objective[]): RunScore {
  const raw: Record<string, number> = {};
  const scores: Record<string, number> = {};
  let total = 0;
  let weights = 0;
  for (const o of objectives) {
    const info = metricInfo(o.metric);
    if (typeof info === 'string') throw new RangeError(info);
    const suffix = info.cls === null ? '' : `@${info.cls}`;
    if (info.cls !== null && metrics[`arrived_requests${suffix}`] === undefined) continue;
    if (info.cls === null && info.base.startsWith('slo_attainment_') && metrics[info.base] === undefined) continue;
    let s: number;
    if (info.latency) {
      const share = metrics[`completed_share${suffix}`] ?? 0;
      const arrived = metrics[`arrived_requests${suffix}`] ?? 0;
      const done = Math.round(share * arrived);
      const v = metrics[o.metric];
      if (v === undefined || done < (o.minCompleted ?? DEFAULT_MIN_COMPLETED)) {
        s = 0;
      } else {
        raw[o.name] = v;
        s = normalize(v, o.direction, o.normalization) * share * share;
      }
    } else {
      const v = metrics[o.metric] ?? 0;
      raw[o.name] = v;
      s = normalize(v, o.direction, o.normalization);
    }
    scores[o.name] = s;
    total += s * o.weight;
    weights += o.weight;
  }
  return { objectives: raw, scores, score: weights > 0 ? total / weights : 0 };
}

/**
 * Checks `constraints` on one run (`baseline`: the baseline's metrics on the same scenario and seed, for relative
 * constraints). A violated constraint multiplies the run's score by 1 - its relative shortfall (in [0, 1]):
 * `min: b` missed by v < b costs (b - v) / b; `max: b` exceeded costs (v - b) / b (b = 0: v itself, for rates).
 * A constraint on a class with no arrivals in the run, or relative to a baseline value that is missing, holds.
 */
export function checkConstraints(metrics: RawMetrics, baseline: RawMetrics | null, constraints: readonly Constraint[]): { factor: number; checks: ConstraintCheck[] } {
  let factor = 1;
  const checks: ConstraintCheck[] = [];
  for (const c of constraints) {
    const info = metricInfo(c.metric);
    if (typeof info === 'string') throw new RangeError(info);
    if (info.cls !== null && metrics[`arrived_requests@${info.cls}`] === undefined) continue;
    let bound = c.value;
    if (c.relativeToBaseline) {
      const b = baseline?.[c.metric];
      if (b === undefined) continue;
      bound = c.value * b;
    }
    const v = metrics[c.metric];
    let shortfall: number;
    if (v === undefined) shortfall = 1;
    else if (c.kind === 'min') shortfall = v >= bound ? 0 : bound > 0 ? (bound - v) / bound : 1;
    else shortfall = v <= bound ? 0 : bound > 0 ? (v - bound) / bound : v;
    shortfall = clamp01(shortfall);
    factor *= 1 - shortfall;
    checks.push({ name: c.name, value: v ?? null, bound, satisfied: shortfall === 0, factor: 1 - shortfall });
  }
  return { factor, checks };
}

/**
 * Pareto ranks (1 = non-dominated) of `points`, each a vector of scores where higher is better; fast
 * non-dominated sorting (Deb et al.). Returns the rank of each point in input order.
 */
export function paretoRanks(points: readonly (readonly number[])[]): number[] {
  const n = points.length;
  const dominates = (a: readonly number[], b: readonly number[]): boolean => {
    let better = false;
    for (let k = 0; k < a.length; k++) {
      if ((a[k] as number) < (b[k] as number)) return false;
      if ((a[k] as number) > (b[k] as number)) better = true;
    }
    return better;
  };
  const dominatedBy: number[][] = points.map(() => []);
  const count = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      if (dominates(points[i] as number[], points[j] as number[])) (dominatedBy[i] as number[]).push(j);
      else if (dominates(points[j] as number[], points[i] as number[])) count[i] = (count[i] as number) + 1;
    }
  }
  const rank = new Array<number>(n).fill(0);
  let front = [...Array(n).keys()].filter((i) => count[i] === 0);
  let r = 1;
  while (front.length > 0) {
    const next: number[] = [];
    for (const i of front) {
      rank[i] = r;
      for (const j of dominatedBy[i] as number[]) {
        count[j] = (count[j] as number) - 1;
        if (count[j] === 0) next.push(j);
      }
    }
    front = next.sort((a, b) => a - b);
    r++;
  }
  return rank;
}

/** Crowding distance of each point within its front (Infinity at a front's extremes; NSGA-II). */
export function crowdingDistances(points: readonly (readonly number[])[], ranks: readonly number[]): number[] {
  const out = new Array<number>(points.length).fill(0);
  const dims = points[0]?.length ?? 0;
  for (const r of [...new Set(ranks)].sort((a, b) => a - b)) {
    const idx = ranks.flatMap((x, i) => (x === r ? [i] : []));
    if (idx.length <= 2) {
      for (const i of idx) out[i] = Infinity;
      continue;
    }
    for (let k = 0; k < dims; k++) {
      const sorted = [...idx].sort((a, b) => ((points[a] as number[])[k] as number) - ((points[b] as number[])[k] as number) || a - b);
      const lo = (points[sorted[0] as number] as number[])[k] as number;
      const hi = (points[sorted[sorted.length - 1] as number] as number[])[k] as number;
      out[sorted[0] as number] = Infinity;
      out[sorted[sorted.length - 1] as number] = Infinity;
      if (hi === lo) continue;
      for (let s = 1; s < sorted.length - 1; s++) {
        const i = sorted[s] as number;
        out[i] = (out[i] as number) + (((points[sorted[s + 1] as number] as number[])[k] as number) - ((points[sorted[s - 1] as number] as number[])[k] as number)) / (hi - lo);
      }
    }
  }
  return out;
}
