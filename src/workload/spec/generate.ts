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
 * Steps 3 and 4 run as a lazy merge (merge.ts): a request is generated only when it is among the first `cap`,
 * so the work grows with the cap rather than with clients × cap. The draws are the reference's, in its order.
 *
 * The first arrival of a client is at its first IAT (time starts at 0). Specs with per-window overrides take the
 * time-varying path (time-varying.ts) instead of step 3. An `inference_perf:` source is expanded into clients
 * first (inference-perf.ts). Sessions yield every round that can survive the cap and the horizon;
 * sessions/workload.ts turns them into round-0 requests plus session blueprints for closed-loop clients.
 */
import type { Request } from '../../domain/request.js';
import { BlisError } from '../../domain/errors.js';
import { LIMITS, checkLimit } from '../../domain/limits.js';
import { MAX_INT64 } from '../../domain/units.js';
import { GoRand } from '../../gocompat/go-rand.js';
import { PartitionedRng } from '../../engine/partitioned-rng.js';
import { UNBOUNDED_WORKLOAD } from '../distribution.js';
import { newArrivalSampler } from './arrival.js';
import type { ArrivalSampler } from './arrival.js';
import { GenerationBudget } from './budget.js';
import { expandCohorts } from './cohort.js';
import { computeDeadline, generatePrefixTokens, sortAndCap, toRequests } from './draft.js';
import type { Draft } from './draft.js';
import { expandInferencePerf } from './inference-perf.js';
import { newLengthSampler } from './length.js';
import { ClientStream, ListStream, mergeStreams } from './merge.js';
import type { ClientStreamContext, DraftStream } from './merge.js';
import { hasPerWindowParameters, isInActiveWindow, lastWindowEndUs, normalizeRateFractions } from './rates.js';
import { generateReasoningSession } from './reasoning.js';
import { generateTimeVaryingDrafts } from './time-varying.js';
import type { ClientSpec, WorkloadSpec } from './types.js';

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
   * steady-state request semantics and the clients without windows generated too, and inference-perf
   * multi-turn chat expanded open loop (inference-perf.ts).
   */
  readonly corrected?: boolean;
  /** Counts (and limits) what generation materialises; a fresh one with the default limits when absent. */
  readonly budget?: GenerationBudget;
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
    const ip = expandInferencePerf(spec.inferencePerf, { openLoop: opts.corrected === true });
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
 * @throws BlisError for a negative request cap, or when nothing bounds generation (no cap, no horizon, and a
 *   client without lifecycle windows); LimitError past the documented limits (domain/limits.ts).
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
    throw new BlisError('bad-flag', `num_requests must be a non-negative integer, got ${numRequests}`, { field: 'num_requests' });
  }
  checkLimit(numRequests, LIMITS.requests, 'num_requests', 'simulate fewer requests', { field: 'num_requests' });
  const { clients, aggregateRate } = resolved;
  const corrected = opts.corrected === true;
  const budget = opts.budget ?? new GenerationBudget();
  const wg = new PartitionedRng(resolved.seed).forSubsystem(WORKLOAD_GEN_SUBSYSTEM);
  if (hasPerWindowParameters(clients)) {
    if (!corrected) return { ...resolved, drafts: sortAndCap(generateTimeVaryingDrafts(clients, aggregateRate, horizon, wg, budget), numRequests) };
    // The reference generates nothing for the clients without windows then; corrected semantics generate them
    // at their steady-state rates (their seeds drawn after the windowed clients', whose draws stay as they were),
    // merged after the windowed requests (ties to them, as a stable sort of windowed-then-windowless would).
    const prefixes = generatePrefixTokens(clients, wg, true);
    const windowed = new ListStream(generateTimeVaryingDrafts(clients, aggregateRate, horizon, wg, budget, true, prefixes));
    const rates = normalizeRateFractions(clients, aggregateRate).map((r, i) => (windowless(clients[i]!) ? r : 0));
    const streams = steadyStateStreams(spec, clients, rates, prefixes, wg, opts, budget);
    return { ...resolved, drafts: mergeStreams([windowed, ...streams], numRequests) };
  }
  const prefixes = generatePrefixTokens(clients, wg, corrected);
  const rates = normalizeRateFractions(clients, aggregateRate);
  return { ...resolved, drafts: mergeStreams(steadyStateStreams(spec, clients, rates, prefixes, wg, opts, budget), numRequests) };
}

function windowless(c: ClientSpec): boolean {
  return c.lifecycle === null || c.lifecycle.windows.length === 0;
}

/** Step 3 of the module comment: one stream per client with a positive rate, in client order. */
function steadyStateStreams(
  spec: WorkloadSpec,
  clients: readonly ClientSpec[],
  rates: readonly number[],
  prefixes: ReadonlyMap<string, Int32Array>,
  wg: GoRand,
  opts: SpecGenerateOptions,
  budget: GenerationBudget,
): DraftStream[] {
  const { horizon, numRequests } = opts;
  const corrected = opts.corrected === true;
  // A windowless client with a rate would generate until the end of time (the run command refuses this case
  // up front; lifecycle windows, single sessions, pre-drawn samplers and the time-varying path end on their own).
  if (numRequests === 0 && horizon >= MAX_INT64 && clients.some((c, i) => rates[i]! > 0 && unbounded(c))) {
    throw new BlisError(UNBOUNDED_WORKLOAD, 'Workload requires either num_requests or --horizon to bound generation', { field: 'num_requests' });
  }
  if (numRequests === 0) checkDrainedRounds(clients, rates);
  const ctx: ClientStreamContext = { horizon, cap: numRequests, loadProfile: spec.loadProfile, budget, scratch: new GoRand(0n), honourBurstyGamma: corrected };
  const streams: DraftStream[] = [];
  clients.forEach((c, i) => {
    const rate = rates[i]!;
    if (rate <= 0) return;
    // Every client's seed comes from the workload stream in client order, whatever it generates.
    const seed = wg.int63Big();
    const prefix = prefixes.get(c.prefixGroup) ?? null;
    if (c.reasoning?.multiTurn != null) {
      const rng = new GoRand(seed);
      const arrival = c.customSamplerFactory === undefined ? newArrivalSampler(c.arrival, rate, corrected) : c.customSamplerFactory(new GoRand(rng.int63Big()));
      streams.push(new ListStream(reasoningClientDrafts(c, arrival, rng, prefix, horizon, numRequests, budget, corrected)));
    } else {
      streams.push(new ClientStream(c, seed, rate, prefix, ctx));
    }
  });
  return streams;
}

function unbounded(c: ClientSpec): boolean {
  if (c.lifecycle !== null || c.customSamplerFactory !== undefined) return false;
  return !(c.reasoning?.multiTurn?.singleSession ?? false);
}

/**
 * Without a request cap every session of a multi-session client is drawn in full (its next session's start
 * comes after all its rounds on the client's stream), however many rounds fall past the horizon: refuse a
 * round count that could not be drawn, before drawing any.
 */
function checkDrainedRounds(clients: readonly ClientSpec[], rates: readonly number[]): void {
  clients.forEach((c, i) => {
    const mt = c.reasoning?.multiTurn;
    if (mt == null || mt.singleSession || !(rates[i]! > 0)) return;
    checkLimit(mt.maxRounds, LIMITS.drawnSessionRounds, `client "${c.id}": reasoning.multi_turn.max_rounds`, 'without num_requests every round of every session is drawn (the reference\'s random streams); set num_requests or lower max_rounds', { field: 'reasoning.multi_turn.max_rounds' });
  });
}

/**
 * A multi-turn client: one session (`single_session`: started at the first IAT, offset into the first window)
 * or a session per arrival. Rounds at or past the horizon end the session; rounds outside the lifecycle windows
 * are skipped. Sessions overlap, so the reference's per-client safety cap of 2×cap generated rounds is kept
 * verbatim here (it can bind before the global truncation).
 *
 * Only rounds that can survive are built: a session's rounds past the horizon, or past the cap-th (rounds of
 * one session never go back in time, so its (cap+1)-th round has `cap` rounds of the same client ahead of it),
 * are drawn only when the client's stream goes on after the session, and then without being kept.
 */
function reasoningClientDrafts(c: ClientSpec, arrival: ArrivalSampler, rng: GoRand, prefix: Int32Array | null, horizon: number, cap: number, budget: GenerationBudget, corrected: boolean): Draft[] {
  const reasoning = c.reasoning!;
  const mt = reasoning.multiTurn!;
  const lifecycle = c.lifecycle;
  const inputSampler = newLengthSampler(c.inputDist);
  const outputSampler = newLengthSampler(c.outputDist);
  const take = cap > 0 ? cap : Number.POSITIVE_INFINITY;
  const session = (start: number, drain: boolean): Draft[] =>
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
      keepTags: corrected,
    }, { take, until: horizon, drain, budget });
  const out: Draft[] = [];
  const keep = (rounds: readonly Draft[]): void => {
    for (const r of rounds) {
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
    keep(session(start, false));
    return out;
  }
  const limit = cap > 0 ? 2 * cap : Number.POSITIVE_INFINITY;
  const rounds = Math.max(0, mt.maxRounds);
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
    // Every round counts towards the safety cap, kept or not; after the session that reaches it nothing more
    // is drawn from this stream, so that session's remaining rounds need not be drawn either.
    generated += rounds;
    keep(session(t, generated < limit));
  }
  return out;
}
