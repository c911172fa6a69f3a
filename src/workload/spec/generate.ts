/**
 * Request generation from a workload spec, reproducing the reference's GenerateRequests draw for draw:
 *
 *   1. `wg = PartitionedRng(seed).forSubsystem("workload-gen")`
 *   2. every prefix group's tokens, in client order (cohort members after the explicit clients)
 *   3. per client with a positive rate, in order: `clientRng = GoRand(wg.Int63())`, [a custom sampler's own
 *      `GoRand(clientRng.Int63())`], then per arrival: IAT, [lifecycle check], input length, output length,
 *      input ids, output ids (multimodal clients: text/image/audio/video lengths and one block of ids, then
 *      output length and ids; multi-turn clients: a whole session per arrival, see reasoning.ts)
 *   4. stable sort by arrival, truncate to the request cap, ids `request_<i>`
 *
 * The first arrival of a client is at its first IAT (time starts at 0). Specs with per-window overrides take the
 * time-varying path (time-varying.ts) instead of step 3. An `inference_perf:` source is expanded into clients
 * first (inference-perf.ts). This generates every round of every session; sessions/workload.ts turns that into
 * round-0 requests plus session blueprints for closed-loop clients.
 */
import type { Request } from '../../domain/request.js';
import { MAX_INT64 } from '../../domain/units.js';
import { GoRand } from '../../engine/go-rand.js';
import { PartitionedRng } from '../../engine/partitioned-rng.js';
import { concatTokens, randomTokenIds } from '../tokens.js';
import { newArrivalSampler } from './arrival.js';
import type { ArrivalSampler } from './arrival.js';
import { expandCohorts } from './cohort.js';
import { computeDeadline, generatePrefixTokens, isClosedLoop, sortAndCap, toRequests } from './draft.js';
import type { Draft, Modality } from './draft.js';
import { expandInferencePerf } from './inference-perf.js';
import { newLengthSampler } from './length.js';
import type { LengthSampler } from './length.js';
import { hasPerWindowParameters, isInActiveWindow, lastWindowEndUs, normalizeRateFractions } from './rates.js';
import { generateReasoningSession } from './reasoning.js';
import { assertGeneratable } from './support.js';
import { generateTimeVaryingDrafts } from './time-varying.js';
import { shapeClient } from '../profiles/shaping.js';
import type { ClientShaping } from '../profiles/shaping.js';
import type { ClientSpec, DistSpec, MultimodalSpec, WorkloadSpec } from './types.js';

/** RNG subsystem the workload generator draws from. */
export const WORKLOAD_GEN_SUBSYSTEM = 'workload-gen';

export interface SpecGenerateOptions {
  /** Seed override (`--seed`); the spec's own seed when absent. */
  readonly seed?: bigint;
  /** Request cap; 0 = unlimited (the horizon bounds generation). */
  readonly numRequests: number;
  /** Arrivals at or after this tick are not generated; {@link MAX_INT64} = none. */
  readonly horizon: number;
  /**
   * `--timeout` in seconds, when given: every request's deadline becomes arrival + timeout (or none when <= 0),
   * overriding the spec's per-client timeouts. Absent = the spec's timeouts apply.
   */
  readonly timeoutSecs?: number;
  /**
   * --semantics corrected: no implicit 300 s timeout for closed-loop clients, prefix length from the first
   * client of a group that sets it, gamma arrivals with CV > 10 kept gamma, and on the per-window path the
   * steady-state request semantics and the clients without windows generated too.
   */
  readonly corrected?: boolean;
}

/** The clients a spec generates from, after inference-perf and cohort expansion and the `--timeout` override. */
export interface ResolvedClients {
  readonly clients: ClientSpec[];
  readonly aggregateRate: number;
  /** `--timeout` in µs (0 = none), or undefined when the spec's own timeouts apply. */
  readonly timeoutUs: number | undefined;
  readonly seed: bigint;
}

export function resolveClients(spec: WorkloadSpec, opts: SpecGenerateOptions): ResolvedClients {
  const timeoutUs = opts.timeoutSecs === undefined ? undefined : opts.timeoutSecs > 0 ? opts.timeoutSecs * 1_000_000 : 0;
  let explicit = spec.clients;
  let aggregateRate = spec.aggregateRate;
  if (spec.inferencePerf !== null && explicit.length === 0) {
    // The stage rates define the load: a spec's own aggregate_rate is replaced, as in the reference.
    const ip = expandInferencePerf(spec.inferencePerf);
    explicit = ip.clients;
    aggregateRate = ip.aggregateRate;
  }
  // Corrected semantics give a client without a timeout none (the reference gives closed-loop ones 300 s).
  const implicit = opts.corrected === true ? 0 : null;
  const withTimeout = <T extends { timeout: number | null }>(c: T): T => (timeoutUs === undefined ? (c.timeout === null && implicit !== null ? { ...c, timeout: implicit } : c) : { ...c, timeout: timeoutUs });
  const clients = [...explicit.map(withTimeout), ...expandCohorts(spec.cohorts.map(withTimeout))];
  return { clients, aggregateRate, timeoutUs, seed: opts.seed ?? spec.seed };
}

/**
 * The spec's requests, sorted by arrival with ids `request_<i>` — every round of every session included.
 *
 * @throws WorkloadSpecError (WORKLOAD_SPEC_UNSUPPORTED) for features not generated yet (ServeGen, LoRA adapters).
 * @throws RangeError for a negative request cap, or when nothing bounds generation (no cap, no horizon, and a
 *   client without lifecycle windows).
 */
export function generateSpecWorkload(spec: WorkloadSpec, opts: SpecGenerateOptions): Request[] {
  const gen = generateSpecDrafts(spec, opts);
  return numberDrafts(gen.drafts, gen.timeoutUs);
}

/**
 * Turns sorted drafts into requests `request_<i>`. An explicit `--timeout` is re-applied to every deadline, as
 * the reference does after generation (covering the paths that set none).
 */
export function numberDrafts(drafts: readonly Draft[], timeoutUs: number | undefined): Request[] {
  const requests = toRequests(drafts);
  if (timeoutUs !== undefined) for (const r of requests) r.deadline = timeoutUs === 0 ? 0 : r.arrivalTime + timeoutUs;
  return requests;
}

/** The generated drafts, stably sorted by arrival and cut to the request cap, plus what they came from. */
export function generateSpecDrafts(spec: WorkloadSpec, opts: SpecGenerateOptions): ResolvedClients & { drafts: Draft[] } {
  const { horizon, numRequests } = opts;
  const resolved = resolveClients(spec, opts);
  if (!(horizon > 0)) return { ...resolved, drafts: [] };
  if (!Number.isSafeInteger(numRequests) || numRequests < 0) {
    throw new RangeError(`maxRequests must be a non-negative integer, got ${numRequests}`);
  }
  assertGeneratable(spec);
  const { clients, aggregateRate } = resolved;
  const corrected = opts.corrected === true;
  const wg = new PartitionedRng(resolved.seed).forSubsystem(WORKLOAD_GEN_SUBSYSTEM);
  let drafts: Draft[];
  if (hasPerWindowParameters(clients)) {
    const prefixes = corrected ? generatePrefixTokens(clients, wg, true) : null;
    drafts = generateTimeVaryingDrafts(clients, aggregateRate, horizon, wg, corrected, prefixes);
    // The reference generates nothing for the clients without windows then; corrected semantics generate them
    // at their steady-state rates (their seeds drawn after the windowed clients', whose draws stay as they were).
    if (prefixes !== null) {
      const rates = normalizeRateFractions(clients, aggregateRate);
      const windowless = (c: ClientSpec): boolean => c.lifecycle === null || c.lifecycle.windows.length === 0;
      steadyStateDrafts(spec, clients, rates.map((r, i) => (windowless(clients[i]!) ? r : 0)), prefixes, wg, opts, drafts);
    }
  } else {
    const prefixes = generatePrefixTokens(clients, wg, corrected);
    const rates = normalizeRateFractions(clients, aggregateRate);
    drafts = [];
    steadyStateDrafts(spec, clients, rates, prefixes, wg, opts, drafts);
  }
  return { ...resolved, drafts: sortAndCap(drafts, numRequests) };
}

/** Step 3 of the module comment for every client with a positive rate, appending to `out`. */
function steadyStateDrafts(
  spec: WorkloadSpec,
  clients: readonly ClientSpec[],
  rates: readonly number[],
  prefixes: ReadonlyMap<string, Int32Array>,
  wg: GoRand,
  opts: SpecGenerateOptions,
  out: Draft[],
): void {
  const { horizon, numRequests } = opts;
  // A windowless client with a rate would generate until the end of time (the run command refuses this case
  // up front; lifecycle windows, single sessions, pre-drawn samplers and the time-varying path end on their own).
  if (numRequests === 0 && horizon >= MAX_INT64 && clients.some((c, i) => rates[i]! > 0 && unbounded(c))) {
    throw new RangeError('Workload requires either num_requests or --horizon to bound generation');
  }
  clients.forEach((c, i) => {
    const rate = rates[i]!;
    if (rate <= 0) return;
    const rng = new GoRand(wg.int63Big());
    const arrival = c.customSamplerFactory === undefined ? newArrivalSampler(c.arrival, rate, opts.corrected === true) : c.customSamplerFactory(new GoRand(rng.int63Big()));
    const prefix = prefixes.get(c.prefixGroup) ?? null;
    // Load profile / misbehavior extension (profiles/shaping.ts): null, drawing nothing, for clients without them.
    const made = c.reasoning?.multiTurn != null
      ? reasoningClientDrafts(c, arrival, rng, prefix, horizon, numRequests)
      : clientDrafts(c, arrival, rng, prefix, horizon, numRequests, shapeClient(c, spec.loadProfile, rng));
    for (const d of made) out.push(d);
  });
}

function unbounded(c: ClientSpec): boolean {
  if (c.lifecycle !== null || c.customSamplerFactory !== undefined) return false;
  return !(c.reasoning?.multiTurn?.singleSession ?? false);
}

/** Samplers for a multimodal client, built once (the reference rebuilds identical stateless ones per request). */
interface MultimodalSamplers {
  readonly text: LengthSampler | null;
  readonly image: [LengthSampler, LengthSampler] | null;
  readonly audio: [LengthSampler, LengthSampler] | null;
  readonly video: [LengthSampler, LengthSampler] | null;
}

function optSampler(d: DistSpec): LengthSampler | null {
  return d.type === '' ? null : newLengthSampler(d);
}

/** A modality contributes only when both its token and its count distributions are given. */
function pairSampler(count: DistSpec, tokens: DistSpec): [LengthSampler, LengthSampler] | null {
  return count.type !== '' && tokens.type !== '' ? [newLengthSampler(count), newLengthSampler(tokens)] : null;
}

function multimodalSamplers(m: MultimodalSpec): MultimodalSamplers {
  return {
    text: optSampler(m.textDist),
    image: pairSampler(m.imageCountDist, m.imageDist),
    audio: pairSampler(m.audioCountDist, m.audioDist),
    video: pairSampler(m.videoCountDist, m.videoDist),
  };
}

/** Sum of `count` per-item token draws, the count drawn first. */
function itemTokens(rng: GoRand, pair: [LengthSampler, LengthSampler] | null): number {
  if (pair === null) return 0;
  const count = pair[0].sample(rng);
  let total = 0;
  for (let i = 0; i < count; i++) total += pair[1].sample(rng);
  return total;
}

function multimodalInput(rng: GoRand, s: MultimodalSamplers): [Int32Array, Modality] {
  const text = s.text === null ? 0 : s.text.sample(rng);
  const image = itemTokens(rng, s.image);
  const audio = itemTokens(rng, s.audio);
  const video = itemTokens(rng, s.video);
  const total = text + image + audio + video;
  return [randomTokenIds(rng, total === 0 ? 1 : total), { text, image, audio, video }];
}

/**
 * One client's arrivals up to the horizon. The reference lets a client produce up to 2×cap before the global
 * sort-and-truncate; stopping at the cap instead changes nothing, because a client's arrivals strictly increase
 * (IAT >= 1), so its (cap+1)-th request always has `cap` requests ahead of it and is cut, and it draws from its
 * own stream only. (A shaped client's arrivals only never decrease, but the stable sort keeps its own ties in
 * generation order, so the same argument holds.)
 */
function clientDrafts(
  c: ClientSpec,
  arrival: ArrivalSampler,
  rng: GoRand,
  prefix: Int32Array | null,
  horizon: number,
  cap: number,
  shaping: ClientShaping | null = null,
): Draft[] {
  const inputSampler = newLengthSampler(c.inputDist);
  const outputSampler = newLengthSampler(c.outputDist);
  const mm = c.multimodal === null ? null : multimodalSamplers(c.multimodal);
  const lifecycle = c.lifecycle;
  const closedLoop = isClosedLoop(c);
  const limit = cap > 0 ? cap : Number.POSITIVE_INFINITY;
  const out: Draft[] = [];
  const shaped = shaping === null ? null : shaping.arrivals(arrival, rng);
  let t = 0;
  while (t < horizon && out.length < limit) {
    if (shaped !== null) {
      t = shaped();
    } else {
      const iat = arrival.sampleIat(rng);
      if (iat === 0) break;
      t += iat;
    }
    if (t >= horizon) break;
    if (lifecycle !== null && !isInActiveWindow(t, lifecycle)) {
      if (t >= lastWindowEndUs(lifecycle)) break;
      continue;
    }
    let input: Int32Array;
    let modality: Modality | null = null;
    let output: Int32Array;
    if (mm !== null) {
      [input, modality] = multimodalInput(rng, mm);
      output = randomTokenIds(rng, outputSampler.sample(rng));
    } else {
      let inLen = inputSampler.sample(rng);
      let outLen = outputSampler.sample(rng);
      if (shaping !== null) [inLen, outLen] = shaping.lengths(inLen, outLen);
      input = randomTokenIds(rng, inLen);
      output = randomTokenIds(rng, outLen);
    }
    const withPrefix = prefix !== null && prefix.length > 0;
    out.push({
      client: c,
      arrival: t,
      input: withPrefix ? concatTokens(prefix, input) : input,
      output,
      prefixGroup: c.prefixGroup,
      prefixLength: withPrefix ? prefix.length : 0,
      deadline: computeDeadline(t, c.timeout, closedLoop),
      modality,
    });
  }
  return out;
}

/**
 * A multi-turn client: one session (`single_session`: started at the first IAT, offset into the first window)
 * or a session per arrival. Rounds at or past the horizon end the session; rounds outside the lifecycle windows
 * are skipped. Sessions overlap, so the reference's per-client safety cap of 2×cap generated rounds is kept
 * verbatim here (it can bind before the global truncation).
 */
function reasoningClientDrafts(c: ClientSpec, arrival: ArrivalSampler, rng: GoRand, prefix: Int32Array | null, horizon: number, cap: number): Draft[] {
  const reasoning = c.reasoning!;
  const mt = reasoning.multiTurn!;
  const lifecycle = c.lifecycle;
  const inputSampler = newLengthSampler(c.inputDist);
  const outputSampler = newLengthSampler(c.outputDist);
  const session = (start: number): Draft[] =>
    generateReasoningSession({
      rng,
      client: c,
      reasoning: { ...reasoning, multiTurn: mt },
      inputSampler,
      outputSampler,
      startTime: start,
      prefix,
      deadline: (t) => computeDeadline(t, c.timeout, true),
      sloTargetUs: c.sloTargetUs ?? 0,
    });
  const out: Draft[] = [];
  const keep = (rounds: readonly Draft[]): void => {
    for (const r of rounds) {
      if (r.arrival >= horizon) break;
      if (lifecycle !== null && !isInActiveWindow(r.arrival, lifecycle)) continue;
      out.push(r);
    }
  };
  if (mt.singleSession) {
    const iat = arrival.sampleIat(rng);
    if (iat === 0) return out;
    const first = lifecycle?.windows[0];
    const start = first === undefined ? iat : first.startUs + iat;
    if (start >= horizon || (lifecycle !== null && !isInActiveWindow(start, lifecycle))) return out;
    keep(session(start));
    return out;
  }
  const limit = cap > 0 ? 2 * cap : Number.POSITIVE_INFINITY;
  let generated = 0;
  let t = 0;
  while (t < horizon && generated < limit) {
    const iat = arrival.sampleIat(rng);
    if (iat === 0) break;
    t += iat;
    if (t >= horizon) break;
    if (lifecycle !== null && !isInActiveWindow(t, lifecycle)) {
      if (t >= lastWindowEndUs(lifecycle)) break;
      continue;
    }
    const rounds = session(t);
    generated += rounds.length;
    keep(rounds);
  }
  return out;
}
