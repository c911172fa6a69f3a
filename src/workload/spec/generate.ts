/**
 * Request generation from a workload spec, reproducing the reference's GenerateRequests draw for draw:
 *
 *   1. `wg = PartitionedRng(seed).forSubsystem("workload-gen")`
 *   2. every prefix group's tokens, in client order (cohort members after the explicit clients)
 *   3. per client with a positive rate, in order: `clientRng = GoRand(wg.Int63())`, then per arrival:
 *      IAT, [lifecycle check], input length, output length, input ids, output ids
 *      (multimodal clients: text/image/audio/video lengths and one block of ids, then output length and ids)
 *   4. stable sort by arrival, truncate to the request cap, ids `request_<i>`
 *
 * The first arrival of a client is at its first IAT (time starts at 0). Specs with per-window overrides take the
 * time-varying path (time-varying.ts) instead of step 3.
 */
import type { Request } from '../../domain/request.js';
import { MAX_INT64 } from '../../domain/units.js';
import { GoRand } from '../../engine/go-rand.js';
import { PartitionedRng } from '../../engine/partitioned-rng.js';
import { concatTokens, randomTokenIds } from '../tokens.js';
import { newArrivalSampler } from './arrival.js';
import type { ArrivalSampler } from './arrival.js';
import { expandCohorts } from './cohort.js';
import { computeDeadline, finalizeDrafts, generatePrefixTokens, isClosedLoop } from './draft.js';
import type { Draft, Modality } from './draft.js';
import { newLengthSampler } from './length.js';
import type { LengthSampler } from './length.js';
import { hasPerWindowParameters, isInActiveWindow, lastWindowEndUs, normalizeRateFractions } from './rates.js';
import { assertGeneratable } from './support.js';
import { generateTimeVaryingDrafts } from './time-varying.js';
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
}

/**
 * The spec's requests, sorted by arrival with ids `request_<i>`.
 *
 * @throws WorkloadSpecError (WORKLOAD_SPEC_UNSUPPORTED) for features not generated yet (sessions, multi-turn,
 *   concurrency clients, inference-perf, ServeGen, LoRA adapters).
 * @throws RangeError for a negative request cap, or when nothing bounds generation (no cap, no horizon, and a
 *   client without lifecycle windows).
 */
export function generateSpecWorkload(spec: WorkloadSpec, opts: SpecGenerateOptions): Request[] {
  const { horizon, numRequests } = opts;
  if (!(horizon > 0)) return [];
  if (!Number.isSafeInteger(numRequests) || numRequests < 0) {
    throw new RangeError(`maxRequests must be a non-negative integer, got ${numRequests}`);
  }
  assertGeneratable(spec);
  const timeoutUs = opts.timeoutSecs === undefined ? undefined : opts.timeoutSecs > 0 ? opts.timeoutSecs * 1_000_000 : 0;
  const explicit = timeoutUs === undefined ? spec.clients : spec.clients.map((c) => ({ ...c, timeout: timeoutUs }));
  const cohorts = timeoutUs === undefined ? spec.cohorts : spec.cohorts.map((c) => ({ ...c, timeout: timeoutUs }));
  const clients = [...explicit, ...expandCohorts(cohorts)];

  const wg = new PartitionedRng(opts.seed ?? spec.seed).forSubsystem(WORKLOAD_GEN_SUBSYSTEM);
  let drafts: Draft[];
  if (hasPerWindowParameters(clients)) {
    drafts = generateTimeVaryingDrafts(clients, spec.aggregateRate, horizon, wg);
  } else {
    const prefixes = generatePrefixTokens(clients, wg);
    const rates = normalizeRateFractions(clients, spec.aggregateRate);
    // A windowless client with a rate would generate until the end of time (the run command refuses this case
    // up front; lifecycle windows and the time-varying path end on their own).
    if (numRequests === 0 && horizon >= MAX_INT64 && clients.some((c, i) => rates[i]! > 0 && c.lifecycle === null)) {
      throw new RangeError('Workload requires either num_requests or --horizon to bound generation');
    }
    drafts = [];
    clients.forEach((c, i) => {
      const rate = rates[i]!;
      if (rate <= 0) return;
      const rng = new GoRand(wg.int63Big());
      for (const d of clientDrafts(c, rate, rng, prefixes.get(c.prefixGroup) ?? null, horizon, numRequests)) drafts.push(d);
    });
  }
  const requests = finalizeDrafts(drafts, numRequests);
  // The reference re-applies an explicit --timeout to the generated requests (covering paths that set none).
  if (timeoutUs !== undefined) for (const r of requests) r.deadline = timeoutUs === 0 ? 0 : r.arrivalTime + timeoutUs;
  return requests;
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
 * own stream only.
 */
function clientDrafts(c: ClientSpec, rate: number, rng: GoRand, prefix: Int32Array | null, horizon: number, cap: number): Draft[] {
  const arrival: ArrivalSampler = newArrivalSampler(c.arrival, rate);
  const inputSampler = newLengthSampler(c.inputDist);
  const outputSampler = newLengthSampler(c.outputDist);
  const mm = c.multimodal === null ? null : multimodalSamplers(c.multimodal);
  const lifecycle = c.lifecycle;
  const closedLoop = isClosedLoop(c);
  const limit = cap > 0 ? cap : Number.POSITIVE_INFINITY;
  const out: Draft[] = [];
  let t = 0;
  while (t < horizon && out.length < limit) {
    t += arrival.sampleIat(rng);
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
      const inLen = inputSampler.sample(rng);
      const outLen = outputSampler.sample(rng);
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
