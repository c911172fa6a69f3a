/**
 * `blis run` and `blis replay`: flags -> resolved setup -> simulation -> stdout / files.
 */
import { writeFileSync, readFileSync } from 'node:fs';
import type { Request } from '../domain/request.js';
import { runEngine } from '../sim/engine-setup.js';
import { ConfigError } from '../sim/config-error.js';
import { buildReport, renderJson, renderMetricsFile, renderReferenceText, type Report, type ReportOptions } from '../sim/report.js';
import { mergeGoodputTargets, resolveGoodputCliFlags, type SloDimTargets } from '../metrics/goodput.js';
import { parseFitnessWeights } from '../metrics/fitness.js';
import { resolvePolicyFlags } from './policy-flags.js';
import type { ClusterSimulator as Sim } from '../cluster/cluster.js';
import { generateDistributionWorkload } from '../workload/distribution.js';
import { DEFAULT_DISTRIBUTION, isPresetName, resolvePreset, validateDistributionParams, validateWorkloadFlags } from '../workload/presets.js';
import { buildReplayRequests, defaultReplayHorizon } from '../workload/replay.js';
import { buildRunTraceHeader, buildRunTraceRecords } from '../workload/trace-export.js';
import { formatTraceCsv, parseTraceCsv } from '../workload/tracev2-csv.js';
import { formatTraceHeaderYaml } from '../workload/tracev2-yaml.js';
import { goJsonIndent } from '../metrics/go-format.js';
import { horizonFlag, resolveEngineFlags } from './engine-flags.js';
import type { FlagValues } from './flags.js';
import type { Io } from './io.js';
import type { ClusterSimulator } from '../cluster/cluster.js';

/** Receives each finished simulation (tests use it to run invariant checkers on CLI runs). */
export type SimulationObserver = (cs: ClusterSimulator, requests: readonly Request[]) => void;

function outputFormat(f: FlagValues): 'json' | 'reference' {
  const v = f.str('output-format');
  if (v !== 'json' && v !== 'reference') throw new ConfigError('bad-flag', `--output-format must be json or reference, got "${v}"`);
  return v;
}

/** Report options shared by run and replay; `fitness` only for run. */
function reportOptions(f: FlagValues, cs: Sim, scheduler: string, goodputTargets: ReadonlyMap<string, SloDimTargets> | null, fitness: boolean): ReportOptions {
  const weights = fitness && f.str('fitness-weights') !== '' ? parseFitnessWeights(f.str('fitness-weights')) : null;
  const traced = f.str('trace-level') === 'decisions';
  return {
    scheduler,
    fitnessWeights: weights,
    goodputTargets,
    trace: traced ? { admissions: cs.admissionRecords, routings: cs.routingRecords } : null,
    summarizeTrace: f.bool('summarize-trace'),
  };
}

function cliGoodput(f: FlagValues): ReturnType<typeof resolveGoodputCliFlags> {
  return resolveGoodputCliFlags(f.str('slo-ttft'), f.str('slo-itl'), f.str('slo-e2e'));
}

function emit(io: Io, f: FlagValues, report: Report): void {
  io.stdout(outputFormat(f) === 'reference' ? renderReferenceText(report) : renderJson(report));
  const mp = f.str('metrics-path');
  if (mp !== '') writeFileSync(mp, renderMetricsFile(report));
}


export async function runCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  outputFormat(f);
  const { setup, latency, seed } = await resolveEngineFlags(f);
  for (const w of latency.warnings) io.warn(w);
  const pol = await resolvePolicyFlags(f, io);
  if (f.str('fitness-weights') !== '') {
    try {
      parseFitnessWeights(f.str('fitness-weights'));
    } catch (e) {
      throw new ConfigError('bad-flag', `--fitness-weights: ${(e as Error).message}`);
    }
  }
  const spec = f.str('workload-spec');
  const wl = spec === '' ? generatedWorkload(f, seed) : await specWorkload(f, spec);
  const { requests, horizon } = wl;
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), null, wl.specGoodput);
  const cs = runEngine({ ...setup, horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities }, requests);
  observe?.(cs, requests);
  const report = buildReport(cs, reportOptions(f, cs, pol.scheduler, goodputTargets, true));
  emit(io, f, report);
  const tp = f.str('trace-output');
  if (tp !== '') {
    const records = buildRunTraceRecords(cs.arrivals.map((request) => ({
      request,
      outcome: { state: request.state, ttftSet: request.ttftSet, firstTokenTime: request.firstTokenTime, itlSum: request.itlSum },
    })));
    const header = buildRunTraceHeader(goodputTargets ? { workloadSeed: wl.seed, goodputSloTargets: goodputTargets } : { workloadSeed: wl.seed });
    writeFileSync(`${tp}.yaml`, formatTraceHeaderYaml(header));
    writeFileSync(`${tp}.csv`, formatTraceCsv(records, header.mode));
  }
}

interface RunWorkload {
  readonly requests: Request[];
  readonly horizon: number;
  /** The workload seed in effect (trace header). */
  readonly seed: bigint;
  readonly specGoodput: ReadonlyMap<string, SloDimTargets> | null;
}

/** The distribution workload or a preset, from the run flags. */
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

/** `--workload-spec FILE`: the spec's clients, with --seed/--num-requests/--horizon/--timeout overriding it when given. */
async function specWorkload(f: FlagValues, path: string): Promise<RunWorkload> {
  const { loadSpecWorkloadForRun } = await import('../workload/spec/index.js');
  const r = loadSpecWorkloadForRun(readText(path, '--workload-spec'), path, {
    ...(f.changed('seed') ? { seed: f.bigint('seed') } : {}),
    ...(f.changed('num-requests') ? { numRequests: f.int('num-requests') } : {}),
    ...(f.changed('horizon') ? { horizon: horizonFlag(f) } : {}),
    ...(f.changed('timeout') ? { timeoutSecs: f.int('timeout') } : {}),
  });
  return { requests: r.requests, horizon: r.horizon, seed: r.seed, specGoodput: r.goodputSloTargets.size > 0 ? r.goodputSloTargets : null };
}

function readText(path: string, flag: string): string {
  if (path === '') throw new ConfigError('missing-flag', `${flag} is required`);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError('io', `${flag}: cannot read ${path}: ${(e as Error).message}`);
  }
}

export async function replayCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  // Loaded on demand: the YAML library is only needed to read trace headers.
  const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
  outputFormat(f);
  const headerPath = f.str('trace-header');
  const dataPath = f.str('trace-data');
  const header = parseTraceHeaderYaml(readText(headerPath, '--trace-header'), headerPath);
  const records = parseTraceCsv(readText(dataPath, '--trace-data'), dataPath);
  const { setup, latency, seed } = await resolveEngineFlags(f);
  for (const w of latency.warnings) io.warn(w);
  const pol = await resolvePolicyFlags(f, io);
  const goodputTargets = mergeGoodputTargets(cliGoodput(f), header.goodputSloTargets, null);
  const requests = buildReplayRequests(records, seed);
  const horizon = f.changed('horizon') ? horizonFlag(f) : defaultReplayHorizon(requests);
  const cs = runEngine({ ...setup, horizon, policy: pol.policy, scheduler: pol.scheduler, preemptionPolicy: pol.preemptionPolicy, sloPriorities: pol.sloPriorities }, requests);
  observe?.(cs, requests);
  const report = buildReport(cs, reportOptions(f, cs, pol.scheduler, goodputTargets, false));
  emit(io, f, report);
  const rp = f.str('results-path');
  if (rp !== '') writeFileSync(rp, goJsonIndent(simResults(report)));
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
