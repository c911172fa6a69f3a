/**
 * `run` and `replay` as pure functions of the options: resolve the engine and policies, build the workload,
 * simulate, and render every output as text. The CLI writes the texts to stdout and files; the library API
 * returns them. Same options, same bytes.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { Request } from '../domain/request.js';
import { parseFitnessWeights } from '../metrics/fitness.js';
import { goJsonArrayChunks, goJsonIndent } from '../gocompat/go-format.js';
import { mergeGoodputTargets, resolveGoodputCliFlags, type SloDimTargets } from '../metrics/goodput.js';
import { checkDistributionWorkload, distributionWorkloadStream, type DistributionWorkloadOptions } from '../workload/distribution.js';
import { MAX_INT64 } from '../domain/units.js';
import { SessionPool } from '../workload/sessions/pool.js';
import { DEFAULT_DISTRIBUTION, isPresetName, resolvePreset, validateDistributionParams, validateWorkloadFlags } from '../workload/presets.js';
import { checkReplayRecords, defaultReplayHorizon, recordedReplayHorizon } from '../workload/replay.js';
import { buildReplayWorkload } from './replay-workload.js';
import { SessionManager } from '../workload/sessions/manager.js';
import type { SessionLog } from '../workload/sessions/manager.js';
import type { TraceHeader, TraceRecord } from '../workload/tracev2-types.js';
import { synthesizeConcurrencySpec } from '../workload/sessions/synthesize.js';
import type { SessionBlueprint } from '../workload/sessions/types.js';
import { generateWorkload } from '../workload/sessions/workload.js';
import { buildReplayTraceHeader, buildRunTraceHeader, buildRunTraceRecords, outcomeFromRequest } from '../workload/trace-export.js';
import { parentTraceOutcome } from '../cluster/pd/project.js';
import { formatTraceCsv, formatTraceCsvChunks, parseTraceCsv } from '../workload/tracev2-csv.js';
import { formatTraceHeaderYaml } from '../workload/tracev2-yaml.js';
import { ConfigError } from './config-error.js';
import { WallClock, WallClockExceeded } from '../sandbox/watchdog.js';

import { driveEngine, driveEngineStreaming, type EngineSetup, type ProgressCallback, type SyncGuard } from './engine-setup.js';
import type { TimeSeriesData } from '../cluster/timeseries.js';
import { attachSampler, formatTimeSeries, resolveTimeSeries, type TimeSeriesRequest } from './timeseries.js';
import type { TimeSeriesSampler } from '../cluster/timeseries.js';
import { buildReportData } from './report-data.js';
import type { SimEnv } from './env.js';
import { arrivalRate, profileRangeWarning, type ProfileRange } from '../latency/profile-range.js';
import type { FlagValues } from './options.js';
import { idlePoolWarnings } from './idle-pools.js';
import { buildReport, metricsFileText, renderJson, renderMetricsFile, renderReferenceText, type Report, type ReportOptions } from './report.js';
import { checkDpPlacementScaling, horizonFlag, resolveEngineFlags, semanticsFlag } from './resolve-engine.js';
import { resolvePolicyFlags, type ResolvedPolicies } from './resolve-policies.js';
import { checkBundleDeciders } from './resolve-deciders.js';
import { RunRecorder } from '../cluster/recorder.js';
import { anomalyReport, policyReportSections } from './policy-report.js';
import { checkAdapterReferences, type AdapterReference, type LoraSetup } from './resolve-lora.js';
import { resolveScaling } from './resolve-scaling.js';
import type { DeploymentSpec } from '../deploy/spec.js';
import { checkDeploymentRequests, checkedDeploymentStream } from './deployment-checks.js';
import { showValue } from '../domain/errors.js';
import { WallClockError } from '../policy/errors.js';

/** The TraceV2 export of a run. */
export interface TraceOutput {
  readonly yaml: string;
  readonly csv: string;
  csvChunks(): Iterable<string>;
}

/** Receives each finished simulation (tests run invariant checkers on it). */
export type SimulationObserver = (cs: ClusterSimulator, requests: readonly Request[], setup: EngineSetup, sessions: SessionLog | null) => void;

export interface SimulationOutputs {
  readonly report: Report;
  readonly cluster: ClusterSimulator;
  /** stdout in the requested `--output-format`. */
  readonly stdout: string;
  /**
   * `--metrics-path` contents, rendered when read and only when the option names a file (null otherwise): its
   * per-request rows are large for large runs, and past a couple of million requests longer than a string can
   * be — write {@link metricsFileChunks} instead.
   */
  readonly metricsFile: string | null;
  /** The same bytes as {@link metricsFile}, one request row at a time. */
  metricsFileChunks(): Iterable<string>;
  /** run `--trace-output`: `<prefix>.yaml` and `<prefix>.csv` contents (the CSV rendered when read). */
  readonly trace: TraceOutput | null;
  /** replay `--results-path` contents, rendered when read and only when the option names a file (else null). */
  readonly results: string | null;
  /** The same bytes as {@link results}, one row at a time (null when there are none). */
  resultsChunks(): Iterable<string> | null;
  /** What the run recorded (preemptions, routings with cache outcomes, KV samples, batches with `full`). */
  readonly recorder: RunRecorder;
  /** Every request of the run, follow-ups included. */
  readonly requests: readonly Request[];
  /** The sampled time series (when `--timeseries-*` or RunOptions.timeseries asked for them). */
  readonly timeseries: TimeSeriesData | null;
  /** The merged goodput targets per SLO class (null: none); reports draw attainment against them. */
  readonly goodputTargets?: ReadonlyMap<string, SloDimTargets> | null;
  /** `--timeseries-path` contents (null when no path was given). */
  readonly timeseriesFile: string | null;
}

function outputFormat(f: FlagValues): 'json' | 'reference' {
  const v = f.str('output-format');
  if (v !== 'json' && v !== 'reference') throw new ConfigError('bad-flag', `--output-format must be json or reference, got ${showValue(v)}`);
  return v;
}

function fitnessWeights(f: FlagValues): Map<string, number> | null {
  const text = f.str('fitness-weights');
  if (text === '') return null;
  try {
    return parseFitnessWeights(text);
  } catch (e) {
    throw new ConfigError('bad-flag', `--fitness-weights: ${(e as Error).message}`);
  }
}

function reportOptions(f: FlagValues, cs: ClusterSimulator, scheduler: string, goodputTargets: ReadonlyMap<string, SloDimTargets> | null, fitness: boolean, jsonExtras: NonNullable<ReportOptions['jsonExtras']>): ReportOptions {
  const level = f.str('trace-level');
  return {
    scheduler,
    fitnessWeights: fitness ? fitnessWeights(f) : null,
    goodputTargets,
    trace: level === 'decisions' || level === 'full' ? { admissions: cs.admissionRecords, routings: cs.routingRecords } : null,
    summarizeTrace: f.bool('summarize-trace'),
    jsonExtras,
    corrected: semanticsFlag(f) === 'corrected',
  };
}

/** Options of a run beyond the CLI's (the evaluator's). */
export interface RunOptions {
  /** Record where each routed request's prefix was (reflection summaries). */
  readonly prefixAudit?: boolean;
  /** Sample time series even without the `--timeseries-*` options (a report will draw them). */
  readonly timeseries?: boolean;
  /** Called every 100 ms of simulated time during the run (progress displays); absent = one uninterrupted run. */
  readonly onProgress?: ProgressCallback;
  /** Called every 4,096 requests while a workload is generated before the run (progress displays). */
  readonly onGenerate?: (done: number, total: number | null) => void;
  /** false: no lazy decode slots in the step loop (src/instance/running-batch.ts); for tests comparing both. */
  readonly lazyDecode?: boolean;
  /** false: the prefix-affinity scorer keeps an index of its own beside ShadowKV's; for tests comparing both. */
  readonly sharePrefixIndex?: boolean;
  /** false: every prompt identity is indexed at allocation even when prompts are private; for tests comparing both. */
  readonly privatePrompts?: boolean;
  /**
   * Wall-clock budget (ms) of the simulation when a policy runs in the fast engine (sandbox/watchdog.ts): past it
   * the run fails with SANDBOX_BUDGET. Absent: --policy-wall-clock-s (default 600 s),
   * which wins when given explicitly; 0: none. Runs without fast-engine code
   * are not limited. It covers the simulation's synchronous stretches (through a driver, each slice between its
   * yields), from the run's start: time spent awaiting counts too.
   */
  readonly wallClockMs?: number;
  /**
   * The slice of the per-call wall-clock bound (ms between two arms of the watchdog; default
   * sandbox/watchdog.ts's SLICE_MS). Tests pass 0 to cut a run at every chunk of events and every clock check.
   */
  readonly sliceMs?: number;
}

/** The wall-clock bounds of a run with fast-engine code: the run's budget and the per-call limit (null: none). */
function wallClockGuard(pol: ResolvedPolicies, opts: RunOptions): SyncGuard | null {
  if (!pol.fastCode) return null;
  // An explicit --policy-wall-clock-s wins; else the caller's (blis evaluate --timeout-s); else the default.
  const ms = pol.wallClock.explicit ? pol.wallClock.ms : (opts.wallClockMs ?? pol.wallClock.ms);
  const callMs = pol.callWallClockMs;
  if (!(ms > 0) && !(callMs > 0)) return null;
  const clock = new WallClock(ms, callMs, opts.sliceMs);
  return {
    sliced: clock.sliced,
    sliceOver: () => clock.sliceOver(),
    run: (fn, cs = null) => {
      try {
        return clock.run(fn, cs === null ? null : () => cs.requestPause());
      } catch (e) {
        if (e instanceof WallClockExceeded) throw new WallClockError(e.detail, e.perCall);
        throw e;
      }
    },
  };
}

/** `report_data` (with `--report-data`): what blis report and blis compare draw. */
function reportDataSection(f: FlagValues, cluster: ClusterSimulator, requests: readonly Request[], timeseries: TimeSeriesData | null, source: 'run' | 'replay', goodputTargets: ReadonlyMap<string, SloDimTargets> | null): Record<string, unknown> {
  return f.bool('report-data') ? { report_data: buildReportData({ cluster, requests, timeseries, goodputTargets }, f, source) } : {};
}

/** Attaches the sampler the options ask for, after `prepare` (the recorder). */
function withSampler(ts: TimeSeriesRequest | null, setup: EngineSetup, prepare: ((cs: ClusterSimulator) => void) | null, holder: { sampler: TimeSeriesSampler | null }): ((cs: ClusterSimulator) => void) | null {
  if (ts === null) return prepare;
  return (cs) => {
    prepare?.(cs);
    holder.sampler = attachSampler(cs, ts, setup.latency.outputTokenProcessingTime());
  };
}

/** The finished series and their file text; warns when a fixed interval had to be coarsened. */
function seriesOutputs(ts: TimeSeriesRequest | null, sampler: TimeSeriesSampler | null, env: SimEnv): { timeseries: TimeSeriesData | null; timeseriesFile: string | null } {
  if (ts === null || sampler === null) return { timeseries: null, timeseriesFile: null };
  const data = sampler.data();
  if (ts.fixed && data.intervalUs !== ts.intervalUs) {
    env.warn(`--timeseries-interval-us ${ts.intervalUs} would give more than ${ts.maxRows} rows; sampled every ${data.intervalUs} µs instead`);
  }
  return { timeseries: data, timeseriesFile: ts.path === '' ? null : formatTimeSeries(data, ts.format) };
}

function recorderFor(pol: ResolvedPolicies, opts: RunOptions): RunRecorder {
  return new RunRecorder({ batches: pol.traceLevel === 'full', kvSampleIntervalUs: 10_000, prefixAudit: opts.prefixAudit === true });
}

/** The JSON-only policy, anomaly and trace sections of a finished run. */
function extras(cs: ClusterSimulator, recorder: RunRecorder, requests: readonly Request[], pol: ResolvedPolicies, goodput: ReadonlyMap<string, SloDimTargets> | null): Record<string, unknown> {
  const input = {
    cs,
    recorder,
    requests,
    metadata: pol.metadata,
    evolvable: pol.policy.evolvable ?? null,
    traceLevel: pol.traceLevel,
    goodputTargets: goodput,
    priorityScheduling: pol.scheduler === 'priority-fcfs' || pol.policy.evolvable?.evolvable.specs.priority !== undefined || pol.policy.evolvable?.evolvable.specs.scheduler !== undefined,
  };
  return policyReportSections(input, anomalyReport(input));
}

function cliGoodput(f: FlagValues): ReturnType<typeof resolveGoodputCliFlags> {
  return resolveGoodputCliFlags(f.str('slo-ttft'), f.str('slo-itl'), f.str('slo-e2e'));
}

interface RunWorkload {
  /** The requests, sorted by arrival; a lazy source (generated as the simulation reaches them) when `streamed`. */
  readonly requests: Iterable<Request>;
  readonly streamed: boolean;
  /** How many requests a streamed workload holds (progress displays). */
  readonly total?: number;
  /** At most how many requests a workload generated before the run holds (its generation's progress); absent = unknown. */
  readonly expected?: number;
  readonly horizon: number;
  /** The workload seed in effect (trace header). */
  readonly seed: bigint;
  readonly specGoodput: ReadonlyMap<string, SloDimTargets> | null;
  /** Closed-loop sessions continued during the run (none for open-loop workloads). */
  readonly sessions: SessionBlueprint[];
  /** Follow-up cap; -1 = none. */
  readonly followUpBudget: number;
  /** No two requests' prompts share a full block (KVStoreConfig.privatePrompts); absent = not known. */
  readonly privatePrompts?: boolean;
  /** The spec's LoRA adapter references (checked against --lora-config). */
  readonly adapterRefs?: readonly AdapterReference[];
}

/**
 * `blis run --concurrent-sessions N`: a pool over the spec's closed-loop sessions (0 = off). Refused with
 * `--concurrency` (its users are already a closed loop); a workload without sessions is warned about.
 */
function runPoolSize(f: FlagValues, users: number, hasSessions: boolean, env: SimEnv): number {
  const n = f.int('concurrent-sessions');
  if (n < 0) throw new ConfigError('bad-flag', `--concurrent-sessions must be >= 0 (0 = no pool), got ${n}`);
  if (n > 0 && users > 0) throw new ConfigError('bad-flag', '--concurrent-sessions pools a workload spec\'s multi-turn sessions; --concurrency users are already a closed loop, so give one or the other');
  if (n > 0 && !hasSessions) env.warn(`--concurrent-sessions ${n}: the workload has no closed-loop sessions (a spec client with reasoning.multi_turn), so it has no effect`);
  return hasSessions ? n : 0;
}

/** The pool over a run's sessions: their round-0 requests in arrival order; what is injected at the start. */
function sessionPool(sessions: SessionManager, requests: Request[], n: number): { pool: SessionPool; injected: Request[] } {
  const roundZeros = requests.filter((r) => r.sessionId !== '' && r.roundIndex === 0 && sessions.state(r.sessionId) !== undefined);
  const pool = new SessionPool(sessions, roundZeros, n);
  const waiting = new Set(roundZeros.slice(pool.initial().length));
  return { pool, injected: requests.filter((r) => !waiting.has(r)) };
}

/** `--concurrency` / `--think-time-ms`, checked as the reference does before any workload is built. */
function concurrencyFlags(f: FlagValues): { users: number; thinkMs: number } {
  const users = f.int('concurrency');
  const thinkMs = f.int('think-time-ms');
  if (users < 0) throw new ConfigError('bad-flag', `--concurrency must be >= 0, got ${users}`);
  if (thinkMs < 0) throw new ConfigError('bad-flag', `--think-time-ms must be >= 0, got ${thinkMs}`);
  if (users > 0 && f.changed('rate')) throw new ConfigError('bad-flag', '--concurrency and --rate are mutually exclusive; use one or the other');
  return { users, thinkMs };
}

/**
 * Closed-loop users (`--concurrency`): the distribution flags' lengths, no rate. `--num-requests` caps the
 * total only when given explicitly; otherwise `--horizon` must bound the run.
 */
function concurrencyWorkload(f: FlagValues, seed: bigint, users: number, thinkMs: number): RunWorkload {
  const timeoutSecs = f.int('timeout');
  const corrected = semanticsFlag(f) === 'corrected';
  const numRequests = f.int('num-requests');
  const prefixTokens = f.int('prefix-tokens');
  const werr = validateWorkloadFlags({ rate: f.float('rate'), numRequests, prefixTokens, timeoutSecs }, false);
  if (werr) throw new ConfigError('bad-flag', werr);
  const prompt = { mean: f.int('prompt-tokens'), stdev: f.int('prompt-tokens-stdev'), min: f.int('prompt-tokens-min'), max: f.int('prompt-tokens-max') };
  const output = { mean: f.int('output-tokens'), stdev: f.int('output-tokens-stdev'), min: f.int('output-tokens-min'), max: f.int('output-tokens-max') };
  const derr = validateDistributionParams(prompt, output);
  if (derr) throw new ConfigError('bad-flag', derr);
  const cap = f.changed('num-requests') ? numRequests : 0;
  const horizon = horizonFlag(f);
  if (cap === 0 && horizon >= MAX_INT64) throw new ConfigError('bad-flag', 'Workload requires either num_requests or --horizon to bound generation');
  const spec = synthesizeConcurrencySpec({ seed, concurrency: users, thinkTimeMs: thinkMs, numRequests: cap, prefixTokens, prompt, output });
  // The reference always applies --timeout (300 s by default); corrected semantics only when it is given.
  const timeout = corrected && !f.changed('timeout') ? {} : { timeoutSecs };
  const wl = generateWorkload(spec, { seed, numRequests: cap, horizon, ...timeout, ...(corrected ? { corrected } : {}) });
  return { requests: wl.requests, streamed: false, horizon, seed, specGoodput: null, sessions: wl.sessions, followUpBudget: wl.followUpBudget };
}

/** The distribution workload's (or preset's) options, validated (also by {@link checkSimulation}). */
function distributionOptions(f: FlagValues): Omit<DistributionWorkloadOptions, 'seed'> & { total: number } {
  const horizon = horizonFlag(f);
  const timeoutSecs = f.int('timeout');
  const workloadFlags = { rate: f.float('rate'), numRequests: f.int('num-requests'), prefixTokens: f.int('prefix-tokens'), timeoutSecs };
  const werr = validateWorkloadFlags(workloadFlags);
  if (werr) throw new ConfigError('bad-flag', werr);
  const wl = f.str('workload');
  let shape = DEFAULT_DISTRIBUTION;
  if (wl !== 'distribution') {
    if (!isPresetName(wl)) throw new ConfigError('bad-flag', `unknown --workload ${showValue(wl)}; valid: distribution, chatbot, contentgen, summarization, multidoc`);
    shape = resolvePreset(wl);
  }
  const custom = wl === 'distribution';
  const prompt = custom
    ? { mean: f.int('prompt-tokens'), stdev: f.int('prompt-tokens-stdev'), min: f.int('prompt-tokens-min'), max: f.int('prompt-tokens-max') }
    : shape.prompt;
  const output = custom
    ? { mean: f.int('output-tokens'), stdev: f.int('output-tokens-stdev'), min: f.int('output-tokens-min'), max: f.int('output-tokens-max') }
    : shape.output;
  if (custom) {
    const derr = validateDistributionParams(prompt, output);
    if (derr) throw new ConfigError('bad-flag', derr);
  }
  const options = {
    rate: workloadFlags.rate,
    numRequests: workloadFlags.numRequests,
    horizon,
    prefixTokens: custom ? workloadFlags.prefixTokens : shape.prefixTokens,
    prompt,
    output,
    // The reference gives every request the 300 s default; corrected semantics apply only an explicit --timeout.
    timeoutUs: timeoutSecs > 0 && (f.changed('timeout') || semanticsFlag(f) !== 'corrected') ? timeoutSecs * 1e6 : 0,
  };
  // Nothing bounding the workload, or more than one run can hold: refused here, before any work.
  return { ...options, total: checkDistributionWorkload(options, false) };
}

/** The distribution workload or a preset, from the run options: generated while the simulation reaches it. */
function generatedWorkload(f: FlagValues, seed: bigint): RunWorkload {
  const { total, ...opts } = distributionOptions(f);
  // Without a shared prefix its prompts are independent uniform draws: no two share a block (KVStoreConfig.privatePrompts).
  return { requests: distributionWorkloadStream({ seed, ...opts }), streamed: true, total, horizon: opts.horizon, seed, specGoodput: null, sessions: [], followUpBudget: -1, privatePrompts: opts.prefixTokens === 0 };
}

/**
 * `--workload-spec FILE`: the spec's clients (sessions, concurrency users and inference-perf included);
 * --seed/--num-requests/--horizon/--timeout override it when given.
 */
async function specWorkload(f: FlagValues, env: SimEnv, path: string): Promise<RunWorkload> {
  if (f.int('concurrency') > 0) {
    throw new ConfigError('bad-flag', '--concurrency cannot be used with --workload-spec; define concurrency in the spec file using clients[].concurrency instead');
  }
  const { loadSpecWorkloadForRun } = await import('../workload/spec/index.js');
  const r = loadSpecWorkloadForRun(env.readText(path, '--workload-spec'), path, {
    ...(f.changed('seed') ? { seed: f.bigint('seed') } : {}),
    ...(f.changed('num-requests') ? { numRequests: f.int('num-requests') } : {}),
    ...(f.changed('horizon') ? { horizon: horizonFlag(f) } : {}),
    ...(f.changed('timeout') ? { timeoutSecs: f.int('timeout') } : {}),
    ...(semanticsFlag(f) === 'corrected' ? { corrected: true } : {}),
  }, { onWarning: (m) => env.warn(m), ...(env.readServeGen ? { readServeGen: (dir: string) => env.readServeGen!(dir, 'servegen_data.path') } : {}) });
  return {
    requests: r.requests,
    streamed: false,
    ...(r.maxRequests > 0 ? { expected: r.maxRequests } : {}),
    horizon: r.horizon,
    seed: r.seed,
    specGoodput: r.goodputSloTargets.size > 0 ? r.goodputSloTargets : null,
    sessions: r.sessions,
    followUpBudget: r.followUpBudget,
    adapterRefs: [
      ...r.spec.clients.map((c) => ({ kind: 'client', id: c.id, adapter: c.adapter, model: c.model })),
      ...r.spec.cohorts.map((c) => ({ kind: 'cohort', id: c.id, adapter: c.adapter, model: c.model })),
    ],
  };
}

/** The requests of a workload generated before the run, reporting every 4,096 to `onGenerate`. */
function materialize(source: Iterable<Request>, expected: number | null, onGenerate: ((done: number, total: number | null) => void) | null): Request[] {
  if (Array.isArray(source) || onGenerate === null) return Array.from(source);
  const out: Request[] = [];
  for (const r of source) {
    out.push(r);
    if ((out.length & 4095) === 0) onGenerate(out.length, expected !== null && expected >= out.length ? expected : null);
  }
  onGenerate(out.length, out.length);
  return out;
}

/**
 * Whether a request's prompt may contain another request's output: only multi-turn sessions build prompts
 * from earlier rounds (their requests carry a session id; closed-loop ones also continue at run time). Other
 * prompts are a shared prefix plus fresh random tokens, so the identity of a KV block filled during decode
 * can never be looked up, and the KV store need not register it (same results, less work).
 */
function promptsMayRepeatOutputs(requests: Iterable<Request>, closedLoopSessions: boolean, generated = false): boolean {
  if (closedLoopSessions) return true;
  // The distribution workload (streamed) never has sessions.
  if (generated) return false;
  // A stream cannot be looked ahead in: register the identities, as the reference does.
  if (!Array.isArray(requests)) return true;
  return (requests as readonly Request[]).some((r) => r.sessionId !== '');
}

function render(f: FlagValues, report: Report): string {
  return outputFormat(f) === 'reference' ? renderReferenceText(report) : renderJson(report);
}

export async function simulateRun(f: FlagValues, env: SimEnv, observe?: SimulationObserver, opts: RunOptions = {}): Promise<SimulationOutputs> {
  outputFormat(f);
  const deployment = await readDeployment(f, env);
  const { setup, latency, seed, kvForGpu, lora } = await resolveEngineFlags(f, env, deployment);
  if (deployment === null) {
    for (const w of latency.warnings) env.warn(w);
    for (const m of latency.info) env.info?.(m);
  }
  const pol = await resolvePolicyFlags(f, env);
  checkBundleDeciders(f, pol, setup.pd);
  const scaling = resolveScaling(f, pol.scaling, 'run', kvForGpu, setup.deployment ?? null, hasEvolvableAutoscale(pol));
  checkDpPlacementScaling(latency, (scaling?.autoscaler ?? null) !== null);
  const spec = f.str('workload-spec');
  const { users, thinkMs } = concurrencyFlags(f);
  let wl = spec !== '' ? await specWorkload(f, env, spec) : users > 0 ? concurrencyWorkload(f, seed, users, thinkMs) : generatedWorkload(f, seed);
  // --semantics corrected (A3): base models are checked against the model a client's requests run on.
  checkAdapterReferences(wl.adapterRefs ?? [], lora, semanticsFlag(f) === 'corrected' ? (setup.deployment?.defaultModel ?? setup.model ?? '') : null);
  const count = Array.isArray(wl.requests) ? wl.requests.length : (wl.total ?? 0);
  if (latency.profileRange !== undefined) {
    // A streamed (generated) workload arrives at --rate; a materialised one at what its arrival times say.
    const rate = Array.isArray(wl.requests) ? arrivalRate((wl.requests as readonly Request[]).map((r) => r.arrivalTime)) : spec === '' && users === 0 ? f.float('rate') : 0;
    warnProfileLoad(latency.profileRange, rate, env);
  }
  env.info?.(`workload: ${count} requests${wl.sessions.length > 0 ? ` and ${wl.sessions.length} closed-loop sessions` : ''} (${spec !== '' ? `spec ${spec}` : users > 0 ? `${users} closed-loop users` : `--workload ${f.str('workload')}`})`);
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), null, wl.specGoodput);
  fitnessWeights(f); // validate before simulating
  const kv = { ...setup.kv, decodeIdentities: promptsMayRepeatOutputs(wl.requests, wl.sessions.length > 0, spec === '' && users === 0), privatePrompts: wl.privatePrompts === true && opts.privatePrompts !== false };
  if (setup.deployment) {
    if (Array.isArray(wl.requests)) checkDeploymentRequests(setup.deployment, wl.requests as readonly Request[], setup.kv.blockSize);
    else wl = { ...wl, requests: checkedDeploymentStream(setup.deployment, wl.requests, setup.kv.blockSize) };
  }
  await env.pause?.();
  const full: EngineSetup = { ...setup, kv, horizon: wl.horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities, scaling, ...(opts.lazyDecode === false ? { lazyDecode: false } : {}), ...(opts.sharePrefixIndex === false ? { sharePrefixIndex: false } : {}) };
  // Closed-loop sessions: follow-up rounds enter the cluster as arrivals when their previous round ends.
  let sessions: SessionManager | null = null;
  if (wl.sessions.length > 0) {
    sessions = new SessionManager(wl.sessions);
    if (wl.followUpBudget >= 0) sessions.setFollowUpBudget(wl.followUpBudget);
  }
  const poolN = runPoolSize(f, users, sessions !== null, env);
  const recorder = recorderFor(pol, opts);
  // The recorder feeds only the JSON-only sections and the evaluator: the reference text never pays for it.
  const record = outputFormat(f) === 'json' || opts.prefixAudit === true;
  const ts = resolveTimeSeries(f, opts.timeseries === true || f.bool('report-data'));
  const holder: { sampler: TimeSeriesSampler | null } = { sampler: null };
  const prepare = withSampler(ts, full, record ? (c) => recorder.attach(c) : null, holder);
  let cs: ClusterSimulator;
  let all: Request[];
  if (wl.streamed && sessions === null) {
    ({ cluster: cs, requests: all } = await driveEngineStreaming(full, wl.requests, prepare, env.drive ?? null, opts.onProgress ?? null, wl.total ?? null, wallClockGuard(pol, opts)));
  } else {
    let requests = materialize(wl.requests, wl.expected ?? null, opts.onGenerate ?? null);
    const pool = sessions !== null && poolN > 0 ? sessionPool(sessions, requests, poolN) : null;
    if (pool !== null) requests = pool.injected;
    const hook = pool !== null ? pool.pool.hook : sessions === null ? null : sessions.hook;
    cs = await driveEngine(full, requests, hook, prepare, env.drive ?? null, opts.onProgress ?? null, true, wallClockGuard(pol, opts));
    all = sessions === null ? requests : [...requests, ...(pool?.pool.admitted ?? []), ...sessions.log().followUps];
    if (pool !== null && pool.pool.unstarted > 0) env.warn(`--concurrent-sessions ${poolN}: ${pool.pool.unstarted} session(s) never started before the horizon`);
  }
  observe?.(cs, all, full, sessions === null ? null : sessions.log());
  warnIdlePools(cs, full, f, env);
  await env.pause?.();
  const series = seriesOutputs(ts, holder.sampler, env);
  const json = outputFormat(f) === 'json' ? () => ({ ...extras(cs, recorder, all, pol, goodputTargets), ...reportDataSection(f, cs, all, series.timeseries, 'run', goodputTargets) }) : {};
  await env.pause?.();
  const report = buildReport(cs, reportOptions(f, cs, pol.scheduler, goodputTargets, true, json));
  await env.pause?.();
  let trace: TraceOutput | null = null;
  if (f.str('trace-output') !== '') {
    // Corrected semantics (D4): a split request's row carries its parent's outcome, not the untouched parent state.
    const pd = semanticsFlag(f) === 'corrected' ? cs.pd : null;
    const records = buildRunTraceRecords(cs.arrivals.map((request) => {
      const parent = pd?.parentOf(request);
      return {
        request,
        outcome: parent !== undefined && parent.req === request
          ? parentTraceOutcome(parent)
          : { state: request.state, ttftSet: request.ttftSet, firstTokenTime: request.firstTokenTime, itlSum: request.itlSum },
      };
    }));
    const header = buildRunTraceHeader(goodputTargets ? { workloadSeed: wl.seed, goodputSloTargets: goodputTargets } : { workloadSeed: wl.seed });
    if (semanticsFlag(f) === 'corrected' && sessions !== null) recordSessions(records, header, cs.arrivals, sessions.log(), wl.sessions, env);
    trace = traceOutput(header, records);
  }
  return outputs(f, { report, cluster: cs, trace, recorder, requests: all, ...series, goodputTargets }, null);
}

/**
 * --semantics corrected: what a closed-loop replay needs to regenerate the sessions as they ran — each
 * follow-up's think time (the delay the session manager put before it) and, when every session accumulates its
 * context, `session_context_growth: accumulate` (a mix cannot be written in the one header field: warned).
 */
function recordSessions(records: TraceRecord[], header: TraceHeader, arrivals: readonly Request[], log: SessionLog, blueprints: readonly SessionBlueprint[], env: SimEnv): void {
  arrivals.forEach((req, i) => {
    const delay = log.delays.get(req);
    if (delay !== undefined) records[i]!.thinkTimeUs = delay;
  });
  const growth = new Set(blueprints.map((b) => b.contextGrowth));
  if (growth.size === 1 && growth.has('accumulate')) {
    header.sessionContextGrowth = 'accumulate';
    writeRoundDeltas(records, arrivals);
  } else if (growth.has('accumulate')) env.warn('--trace-output: some sessions accumulate their context and some do not; the trace header can say only one, so it says neither (a closed-loop replay resends each round\'s recorded input)');
}

/**
 * Rows of an accumulating session in the format's convention (upstream's TraceV2, the converters, every replay
 * mode): round 0 holds its prompt, a later round only its new input — its prompt less the previous round's
 * prompt and output, which the replay appends to the conversation itself. The run's requests hold whole prompts.
 */
function writeRoundDeltas(records: TraceRecord[], arrivals: readonly Request[]): void {
  const bySession = new Map<string, number[]>();
  arrivals.forEach((req, i) => {
    if (req.sessionId === '') return;
    let idx = bySession.get(req.sessionId);
    if (idx === undefined) bySession.set(req.sessionId, (idx = []));
    idx.push(i);
  });
  for (const idx of bySession.values()) {
    idx.sort((a, b) => (arrivals[a] as Request).roundIndex - (arrivals[b] as Request).roundIndex);
    for (let k = idx.length - 1; k > 0; k--) {
      const cur = arrivals[idx[k] as number] as Request;
      const prev = arrivals[idx[k - 1] as number] as Request;
      const rec = records[idx[k] as number] as TraceRecord;
      // The output the session appended: what the previous round produced (a capped round, less than planned).
      const produced = prev.outputLen > 0 ? Math.min(Math.max(0, prev.progressIndex - prev.inputLen), prev.outputLen) : 0;
      rec.inputTokens = Math.max(0, cur.inputLen - prev.inputLen - produced);
      rec.prefixLength = 0;
    }
  }
}

/**
 * replay `--trace-output`: as the reference, one row per request built from the trace (every row in fixed mode;
 * round 0 and the rows outside sessions in closed loop), whether or not it was injected before the horizon, with
 * its state when the replay stopped; header mode "replayed", the input trace's observed KV metrics carried over.
 * Under --semantics corrected the caller passes the injected requests instead.
 */
function replayTrace(requests: readonly Request[], goodput: ReadonlyMap<string, SloDimTargets> | null, observed: TraceHeader['observedKvMetrics']): TraceOutput {
  const records = buildRunTraceRecords(requests.map((request) => ({ request, outcome: outcomeFromRequest(request) })));
  const header = buildReplayTraceHeader({ ...(goodput ? { goodputSloTargets: goodput } : {}), observedKvMetrics: observed });
  return traceOutput(header, records);
}

function traceOutput(header: TraceHeader, records: readonly TraceRecord[]): TraceOutput {
  return {
    yaml: formatTraceHeaderYaml(header),
    get csv() {
      return formatTraceCsv(records, header.mode);
    },
    csvChunks: () => formatTraceCsvChunks(records, header.mode),
  };
}

/**
 * Outputs whose stdout and per-request files are rendered only when read: a caller that only wants the report
 * (the evaluator) never pays for rendering them.
 */
function outputs(f: FlagValues, o: Omit<SimulationOutputs, 'stdout' | 'metricsFile' | 'metricsFileChunks' | 'results' | 'resultsChunks'>, results: (() => Record<string, unknown>[]) | null): SimulationOutputs {
  let stdout: string | null = null;
  return {
    ...o,
    get stdout() {
      return (stdout ??= render(f, o.report));
    },
    get metricsFile() {
      return f.str('metrics-path') === '' ? null : renderMetricsFile(o.report);
    },
    metricsFileChunks: () => metricsFileText(o.report),
    get results() {
      return results === null || f.str('results-path') === '' ? null : goJsonIndent(results());
    },
    resultsChunks: () => {
      if (results === null) return null;
      const rows = results();
      return goJsonArrayChunks(rows, rows.length, 0);
    },
  };
}

/**
 * Every check `simulateRun` / `simulateReplay` makes before it simulates — option values, the files named by
 * options (read through `env`), policies compiled, workload options — without generating an open-loop
 * workload or simulating. Throws what the run would throw; a sweep checks each point with it before queueing.
 */
export async function checkSimulation(mode: 'run' | 'replay', f: FlagValues, env: SimEnv): Promise<void> {
  outputFormat(f);
  if (mode === 'replay') {
    const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
    const headerPath = f.str('trace-header');
    const dataPath = f.str('trace-data');
    if (headerPath === '') throw new ConfigError('missing-flag', '--trace-header is required');
    if (dataPath === '') throw new ConfigError('missing-flag', '--trace-data is required');
    parseTraceHeaderYaml(env.readText(headerPath, '--trace-header'), headerPath);
    parseTraceCsv(env.readText(dataPath, '--trace-data'), dataPath);
  }
  const deployment = await readDeployment(f, env);
  const { seed, latency, kvForGpu, setup } = await resolveEngineFlags(f, env, deployment);
  if (deployment === null) {
    for (const w of latency.warnings) env.warn(w);
    for (const m of latency.info) env.info?.(m);
  }
  const pol = await resolvePolicyFlags(f, env);
  checkBundleDeciders(f, pol, setup.pd);
  const scaling = resolveScaling(f, pol.scaling, mode, mode === 'run' ? kvForGpu : null, setup.deployment ?? null, hasEvolvableAutoscale(pol));
  checkDpPlacementScaling(latency, (scaling?.autoscaler ?? null) !== null);
  cliGoodput(f);
  if (mode === 'replay') {
    if (f.changed('horizon')) horizonFlag(f);
    return;
  }
  const spec = f.str('workload-spec');
  const { users, thinkMs } = concurrencyFlags(f);
  if (spec !== '') await specWorkload(f, env, spec);
  else if (users > 0) concurrencyWorkload(f, seed, users, thinkMs);
  else distributionOptions(f);
  fitnessWeights(f);
}

export async function simulateReplay(f: FlagValues, env: SimEnv, observe?: SimulationObserver, opts: RunOptions = {}): Promise<SimulationOutputs> {
  outputFormat(f);
  // Loaded on demand: the YAML library is only needed to read trace headers.
  const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
  const headerPath = f.str('trace-header');
  const dataPath = f.str('trace-data');
  if (headerPath === '') throw new ConfigError('missing-flag', '--trace-header is required');
  if (dataPath === '') throw new ConfigError('missing-flag', '--trace-data is required');
  const header = parseTraceHeaderYaml(env.readText(headerPath, '--trace-header'), headerPath);
  const records = parseTraceCsv(env.readText(dataPath, '--trace-data'), dataPath);
  if (records.length === 0) throw new ConfigError('empty-trace', `--trace-data: ${dataPath} has a header row but no records; the reference refuses to replay an empty trace — pass a trace with at least one request`);
  checkReplayRecords(records, dataPath);
  env.info?.(`trace: ${records.length} records from ${dataPath} (trace_version ${header.traceVersion}, mode ${header.mode === '' ? 'unset' : header.mode})`);
  const deployment = await readDeployment(f, env);
  const { setup, latency, seed, lora } = await resolveEngineFlags(f, env, deployment);
  if (deployment === null) {
    for (const w of latency.warnings) env.warn(w);
    for (const m of latency.info) env.info?.(m);
  }
  const pol = await resolvePolicyFlags(f, env);
  checkBundleDeciders(f, pol, setup.pd);
  resolveScaling(f, pol.scaling, 'replay', null, setup.deployment ?? null, hasEvolvableAutoscale(pol));
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), header.goodputSloTargets, null);
  // --semantics corrected (A2): a row naming an undeclared adapter is refused, as a spec client is.
  if (semanticsFlag(f) === 'corrected') checkAdapterReferences(records.map((r) => ({ kind: `--trace-data ${dataPath}: request_id`, id: String(r.requestId), adapter: r.adapter, model: null })), lora);
  else warnUndeclaredAdapters(records, lora, env);
  const { requests, sessions, pool } = buildReplayWorkload(f, env, { header, records }, seed, dataPath);
  if (latency.profileRange !== undefined) warnProfileLoad(latency.profileRange, arrivalRate(requests.map((r) => r.arrivalTime)), env);
  if (setup.deployment) checkDeploymentRequests(setup.deployment, requests, setup.kv.blockSize);
  // Corrected semantics cover the rounds a closed-loop replay regenerates (the same bound as in fixed mode).
  // A session pool drains every session unless --horizon cuts it (upstream #1486).
  const horizon = f.changed('horizon') ? horizonFlag(f) : pool !== null ? MAX_INT64 : semanticsFlag(f) === 'corrected' ? recordedReplayHorizon(records) : defaultReplayHorizon(requests);
  // Closed-loop replay: follow-up prompts carry earlier rounds' outputs.
  const kv = { ...setup.kv, decodeIdentities: promptsMayRepeatOutputs(requests, sessions !== null) };
  const full: EngineSetup = { ...setup, kv, horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities };
  const recorder = recorderFor(pol, {});
  const ts = resolveTimeSeries(f, opts.timeseries === true || f.bool('report-data'));
  const holder: { sampler: TimeSeriesSampler | null } = { sampler: null };
  const prepare = withSampler(ts, full, outputFormat(f) === 'json' ? (c) => recorder.attach(c) : null, holder);
  const hook = pool !== null ? pool.hook : sessions === null ? null : sessions.hook;
  const cs = await driveEngine(full, requests, hook, prepare, env.drive ?? null, opts.onProgress ?? null, true, wallClockGuard(pol, opts));
  const all = sessions === null ? requests : [...requests, ...(pool?.admitted ?? []), ...sessions.log().followUps];
  if (pool !== null && pool.unstarted > 0) env.warn(`--concurrent-sessions ${pool.size}: ${pool.unstarted} session(s) never started (the --horizon ended the run, or a session never ended)`);
  observe?.(cs, all, full, sessions === null ? null : sessions.log());
  warnIdlePools(cs, full, f, env);
  await env.pause?.();
  const series = seriesOutputs(ts, holder.sampler, env);
  const json = outputFormat(f) === 'json' ? () => ({ ...extras(cs, recorder, all, pol, goodputTargets), ...reportDataSection(f, cs, all, series.timeseries, 'replay', goodputTargets) }) : {};
  await env.pause?.();
  const report = buildReport(cs, reportOptions(f, cs, pol.scheduler, goodputTargets, false, json));
  await env.pause?.();
  // Corrected semantics export what was injected (follow-ups included), as run does; the reference every built request.
  const exported = semanticsFlag(f) === 'corrected' ? cs.arrivals : requests;
  const trace = f.str('trace-output') === '' ? null : replayTrace(exported, goodputTargets, header.observedKvMetrics);
  return outputs(f, { report, cluster: cs, trace, recorder, requests: all, ...series, goodputTargets }, () => simResults(report));
}

/** Pools whose members received no requests, with the option that changes it (issue 29: no silent surprises). */
function warnIdlePools(cs: ClusterSimulator, setup: EngineSetup, f: FlagValues, env: SimEnv): void {
  const specs = setup.policy?.evolvable?.evolvable.specs ?? {};
  const warnings = idlePoolWarnings(cs, {
    routingPolicy: specs.routing !== undefined ? `the routing section of ${f.str('policy-config')}` : (setup.policy?.routingPolicy ?? f.str('routing-policy')),
    corrected: semanticsFlag(f) === 'corrected',
    poolScorers: { prefill: setup.pd?.prefillScorers != null, decode: setup.pd?.decodeScorers != null },
    deployment: setup.deployment != null,
    decider: specs.disaggregation !== undefined ? `the disaggregation section of ${f.str('policy-config')}` : f.str('pd-decider'),
  });
  for (const w of warnings) env.warn(w);
}

/** `--deployment FILE`, parsed and checked (null when not given). */
async function readDeployment(f: FlagValues, env: SimEnv): Promise<DeploymentSpec | null> {
  const path = f.has('deployment') ? f.str('deployment') : '';
  if (path === '') return null;
  const { parseDeployment } = await import('../deploy/parse.js');
  return parseDeployment(env.readText(path, '--deployment'), path);
}

function hasEvolvableAutoscale(pol: ResolvedPolicies): boolean {
  return pol.policy.evolvable?.evolvable.specs.autoscale !== undefined;
}

/** Trace rows naming adapters --lora-config does not declare replay as the reference does, but say so. */
function warnUndeclaredAdapters(records: readonly { adapter: string }[], lora: LoraSetup, env: SimEnv): void {
  const used = new Set(records.map((r) => r.adapter).filter((a) => a !== ''));
  if (used.size === 0) return;
  const declared = new Set(lora.registry.map((a) => a.id));
  const missing = [...used].filter((a) => !declared.has(a)).sort();
  if (lora.cost === null) env.warn(`the trace names LoRA adapters (${[...used].sort().join(', ')}) but LoRA is off (no --lora-config with adapter_capacity): no adapter loads or slots are simulated`);
  else if (missing.length > 0) env.warn(`the trace names LoRA adapters --lora-config does not declare (${missing.join(', ')}): they load in 1 µs and never add step overhead, as in the reference`);
}

/** The replay's per-request results: requests with both TTFT and E2E and a numeric `request_<n>` id. */
function simResults(report: Report): Record<string, unknown>[] {
  const rows: { id: number; row: Record<string, unknown> }[] = [];
  for (const r of report.aggregate.requests) {
    if (!r.hasTTFT || !r.hasE2E || !r.registered) continue;
    const m = /^request_(-?\d+)$/.exec(r.id);
    if (!m) continue;
    const id = Number(m[1]);
    const row: Record<string, unknown> = { request_id: id, ttft_us: r.ttft, e2e_us: r.e2e, input_tokens: r.inputLen, output_tokens: r.outputLen };
    if (r.sloClass !== '') row['slo_class'] = r.sloClass;
    if (r.model !== '') row['model'] = r.model;
    if (r.itlMean !== 0) row['itl_mean_us'] = r.itlMean;
    rows.push({ id, row });
  }
  rows.sort((a, b) => a.id - b.id);
  return rows.map((x) => x.row);
}

/** Warns when the workload arrives outside the request rates a --latency-profile was fitted on. */
function warnProfileLoad(p: { readonly label: string; readonly range: ProfileRange }, rateRps: number, env: SimEnv): void {
  const w = profileRangeWarning(p.range, p.label, rateRps);
  if (w !== undefined) env.warn(w);
}
