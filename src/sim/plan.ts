/**
 * Configuration as plan, then build (issue 31 item 5): `resolvePlan` turns the options (flags or the library's
 * config, files read through the SimEnv) into one validated, deeply frozen SimulationPlan in one pass — the
 * engine setup with every derived value (model, GPU physics, latency model, KV blocks, policies, P/D pools,
 * scaling, deployment pools), the workload source, the outputs asked for, the guards — and makes every check of
 * a configuration there, each with its BlisError. run.ts executes a plan: it builds the engine from it
 * (engine-setup.ts, which checks nothing a user can get wrong) and renders the outputs (run-outputs.ts).
 * `checkSimulation` is "resolve the plan and discard it".
 *
 * A plan is run once: its workload holds the run's requests (mutable run state, left unfrozen), or the lazy
 * source that generates them.
 */
import type { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { showValue } from '../domain/errors.js';
import type { DeploymentSpec } from '../deploy/spec.js';
import { arrivalRate, profileRangeWarning, type ProfileRange } from '../latency/profile-range.js';
import { parseFitnessWeights } from '../metrics/fitness.js';
import { mergeGoodputTargets, resolveGoodputCliFlags, type SloDimTargets } from '../metrics/goodput.js';
import { checkReplayRecords, defaultReplayHorizon, recordedReplayHorizon } from '../workload/replay.js';
import { parseTraceCsv } from '../workload/tracev2-csv.js';
import type { TraceHeader, TraceRecord } from '../workload/tracev2-types.js';
import { ConfigError } from './config-error.js';
import { checkDeploymentRequests, checkedDeploymentStream } from './deployment-checks.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';
import { buildReplayWorkload, type ReplayWorkload } from './replay-workload.js';
import { checkBundleDeciders } from './resolve-deciders.js';
import { checkDpPlacementScaling, checkLockstepScaling, horizonFlag, resolveEngineFlags, semanticsFlag } from './resolve-engine.js';
import { checkAdapterReferences, type LoraSetup } from './resolve-lora.js';
import { resolvePolicyFlags, type ResolvedPolicies } from './resolve-policies.js';
import { resolveScaling } from './resolve-scaling.js';
import { concurrencyFlags, concurrencyWorkload, generatedWorkload, promptsMayRepeatOutputs, runPoolSize, specWorkload, type RunWorkload } from './run-workload.js';
import type { EngineSetup, ProgressCallback } from './engine-setup.js';
import { resolveTimeSeries, type TimeSeriesRequest } from './timeseries.js';
import { reportDataOptions, type ReportDataOptions } from './report-data.js';

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

/** What run and replay plans share. */
interface PlanBase {
  /** What the engine is built from, every field final. */
  readonly setup: EngineSetup;
  readonly policies: ResolvedPolicies;
  readonly format: 'json' | 'reference';
  /** `--fitness-weights`, parsed (null: none, or a replay, whose report has no fitness). */
  readonly fitnessWeights: ReadonlyMap<string, number> | null;
  /** The merged goodput targets per SLO class (null: none). */
  readonly goodputTargets: ReadonlyMap<string, SloDimTargets> | null;
  readonly timeseries: TimeSeriesRequest | null;
  /** Attach the run recorder (JSON sections, the evaluator's prefix audit). */
  readonly record: boolean;
  readonly prefixAudit: boolean;
  /** The wall-clock bounds of a run with fast-engine code (null: none). */
  readonly wallClock: WallClockPlan | null;
  readonly corrected: boolean;
  readonly output: PlanOutputs;
}

/** What the run renders, as the options asked for it. */
export interface PlanOutputs {
  /** `--trace-output` names a prefix: the TraceV2 export is made. */
  readonly trace: boolean;
  /** `--metrics-path` names a file. */
  readonly metricsFile: boolean;
  /** replay `--results-path` names a file. */
  readonly resultsFile: boolean;
  readonly summarizeTrace: boolean;
  /** `--report-data`: the options it records (null: no report data). */
  readonly reportData: ReportDataOptions | null;
  /** How the idle-pool warnings name the routing policy and the P/D decider. */
  readonly routingPolicyName: string;
  readonly deciderName: string;
}

export interface RunPlan extends PlanBase {
  readonly mode: 'run';
  readonly workload: RunWorkload;
  /** `--concurrent-sessions` over the workload's sessions (0: no pool). */
  readonly poolSize: number;
}

export interface ReplayPlan extends PlanBase {
  readonly mode: 'replay';
  readonly workload: ReplayWorkload;
  readonly header: TraceHeader;
}

export type SimulationPlan = RunPlan | ReplayPlan;

export function outputFormat(f: FlagValues): 'json' | 'reference' {
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

/** The wall-clock bounds of a run with fast-engine code (sandbox/watchdog.ts). */
export interface WallClockPlan {
  /** The run's budget in ms (0: none). */
  readonly runMs: number;
  /** The per-call limit in ms (0: none). */
  readonly callMs: number;
  /** The slice between two arms of the watchdog (absent: watchdog.ts's SLICE_MS; RunOptions.sliceMs). */
  readonly sliceMs?: number;
}

/** The wall-clock bounds of a run with fast-engine code: the run's budget and the per-call limit (null: none). */
function wallClockPlan(pol: ResolvedPolicies, opts: RunOptions): WallClockPlan | null {
  if (!pol.fastCode) return null;
  // An explicit --policy-wall-clock-s wins; else the caller's (blis evaluate --timeout-s); else the default.
  const ms = pol.wallClock.explicit ? pol.wallClock.ms : (opts.wallClockMs ?? pol.wallClock.ms);
  const callMs = pol.callWallClockMs;
  if (!(ms > 0) && !(callMs > 0)) return null;
  return { runMs: ms > 0 ? ms : 0, callMs: callMs > 0 ? callMs : 0, ...(opts.sliceMs === undefined ? {} : { sliceMs: opts.sliceMs }) };
}

/** Warns when the workload arrives outside the request rates a --latency-profile was fitted on. */
function warnProfileLoad(p: { readonly label: string; readonly range: ProfileRange }, rateRps: number, env: SimEnv): void {
  const w = profileRangeWarning(p.range, p.label, rateRps);
  if (w !== undefined) env.warn(w);
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

function planOutputs(f: FlagValues, pol: ResolvedPolicies): PlanOutputs {
  const specs = pol.policy.evolvable?.evolvable.specs ?? {};
  return {
    trace: f.str('trace-output') !== '',
    metricsFile: f.str('metrics-path') !== '',
    resultsFile: f.has('results-path') && f.str('results-path') !== '',
    summarizeTrace: f.bool('summarize-trace'),
    reportData: f.bool('report-data') ? reportDataOptions(f) : null,
    routingPolicyName: specs.routing !== undefined ? `the routing section of ${f.str('policy-config')}` : pol.policy.routingPolicy,
    deciderName: specs.disaggregation !== undefined ? `the disaggregation section of ${f.str('policy-config')}` : f.str('pd-decider'),
  };
}

/** The engine, the policies and the scaling of either mode: the first half of resolution. */
async function resolveEngineAndPolicies(mode: 'run' | 'replay', f: FlagValues, env: SimEnv) {
  const deployment = await readDeployment(f, env);
  const engine = await resolveEngineFlags(f, env, deployment);
  if (deployment === null) {
    for (const w of engine.latency.warnings) env.warn(w);
    for (const m of engine.latency.info) env.info?.(m);
  }
  const pol = await resolvePolicyFlags(f, env);
  checkBundleDeciders(f, pol, engine.setup.pd);
  const scaling = resolveScaling(f, pol.scaling, mode, mode === 'run' ? engine.kvForGpu : null, engine.setup.deployment ?? null, hasEvolvableAutoscale(pol));
  checkLockstepScaling(engine.setup.lockstepRanks, scaling);
  return { ...engine, pol, scaling };
}

function cliGoodput(f: FlagValues): ReturnType<typeof resolveGoodputCliFlags> {
  return resolveGoodputCliFlags(f.str('slo-ttft'), f.str('slo-itl'), f.str('slo-e2e'));
}

/** The one pass from options to a frozen plan: every check of a configuration is made here. */
export async function resolvePlan(mode: 'run' | 'replay', f: FlagValues, env: SimEnv, opts: RunOptions = {}): Promise<SimulationPlan> {
  return mode === 'run' ? resolveRunPlan(f, env, opts) : resolveReplayPlan(f, env, opts);
}

async function resolveRunPlan(f: FlagValues, env: SimEnv, opts: RunOptions): Promise<RunPlan> {
  const format = outputFormat(f);
  const corrected = semanticsFlag(f) === 'corrected';
  const { setup, latency, seed, lora, pol, scaling } = await resolveEngineAndPolicies('run', f, env);
  checkDpPlacementScaling(latency, (scaling?.autoscaler ?? null) !== null);
  const spec = f.str('workload-spec');
  const { users, thinkMs } = concurrencyFlags(f);
  let wl = spec !== '' ? await specWorkload(f, env, spec) : users > 0 ? concurrencyWorkload(f, seed, users, thinkMs) : generatedWorkload(f, seed);
  // --semantics corrected (A3): base models are checked against the model a client's requests run on.
  checkAdapterReferences(wl.adapterRefs ?? [], lora, corrected ? (setup.deployment?.defaultModel ?? setup.model ?? '') : null);
  const count = Array.isArray(wl.requests) ? wl.requests.length : (wl.total ?? 0);
  if (latency.profileRange !== undefined) {
    // A streamed (generated) workload arrives at --rate; a materialised one at what its arrival times say.
    const rate = Array.isArray(wl.requests) ? arrivalRate((wl.requests as readonly Request[]).map((r) => r.arrivalTime)) : spec === '' && users === 0 ? f.float('rate') : 0;
    warnProfileLoad(latency.profileRange, rate, env);
  }
  env.info?.(`workload: ${count} requests${wl.sessions.length > 0 ? ` and ${wl.sessions.length} closed-loop sessions` : ''} (${spec !== '' ? `spec ${spec}` : users > 0 ? `${users} closed-loop users` : `--workload ${f.str('workload')}`})`);
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), null, wl.specGoodput);
  const fitness = fitnessWeights(f);
  const kv = { ...setup.kv, decodeIdentities: promptsMayRepeatOutputs(wl.requests, wl.sessions.length > 0, spec === '' && users === 0), privatePrompts: wl.privatePrompts === true && opts.privatePrompts !== false };
  if (setup.deployment) {
    if (Array.isArray(wl.requests)) checkDeploymentRequests(setup.deployment, wl.requests as readonly Request[], setup.kv.blockSize);
    // A generated stream is checked request by request as the run takes it (its requests do not exist yet).
    else wl = { ...wl, requests: checkedDeploymentStream(setup.deployment, wl.requests, setup.kv.blockSize) };
  }
  const full: EngineSetup = { ...setup, kv, horizon: wl.horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities, scaling, ...(opts.lazyDecode === false ? { lazyDecode: false } : {}), ...(opts.sharePrefixIndex === false ? { sharePrefixIndex: false } : {}) };
  const poolSize = runPoolSize(f, users, wl.sessions.length > 0, env);
  const timeseries = resolveTimeSeries(f, opts.timeseries === true || f.bool('report-data'));
  const plan: RunPlan = {
    mode: 'run', setup: full, policies: pol, format, fitnessWeights: fitness, goodputTargets, timeseries,
    // The recorder feeds only the JSON-only sections and the evaluator: the reference text never pays for it.
    record: format === 'json' || opts.prefixAudit === true, prefixAudit: opts.prefixAudit === true,
    wallClock: wallClockPlan(pol, opts), corrected, output: planOutputs(f, pol), workload: wl, poolSize,
  };
  return deepFreeze(plan, [wl.requests, wl.sessions]);
}

async function resolveReplayPlan(f: FlagValues, env: SimEnv, opts: RunOptions): Promise<ReplayPlan> {
  const format = outputFormat(f);
  const corrected = semanticsFlag(f) === 'corrected';
  // Loaded on demand: the YAML library is only needed to read trace headers.
  const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
  const headerPath = f.str('trace-header');
  const dataPath = f.str('trace-data');
  if (headerPath === '') throw new ConfigError('missing-flag', '--trace-header is required');
  if (dataPath === '') throw new ConfigError('missing-flag', '--trace-data is required');
  const header = parseTraceHeaderYaml(env.readText(headerPath, '--trace-header'), headerPath);
  const records: TraceRecord[] = parseTraceCsv(env.readText(dataPath, '--trace-data'), dataPath);
  if (records.length === 0) throw new ConfigError('empty-trace', `--trace-data: ${dataPath} has a header row but no records; the reference refuses to replay an empty trace — pass a trace with at least one request`);
  checkReplayRecords(records, dataPath);
  env.info?.(`trace: ${records.length} records from ${dataPath} (trace_version ${header.traceVersion}, mode ${header.mode === '' ? 'unset' : header.mode})`);
  const { setup, latency, seed, lora, pol } = await resolveEngineAndPolicies('replay', f, env);
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), header.goodputSloTargets, null);
  // --semantics corrected (A2): a row naming an undeclared adapter is refused, as a spec client is.
  if (corrected) checkAdapterReferences(records.map((r) => ({ kind: `--trace-data ${dataPath}: request_id`, id: String(r.requestId), adapter: r.adapter, model: null })), lora);
  else warnUndeclaredAdapters(records, lora, env);
  const workload = buildReplayWorkload(f, env, { header, records }, seed, dataPath);
  const { requests, sessions, pool } = workload;
  if (latency.profileRange !== undefined) warnProfileLoad(latency.profileRange, arrivalRate(requests.map((r) => r.arrivalTime)), env);
  if (setup.deployment) checkDeploymentRequests(setup.deployment, requests, setup.kv.blockSize);
  // Corrected semantics cover the rounds a closed-loop replay regenerates (the same bound as in fixed mode).
  // A session pool drains every session unless --horizon cuts it (upstream #1486).
  const horizon = f.changed('horizon') ? horizonFlag(f) : pool !== null ? MAX_INT64 : corrected ? recordedReplayHorizon(records) : defaultReplayHorizon(requests);
  // Closed-loop replay: follow-up prompts carry earlier rounds' outputs.
  const kv = { ...setup.kv, decodeIdentities: promptsMayRepeatOutputs(requests, sessions !== null) };
  const full: EngineSetup = { ...setup, kv, horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities };
  const timeseries = resolveTimeSeries(f, opts.timeseries === true || f.bool('report-data'));
  const plan: ReplayPlan = {
    mode: 'replay', setup: full, policies: pol, format, fitnessWeights: null, goodputTargets, timeseries,
    record: format === 'json', prefixAudit: false, wallClock: wallClockPlan(pol, opts), corrected, output: planOutputs(f, pol), workload, header,
  };
  return deepFreeze(plan, [requests, sessions, pool]);
}

/**
 * Freezes `value` and every plain object and array it reaches (not class instances — latency models, compiled
 * policies, maps — nor functions, nor the objects in `skip`: the run's mutable requests and sessions). Frozen
 * plain objects read as fast as others; the engine copies what it mutates.
 */
export function deepFreeze<T>(value: T, skip: readonly unknown[] = []): T {
  const seen = new Set<unknown>(skip.filter((s) => s !== null && typeof s === 'object'));
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    const proto = Object.getPrototypeOf(v) as unknown;
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return;
    Object.freeze(v);
    for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k]);
  };
  walk(value);
  return value;
}
