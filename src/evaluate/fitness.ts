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
import type { Direction, Normalization, Objective, RawMetrics, SloTargets } from './types.js';

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

/** Jain's index of `xs` (1 for fewer than two values or all zero). */
export function jain(xs: readonly number[]): number {
  if (xs.length < 2) return 1;
  let s = 0;
  let q = 0;
  for (const x of xs) {
    s += x;
    q += x * x;
  }
  return q === 0 ? 1 : (s * s) / (xs.length * q);
}

/**
 * RawMetrics of one run: the MetricsOutput latencies and throughput, SLO attainment overall and per class
 * (every request that arrived counts; rejected, timed-out and unfinished ones miss), goodput, admission rate,
 * cache hit rate, Jain fairness of the tenants' service ratios (completed / arrived), GPU-hours and anomaly
 * counts (`anomaly_<type>`).
 */
export function rawMetrics(f: RunFacts): RawMetrics {
  const m: Record<string, number> = {};
  for (const k of OUTPUT_FIELDS) {
    const v = f.output[k];
    m[k] = typeof v === 'number' && Number.isFinite(v) ? v : 0;
  }
  const arrivals = f.cs.arrivals;
  const classes = new Map<string, { n: number; good: number }>();
  const tenants = new Map<string, { n: number; done: number }>();
  let good = 0;
  for (const r of arrivals) {
    const done = completed(f.cs, r);
    const ok = done && meets(r, targetsFor(f.slo, r.sloClass));
    if (ok) good++;
    const key = r.sloClass === '' ? 'default' : r.sloClass;
    const c = classes.get(key) ?? { n: 0, good: 0 };
    c.n++;
    if (ok) c.good++;
    classes.set(key, c);
    const t = tenants.get(r.tenantId) ?? { n: 0, done: 0 };
    t.n++;
    if (done) t.done++;
    tenants.set(r.tenantId, t);
  }
  const n = arrivals.length;
  m['arrived_requests'] = n;
  m['slo_attainment'] = n === 0 ? 0 : good / n;
  for (const k of [...classes.keys()].sort()) {
    const c = classes.get(k) as { n: number; good: number };
    m[`slo_attainment_${k}`] = c.good / c.n;
  }
  const secs = f.simEndedUs / 1e6;
  m['goodput_rps'] = secs > 0 ? good / secs : 0;
  const g = f.cs.gatewayCounters();
  const rejected = f.cs.rejectedRequests + f.cs.routingRejections + f.cs.encodeRoutingRejections + g.queueRejected + g.queueShed + g.expired;
  m['rejected_requests'] = rejected;
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

export const RAW_METRIC_NAMES: readonly string[] = [
  ...OUTPUT_FIELDS, 'arrived_requests', 'slo_attainment', 'slo_attainment_<class>', 'goodput_rps', 'rejected_requests', 'admission_rate',
  'cache_hit_rate', 'jain_fairness', 'load_imbalance', 'replicas', 'gpu_hours', 'cost', 'admission_delays', 'anomaly_<type>',
];

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

/** Raw objective values and scores of one run, and its combined score (weighted mean of the scores). */
export function scoreRun(metrics: RawMetrics, objectives: readonly Objective[]): { objectives: Record<string, number>; scores: Record<string, number>; score: number } {
  const raw: Record<string, number> = {};
  const scores: Record<string, number> = {};
  let total = 0;
  let weights = 0;
  for (const o of objectives) {
    // A class that sent nothing has nothing to miss.
    const v = metrics[o.metric] ?? (o.metric.startsWith('slo_attainment_') ? 1 : 0);
    raw[o.name] = v;
    const s = normalize(v, o.direction, o.normalization);
    scores[o.name] = s;
    total += s * o.weight;
    weights += o.weight;
  }
  return { objectives: raw, scores, score: weights > 0 ? total / weights : 0 };
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
