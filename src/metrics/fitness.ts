/**
 * `--fitness-weights` (run only, blis-cluster.md §5.4): a weighted sum of normalised metric components.
 * Weights are used as given (not normalised); latency components read the RawMetrics distributions in ticks.
 */
import type { RawMetrics } from './cluster-metrics.js';
import { goCompareStrings, goFixed } from '../gocompat/go-format.js';
import { GoParseError, goParseFloat } from '../gocompat/go-parse.js';
import { BlisError } from '../domain/errors.js';

export class FitnessError extends BlisError {
  constructor(message: string) {
    super('fitness-weights', message);
    this.name = 'FitnessError';
  }
}

/** Go's %v for a float64 as the validation message shows it (only special values and plain numbers occur). */
function goFloatV(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (Object.is(x, -0)) return '-0';
  // %v is strconv's shortest %g: exponent form when the decimal exponent is < -4 or >= 6 (e.g. "-1e+06").
  const [m, e] = x.toExponential().split('e') as [string, string];
  const n = Number(e);
  if (x !== 0 && (n < -4 || n >= 6)) return `${m}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  return String(x);
}

/**
 * Parses "key:value,key:value". Each comma-separated pair is trimmed and split at its first ':'; values
 * must be finite and >= 0; a repeated key keeps the last value. Key validity is checked by computeFitness.
 * Throws FitnessError with the reference's message (the CLI prefixes "Invalid fitness weights: ").
 */
export function parseFitnessWeights(s: string): Map<string, number> {
  const weights = new Map<string, number>();
  if (s === '') return weights;
  for (const raw of s.split(',')) {
    const pair = raw.trim();
    const colon = pair.indexOf(':');
    if (colon < 0) throw new FitnessError(`invalid fitness weight ${JSON.stringify(pair)}: expected key:value`);
    const key = pair.slice(0, colon).trim();
    let val: number;
    try {
      val = goParseFloat(pair.slice(colon + 1).trim());
    } catch (e) {
      if (e instanceof GoParseError) throw new FitnessError(`invalid fitness weight value for ${JSON.stringify(key)}: ${e.message}`);
      throw e;
    }
    if (!Number.isFinite(val) || val < 0) {
      throw new FitnessError(`invalid weight for ${JSON.stringify(key)}: must be a finite non-negative number, got ${goFloatV(val)}`);
    }
    weights.set(key, val);
  }
  return weights;
}

export const FITNESS_KEYS: readonly string[] = [
  'throughput',
  'tokens_per_sec',
  'p99_ttft',
  'p50_ttft',
  'mean_ttft',
  'p99_e2e',
  'p50_e2e',
  'mean_e2e',
];

// Normalisation scales: 100 req/s, 10 000 tok/s, and 1 ms (1000 ticks) of latency map to 0.5.
const REFERENCE_RPS = 100.0;
const REFERENCE_TPS = 10000.0;
const REFERENCE_TICKS = 1000.0;

/** A component in [0,1]: throughputs as v/(v+ref) (higher is better), latencies as 1/(1+v/ref). */
function component(m: RawMetrics, key: string): number | undefined {
  switch (key) {
    case 'throughput':
      return m.requestsPerSec / (m.requestsPerSec + REFERENCE_RPS);
    case 'tokens_per_sec':
      return m.tokensPerSec / (m.tokensPerSec + REFERENCE_TPS);
    case 'p99_ttft':
      return 1.0 / (1.0 + m.ttft.p99 / REFERENCE_TICKS);
    case 'p50_ttft':
      return 1.0 / (1.0 + m.ttft.p50 / REFERENCE_TICKS);
    case 'mean_ttft':
      return 1.0 / (1.0 + m.ttft.mean / REFERENCE_TICKS);
    case 'p99_e2e':
      return 1.0 / (1.0 + m.e2e.p99 / REFERENCE_TICKS);
    case 'p50_e2e':
      return 1.0 / (1.0 + m.e2e.p50 / REFERENCE_TICKS);
    case 'mean_e2e':
      return 1.0 / (1.0 + m.e2e.mean / REFERENCE_TICKS);
    default:
      return undefined;
  }
}

export interface FitnessResult {
  readonly score: number;
  /** Unweighted components, keys in Go sorted order. */
  readonly components: ReadonlyMap<string, number>;
}

/** Score = Σ component·weight over the keys in sorted order. Throws FitnessError on an unknown key. */
export function computeFitness(m: RawMetrics, weights: ReadonlyMap<string, number>): FitnessResult {
  const keys = [...weights.keys()].sort(goCompareStrings);
  for (const k of keys) {
    if (component(m, k) === undefined) {
      throw new FitnessError(`unknown fitness metric key ${JSON.stringify(k)}; valid keys: ${FITNESS_KEYS.join(', ')}`);
    }
  }
  const components = new Map<string, number>();
  let score = 0;
  for (const k of keys) {
    const v = component(m, k) as number;
    components.set(k, v);
    score += v * (weights.get(k) as number);
  }
  return { score, components };
}

/** `=== Fitness Evaluation ===` body lines. */
export function fitnessLines(r: FitnessResult): string[] {
  const lines = [`Score: ${goFixed(r.score, 6)}`];
  for (const [k, v] of r.components) lines.push(`  ${k}: ${goFixed(v, 6)}`);
  return lines;
}
