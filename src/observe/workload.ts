/**
 * The requests `blis observe` sends, from the same generators as `blis run`: a workload spec (closed-loop
 * sessions included), a preset or the distribution flags (constant arrivals at `--rate`), or `--concurrency`
 * virtual users (the reference's synthesized closed-loop client).
 */
import type { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { generateDistributionWorkload, type GaussianLengthParams } from '../workload/distribution.js';
import { synthesizeConcurrencySpec } from '../workload/sessions/synthesize.js';
import type { SessionBlueprint } from '../workload/sessions/types.js';
import { generateWorkload } from '../workload/sessions/workload.js';
import { isPresetName, resolvePreset, validateDistributionParams, PRESET_NAMES } from '../workload/presets.js';
import type { SloDimTargets } from '../workload/tracev2-types.js';
import { BlisError, showValue } from '../domain/errors.js';
import { parseThinkTimeDist } from '../workload/think-time.js';

export class ObserveConfigError extends BlisError {
  constructor(message: string) {
    super('observe-config', message);
    this.name = 'ObserveConfigError';
  }
}

export interface ObserveWorkloadFlags {
  readonly workloadSpec: string;
  /** Spec file text (when workloadSpec is set). */
  readonly specText: string;
  readonly preset: string;
  /** null = not given. */
  readonly rate: number | null;
  readonly numRequests: number;
  readonly seed: bigint;
  readonly seedChanged: boolean;
  /** 0 = none. */
  readonly horizonUs: number;
  readonly concurrency: number;
  readonly thinkTimeMs: number;
  /** `--think-time-dist` when given (null = not given). */
  readonly thinkTimeDist?: string | null;
  readonly thinkTimeMsChanged?: boolean;
  readonly prefixTokens: number;
  readonly prompt: GaussianLengthParams;
  readonly output: GaussianLengthParams;
}

export interface ObserveWorkload {
  /** Sorted by arrival (closed-loop sessions: round 0 only). */
  readonly requests: Request[];
  readonly seed: bigint;
  /** Header `workload_spec`: the spec path, `preset:<name>`, or ''. */
  readonly specLabel: string;
  /** Prefix group → shared prefix length (tokens). */
  readonly prefixGroups: ReadonlyMap<string, number>;
  readonly specGoodput: ReadonlyMap<string, SloDimTargets> | null;
  /** Closed-loop sessions continued as their rounds end (empty for open-loop workloads). */
  readonly sessions: SessionBlueprint[];
  /** Follow-up cap for the session manager; -1 = none. */
  readonly followUpBudget: number;
  /** Distribution and preset requests stream (see docs/reference-differences.md); spec clients say themselves. */
  readonly streamAll: boolean;
}

function groupsOf(requests: readonly Request[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of requests) if (r.prefixGroup !== '' && !m.has(r.prefixGroup)) m.set(r.prefixGroup, r.prefixLength);
  return m;
}

export async function buildObserveWorkload(f: ObserveWorkloadFlags): Promise<ObserveWorkload> {
  const rateGiven = f.rate !== null;
  if (f.preset === '' && f.workloadSpec === '' && !rateGiven && f.concurrency <= 0) {
    throw new ObserveConfigError('one of --workload, --workload-spec, --rate or --concurrency is required');
  }
  if (f.preset !== '') {
    if (f.workloadSpec !== '') throw new ObserveConfigError('--workload and --workload-spec are mutually exclusive');
    if (f.concurrency > 0) throw new ObserveConfigError('--workload and --concurrency are mutually exclusive');
    if (!rateGiven) throw new ObserveConfigError(`--workload ${showValue(f.preset)} requires --rate (preset synthesis needs a request rate)`);
  }
  if (f.concurrency > 0 && rateGiven) throw new ObserveConfigError('--concurrency and --rate are mutually exclusive; use one or the other');
  if (f.concurrency < 0) throw new ObserveConfigError(`--concurrency must be >= 0, got ${f.concurrency}`);
  if (f.thinkTimeMs < 0) throw new ObserveConfigError(`--think-time-ms must be >= 0, got ${f.thinkTimeMs}`);
  const dist = f.thinkTimeDist ?? null;
  if (dist !== null && f.thinkTimeMsChanged === true) throw new ObserveConfigError('--think-time-ms and --think-time-dist are mutually exclusive; give one');
  if (dist !== null && dist !== '' && f.concurrency <= 0) throw new ObserveConfigError('--think-time-dist requires --concurrency');
  const thinkSampler = dist === null ? null : parseThinkTimeDist(dist);
  if (f.rate !== null && !(f.rate > 0)) throw new ObserveConfigError(`--rate must be a finite value > 0, got ${f.rate}`);
  if (f.numRequests < 0) throw new ObserveConfigError(`--num-requests must be >= 0, got ${f.numRequests}`);
  const horizon = f.horizonUs > 0 ? f.horizonUs : MAX_INT64;

  if (f.workloadSpec !== '') {
    if (f.concurrency > 0) throw new ObserveConfigError('--concurrency cannot be used with --workload-spec; define the users in the spec (clients[].concurrency)');
    const { loadSpecWorkloadForRun } = await import('../workload/spec/index.js');
    const w = loadSpecWorkloadForRun(f.specText, f.workloadSpec, {
      ...(f.seedChanged ? { seed: f.seed } : {}),
      ...(f.numRequests > 0 ? { numRequests: f.numRequests } : {}),
      ...(f.horizonUs > 0 ? { horizon: f.horizonUs } : {}),
    });
    return {
      requests: w.requests,
      seed: w.seed,
      specLabel: f.workloadSpec,
      prefixGroups: groupsOf(w.requests),
      specGoodput: w.goodputSloTargets.size > 0 ? w.goodputSloTargets : null,
      sessions: w.sessions,
      followUpBudget: w.followUpBudget,
      streamAll: false,
    };
  }

  if (f.concurrency > 0) {
    const err = validateDistributionParams(f.prompt, f.output);
    if (err !== null) throw new ObserveConfigError(err);
    if (f.numRequests === 0 && horizon >= MAX_INT64) throw new ObserveConfigError('--concurrency needs --num-requests or --horizon to bound the run');
    const spec = synthesizeConcurrencySpec({ seed: f.seed, concurrency: f.concurrency, thinkTimeMs: f.thinkTimeMs, numRequests: f.numRequests, prefixTokens: f.prefixTokens, prompt: f.prompt, output: f.output });
    const w = generateWorkload(spec, { seed: f.seed, numRequests: f.numRequests, horizon });
    // The drawn think time replaces the constant one for every user (each draws from its own stream).
    if (thinkSampler !== null) for (const bp of w.sessions) bp.thinkTimeSampler = thinkSampler;
    return { requests: w.requests, seed: f.seed, specLabel: '', prefixGroups: groupsOf(w.requests), specGoodput: null, sessions: w.sessions, followUpBudget: w.followUpBudget, streamAll: true };
  }

  let shape = { prefixTokens: f.prefixTokens, prompt: f.prompt, output: f.output };
  if (f.preset !== '') {
    if (!isPresetName(f.preset)) throw new ObserveConfigError(`undefined workload ${showValue(f.preset)}; use one of (${PRESET_NAMES.join(', ')}) or --workload-spec`);
    shape = resolvePreset(f.preset);
  } else {
    const err = validateDistributionParams(f.prompt, f.output);
    if (err !== null) throw new ObserveConfigError(err);
  }
  if (f.numRequests === 0 && horizon >= MAX_INT64) {
    throw new ObserveConfigError('the workload needs --num-requests or --horizon to bound generation');
  }
  const requests = generateDistributionWorkload({
    seed: f.seed,
    rate: f.rate as number,
    numRequests: f.numRequests,
    horizon,
    prefixTokens: shape.prefixTokens,
    prompt: shape.prompt,
    output: shape.output,
    timeoutUs: 0,
  });
  return {
    requests,
    seed: f.seed,
    specLabel: f.preset !== '' ? `preset:${f.preset}` : '',
    prefixGroups: groupsOf(requests),
    specGoodput: null,
    sessions: [],
    followUpBudget: -1,
    streamAll: true,
  };
}
