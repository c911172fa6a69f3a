/**
 * One simulation, linearised in the latency model's coefficients: every request's TTFT and decode time, and
 * every step's time, as (value at the current coefficients c0, gradient ∂/∂c) with the schedule held fixed.
 *
 * A request's TTFT is the front-end delay plus the rest of the step that was running when it reached the
 * engine (the same fraction of that step) plus every later step up to the one that produced its first token;
 * its decode time is the sum of the steps it decoded in (and, with prefill-first scheduling, the prefill-only
 * steps it sat out). Both are sums of step times, and a step time is Σ_k c_k ∂t/∂c_k, so each is linear in c
 * for a fixed schedule — the Gauss–Newton model the fit iterates on (fit.ts re-simulates after every solve).
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { Request } from '../domain/request.js';
import type { Instance, StepInfo } from '../instance/instance.js';
import type { LatencyModel, LinearLatency, StepBatch } from '../latency/types.js';
import { runEngine, type EngineSetup } from '../sim/engine-setup.js';
import { clampToInt64 } from '../domain/units.js';
import { BlisError } from '../domain/errors.js';

/** What the fit needs about one request. Rows are length K (the model's coefficient count). */
export interface RequestLine {
  readonly id: string;
  readonly completed: boolean;
  /** TTFT (µs) as simulated and its gradient. */
  readonly ttft: number;
  readonly ttftRow: Float64Array;
  /** Decode time (E2E − TTFT, µs) and its gradient; `itlCount` inter-token gaps. */
  readonly decode: number;
  readonly decodeRow: Float64Array;
  readonly itlCount: number;
}

export interface StepLines {
  /** ITL sample value of each step (its time plus the per-token overhead) and how many decodes used it. */
  readonly values: Float64Array;
  readonly uses: Float64Array;
  /** Gradient of each step, row-major (steps × K). */
  readonly rows: Float64Array;
}

export interface Linearization {
  readonly k: number;
  readonly coefficients: readonly number[];
  readonly requests: ReadonlyMap<string, RequestLine>;
  readonly steps: StepLines;
  readonly cluster: ClusterSimulator;
}

class Growable {
  data: Float64Array;
  length = 0;
  constructor(cap: number) {
    this.data = new Float64Array(cap);
  }
  reserve(extra: number): void {
    if (this.length + extra <= this.data.length) return;
    let cap = this.data.length * 2;
    while (cap < this.length + extra) cap *= 2;
    const d = new Float64Array(cap);
    d.set(this.data.subarray(0, this.length));
    this.data = d;
  }
  push(v: number): void {
    this.reserve(1);
    this.data[this.length++] = v;
  }
}

/** Per-instance step log: start, end, gradient and running prefix sum of gradients. */
class InstanceLog {
  readonly starts = new Growable(1024);
  readonly ends = new Growable(1024);
  /** prefix[(j+1)·K ..] = Σ_{i ≤ j} g_i; prefix[0..K) = 0. */
  readonly prefix: Growable;
  constructor(readonly k: number) {
    this.prefix = new Growable(1024 * k);
    for (let i = 0; i < k; i++) this.prefix.push(0);
  }
  get count(): number {
    return this.starts.length;
  }
  /** Index of the last step that started strictly before `t`, or -1. */
  lastStartBefore(t: number): number {
    const s = this.starts.data;
    let lo = 0;
    let hi = this.starts.length - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((s[mid] as number) < t) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return ans;
  }
}

interface Pending {
  ttftRow: Float64Array | null;
  decodeRow: Float64Array;
}

/**
 * Wraps the setup's latency model so each step's gradient is captured, runs the engine on `requests`, and
 * returns the linearisation. The simulation itself is exactly the one `setup` describes.
 */
export function simulateLinearized(setup: EngineSetup, requests: readonly Request[]): Linearization {
  // A disaggregated request is two engine requests (prefill and decode halves on different pools) whose TTFT and
  // E2E are its parent's; the per-request lines below follow one engine request each and would count it as
  // never completed.
  if (setup.pd !== undefined && setup.pd !== null) {
    throw new BlisError('bad-config', 'the latency fit simulates each request on one engine; P/D disaggregation is not supported: fit on traces of a non-disaggregated deployment', { field: 'pd' });
  }
  const inner = setup.latency;
  const lin = inner.linear;
  if (lin === undefined) throw new Error(`latency model ${inner.name} is not linear in its coefficients; only corrected-physics can be fitted`);
  const k = lin.names.length;
  const grad = new Float64Array(k);
  const qGrad = new Float64Array(k);
  const recording: LatencyModel = {
    name: inner.name,
    stepTime(batch) {
      const t = lin.stepGradient(batch, grad);
      return batch.count === 0 ? 1 : Math.max(1, clampToInt64(t));
    },
    queueingTime: (req) => inner.queueingTime(req),
    outputTokenProcessingTime: () => inner.outputTokenProcessingTime(),
    postDecodeFixedOverhead: () => inner.postDecodeFixedOverhead(),
    linear: lin,
    // The engine behaviour the model implies (vLLM's re-prefill preemption and serial steps, E13/E14) must hold in
    // the fit's simulation too, or it would fit a different engine from the one `blis run` simulates.
    ...(inner.vllmPreemption === true ? { vllmPreemption: true } : {}),
    // Lockstep DP ranks: the group prices its slowest rank last, so `grad` holds the step's gradient.
    ...(inner.lockstep !== undefined && lin.stepGradientPadded !== undefined
      ? {
        lockstep: {
          tokens: (batch: StepBatch) => (inner.lockstep as NonNullable<LatencyModel['lockstep']>).tokens(batch),
          stepTime: (batch: StepBatch, padTo: number) => {
            const t = (lin.stepGradientPadded as NonNullable<LinearLatency['stepGradientPadded']>)(batch, padTo, grad);
            return batch.count === 0 && padTo === 0 ? 1 : Math.max(1, clampToInt64(t));
          },
        },
      }
      : {}),
  };
  const otp = inner.outputTokenProcessingTime();
  const logs = new Map<Instance, InstanceLog>();
  const pending = new Map<Request, Pending>();
  const lines = new Map<string, RequestLine>();
  const stepValues = new Growable(4096);
  const stepUses = new Growable(4096);
  const stepRows = new Growable(4096 * k);
  const prefillFirst = setup.schedulingMode === 'prefill-first';

  const onStep = (inst: Instance, info: StepInfo): void => {
    let log = logs.get(inst);
    if (log === undefined) {
      log = new InstanceLog(k);
      logs.set(inst, log);
    }
    const j = log.count;
    log.starts.push(info.clock);
    log.ends.push(info.clock + info.duration);
    log.prefix.reserve(k);
    const pd = log.prefix.data;
    const base = j * k;
    for (let c = 0; c < k; c++) pd[base + k + c] = (pd[base + c] as number) + (grad[c] as number);
    log.prefix.length += k;
    stepValues.push(info.duration + otp);
    stepRows.reserve(k);
    stepRows.data.set(grad, stepRows.length);
    stepRows.length += k;
    let uses = 0;
    const batch = info.batch;
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i] as Request;
      let p = pending.get(r);
      if (p === undefined) {
        p = { ttftRow: null, decodeRow: new Float64Array(k) };
        pending.set(r, p);
      }
      // itlLast is the step of the last token, a step ITL's or a stalled one's (Request.itlFirst).
      const decodedNow = r.itlCount > 0 && r.itlLast === info.step;
      if (r.numNewTokens > 0 && decodedNow) {
        for (let c = 0; c < k; c++) p.decodeRow[c]! += grad[c] as number;
        uses++;
      } else if (r.numNewTokens > 0 && r.progressIndex === r.inputLen && r.itlCount === 0) {
        p.ttftRow = ttftRow(log, j, r, lin, qGrad, k);
        p.decodeRow.fill(0);
      } else if (prefillFirst && r.numNewTokens === 0 && r.progressIndex >= r.inputLen && r.outputLen > 0) {
        for (let c = 0; c < k; c++) p.decodeRow[c]! += grad[c] as number;
      }
    }
    stepUses.push(uses);
  };

  const cs = runEngine({ ...setup, latency: recording }, requests, null, (cluster) => {
    for (const inst of cluster.instances) inst.onStep = onStep;
  });
  for (const r of requests) {
    const p = pending.get(r);
    const completed = r.outcome === 'completed' && r.hasTTFT;
    lines.set(r.id, {
      id: r.id,
      completed,
      ttft: r.ttft,
      ttftRow: p?.ttftRow ?? new Float64Array(k),
      decode: completed ? r.e2e - r.ttft : 0,
      decodeRow: p?.decodeRow ?? new Float64Array(k),
      itlCount: r.itlCount,
    });
  }
  return {
    k,
    coefficients: lin.coefficients,
    requests: lines,
    steps: {
      values: stepValues.data.slice(0, stepValues.length),
      uses: stepUses.data.slice(0, stepUses.length),
      rows: stepRows.data.slice(0, stepRows.length),
    },
    cluster: cs,
  };
}

/**
 * Gradient of a TTFT whose first token came at the end of step `j`: the front-end delay, the remaining
 * fraction of the step in flight when the request was enqueued, and every step after it up to `j`.
 */
function ttftRow(log: InstanceLog, j: number, r: Request, lin: LinearLatency, qGrad: Float64Array, k: number): Float64Array {
  const row = new Float64Array(k);
  lin.queueingGradient(r, qGrad);
  const m = log.lastStartBefore(r.enqueueTime);
  const pd = log.prefix.data;
  const from = m < 0 ? 0 : m + 1;
  for (let c = 0; c < k; c++) row[c] = (pd[(j + 1) * k + c] as number) - (pd[from * k + c] as number) + (qGrad[c] as number);
  if (m >= 0) {
    const start = log.starts.data[m] as number;
    const end = log.ends.data[m] as number;
    if (end > r.enqueueTime && end > start) {
      const phi = (end - r.enqueueTime) / (end - start);
      for (let c = 0; c < k; c++) row[c]! += phi * ((pd[(m + 1) * k + c] as number) - (pd[m * k + c] as number));
    }
  }
  return row;
}
