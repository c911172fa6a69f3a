/**
 * What `blis run --workload-spec FILE` needs from the spec, resolved the way the reference's run command does:
 * `--seed` overrides the spec seed, `--horizon` the spec horizon (else the spec's, else none), `--num-requests`
 * the spec's num_requests, and an explicit `--timeout` replaces every per-client timeout (a spec file's own
 * timeouts apply otherwise — unlike synthesised workloads, which always get the 300 s default).
 */
import type { Request } from '../../domain/request.js';
import { MAX_INT64 } from '../../domain/units.js';
import { generateWorkload } from '../sessions/workload.js';
import type { SessionBlueprint } from '../sessions/types.js';
import { parseWorkloadSpec } from './parse.js';
import { checkWorkloadTokens } from './token-bound.js';
import type { ParseWorkloadSpecOptions } from './parse.js';
import type { SloDimTargets, WorkloadSpec } from './types.js';
import { BlisError } from '../../domain/errors.js';
import { specToYaml } from '../profiles/emit.js';
import { convertServeGenChunks, type ServeGenChunkFiles } from '../servegen/index.js';

/** A bad command-line value in combination with a spec (e.g. `--timeout 0`, or no bound on generation). */
export class WorkloadFlagError extends BlisError {
  constructor(message: string) {
    super('WORKLOAD_FLAG', message);
    this.name = 'WorkloadFlagError';
  }
}

/** The command-line flags that interact with a spec; a field is present only when the flag was given. */
export interface SpecRunFlags {
  readonly seed?: bigint;
  readonly numRequests?: number;
  /** Simulation horizon in µs. */
  readonly horizon?: number;
  /** Request timeout in seconds (negative = no timeout; 0 is rejected, as by the reference). */
  readonly timeoutSecs?: number;
  /** `--semantics corrected` (see SpecGenerateOptions.corrected). */
  readonly corrected?: boolean;
}

export interface SpecRunWorkload {
  readonly spec: WorkloadSpec;
  /** Generated requests, sorted by arrival, ids `request_<i>` (closed-loop sessions: round 0 only). */
  readonly requests: Request[];
  /** Closed-loop sessions the run continues with a SessionManager (empty when none). */
  readonly sessions: SessionBlueprint[];
  /** Follow-up cap for the SessionManager; -1 = none. */
  readonly followUpBudget: number;
  /** The workload seed in effect (the trace header's workload_seed). */
  readonly seed: bigint;
  /** Simulation horizon in µs ({@link MAX_INT64} = none). */
  readonly horizon: number;
  /** The request cap generation used (0 = unlimited). */
  readonly maxRequests: number;
  /**
   * The spec's goodput SLO targets (ms per class and dimension, 0 = not gated). The run command merges the
   * `--goodput-slo-*` flags over these (CLI wins per dimension) and drops classes left with no dimension.
   */
  readonly goodputSloTargets: ReadonlyMap<string, SloDimTargets>;
}

export interface SpecRunOptions extends ParseWorkloadSpecOptions {
  /** Reads a `servegen_data` directory (an I/O edge supplies it); absent = such specs are refused. */
  readonly readServeGen?: (dir: string) => ServeGenChunkFiles[];
}

/**
 * A `servegen_data` source converted to cohorts (as the reference loads it, with the run's seed), then validated
 * like any spec. As in the reference the directory is ignored when the spec also has clients or cohorts, and the
 * period gap defaults to 0 when `drain_timeout_secs` is not given (180 only for `blis convert servegen`;
 * --semantics corrected: 180 here too, and Poisson windows converted as Poisson).
 */
function expandServeGen(spec: WorkloadSpec, fileLabel: string, seed: bigint, opts: SpecRunOptions, corrected: boolean): WorkloadSpec {
  const sg = spec.servegenData!;
  if (spec.clients.length > 0 || spec.cohorts.length > 0) {
    opts.onWarning?.(`${fileLabel}: servegen_data is ignored because the spec also has cohorts`);
    return { ...spec, servegenData: null };
  }
  if (sg.path === '') throw new WorkloadFlagError(`${fileLabel}: servegen_data.path is empty; name the ServeGen directory (chunk-<id>-trace.csv + chunk-<id>-dataset.json files)`);
  if (opts.readServeGen === undefined) throw new WorkloadFlagError(`${fileLabel}: servegen_data needs the ServeGen directory ${sg.path}, which this host cannot read`);
  const conv = convertServeGenChunks(opts.readServeGen(sg.path), {
    dir: sg.path,
    seed,
    windowDurationSecs: sg.windowDurationSecs,
    // Corrected semantics give an unset gap convert's default (180 s) instead of 0.
    drainTimeoutSecs: corrected && sg.drainTimeoutSet !== true ? 180 : sg.drainTimeoutSecs,
    ...(opts.onWarning ? { warn: opts.onWarning } : {}),
    ...(corrected ? { corrected } : {}),
  });
  const expanded: WorkloadSpec = { ...spec, category: conv.category === '' ? spec.category : conv.category, cohorts: conv.cohorts, aggregateRate: 0, servegenData: null };
  return parseWorkloadSpec(specToYaml(expanded), `${fileLabel} (servegen_data ${sg.path}, converted)`, opts);
}

/**
 * Parses, validates and generates a spec workload for `blis run`.
 * @throws WorkloadSpecError for spec problems, WorkloadFlagError for flag problems.
 */
export function loadSpecWorkloadForRun(
  yamlText: string,
  fileLabel: string,
  flags: SpecRunFlags,
  opts: SpecRunOptions = {},
): SpecRunWorkload {
  if (flags.timeoutSecs === 0) throw new WorkloadFlagError('--timeout must be positive (seconds) or negative to disable; got 0');
  let spec = parseWorkloadSpec(yamlText, fileLabel, opts);
  const seed = flags.seed ?? spec.seed;
  if (spec.servegenData !== null) spec = expandServeGen(spec, fileLabel, seed, opts, flags.corrected === true);
  const horizon = flags.horizon ?? (spec.horizon > 0 ? spec.horizon : MAX_INT64);
  const maxRequests = flags.numRequests ?? spec.numRequests;
  if (!Number.isSafeInteger(maxRequests) || maxRequests < 0) {
    throw new WorkloadFlagError(`--num-requests must be a non-negative integer, got ${maxRequests}`);
  }
  if (maxRequests === 0 && horizon >= MAX_INT64) {
    throw new WorkloadFlagError('Workload requires either num_requests or --horizon to bound generation');
  }
  checkWorkloadTokens(spec, fileLabel, maxRequests, horizon, flags.numRequests === undefined ? 'num_requests' : '--num-requests');
  const wl = generateWorkload(spec, {
    seed,
    numRequests: maxRequests,
    horizon,
    ...(flags.timeoutSecs === undefined ? {} : { timeoutSecs: flags.timeoutSecs }),
    ...(flags.corrected === true ? { corrected: true } : {}),
  });
  return {
    spec,
    requests: wl.requests,
    sessions: wl.sessions,
    followUpBudget: wl.followUpBudget,
    seed,
    horizon,
    maxRequests,
    goodputSloTargets: spec.goodputSloTargets,
  };
}
