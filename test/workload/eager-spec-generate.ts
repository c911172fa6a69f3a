/**
 * The spec generator as it was before generation became lazy: every client pre-generates its requests (up to the
 * cap), every session every round, then one stable sort and truncation. Kept verbatim as the oracle the lazy
 * generator (src/workload/spec/generate.ts) is compared with, request for request and token for token.
 */
import { MAX_INT64 } from '../../src/domain/units.js';
import { GoRand } from '../../src/gocompat/go-rand.js';
import { PartitionedRng } from '../../src/engine/partitioned-rng.js';
import { concatTokens, randomTokenIds } from '../../src/workload/tokens.js';
import { newArrivalSampler } from '../../src/workload/spec/arrival.js';
import type { ArrivalSampler } from '../../src/workload/spec/arrival.js';
import { computeDeadline, generatePrefixTokens, isClosedLoop, sortAndCap } from '../../src/workload/spec/draft.js';
import type { Draft, Modality } from '../../src/workload/spec/draft.js';
import { newLengthSampler } from '../../src/workload/spec/length.js';
import type { LengthSampler } from '../../src/workload/spec/length.js';
import { hasPerWindowParameters, isInActiveWindow, lastWindowEndUs, normalizeRateFractions } from '../../src/workload/spec/rates.js';
import { TokenBuffer, reasonRatioOf } from '../../src/workload/spec/reasoning.js';
import type { ReasoningSessionOptions } from '../../src/workload/spec/reasoning.js';
import { generateTimeVaryingDrafts } from '../../src/workload/spec/time-varying.js';
import { WORKLOAD_GEN_SUBSYSTEM, resolveClients } from '../../src/workload/spec/generate.js';
import type { ResolvedClients, SpecGenerateOptions } from '../../src/workload/spec/generate.js';
import { shapeClient } from '../../src/workload/profiles/shaping.js';
import type { ClientShaping } from '../../src/workload/profiles/shaping.js';
import type { ClientSpec, DistSpec, MultimodalSpec, WorkloadSpec } from '../../src/workload/spec/types.js';

export function eagerSpecDrafts(spec: WorkloadSpec, opts: SpecGenerateOptions): ResolvedClients & { drafts: Draft[] } {
  const { horizon, numRequests } = opts;
  const resolved = resolveClients(spec, opts);
  if (!(horizon > 0)) return { ...resolved, drafts: [] };
  if (!Number.isSafeInteger(numRequests) || numRequests < 0) {
    throw new RangeError(`maxRequests must be a non-negative integer, got ${numRequests}`);
  }
  const { clients, aggregateRate } = resolved;
  const wg = new PartitionedRng(resolved.seed).forSubsystem(WORKLOAD_GEN_SUBSYSTEM);
  let drafts: Draft[];
  if (hasPerWindowParameters(clients)) {
    drafts = generateTimeVaryingDrafts(clients, aggregateRate, horizon, wg);
  } else {
    const prefixes = generatePrefixTokens(clients, wg);
    const rates = normalizeRateFractions(clients, aggregateRate);
    // A windowless client with a rate would generate until the end of time (the run command refuses this case
    // up front; lifecycle windows, single sessions, pre-drawn samplers and the time-varying path end on their own).
    if (numRequests === 0 && horizon >= MAX_INT64 && clients.some((c, i) => rates[i]! > 0 && unbounded(c))) {
      throw new RangeError('Workload requires either num_requests or --horizon to bound generation');
    }
    drafts = [];
    clients.forEach((c, i) => {
      const rate = rates[i]!;
      if (rate <= 0) return;
      const rng = new GoRand(wg.int63Big());
      const arrival = c.customSamplerFactory === undefined ? newArrivalSampler(c.arrival, rate) : c.customSamplerFactory(new GoRand(rng.int63Big()));
      const prefix = prefixes.get(c.prefixGroup) ?? null;
      // Load profile / misbehavior extension (profiles/shaping.ts): null, drawing nothing, for clients without them.
      const made = c.reasoning?.multiTurn != null
        ? reasoningClientDrafts(c, arrival, rng, prefix, horizon, numRequests)
        : clientDrafts(c, arrival, rng, prefix, horizon, numRequests, shapeClient(c, spec.loadProfile, rng));
      for (const d of made) drafts.push(d);
    });
  }
  return { ...resolved, drafts: sortAndCap(drafts, numRequests) };
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
    eagerReasoningSession({
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

function eagerReasoningSession(o: ReasoningSessionOptions): Draft[] {
  const { rng, reasoning, inputSampler, outputSampler } = o;
  const mt = reasoning.multiTurn;
  if (mt.maxRounds <= 0) return [];
  const ratioSampler = reasoning.reasonRatioDist.type === '' ? null : newLengthSampler(reasoning.reasonRatioDist);
  const sessionId = `sess_${rng.int63Big()}`;
  const prefix = o.prefix ?? new Int32Array(0);
  const firstIn = inputSampler.sample(rng);
  const firstOut = outputSampler.sample(rng);
  const accumulate = mt.contextGrowth === 'accumulate';
  let buf: TokenBuffer | null = null;
  if (accumulate) {
    // Sized from round 0 (capped: it is only a hint) so typical sessions never reallocate.
    buf = new TokenBuffer(Math.min(prefix.length + mt.maxRounds * (firstIn + firstOut), 1 << 20));
    if (prefix.length > 0) buf.append(prefix);
  }
  const out: Draft[] = [];
  let t = o.startTime;
  for (let round = 0; round < mt.maxRounds; round++) {
    const inLen = round === 0 ? firstIn : inputSampler.sample(rng);
    const outLen = round === 0 ? firstOut : outputSampler.sample(rng);
    const fresh = randomTokenIds(rng, inLen);
    const output = randomTokenIds(rng, outLen);
    const input = buf !== null ? buf.head(buf.append(fresh)) : concatTokens(prefix, fresh);
    const reasonRatio = reasonRatioOf(ratioSampler, rng);
    out.push({
      client: o.client,
      arrival: t,
      input,
      output,
      prefixGroup: '',
      prefixLength: prefix.length,
      deadline: o.deadline(t),
      modality: null,
      session: { id: sessionId, round, reasonRatio },
      streaming: false,
      sloTargetUs: o.sloTargetUs,
    });
    if (buf !== null) buf.append(output);
    t += mt.thinkTimeUs;
    t += outLen;
  }
  return out;
}
