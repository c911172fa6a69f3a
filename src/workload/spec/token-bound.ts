/**
 * The up-front check of a spec workload's token total: when `num_requests` requests will surely be generated and
 * every request holds at least some number of tokens, a total above the limit is refused before any request is
 * generated — instead of by {@link GenerationBudget} after gigabytes of token ids (200 prompts of 9M tokens each).
 */
import { LIMITS, LimitError, grouped } from '../../domain/limits.js';
import { MAX_INT64 } from '../../domain/units.js';
import { ConstantSampler, EmpiricalSampler, ExponentialSampler, GaussianSampler, LognormalSampler, newLengthSampler } from './length.js';
import type { ClientSpec, DistSpec, TrafficSource, WorkloadSpec } from './types.js';

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
  if (numRequests <= 0 || horizon < MAX_INT64 || spec.loadProfile !== undefined || spec.inferencePerf !== null || spec.aggregateRate <= 0) return;
  if (!spec.clients.some(endless)) return;
  const sources: TrafficSource[] = [...spec.clients, ...spec.cohorts];
  const perRequest = Math.min(...sources.map(minRequestTokens));
  if (perRequest <= 0 || numRequests * perRequest <= limit) return;
  throw new LimitError(
    `${fileLabel}: ${capName} is ${grouped(numRequests)} and every request holds at least ${grouped(perRequest)} tokens (input + output, the smallest lengths the clients' distributions allow), so the workload holds at least ${grouped(numRequests * perRequest)} token ids, above the limit of ${grouped(limit)} (docs/usage.md, Limits); lower ${capName} or the lengths`,
  );
}
