/**
 * The up-front check of a spec workload's token total: when `num_requests` requests will surely be generated and
 * every request holds at least some number of tokens, a total above the limit is refused before any request is
 * generated — instead of by {@link GenerationBudget} after gigabytes of token ids (200 prompts of 9M tokens each).
 */
import { LIMITS, LimitError, grouped } from '../../domain/limits.js';
import { MAX_INT64 } from '../../domain/units.js';
import { ConstantSampler, EmpiricalSampler, ExponentialSampler, GaussianSampler, LognormalSampler, newLengthSampler } from './length.js';
import { ConstantArrivalSampler, GammaSampler, PoissonSampler, WeibullSampler, newArrivalSampler, weibullCv } from './arrival.js';
import { expandCohorts } from './cohort.js';
import { goGamma } from '../../gocompat/go-math-special.js';
import { hasPerWindowParameters, normalizeRateFractions } from './rates.js';
import type { ClientSpec, DistSpec, LifecycleSpec, TrafficSource, WorkloadSpec } from './types.js';

/** The fewest tokens one draw of `dist` can give (every sampler's floor is 1; 0 when the distribution cannot be read). */
export function minLength(dist: DistSpec): number {
  let s;
  try {
    s = newLengthSampler(dist);
  } catch {
    return 0;
  }
  if (s instanceof ConstantSampler) return Math.max(1, s.value);
  if (s instanceof GaussianSampler) return s.min === s.max ? Math.max(0, s.min) : Math.max(1, s.min);
  if (s instanceof ExponentialSampler || s instanceof LognormalSampler) return Math.max(1, s.min);
  if (s instanceof EmpiricalSampler) return s.values.length === 0 ? 1 : Math.max(1, s.values[0] as number);
  return 1;
}

/** The fewest tokens (input + output) a request of `src` holds; 0 where lengths are reshaped or drawn otherwise. */
function minRequestTokens(src: TrafficSource & Partial<Pick<ClientSpec, 'lifecycle' | 'misbehavior'>>): number {
  if (src.misbehavior !== undefined || (src.lifecycle !== null && src.lifecycle !== undefined)) return 0;
  return minLengths(src);
}

/** The fewest tokens (input + output) one request drawn from `src`'s length distributions holds. */
function minLengths(src: TrafficSource & Partial<Pick<ClientSpec, 'misbehavior'>>): number {
  if (src.misbehavior !== undefined) return 0;
  const input = src.multimodal === null ? minLength(src.inputDist) : 0;
  return input + minLength(src.outputDist);
}

/** A client that goes on generating requests for ever when no horizon stops it: plain open-loop arrivals at a positive rate. */
function endless(c: ClientSpec): boolean {
  return c.rateFraction > 0 && c.concurrency === 0 && c.closedLoop !== true && c.lifecycle === null && c.customSamplerFactory === undefined && c.loadProfile === undefined && c.misbehavior === undefined;
}

/**
 * Refuses a workload that must hold more token ids than {@link LIMITS.workloadTokens}: `numRequests` requests
 * are certain (no horizon, and a client that never stops) and each holds at least the smallest lengths the
 * distributions allow. Skipped whenever generation could stop early or the smallest length is unknown.
 * @param capName how the request cap was given, for the message (`num_requests` or `--num-requests`).
 * @throws LimitError naming the file, the numbers and the limit.
 */
export function checkWorkloadTokens(spec: WorkloadSpec, fileLabel: string, numRequests: number, horizon: number, capName: string, limit: number = LIMITS.workloadTokens): void {
  if (horizon < MAX_INT64) {
    checkHorizonWorkload(spec, fileLabel, numRequests, horizon, capName, limit);
    return;
  }
  if (numRequests <= 0 || spec.loadProfile !== undefined || spec.inferencePerf !== null || spec.aggregateRate <= 0) return;
  if (!spec.clients.some(endless)) return;
  const sources: TrafficSource[] = [...spec.clients, ...spec.cohorts];
  const perRequest = Math.min(...sources.map(minRequestTokens));
  if (perRequest <= 0 || numRequests * perRequest <= limit) return;
  throw new LimitError(
    `${fileLabel}: ${capName} is ${grouped(numRequests)} and every request holds at least ${grouped(perRequest)} tokens (input + output, the smallest lengths the clients' distributions allow), so the workload holds at least ${grouped(numRequests * perRequest)} token ids, above the limit of ${grouped(limit)} (docs/usage.md, Limits); lower ${capName} or the lengths`,
  );
}

/** Standard deviations below the expected arrival count that the horizon check still counts as certain. */
const SIGMAS = 8;

/** Mean gap (µs) and coefficient of variation of a client's arrival process at its rate; null when unknown. */
function gapStats(c: ClientSpec, ratePerUs: number): { mean: number; cv: number } | null {
  // Explicit gamma/weibull parameters ignore the rate; a sampler is built to read them the way generation does.
  const s = newArrivalSampler(c.arrival, ratePerUs);
  if (s instanceof ConstantArrivalSampler) return { mean: s.iatUs, cv: 0 };
  if (s instanceof PoissonSampler) return { mean: 1 / s.ratePerUs, cv: 1 };
  if (s instanceof GammaSampler) return { mean: s.shape * s.scale, cv: 1 / Math.sqrt(s.shape) };
  if (s instanceof WeibullSampler) return { mean: s.scale * goGamma(1 + 1 / s.shape), cv: weibullCv(s.shape) };
  return null;
}

/** Microseconds of `[0, horizon)` inside the client's windows (the whole horizon without windows), and the number of windows. */
function activeTime(l: LifecycleSpec | null, horizon: number): [number, number] {
  if (l === null || l.windows.length === 0) return [horizon, 1];
  let t = 0;
  for (const w of l.windows) t += Math.max(0, Math.min(w.endUs, horizon) - Math.max(0, w.startUs));
  return [t, l.windows.length];
}

/**
 * A client whose arrivals are a plain renewal process at its normalised rate, cut by its windows and the horizon:
 * no load profile, misbehavior, sessions, closed loop or pre-drawn sampler.
 */
function plainRateClient(c: ClientSpec, spec: WorkloadSpec): boolean {
  return spec.loadProfile === undefined && c.loadProfile === undefined && c.misbehavior === undefined && c.concurrency === 0 && c.closedLoop !== true && c.reasoning?.multiTurn == null && c.customSamplerFactory === undefined;
}

/**
 * With a horizon, the arrivals before it of the plain rate-based clients (each at its normalised rate over its
 * active time, less {@link SIGMAS} standard deviations of a renewal count) are certain: a workload whose
 * requests or token ids surely exceed the limits is refused before generation rather than when generation
 * reaches the limit, minutes later (a day-long cohort at 50 req/s).
 */
function checkHorizonWorkload(spec: WorkloadSpec, fileLabel: string, numRequests: number, horizon: number, capName: string, limit: number): void {
  if (spec.inferencePerf !== null || spec.aggregateRate <= 0 || !(horizon > 0)) return;
  const clients = [...spec.clients, ...expandCohorts(spec.cohorts)];
  if (hasPerWindowParameters(clients)) return;
  const rates = normalizeRateFractions(clients, spec.aggregateRate);
  let count = 0;
  let tokens = 0;
  clients.forEach((c, i) => {
    const rate = rates[i]!;
    if (!(rate > 0) || !plainRateClient(c, spec)) return;
    const g = gapStats(c, rate);
    if (g === null || !(g.mean > 0)) return;
    const [t, windows] = activeTime(c.lifecycle, horizon);
    const expected = t / g.mean;
    const sure = Math.max(0, Math.floor(expected - SIGMAS * Math.max(g.cv, 0.1) * Math.sqrt(expected) - windows - 1));
    count += sure;
    tokens += sure * minLengths(c);
  });
  if (numRequests > 0) {
    // The cap keeps the first requests, of any client: each holds at least the smallest lengths of all.
    if (count < numRequests) count = 0;
    count = Math.min(count, numRequests);
    const perRequest = Math.min(...[...spec.clients, ...spec.cohorts].map(minLengths));
    tokens = count * Math.max(0, perRequest);
  }
  const hours = `${grouped(horizon / 1e6)} s${numRequests > 0 ? `, ${capName} ${grouped(numRequests)}` : ''}`;
  const fix = `set num_requests (or --num-requests), a shorter horizon (--horizon), or a lower aggregate_rate`;
  if (count > LIMITS.requests) {
    throw new LimitError(`${fileLabel}: the clients send at least ${grouped(count)} requests before the horizon (${hours}; each client at its rate over its active windows), above the limit of ${grouped(LIMITS.requests)} (docs/usage.md, Limits); ${fix}`);
  }
  if (tokens > limit) {
    const shorter = Math.max(1, Math.floor(((horizon / 1e6) * limit) / tokens));
    throw new LimitError(
      `${fileLabel}: the clients send at least ${grouped(count)} requests before the horizon (${hours}; each client at its rate over its active windows) holding at least ${grouped(tokens)} token ids (the smallest lengths the distributions allow), above the limit of ${grouped(limit)} (docs/usage.md, Limits); ${numRequests > 0 ? `lower ${capName}, shorten the horizon` : fix} (a horizon of at most about ${grouped(shorter)} s)`,
    );
  }
}
