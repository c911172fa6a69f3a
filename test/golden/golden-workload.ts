/**
 * The reference's golden-test workload generator (`testGenerateRequests`, sim/test_helpers_test.go;
 * blis-core.md §10), which differs from the CLI's distribution generator on purpose:
 *   - RNG subsystem "workload" (seeded with the seed itself), not "workload-gen", and no per-client sub-RNG;
 *   - first arrival at t = 0, then every int64(1/rate_µs) ticks;
 *   - draw order per request: prompt length, prompt tokens, output length, output tokens;
 *   - the clamped gaussian has no floor of 1;
 *   - MaxOutputLen stays 0 (auto-filled at enqueue) and there are no deadlines.
 */
import { Request } from '../../src/domain/request.js';
import { PartitionedRng, SUBSYSTEM_WORKLOAD } from '../../src/engine/partitioned-rng.js';
import type { GoRand } from '../../src/gocompat/go-rand.js';
import { goRound } from '../../src/workload/distribution.js';
import { concatTokens, randomTokenIds } from '../../src/workload/tokens.js';

export interface GoldenWorkloadSpec {
  readonly seed: number;
  /** Requests per second. */
  readonly rate: number;
  readonly numRequests: number;
  readonly prefixTokens: number;
  readonly prompt: readonly [mean: number, std: number, min: number, max: number];
  readonly output: readonly [mean: number, std: number, min: number, max: number];
}

/** `generateLengthGauss`: clamp to [min, max], round half away from zero, no floor. */
function lengthGauss(rng: GoRand, [mean, std, min, max]: readonly [number, number, number, number]): number {
  if (min === max) return min;
  const val = rng.normFloat64() * std + mean;
  return goRound(Math.max(min, Math.min(max, val)));
}

export function goldenRequests(spec: GoldenWorkloadSpec): Request[] {
  const rng = new PartitionedRng(BigInt(spec.seed)).forSubsystem(SUBSYSTEM_WORKLOAD);
  const iat = Math.trunc(1 / (spec.rate / 1e6));
  const prefix = randomTokenIds(rng, spec.prefixTokens);
  const out: Request[] = [];
  let t = 0;
  for (let i = 0; i < spec.numRequests; i++) {
    const promptLen = lengthGauss(rng, spec.prompt);
    const input = concatTokens(prefix, randomTokenIds(rng, promptLen));
    const outputLen = lengthGauss(rng, spec.output);
    const output = randomTokenIds(rng, outputLen);
    out.push(new Request(`request_${i}`, input, output, t));
    t += iat;
  }
  return out;
}
