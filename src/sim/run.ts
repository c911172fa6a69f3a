/**
 * `run` and `replay` as pure functions of the options: resolve the engine and policies, build the workload,
 * simulate, and render every output as text. The CLI writes the texts to stdout and files; the library API
 * returns them. Same options, same bytes.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { Request } from '../domain/request.js';
import { parseFitnessWeights } from '../metrics/fitness.js';
import { goJsonIndent } from '../metrics/go-format.js';
import { mergeGoodputTargets, resolveGoodputCliFlags, type SloDimTargets } from '../metrics/goodput.js';
import { generateDistributionWorkload } from '../workload/distribution.js';
import { DEFAULT_DISTRIBUTION, isPresetName, resolvePreset, validateDistributionParams, validateWorkloadFlags } from '../workload/presets.js';
import { buildReplayRequests, defaultReplayHorizon } from '../workload/replay.js';
import { buildRunTraceHeader, buildRunTraceRecords } from '../workload/trace-export.js';
import { formatTraceCsv, parseTraceCsv } from '../workload/tracev2-csv.js';
import { formatTraceHeaderYaml } from '../workload/tracev2-yaml.js';
import { ConfigError } from './config-error.js';
import { runEngine, type EngineSetup } from './engine-setup.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';
import { buildReport, renderJson, renderMetricsFile, renderReferenceText, type Report, type ReportOptions } from './report.js';
import { horizonFlag, resolveEngineFlags } from './resolve-engine.js';
import { resolvePolicyFlags } from './resolve-policies.js';

/** Receives each finished simulation (tests run invariant checkers on it). */
export type SimulationObserver = (cs: ClusterSimulator, requests: readonly Request[], setup: EngineSetup) => void;

export interface SimulationOutputs {
  readonly report: Report;
  readonly cluster: ClusterSimulator;
  /** stdout in the requested `--output-format`. */
  readonly stdout: string;
  /** `--metrics-path` contents (always rendered; written only when the option names a file). */
  readonly metricsFile: string;
  /** run `--trace-output`: `<prefix>.yaml` and `<prefix>.csv` contents. */
  readonly trace: { readonly yaml: string; readonly csv: string } | null;
  /** replay `--results-path` contents. */
  readonly results: string | null;
}

function outputFormat(f: FlagValues): 'json' | 'reference' {
  const v = f.str('output-format');
  if (v !== 'json' && v !== 'reference') throw new ConfigError('bad-flag', `--output-format must be json or reference, got "${v}"`);
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

function reportOptions(f: FlagValues, cs: ClusterSimulator, scheduler: string, goodputTargets: ReadonlyMap<string, SloDimTargets> | null, fitness: boolean): ReportOptions {
  return {
    scheduler,
    fitnessWeights: fitness ? fitnessWeights(f) : null,
    goodputTargets,
    trace: f.str('trace-level') === 'decisions' ? { admissions: cs.admissionRecords, routings: cs.routingRecords } : null,
    summarizeTrace: f.bool('summarize-trace'),
  };
}

function cliGoodput(f: FlagValues): ReturnType<typeof resolveGoodputCliFlags> {
  return resolveGoodputCliFlags(f.str('slo-ttft'), f.str('slo-itl'), f.str('slo-e2e'));
}

interface RunWorkload {
  readonly requests: Request[];
  readonly horizon: number;
  /** The workload seed in effect (trace header). */
  readonly seed: bigint;
  readonly specGoodput: ReadonlyMap<string, SloDimTargets> | null;
}

/** The distribution workload or a preset, from the run options. */
function generatedWorkload(f: FlagValues, seed: bigint): RunWorkload {
  const horizon = horizonFlag(f);
  const timeoutSecs = f.int('timeout');
  const workloadFlags = { rate: f.float('rate'), numRequests: f.int('num-requests'), prefixTokens: f.int('prefix-tokens'), timeoutSecs };
  const werr = validateWorkloadFlags(workloadFlags);
  if (werr) throw new ConfigError('bad-flag', werr);
  const wl = f.str('workload');
  let shape = DEFAULT_DISTRIBUTION;
  if (wl !== 'distribution') {
    if (!isPresetName(wl)) throw new ConfigError('bad-flag', `unknown --workload "${wl}"; valid: distribution, chatbot, contentgen, summarization, multidoc`);
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
  const requests = generateDistributionWorkload({
    seed,
    rate: workloadFlags.rate,
    numRequests: workloadFlags.numRequests,
    horizon,
    prefixTokens: custom ? workloadFlags.prefixTokens : shape.prefixTokens,
    prompt,
    output,
    timeoutUs: timeoutSecs > 0 ? timeoutSecs * 1e6 : 0,
  });
  return { requests, horizon, seed, specGoodput: null };
}

/** `--workload-spec FILE`: the spec's clients; --seed/--num-requests/--horizon/--timeout override it when given. */
async function specWorkload(f: FlagValues, env: SimEnv, path: string): Promise<RunWorkload> {
  const { loadSpecWorkloadForRun } = await import('../workload/spec/index.js');
  const r = loadSpecWorkloadForRun(env.readText(path, '--workload-spec'), path, {
    ...(f.changed('seed') ? { seed: f.bigint('seed') } : {}),
    ...(f.changed('num-requests') ? { numRequests: f.int('num-requests') } : {}),
    ...(f.changed('horizon') ? { horizon: horizonFlag(f) } : {}),
    ...(f.changed('timeout') ? { timeoutSecs: f.int('timeout') } : {}),
  });
  return { requests: r.requests, horizon: r.horizon, seed: r.seed, specGoodput: r.goodputSloTargets.size > 0 ? r.goodputSloTargets : null };
}

function render(f: FlagValues, report: Report): string {
  return outputFormat(f) === 'reference' ? renderReferenceText(report) : renderJson(report);
}

export async function simulateRun(f: FlagValues, env: SimEnv, observe?: SimulationObserver): Promise<SimulationOutputs> {
  outputFormat(f);
  const { setup, latency, seed } = await resolveEngineFlags(f, env);
  for (const w of latency.warnings) env.warn(w);
  const pol = await resolvePolicyFlags(f, env);
  const spec = f.str('workload-spec');
  const wl = spec === '' ? generatedWorkload(f, seed) : await specWorkload(f, env, spec);
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), null, wl.specGoodput);
  fitnessWeights(f); // validate before simulating
  const full: EngineSetup = { ...setup, horizon: wl.horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities };
  const cs = runEngine(full, wl.requests);
  observe?.(cs, wl.requests, full);
  const report = buildReport(cs, reportOptions(f, cs, pol.scheduler, goodputTargets, true));
  let trace: SimulationOutputs['trace'] = null;
  if (f.str('trace-output') !== '') {
    const records = buildRunTraceRecords(cs.arrivals.map((request) => ({
      request,
      outcome: { state: request.state, ttftSet: request.ttftSet, firstTokenTime: request.firstTokenTime, itlSum: request.itlSum },
    })));
    const header = buildRunTraceHeader(goodputTargets ? { workloadSeed: wl.seed, goodputSloTargets: goodputTargets } : { workloadSeed: wl.seed });
    trace = { yaml: formatTraceHeaderYaml(header), csv: formatTraceCsv(records, header.mode) };
  }
  return { report, cluster: cs, stdout: render(f, report), metricsFile: renderMetricsFile(report), trace, results: null };
}

export async function simulateReplay(f: FlagValues, env: SimEnv, observe?: SimulationObserver): Promise<SimulationOutputs> {
  outputFormat(f);
  // Loaded on demand: the YAML library is only needed to read trace headers.
  const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
  const headerPath = f.str('trace-header');
  const dataPath = f.str('trace-data');
  if (headerPath === '') throw new ConfigError('missing-flag', '--trace-header is required');
  if (dataPath === '') throw new ConfigError('missing-flag', '--trace-data is required');
  const header = parseTraceHeaderYaml(env.readText(headerPath, '--trace-header'), headerPath);
  const records = parseTraceCsv(env.readText(dataPath, '--trace-data'), dataPath);
  const { setup, latency, seed } = await resolveEngineFlags(f, env);
  for (const w of latency.warnings) env.warn(w);
  const pol = await resolvePolicyFlags(f, env);
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), header.goodputSloTargets, null);
  const requests = buildReplayRequests(records, seed);
  const horizon = f.changed('horizon') ? horizonFlag(f) : defaultReplayHorizon(requests);
  const full: EngineSetup = { ...setup, horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities };
  const cs = runEngine(full, requests);
  observe?.(cs, requests, full);
  const report = buildReport(cs, reportOptions(f, cs, pol.scheduler, goodputTargets, false));
  return { report, cluster: cs, stdout: render(f, report), metricsFile: renderMetricsFile(report), trace: null, results: goJsonIndent(simResults(report)) };
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
