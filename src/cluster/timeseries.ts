/**
 * Time series of a run, sampled at fixed steps of SIMULATED time. The cluster loop calls
 * {@link TimeSeriesSampler.sampleUpTo} only when an event reaches the next sample tick (one null check per
 * event when sampling is off), and the sampler reads state the simulation keeps anyway: nothing is counted
 * per step or per request on its behalf, and nothing it does feeds back into the run.
 *
 * Semantics. Row k stands for tick T_k = (k + 1) × interval; the last row is the end of the run (the time of
 * the last executed event) when that is not itself a tick. Gauges (queue depth, batch size, KV utilisation,
 * in-flight requests) are the state just before the events at T_k run. Counters (arrivals, completions,
 * preemptions, rejections...) are cumulative at T_k in storage and turned into per-row deltas on output, so the
 * deltas of a column always sum to the run's own total. An instance's completions count when the step that
 * finishes them executes (the step's start), as the instance's counters do.
 *
 * Bounded memory: when the rows would pass `maxRows`, every other row is dropped and the interval doubles.
 * Cumulative storage makes that exact: the kept rows still hold the totals up to their tick.
 */
import type { Instance } from '../instance/instance.js';
import type { ClusterSimulator } from './cluster.js';
import type { ClusterSampler } from './sampler.js';

export type SeriesKind = 'gauge' | 'counter';

export interface SeriesColumn {
  readonly name: string;
  readonly kind: SeriesKind;
}

/**
 * Extension point for cluster-wide series the core does not know about (replica counts of an autoscaler,
 * pool membership, P/D transfers). A probe's columns are fixed for the run; `read` writes the current values
 * (cumulative totals for counters) in column order. The report draws panels for the well-known names in
 * {@link SERIES_NAMES} whenever a probe provides them.
 */
export interface SeriesProbe {
  readonly columns: readonly SeriesColumn[];
  read(clock: number, out: Float64Array): void;
}

/** Column names the report recognises beyond the built-in ones. */
export const SERIES_NAMES = {
  /** Live replicas (gauge); the built-in probe (scaling-series.ts) reports instances not terminated. */
  replicas: 'replicas',
  /** Prefix of per-pool member counts (gauges), e.g. `pool.prefill`, `pool.decode`. */
  poolPrefix: 'pool.',
  /** Prefix of P/D disaggregation series, e.g. `pd.transfers_started` (counter), `pd.transfer_queue` (gauge). */
  pdPrefix: 'pd.',
} as const;

/** Per-instance columns, in output order. `steps` and `step_time_us` are filled in by {@link TimeSeriesSampler.data}. */
export const INSTANCE_COLUMNS: readonly SeriesColumn[] = [
  { name: 'queue_depth', kind: 'gauge' },
  { name: 'batch_size', kind: 'gauge' },
  { name: 'in_flight', kind: 'gauge' },
  { name: 'kv_gpu_utilization', kind: 'gauge' },
  { name: 'kv_cpu_utilization', kind: 'gauge' },
  { name: 'completed', kind: 'counter' },
  { name: 'timed_out', kind: 'counter' },
  { name: 'dropped', kind: 'counter' },
  { name: 'preemptions', kind: 'counter' },
  { name: 'output_tokens', kind: 'counter' },
  { name: 'steps', kind: 'counter' },
];

/** Cluster-wide columns read from the cluster itself (instance sums are added by {@link TimeSeriesSampler.data}). */
export const CLUSTER_COLUMNS: readonly SeriesColumn[] = [
  { name: 'arrivals', kind: 'counter' },
  { name: 'admission_rejected', kind: 'counter' },
  { name: 'admission_delayed', kind: 'counter' },
  { name: 'routing_rejected', kind: 'counter' },
  { name: 'gateway_queue_depth', kind: 'gauge' },
  { name: 'gateway_rejected', kind: 'counter' },
  { name: 'gateway_shed', kind: 'counter' },
  { name: 'gateway_expired', kind: 'counter' },
  { name: 'gateway_evicted', kind: 'counter' },
];

/** Instance columns summed into cluster-wide ones (KV utilisation is averaged instead). */
const SUMMED = ['queue_depth', 'batch_size', 'in_flight', 'completed', 'timed_out', 'dropped', 'preemptions', 'output_tokens', 'steps'];

/** A finished run's series: per-row values (counters as deltas), JSON-able. */
export interface TimeSeriesData {
  /** Sampling interval in effect (µs): the requested one, doubled as often as `maxRows` required. */
  readonly intervalUs: number;
  /** Row times (µs): the end of each row's interval. */
  readonly times: readonly number[];
  readonly columns: Readonly<Record<string, SeriesKind>>;
  /** Cluster-wide rows: the cluster's own columns, instance sums, mean KV utilisation, probe columns. */
  readonly cluster: Readonly<Record<string, readonly number[]>>;
  readonly instances: readonly InstanceSeries[];
}

export interface InstanceSeries {
  readonly id: string;
  /** Index of the first row this instance was present in (instances added during the run start later). */
  readonly firstRow: number;
  readonly values: Readonly<Record<string, readonly number[]>>;
}

export interface SamplerOptions {
  /** Sampling interval (µs), >= 1. */
  readonly intervalUs: number;
  /** Rows kept at most before the interval doubles (>= 2). */
  readonly maxRows: number;
  /** Output-token processing time of the latency model (µs): step time = the step's ITL minus it. */
  readonly outputTokenProcessingUs: number;
  /** Extra cluster-wide series (see {@link SeriesProbe}). */
  readonly probes?: readonly SeriesProbe[];
}

/** Growable column of doubles. */
class Column {
  data = new Float64Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const d = new Float64Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[this.length++] = v;
  }
  /** Keeps rows 1, 3, 5, ... (the even multiples of the old interval). */
  halve(): void {
    let o = 0;
    for (let i = 1; i < this.length; i += 2) this.data[o++] = this.data[i] as number;
    this.length = o;
  }
  values(): number[] {
    // A plain loop: Array.from over a typed array goes through the iterator protocol, many times slower.
    const out = new Array<number>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.data[i] as number;
    return out;
  }
}

interface InstanceStore {
  readonly inst: Instance;
  firstRow: number;
  readonly cols: Column[];
  present: boolean;
}

export class TimeSeriesSampler implements ClusterSampler {
  next: number;
  private interval: number;
  private readonly times = new Column();
  private readonly clusterCols = CLUSTER_COLUMNS.map(() => new Column());
  private readonly probeCols: Column[][];
  private readonly probeBuf: Float64Array[];
  private readonly stores = new Map<string, InstanceStore>();
  private readonly order: InstanceStore[] = [];
  private finished = false;

  constructor(
    private readonly cs: ClusterSimulator,
    private readonly opts: SamplerOptions,
  ) {
    if (!(Number.isSafeInteger(opts.intervalUs) && opts.intervalUs >= 1)) throw new RangeError(`time series interval must be a whole number of µs >= 1, got ${opts.intervalUs}`);
    if (!(opts.maxRows >= 2)) throw new RangeError('time series maxRows must be >= 2');
    this.interval = opts.intervalUs;
    this.next = opts.intervalUs;
    const probes = opts.probes ?? [];
    this.probeCols = probes.map((p) => p.columns.map(() => new Column()));
    this.probeBuf = probes.map((p) => new Float64Array(p.columns.length));
  }

  /** Interval in effect now (µs). */
  get intervalUs(): number {
    return this.interval;
  }

  sampleUpTo(time: number): void {
    // Every tick up to `time` sees the same state: nothing ran between them.
    while (this.next <= time) {
      this.record(this.next);
      this.next += this.interval;
      if (this.times.length >= this.opts.maxRows) this.coarsen();
    }
  }

  finish(time: number): void {
    if (this.finished) return;
    this.finished = true;
    const last = this.times.length > 0 ? (this.times.data[this.times.length - 1] as number) : 0;
    if (this.times.length === 0 || time > last) this.record(Math.max(time, 0));
  }

  private coarsen(): void {
    this.times.halve();
    for (const c of this.clusterCols) c.halve();
    for (const cols of this.probeCols) for (const c of cols) c.halve();
    for (const s of this.order) {
      // An instance that joined on an odd row loses that row: it now starts at the next kept one.
      const first = s.firstRow;
      for (const c of s.cols) {
        // Align the instance's own rows with the global halving (its row j is global row first + j).
        let o = 0;
        for (let j = 0; j < c.length; j++) if ((first + j) % 2 === 1) c.data[o++] = c.data[j] as number;
        c.length = o;
      }
      s.firstRow = Math.floor(first / 2);
    }
    this.interval *= 2;
    this.next = (Math.floor(this.next / this.interval) + (this.next % this.interval === 0 ? 0 : 1)) * this.interval;
  }

  private record(t: number): void {
    const cs = this.cs;
    const row = this.times.length;
    this.times.push(t);
    const g = cs.gatewayCounters();
    const cv = [cs.arrivals.length, cs.rejectedRequests, cs.admissionDelays, cs.routingRejections, g.queueDepth, g.queueRejected, g.queueShed, g.expired, g.evicted];
    for (let i = 0; i < cv.length; i++) (this.clusterCols[i] as Column).push(cv[i] as number);
    const probes = this.opts.probes ?? [];
    for (let p = 0; p < probes.length; p++) {
      const buf = this.probeBuf[p] as Float64Array;
      (probes[p] as SeriesProbe).read(t, buf);
      const cols = this.probeCols[p] as Column[];
      for (let i = 0; i < cols.length; i++) (cols[i] as Column).push(buf[i] as number);
    }
    for (const s of this.order) s.present = false;
    cs.instances.forEach((inst, i) => this.recordInstance(inst, cs.inFlight[i] ?? 0, row));
    // An instance gone from the set shows no load; its totals are still read (work it did before leaving counts).
    for (const s of this.order) if (!s.present) pushInstance(s.cols, 0, 0, 0, 0, 0, counters(s.inst));
  }

  private recordInstance(inst: Instance, inFlight: number, row: number): void {
    let s = this.stores.get(inst.id);
    if (s === undefined) {
      s = { inst, firstRow: row, cols: INSTANCE_COLUMNS.map(() => new Column()), present: false };
      this.stores.set(inst.id, s);
      this.order.push(s);
    }
    s.present = true;
    const kv = inst.kv;
    const tiers = kv.tierStats();
    pushInstance(
      s.cols,
      inst.queueDepth,
      inst.batchSize,
      inFlight,
      kv.totalBlocks > 0 ? round6(kv.usedBlocks() / kv.totalBlocks) : 0,
      tiers.cpuTotalBlocks > 0 ? round6(tiers.cpuUsedBlocks / tiers.cpuTotalBlocks) : 0,
      counters(inst),
    );
  }

  /** The series as per-row values (counters as deltas), with cluster sums and the derived columns. */
  data(): TimeSeriesData {
    const n = this.times.length;
    const times = this.times.values();
    const columns: Record<string, SeriesKind> = {};
    const cluster: Record<string, number[]> = {};
    const put = (target: Record<string, number[]>, col: SeriesColumn, values: number[]): void => {
      columns[col.name] = col.kind;
      target[col.name] = col.kind === 'counter' ? deltas(values) : values;
    };
    CLUSTER_COLUMNS.forEach((c, i) => put(cluster, c, (this.clusterCols[i] as Column).values()));
    const instances: InstanceSeries[] = [];
    const sums = new Map<string, number[]>(SUMMED.map((k) => [k, new Array<number>(n).fill(0)]));
    const kvSum = new Array<number>(n).fill(0);
    const kvCpuSum = new Array<number>(n).fill(0);
    const kvCount = new Array<number>(n).fill(0);
    const stepTimeSum = new Array<number>(n).fill(0);
    for (const s of this.order) {
      const values: Record<string, number[]> = {};
      INSTANCE_COLUMNS.forEach((c, i) => put(values, c, (s.cols[i] as Column).values()));
      values['step_time_us'] = stepTimes(s.inst, (s.cols[INSTANCE_COLUMNS.length - 1] as Column).values(), this.opts.outputTokenProcessingUs);
      values['throughput_tokens_per_s'] = throughput(values['output_tokens'] as number[], times, s.firstRow);
      columns['step_time_us'] = 'gauge';
      columns['throughput_tokens_per_s'] = 'gauge';
      for (const [k, acc] of sums) {
        const v = values[k] as number[];
        for (let j = 0; j < v.length; j++) acc[s.firstRow + j] = (acc[s.firstRow + j] as number) + (v[j] as number);
      }
      const kv = values['kv_gpu_utilization'] as number[];
      const kvCpu = values['kv_cpu_utilization'] as number[];
      const st = values['step_time_us'];
      const steps = values['steps'] as number[];
      for (let j = 0; j < kv.length; j++) {
        const k = s.firstRow + j;
        kvSum[k] = (kvSum[k] as number) + (kv[j] as number);
        kvCpuSum[k] = (kvCpuSum[k] as number) + (kvCpu[j] as number);
        kvCount[k] = (kvCount[k] as number) + 1;
        stepTimeSum[k] = (stepTimeSum[k] as number) + (st[j] as number) * (steps[j] as number);
      }
      instances.push({ id: s.inst.id, firstRow: s.firstRow, values });
    }
    for (const [k, acc] of sums) cluster[k] = acc;
    // Mean over the instances present in the row; step time weighted by each instance's steps in it.
    cluster['kv_gpu_utilization'] = kvSum.map((v, j) => ((kvCount[j] as number) > 0 ? round6(v / (kvCount[j] as number)) : 0));
    cluster['kv_cpu_utilization'] = kvCpuSum.map((v, j) => ((kvCount[j] as number) > 0 ? round6(v / (kvCount[j] as number)) : 0));
    const clusterSteps = cluster['steps'] as number[];
    cluster['step_time_us'] = stepTimeSum.map((v, j) => ((clusterSteps[j] as number) > 0 ? round3(v / (clusterSteps[j] as number)) : 0));
    cluster['throughput_tokens_per_s'] = throughput(cluster['output_tokens'] as number[], times, 0);
    const probes = this.opts.probes ?? [];
    probes.forEach((p, pi) => p.columns.forEach((c, ci) => put(cluster, c, ((this.probeCols[pi] as Column[])[ci] as Column).values())));
    return { intervalUs: this.interval, times, columns, cluster, instances };
  }
}

function pushInstance(cols: Column[], queue: number, batch: number, inFlight: number, kvGpu: number, kvCpu: number, counters: readonly number[]): void {
  (cols[0] as Column).push(queue);
  (cols[1] as Column).push(batch);
  (cols[2] as Column).push(inFlight);
  (cols[3] as Column).push(kvGpu);
  (cols[4] as Column).push(kvCpu);
  for (let i = 0; i < counters.length; i++) (cols[5 + i] as Column).push(counters[i] as number);
}

/** The instance's cumulative counters, in INSTANCE_COLUMNS order (after the five gauges). */
function counters(inst: Instance): number[] {
  const m = inst.metrics;
  return [m.completedRequests, m.timedOutRequests, m.droppedUnservable, m.preemptionCount, m.totalOutputTokens, m.stepItl.length];
}

function deltas(cum: readonly number[]): number[] {
  const out = new Array<number>(cum.length);
  let prev = 0;
  for (let i = 0; i < cum.length; i++) {
    out[i] = (cum[i] as number) - prev;
    prev = cum[i] as number;
  }
  return out;
}

/** Output tokens per second of simulated time in each row (a row's span is from the previous row's time). */
function throughput(tokens: readonly number[], times: readonly number[], firstRow: number): number[] {
  return tokens.map((v, j) => {
    const k = firstRow + j;
    const span = (times[k] as number) - (k > 0 ? (times[k - 1] as number) : 0);
    return span > 0 ? round3((v * 1e6) / span) : 0;
  });
}

/** Mean step duration (µs) of the steps executed in each row; 0 for a row without steps. */
function stepTimes(inst: Instance, cumSteps: readonly number[], otp: number): number[] {
  const itl = inst.metrics.stepItl.toArray();
  const out = new Array<number>(cumSteps.length);
  let prev = 0;
  for (let j = 0; j < cumSteps.length; j++) {
    const end = cumSteps[j] as number;
    let sum = 0;
    for (let s = prev; s < end; s++) sum += (itl[s] as number) - otp;
    out[j] = end > prev ? round3(sum / (end - prev)) : 0;
    prev = end;
  }
  return out;
}

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
