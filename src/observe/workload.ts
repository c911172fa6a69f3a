/**
 * The requests `blis observe` sends, from the same generators as `blis run`: a workload spec, a preset or the
 * distribution flags (constant arrivals at `--rate`), or a closed loop of `--concurrency` virtual users.
 */
import type { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { generateDistributionWorkload, type GaussianLengthParams } from '../workload/distribution.js';
import { isPresetName, resolvePreset, validateDistributionParams, PRESET_NAMES } from '../workload/presets.js';
import type { SloDimTargets } from '../workload/tracev2-types.js';

export class ObserveConfigError extends Error {
  readonly code = 'observe-config';
  override readonly name = 'ObserveConfigError';
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
  readonly prefixTokens: number;
  readonly prompt: GaussianLengthParams;
  readonly output: GaussianLengthParams;
}

export interface ObserveWorkload {
  /** Sorted by arrival; in closed loop only the order and lengths matter. */
  readonly requests: Request[];
  readonly seed: bigint;
  /** Header `workload_spec`: the spec path, `preset:<name>`, or ''. */
  readonly specLabel: string;
  /** Prefix group → shared prefix length (tokens). */
  readonly prefixGroups: ReadonlyMap<string, number>;
  readonly specGoodput: ReadonlyMap<string, SloDimTargets> | null;
  /** Closed loop: virtual users and think time; null = open loop at the arrival times. */
  readonly closedLoop: { readonly users: number; readonly thinkTimeUs: number } | null;
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
    if (!rateGiven) throw new ObserveConfigError(`--workload "${f.preset}" requires --rate (preset synthesis needs a request rate)`);
  }
  if (f.concurrency > 0 && rateGiven) throw new ObserveConfigError('--concurrency and --rate are mutually exclusive; use one or the other');
  if (f.concurrency < 0) throw new ObserveConfigError(`--concurrency must be >= 0, got ${f.concurrency}`);
  if (f.thinkTimeMs < 0) throw new ObserveConfigError(`--think-time-ms must be >= 0, got ${f.thinkTimeMs}`);
  if (rateGiven && !((f.rate as number) > 0)) throw new ObserveConfigError(`--rate must be a finite value > 0, got ${f.rate}`);
  if (f.numRequests < 0) throw new ObserveConfigError(`--num-requests must be >= 0, got ${f.numRequests}`);
  const horizon = f.horizonUs > 0 ? f.horizonUs : MAX_INT64;

  if (f.workloadSpec !== '') {
    if (f.concurrency > 0) throw new ObserveConfigError('--concurrency cannot be used with --workload-spec; closed-loop spec clients are not supported yet');
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
      closedLoop: null,
      streamAll: false,
    };
  }

  let shape = { prefixTokens: f.prefixTokens, prompt: f.prompt, output: f.output };
  if (f.preset !== '') {
    if (!isPresetName(f.preset)) throw new ObserveConfigError(`undefined workload "${f.preset}"; use one of (${PRESET_NAMES.join(', ')}) or --workload-spec`);
    shape = resolvePreset(f.preset);
  } else {
    const err = validateDistributionParams(f.prompt, f.output);
    if (err !== null) throw new ObserveConfigError(err);
  }
  if (f.concurrency > 0 && f.numRequests === 0) throw new ObserveConfigError('--concurrency needs --num-requests (the closed loop sends that many requests)');
  if (f.numRequests === 0 && horizon >= MAX_INT64) {
    throw new ObserveConfigError('the workload needs --num-requests or --horizon to bound generation');
  }
  // A closed loop ignores arrival times; any rate gives the same lengths and token ids.
  const requests = generateDistributionWorkload({
    seed: f.seed,
    rate: f.concurrency > 0 ? 1 : (f.rate as number),
    numRequests: f.numRequests,
    horizon: f.concurrency > 0 ? MAX_INT64 : horizon,
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
    closedLoop: f.concurrency > 0 ? { users: f.concurrency, thinkTimeUs: f.thinkTimeMs * 1000 } : null,
    streamAll: true,
  };
}
