/**
 * The `blis run` distribution workload (`--workload distribution` and the presets).
 *
 * The reference synthesises a one-client v2 workload spec (client id "distribution", constant arrivals, gaussian
 * input/output lengths, optional prefix group "shared") and runs it through its general generator. Only that
 * one-client path is reproduced here, with the generator's RNG draw order kept exactly:
 *
 *   1. `wg = PartitionedRNG(seed).ForSubsystem("workload-gen")`
 *   2. the shared prefix (if any): `prefixTokens × wg.Intn(128000)`
 *   3. `clientRng = rand(wg.Int63())`
 *   4. per request: input length, output length, input ids, output ids (all from `clientRng`)
 *
 * Constant arrivals consume no randomness, which is why the prefix/length/token draws line up with the reference.
 */
import { GoRand } from '../gocompat/go-rand.js';
import { PartitionedRng } from '../engine/partitioned-rng.js';
import { Request } from '../domain/request.js';
import { SharedPrefix } from '../domain/block-hash.js';
import { MAX_INT64 } from '../domain/units.js';
import { BlisError } from '../domain/errors.js';
import { LIMITS, checkLimit } from '../domain/limits.js';
import { randomTokenIds, randomTokenIdsAfter } from './tokens.js';

/** Parameters of a clamped gaussian length distribution (all integers, as the CLI flags are). */
export interface GaussianLengthParams {
  readonly mean: number;
  readonly stdev: number;
  readonly min: number;
  readonly max: number;
}

export interface DistributionWorkloadOptions {
  readonly seed: bigint;
  /** Requests per second (> 0). */
  readonly rate: number;
  /** Cap on the number of requests; 0 = bounded by the horizon only. */
  readonly numRequests: number;
  /** Generation horizon in ticks; arrivals at or beyond it are not generated. Use MAX_INT64 for "none". */
  readonly horizon: number;
  /** Length of the shared prefix (group "shared"); 0 = no prefix group. */
  readonly prefixTokens: number;
  readonly prompt: GaussianLengthParams;
  readonly output: GaussianLengthParams;
  /** Per-request timeout in µs; <= 0 means no deadline. */
  readonly timeoutUs: number;
}

/** Client id the reference gives the synthesised distribution client; it appears in trace.csv. */
export const DISTRIBUTION_CLIENT_ID = 'distribution';
/** Prefix group name used when `--prefix-tokens > 0`. */
export const SHARED_PREFIX_GROUP = 'shared';
/** RNG subsystem the workload generator draws from. */
export const WORKLOAD_GEN_SUBSYSTEM = 'workload-gen';

/** Go's math.Round: halves round away from zero (JS Math.round rounds them toward +∞). */
export function goRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * One draw of the reference's clamped gaussian length sampler. A degenerate range returns `min` without
 * touching the RNG, which shifts every later draw, so it must be kept.
 */
export function sampleGaussianLength(rng: GoRand, p: GaussianLengthParams): number {
  if (p.min === p.max) return p.min;
  const v = rng.normFloat64() * p.stdev + p.mean;
  const clamped = Math.min(p.max, Math.max(p.min, v));
  const r = goRound(clamped);
  return r < 1 ? 1 : r;
}

/**
 * Inter-arrival time of the constant arrival process for `rate` requests/second. The rate is converted to
 * requests/µs first and the reciprocal truncated, so 10 req/s gives 99999 µs, not 100000 (float rounding).
 */
export function constantInterArrivalUs(rate: number): number {
  let perUs = (rate * 1) / 1e6;
  // The reference floors the rate to avoid dividing by zero.
  if (perUs < 1e-15) perUs = 1e-15;
  const iat = Math.trunc(1 / perUs);
  return iat < 1 ? 1 : iat;
}

/** Thrown when nothing bounds a generated workload (no request cap and no horizon). */
export const UNBOUNDED_WORKLOAD = 'WORKLOAD_UNBOUNDED';

/**
 * How many requests the distribution workload will hold, checked against {@link LIMITS} before anything is
 * generated: the cap, or the arrivals that fit before the horizon.
 * @throws BlisError when nothing bounds the workload; LimitError when it would exceed the limits.
 */
export function checkDistributionWorkload(opts: Pick<DistributionWorkloadOptions, 'rate' | 'numRequests' | 'horizon' | 'prefixTokens' | 'prompt' | 'output'>, holdsAll = true): number {
  const { horizon, numRequests } = opts;
  if (!(horizon > 0)) return 0;
  if (numRequests < 0 || !Number.isSafeInteger(numRequests)) {
    throw new BlisError('bad-flag', `--num-requests must be a non-negative integer, got ${numRequests}`, { field: '--num-requests' });
  }
  if (numRequests === 0 && horizon >= MAX_INT64) {
    throw new BlisError(UNBOUNDED_WORKLOAD, 'nothing bounds the workload: --num-requests 0 means "as many as arrive before --horizon", but no --horizon is set; give --num-requests N > 0 or a --horizon in µs', { field: '--num-requests' });
  }
  // Arrivals are at k·iat for k >= 1, before the horizon.
  const byHorizon = Math.ceil(horizon / constantInterArrivalUs(opts.rate)) - 1;
  const n = numRequests > 0 ? Math.min(numRequests, byHorizon) : byHorizon;
  const what = numRequests > 0 && numRequests <= byHorizon ? '--num-requests' : `the requests arriving before --horizon at --rate ${opts.rate}`;
  checkLimit(n, LIMITS.requests, what, 'simulate fewer requests (a shorter --horizon or a smaller --num-requests)', { field: '--num-requests' });
  checkLimit(Math.max(opts.prefixTokens + opts.prompt.max, opts.output.max), LIMITS.tokensPerRequest, 'the longest prompt (prefix included) or output (tokens)', 'lower --prompt-tokens-max, --output-tokens-max or --prefix-tokens');
  const mean = (p: GaussianLengthParams): number => Math.min(p.max, Math.max(p.min, p.mean));
  // Streamed into the simulation, only the requests in flight hold token ids.
  if (holdsAll) checkLimit(n * (opts.prefixTokens + mean(opts.prompt) + mean(opts.output)), LIMITS.workloadTokens, 'the token ids of the workload (requests x mean tokens)', 'simulate fewer or shorter requests');
  return n;
}

/**
 * Generates the distribution workload. Requests come back sorted by arrival with ids `request_<i>`.
 *
 * @throws as {@link checkDistributionWorkload}.
 */
export function generateDistributionWorkload(opts: DistributionWorkloadOptions): Request[] {
  if (checkDistributionWorkload(opts) === 0) return [];
  return Array.from(generate(opts));
}

/**
 * The distribution workload as it is needed: each request (and its token ids) generated when the consumer asks
 * for it, with the same draws in the same order. Checked before the first one is generated.
 *
 * @throws as {@link checkDistributionWorkload}.
 */
export function distributionWorkloadStream(opts: DistributionWorkloadOptions): Iterable<Request> {
  if (checkDistributionWorkload(opts, false) === 0) return [];
  return generate(opts);
}

function* generate(opts: DistributionWorkloadOptions): Generator<Request> {
  const { horizon, numRequests } = opts;
  const wg = new PartitionedRng(opts.seed).forSubsystem(WORKLOAD_GEN_SUBSYSTEM);
  const prefix = opts.prefixTokens > 0 ? randomTokenIds(wg, opts.prefixTokens) : new Int32Array(0);
  const shared = prefix.length > 0 ? new SharedPrefix(prefix) : null;
  const clientRng = new GoRand(wg.int63Big());
  const iat = constantInterArrivalUs(opts.rate);

  // The reference lets one client generate up to 2×N requests, stable-sorts by arrival and keeps the first N.
  // With a single client whose arrivals strictly increase, the sort is the identity and requests past the N-th
  // never influence earlier ones (each request's draws come after all earlier requests' draws), so stopping at
  // N yields the same list without generating tokens that would be thrown away.
  const limit = numRequests > 0 ? numRequests : Number.POSITIVE_INFINITY;
  let n = 0;
  let t = 0;
  while (t < horizon && n < limit) {
    t += iat;
    if (t >= horizon) break;
    const inLen = sampleGaussianLength(clientRng, opts.prompt);
    const outLen = sampleGaussianLength(clientRng, opts.output);
    const input = randomTokenIdsAfter(prefix, clientRng, inLen);
    const output = randomTokenIds(clientRng, outLen);
    const deadline = opts.timeoutUs > 0 ? t + opts.timeoutUs : 0;
    const req = new Request(`request_${n++}`, input, output, t, output.length, deadline);
    req.ownsTokens = true;
    req.clientId = DISTRIBUTION_CLIENT_ID;
    if (prefix.length > 0) {
      req.prefixGroup = SHARED_PREFIX_GROUP;
      req.prefixLength = prefix.length;
      req.sharedPrefix = shared;
    }
    yield req;
  }
}
