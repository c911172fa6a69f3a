/**
 * `blis run --concurrency N --think-time-ms T`: the one-client spec the reference synthesises for closed-loop
 * users (its SynthesizeFromDistribution in concurrency mode). Client "distribution" with N users, think time
 * T ms, the distribution flags' clamped gaussian lengths, and prefix group "shared" when `--prefix-tokens` > 0;
 * no rate (users drive arrivals), so aggregate_rate and rate_fraction stay 0.
 */
import type { GaussianLengthParams } from '../distribution.js';
import type { ClientSpec, DistSpec, WorkloadSpec } from '../spec/types.js';

export interface ConcurrencySpecParams {
  readonly seed: bigint;
  readonly concurrency: number;
  readonly thinkTimeMs: number;
  /** Request cap (0 = none: the horizon bounds the run). */
  readonly numRequests: number;
  readonly prefixTokens: number;
  readonly prompt: GaussianLengthParams;
  readonly output: GaussianLengthParams;
}

function gaussian(p: GaussianLengthParams): DistSpec {
  return {
    type: 'gaussian',
    params: new Map([
      ['mean', p.mean],
      ['std_dev', p.stdev],
      ['min', p.min],
      ['max', p.max],
    ]),
    file: '',
  };
}

export function synthesizeConcurrencySpec(p: ConcurrencySpecParams): WorkloadSpec {
  const client: ClientSpec = {
    id: 'distribution',
    tenantId: '',
    sloClass: '',
    model: '',
    adapter: '',
    rateFraction: 0,
    arrival: { process: 'constant', cv: null, shape: null, scale: null },
    inputDist: gaussian(p.prompt),
    outputDist: gaussian(p.output),
    prefixGroup: p.prefixTokens > 0 ? 'shared' : '',
    prefixLength: p.prefixTokens > 0 ? p.prefixTokens : 0,
    streaming: false,
    network: null,
    multimodal: null,
    reasoning: null,
    timeout: null,
    sloTargetUs: null,
    closedLoop: null,
    concurrency: p.concurrency,
    thinkTimeUs: p.thinkTimeMs * 1000,
    lifecycle: null,
  };
  return {
    version: '2',
    seed: p.seed,
    category: 'language',
    clients: [client],
    cohorts: [],
    aggregateRate: 0,
    horizon: 0,
    numRequests: p.numRequests,
    servegenData: null,
    inferencePerf: null,
    goodputSloTargets: new Map(),
  };
}
