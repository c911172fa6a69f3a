/**
 * `blis calibrate`: reads the observed trace, the replay's SimResult JSON (and optionally ITL data and the
 * replay's metrics file), writes the report JSON, and prints the summary on stderr. With `--adapter-reference`
 * it compares BLIS metrics files with a Digital Twin LoRA reference instead.
 */
import { ConfigError } from '../sim/config-error.js';
import { BlisError } from '../domain/errors.js';
import { parseJson } from '../format/json.js';
import type { FlagValues } from '../sim/options.js';
import { semanticsFlag } from '../sim/resolve-engine.js';
import { mergeGoodputTargets, resolveGoodputCliFlags } from '../metrics/goodput.js';
import { goJsonIndent } from '../gocompat/go-format.js';
import { parseTraceCsv } from '../workload/tracev2-csv.js';
import {
  adapterReportLines, adapterReportToJson, CalibrateInputError, compareAdapterReference, parseBlisAggregate, parseDtReference, parseItlCsv, parseSimResults,
  reportToJson, runCalibration,
} from '../calibrate/index.js';
import type { Io } from './io.js';
import { checkInputsAndOutputs, checkOutputPath, commitOutputs, type OutputFile } from './outputs.js';
import { MAX_CSV_INPUT_BYTES, MAX_INPUT_BYTES, readInputFile } from './read-input.js';

function required(f: FlagValues, name: string): string {
  const v = f.str(name);
  if (v === '') throw new ConfigError('missing-flag', `--${name} is required`);
  return v;
}

/** Reads an input, refusing it when it is the `--report` output. */
function read(path: string, flag: string, out: OutputFile): string {
  checkInputsAndOutputs([out], [{ flag, path }]);
  return readInputFile(path, flag, flag === '--trace-data' || flag === '--itl-data' ? MAX_CSV_INPUT_BYTES : MAX_INPUT_BYTES);
}

/** The replay metrics file's aggregate cache_hit_rate, or null when it has none. */
function simCacheHitRate(path: string, out: OutputFile): number | null {
  const text = read(path, '--sim-metrics', out);
  let doc: unknown;
  try {
    doc = parseJson(text, path);
  } catch (e) {
    if (e instanceof BlisError) throw new CalibrateInputError(`--sim-metrics: ${e.message}`);
    throw e;
  }
  const v = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)['cache_hit_rate'] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** `--adapter-reference`: BLIS aggregates against a Digital Twin LoRA reference (no trace involved). */
function adapterReferenceMode(f: FlagValues, io: Io, refPath: string): void {
  const aware = f.str('sim-metrics');
  if (aware === '') throw new ConfigError('missing-flag', '--sim-metrics is required with --adapter-reference (the metrics file of an adapter-aware blis run/replay --metrics-path)');
  const reportPath = required(f, 'report');
  const reportOut = checkOutputPath('--report', reportPath);
  const threshold = f.float('adapter-mape-threshold');
  if (!(threshold > 0)) throw new ConfigError('bad-flag', `--adapter-mape-threshold must be a finite number > 0, got ${threshold}`);
  const ref = parseDtReference(read(refPath, '--adapter-reference', reportOut), refPath);
  const blindPath = f.str('sim-metrics-blind');
  const blind = blindPath === '' ? null : parseBlisAggregate(read(blindPath, '--sim-metrics-blind', reportOut), blindPath, '--sim-metrics-blind');
  const report = compareAdapterReference(ref, parseBlisAggregate(read(aware, '--sim-metrics', reportOut), aware, '--sim-metrics'), blind, threshold);
  commitOutputs([[reportOut, goJsonIndent(adapterReportToJson(report))]]);
  const lines = adapterReportLines(report, blind !== null);
  io.info?.(`Adapter-reference comparison (${report.model}) written to ${reportPath} (MAPE threshold ${(report.threshold * 100).toFixed(0)}%)`);
  for (const l of lines.info) io.info?.(l);
  for (const w of lines.warnings) io.warn(w);
}

export async function calibrateCommand(f: FlagValues, io: Io): Promise<void> {
  const refPath = f.str('adapter-reference');
  if (refPath !== '' && f.bool('fit')) throw new ConfigError('bad-flag', '--adapter-reference and --fit are separate modes of calibrate; give one');
  if (refPath !== '') return adapterReferenceMode(f, io, refPath);
  if (f.bool('fit')) return (await import('./fit-command.js')).fitCommand(f, io);
  for (const name of ['profile-out', 'fit-params', 'holdout-every', 'horizon']) {
    if (f.changed(name)) throw new ConfigError('bad-flag', `--${name} only applies with --fit`);
  }
  const corrected = semanticsFlag(f) === 'corrected';
  const headerPath = required(f, 'trace-header');
  const dataPath = required(f, 'trace-data');
  const simPath = required(f, 'sim-results');
  const reportPath = required(f, 'report');
  const reportOut = checkOutputPath('--report', reportPath);
  const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
  const header = parseTraceHeaderYaml(read(headerPath, '--trace-header', reportOut), headerPath);
  const records = parseTraceCsv(read(dataPath, '--trace-data', reportOut), dataPath);
  const simResults = parseSimResults(read(simPath, '--sim-results', reportOut), simPath);
  const itlPath = f.str('itl-data');
  const itl = itlPath === '' ? [] : parseItlCsv(read(itlPath, '--itl-data', reportOut), itlPath);
  const warmUp = f.int('warmup-requests');
  if (warmUp < -1) throw new ConfigError('bad-flag', `--warmup-requests must be >= 0 (or -1 for the trace header's value), got ${warmUp}`);
  const cli = resolveGoodputCliFlags(f.str('slo-ttft'), f.str('slo-itl'), f.str('slo-e2e'));
  const simMetrics = f.str('sim-metrics');
  const out = runCalibration({
    header,
    records,
    simResults,
    itl,
    warmUpRequests: warmUp,
    networkRttUs: f.int('network-rtt-us'),
    bandwidthMbps: f.float('network-bandwidth-mbps'),
    goodputTargets: mergeGoodputTargets(cli, header.goodputSloTargets, null),
    simCacheHitRate: header.observedKvMetrics !== null && simMetrics !== '' ? simCacheHitRate(simMetrics, reportOut) : null,
    hitRateTolerancePp: f.float('hit-rate-tolerance-pp'),
    ttftMapeThreshold: f.float('ttft-mape-threshold'),
    ...(corrected ? { perTokenItl: true } : {}),
  });
  if (header.observedKvMetrics !== null && simMetrics !== '' && out.report.hitRate === null) {
    io.warn(`calibrate: --sim-metrics ${simMetrics} has no cache_hit_rate; skipping the hit-rate comparison (write it with blis replay --metrics-path)`);
  }
  commitOutputs([[reportOut, `${goJsonIndent(reportToJson(out.report))}\n`]]);
  for (const w of out.warnings) io.warn(w);
  for (const line of [`Calibration report written to ${reportPath}`, ...out.summary]) io.info?.(line);
}
