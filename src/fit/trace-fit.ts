/**
 * `blis calibrate --fit`: fit corrected-physics coefficients on observed traces of a user's own server.
 *
 * Each trace (TraceV2 from `blis observe`, or converted from another benchmark's per-request output) is
 * replayed through the simulator with the server's engine settings; every successful request contributes its
 * TTFT and its mean inter-token latency as relative-error targets. Every `holdoutEvery`-th request is held
 * out: simulated like the others (it loads the server) but never fitted, and its errors are reported.
 */
import { BlisError } from '../domain/errors.js';
import type { Request } from '../domain/request.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, CORRECTED_PHYSICS_DEFAULTS, createCorrectedPhysicsModel, type CorrectedPhysicsCoefficient } from '../latency/corrected-physics.js';
import type { LatencyProfile, ProfileRange } from '../latency/profile.js';
import type { EngineSetup } from '../sim/engine-setup.js';
import type { ResolvedLatency } from '../sim/resolve-latency.js';
import { buildReplayRequests } from '../workload/replay.js';
import { MAX_INT64 } from '../domain/units.js';
import type { TraceHeader, TraceRecord } from '../workload/tracev2-types.js';
import { fitCoefficients, predictTargets, type FitDataset, type FitTarget } from './fit.js';
import { simulateLinearized } from './record.js';

export const FIT_BAD_TRACE = 'FIT_BAD_TRACE';

export interface FitTrace {
  readonly label: string;
  readonly header: TraceHeader;
  readonly records: readonly TraceRecord[];
}

export interface TraceFitInput {
  readonly traces: readonly FitTrace[];
  /** The resolved engine (corrected-physics) the traces are replayed on. */
  readonly setup: Omit<EngineSetup, 'horizon'>;
  readonly latency: ResolvedLatency;
  readonly dp: number;
  readonly expertParallel: boolean;
  readonly seed: bigint;
  /**
   * Coefficients to fit (the rest stay at `start`); null = every coefficient one deployment can pin: all but
   * weight_read, and comm only with tp > 1 or dp > 1.
   */
  readonly params: readonly CorrectedPhysicsCoefficient[] | null;
  /** Start values (a profile's, or the model's defaults). */
  readonly start: Partial<Record<CorrectedPhysicsCoefficient, number>>;
  /** Every n-th usable request is held out (0 = none). */
  readonly holdoutEvery: number;
  /** Round trip to subtract from observed TTFTs, µs; -1 = each trace header's measured RTT. */
  readonly rttUs: number;
  /**
   * Simulation end in µs for every trace (the CLI's --horizon); 0 = run every request of the trace to completion,
   * so an overloaded trace keeps all its requests in the fit.
   */
  readonly horizonUs?: number;
  /** Progress after every accepted Gauss–Newton step. */
  readonly onIteration?: (iteration: number, coefficients: readonly number[], loss: number) => void;
}

export interface SplitErrors {
  readonly requests: number;
  /** Mean absolute percentage errors, in %. */
  readonly ttftMape: number;
  readonly itlMape: number;
  readonly e2eMape: number;
}

/**
 * Load and batch sizes a profile was fitted on (kept in the profile; using it outside them warns): requests per
 * second of the traces (usable requests over their send-time span; lowest and highest trace) and requests
 * decoding per step in their simulation at the fitted coefficients (median and largest step).
 */
export type FittedRange = ProfileRange;

export interface TraceFitResult {
  readonly coefficients: Record<CorrectedPhysicsCoefficient, number>;
  /** Coefficients fitted to the data (the chosen ones minus those held at their defaults). */
  readonly fitted: readonly CorrectedPhysicsCoefficient[];
  /** Chosen coefficients the traces could not pin: kept at their start values (the physics defaults), and why. */
  readonly heldAtDefault: readonly { readonly name: CorrectedPhysicsCoefficient; readonly value: number; readonly why: string }[];
  /** 95 % confidence interval of each fitted coefficient (± 1.96 standard errors, with the prior). */
  readonly confidence95: Readonly<Partial<Record<CorrectedPhysicsCoefficient, readonly [number, number]>>>;
  /** Usable requests (training and held out) and how many of them the simulation did not finish. */
  readonly requestsUsable: number;
  readonly requestsUnfinished: number;
  readonly range: FittedRange;
  readonly iterations: number;
  readonly converged: boolean;
  readonly train: SplitErrors;
  readonly heldOut: SplitErrors | null;
  /** Errors of the start coefficients on the held-out requests (what the fit improved on). */
  readonly heldOutBefore: SplitErrors | null;
  readonly profile: LatencyProfile;
}

/**
 * The prior the fit regularises toward (around the start values), one standard deviation each: the physics
 * multipliers ±2 (the catalog's efficiencies could be off by a factor three), the overheads beyond the spread
 * seen across vLLM versions and hosts (per step: V1's 0.8 ms to V0's 8–14 ms; front ends up to seconds behind
 * a gateway). Wide on purpose: wherever the traces inform a coefficient they outweigh it (a live trace of a
 * few hundred requests recovers values four SDs away within 2 %); where they do not, it holds the coefficient
 * at its default.
 */
export const FIT_PRIOR_SD: Readonly<Record<CorrectedPhysicsCoefficient, number>> = { compute: 2, weight_read: 2, kv_read: 2, comm: 2, step_us: 10000, request_us: 500, frontend_us: 1000000 };
const TYPICAL: Readonly<Record<CorrectedPhysicsCoefficient, number>> = { compute: 1, weight_read: 1, kv_read: 1, comm: 1, step_us: 100, request_us: 10, frontend_us: 1000 };
const LOWER: Readonly<Record<CorrectedPhysicsCoefficient, number>> = { compute: 0.05, weight_read: 0.05, kv_read: 0, comm: 0, step_us: 0, request_us: 0, frontend_us: 0 };
/** What data pins each coefficient (for the unidentifiable-coefficient error). */
export const FIT_NEEDS: Readonly<Record<CorrectedPhysicsCoefficient, string>> = {
  compute: 'it is pinned by prefill-heavy steps: requests with prompts of hundreds of tokens',
  weight_read: 'it is pinned by decode steps: requests with output_tokens > 1',
  kv_read: 'it is pinned by decode steps over long contexts: long prompts or outputs with several requests running at once',
  comm: 'it is pinned only with tensor or expert parallelism (tp > 1 or dp > 1)',
  step_us: 'it is pinned by decode steps: requests with output_tokens > 1',
  request_us: 'it is pinned by steps of different batch sizes: vary the load',
  frontend_us: 'it is pinned by the time to first token of requests',
};

function bad(message: string): never {
  throw new BlisError(FIT_BAD_TRACE, `calibrate --fit: ${message}`);
}

/** org-insensitive, case-insensitive model names (`meta-llama/Llama-2-7b-hf` = `llama-2-7b-hf`). */
function sameModel(a: string, b: string): boolean {
  const norm = (s: string): string => s.toLowerCase().replace(/^.*\//, '');
  return norm(a) === norm(b);
}

interface Usable {
  readonly rec: TraceRecord;
  readonly ttft: number;
  readonly itl: number | null;
  readonly e2e: number;
}

function rttOf(t: FitTrace, rttUs: number): number {
  return rttUs >= 0 ? rttUs : Math.trunc((t.header.network?.measuredRttMs ?? 0) * 1000);
}

/**
 * The records as the server saw them: each request reaches it half a round trip after it was sent (the other
 * half is on the way back, subtracted from the observed TTFT).
 */
function atServer(t: FitTrace, rttUs: number): TraceRecord[] {
  const half = Math.trunc(rttOf(t, rttUs) / 2);
  return half === 0 ? [...t.records] : t.records.map((r) => (r.sendTimeUs > 0 ? { ...r, sendTimeUs: r.sendTimeUs + half } : r));
}

function usable(t: FitTrace, rttUs: number): Usable[] {
  const rtt = rttOf(t, rttUs);
  const out: Usable[] = [];
  for (const rec of t.records) {
    if (rec.requestId < t.header.warmUpRequests) continue;
    if (rec.status !== 'ok') continue;
    const ttft = rec.firstChunkTimeUs - rec.sendTimeUs - rtt;
    const e2e = rec.lastChunkTimeUs - rec.sendTimeUs - rtt;
    if (!(ttft > 0) || !(e2e >= ttft)) continue;
    const itl = rec.outputTokens >= 2 && rec.lastChunkTimeUs > rec.firstChunkTimeUs ? (rec.lastChunkTimeUs - rec.firstChunkTimeUs) / (rec.outputTokens - 1) : null;
    out.push({ rec, ttft, itl, e2e });
  }
  return out;
}

/** Checks a trace against the engine it will be fitted on; returns its usable requests. */
function validateTrace(t: FitTrace, model: string, rttUs: number): Usable[] {
  if (t.records.length === 0) bad(`${t.label}: the trace has no requests; record one with blis observe`);
  const server = t.header.server?.model ?? '';
  if (server !== '' && !sameModel(server, model)) bad(`${t.label}: the trace was recorded against model "${server}" but --model is "${model}"; fit each model on its own traces`);
  const other = t.records.find((r) => r.model !== '' && !sameModel(r.model, model));
  if (other !== undefined) bad(`${t.label}: request ${other.requestId} was sent to model "${other.model}" but --model is "${model}"; fit each model on its own traces`);
  const ok = usable(t, rttUs);
  if (ok.length === 0) {
    const failed = t.records.filter((r) => r.status !== 'ok').length;
    bad(`${t.label}: no usable request: ${failed} of ${t.records.length} failed or timed out and the rest have no valid first/last chunk times; a fit needs successful streamed requests`);
  }
  return ok;
}

function errors(pairs: readonly { kind: string; y: number; p: number }[]): SplitErrors {
  const mape = (kind: string): number => {
    const xs = pairs.filter((x) => x.kind === kind);
    if (xs.length === 0) return NaN;
    return (xs.reduce((a, x) => a + Math.abs(x.p - x.y) / x.y, 0) / xs.length) * 100;
  };
  return { requests: pairs.filter((x) => x.kind === 'ttft').length, ttftMape: mape('ttft'), itlMape: mape('itl'), e2eMape: mape('e2e') };
}

/** Fits; throws a BlisError for bad traces and for coefficients the traces cannot identify. */
export function fitTraces(inp: TraceFitInput): TraceFitResult {
  if (inp.traces.length === 0) bad('no trace given; pass --trace-header and --trace-data (repeat them for several traces)');
  const lat = inp.latency;
  if (lat.modelConfig === null || lat.hardwareConfig === null) bad('the fit needs a model and GPU (corrected-physics)');
  const names = CORRECTED_PHYSICS_COEFFICIENTS;
  const start = names.map((n) => inp.start[n] ?? CORRECTED_PHYSICS_DEFAULTS[n]);
  const hasComm = lat.tp > 1 || inp.dp > 1;
  // weight_read is a fixed cost per decode step on one deployment, like step_us: the two separate only across
  // deployments (models, TP degrees), so by default it keeps the catalog's measured efficiency.
  const chosen = inp.params ?? names.filter((n) => n !== 'weight_read' && (n !== 'comm' || hasComm));
  if (chosen.includes('comm') && !hasComm) bad(`coefficient comm cannot be fitted at tp=1 without data parallelism: ${FIT_NEEDS.comm}`);
  const fixed = names.map((n) => !chosen.includes(n));

  const datasets: FitDataset[] = [];
  const usableByTrace: Usable[][] = [];
  for (const t of inp.traces) {
    const ok = validateTrace(t, lat.model, inp.rttUs);
    usableByTrace.push(ok);
    const targets: FitTarget[] = [];
    ok.forEach((u, i) => {
      const split = inp.holdoutEvery > 0 && i % inp.holdoutEvery === inp.holdoutEvery - 1 ? 'test' : 'train';
      const id = `request_${u.rec.requestId}`;
      targets.push({ kind: 'ttft', id, y: u.ttft, w: 1, split });
      if (u.itl !== null) targets.push({ kind: 'itl', id, y: u.itl, w: 1, split });
    });
    const records = atServer(t, inp.rttUs);
    const seed = inp.seed;
    const horizon = inp.horizonUs !== undefined && inp.horizonUs > 0 ? inp.horizonUs : MAX_INT64;
    datasets.push({
      label: t.label,
      targets,
      requests: (): Request[] => buildReplayRequests(records, seed),
      setup: (c: readonly number[]): EngineSetup => ({
        ...inp.setup,
        horizon,
        latency: createCorrectedPhysicsModel({
          model: lat.modelConfig!,
          hardware: lat.hardwareConfig!,
          tp: lat.tp,
          dp: inp.dp,
          expertParallel: inp.expertParallel,
          coefficients: Object.fromEntries(names.map((n, i) => [n, c[i] as number])),
        }),
      }),
    });
  }
  if (!datasets.some((d) => d.targets.some((t) => t.split === 'train'))) bad('every usable request is held out; lower --holdout-every or record more requests');
  const res = fitCoefficients(datasets, {
    names,
    start,
    lower: names.map((n) => LOWER[n]),
    fixed,
    typical: names.map((n) => TYPICAL[n]),
    needs: FIT_NEEDS,
    ttftOffset: names.indexOf('frontend_us'),
    prior: { mean: start, sd: names.map((n) => FIT_PRIOR_SD[n]) },
    ...(inp.onIteration !== undefined ? { onIteration: inp.onIteration } : {}),
  });
  const report = (c: readonly number[]): { train: SplitErrors; test: SplitErrors | null; unfinished: number } => {
    const withE2e: FitDataset[] = datasets.map((d, i) => ({
      ...d,
      targets: [...d.targets, ...(usableByTrace[i] as Usable[]).map((u, j): FitTarget => ({ kind: 'e2e', id: `request_${u.rec.requestId}`, y: u.e2e, w: 1, split: inp.holdoutEvery > 0 && j % inp.holdoutEvery === inp.holdoutEvery - 1 ? 'test' : 'train' }))],
    }));
    const pred = predictTargets(withE2e, c);
    const pairs = (split: 'train' | 'test'): { kind: string; y: number; p: number }[] =>
      pred.filter((x) => x.target.split === split && x.predicted !== null).map((x) => ({ kind: x.target.kind, y: x.target.y, p: x.predicted as number }));
    const test = pairs('test');
    const unfinished = pred.filter((x) => x.target.kind === 'ttft' && x.predicted === null).length;
    return { train: errors(pairs('train')), test: test.length > 0 ? errors(test) : null, unfinished };
  };
  const after = report(res.coefficients);
  const before = inp.holdoutEvery > 0 ? report(start).test : null;
  const coefficients = Object.fromEntries(names.map((n, i) => [n, res.coefficients[i] as number])) as Record<CorrectedPhysicsCoefficient, number>;
  const heldAtDefault = res.held.map((i) => ({ name: names[i]!, value: res.coefficients[i] as number, why: `the traces cannot pin it (${FIT_NEEDS[names[i]!]})` }));
  const fitted = chosen.filter((n) => !res.held.includes(names.indexOf(n)));
  const confidence95: Partial<Record<CorrectedPhysicsCoefficient, readonly [number, number]>> = {};
  for (const n of fitted) {
    const i = names.indexOf(n);
    const c = res.coefficients[i] as number;
    const se = res.standardErrors[i] as number;
    confidence95[n] = [Math.max(LOWER[n], c - 1.96 * se), c + 1.96 * se];
  }
  const range = fittedRange(inp.traces, usableByTrace, datasets, res.coefficients);
  return {
    coefficients,
    fitted,
    heldAtDefault,
    confidence95,
    requestsUsable: usableByTrace.reduce((a, u) => a + u.length, 0),
    requestsUnfinished: after.unfinished,
    range,
    iterations: res.iterations,
    converged: res.converged,
    train: after.train,
    heldOut: after.test,
    heldOutBefore: before,
    profile: { latencyModel: 'corrected-physics', coefficients, model: lat.model, hardware: lat.hardware, tp: lat.tp, range },
  };
}

/** The request rates of the traces and the decode batch sizes of their simulation at `c`. */
function fittedRange(traces: readonly FitTrace[], usableByTrace: readonly Usable[][], datasets: readonly FitDataset[], c: readonly number[]): FittedRange {
  let lo = Infinity;
  let hi = 0;
  traces.forEach((_, i) => {
    const sends = (usableByTrace[i] as Usable[]).map((u) => u.rec.sendTimeUs);
    const span = (Math.max(...sends) - Math.min(...sends)) / 1e6;
    if (sends.length < 2 || !(span > 0)) return;
    const rate = (sends.length - 1) / span;
    lo = Math.min(lo, rate);
    hi = Math.max(hi, rate);
  });
  const batches: number[] = [];
  for (const d of datasets) {
    const lin = simulateLinearized(d.setup(c), d.requests());
    const uses = lin.steps.uses;
    for (let i = 0; i < uses.length; i++) if ((uses[i] as number) > 0) batches.push(uses[i] as number);
  }
  batches.sort((a, b) => a - b);
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  return {
    requestRate: Number.isFinite(lo) ? [r3(lo), r3(hi)] : [0, 0],
    batchSize: batches.length > 0 ? [batches[batches.length >> 1] as number, batches[batches.length - 1] as number] : [0, 0],
  };
}
