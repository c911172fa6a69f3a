/**
 * `blis run` and `blis replay`: the simulation layer renders everything; this writes the files and stdout.
 */
import type { SimEnv } from '../sim/env.js';
import type { FlagValues } from '../sim/options.js';
import { simulateReplay, simulateRun, type RunOptions, type SimulationObserver, type SimulationOutputs } from '../sim/run.js';
import { progressDisplay } from './progress.js';
import { readServeGenDir } from './servegen-files.js';
import type { Io } from './io.js';
import { MAX_CSV_INPUT_BYTES, MAX_INPUT_BYTES, readInputFile } from './read-input.js';
import { checkInputsAndOutputs, checkOutputPath, checkTracePrefix, commitOutputs, type Content, type OutputFile } from './outputs.js';

export type { SimulationObserver } from '../sim/run.js';

/**
 * File access and warnings for the simulation layer, from the process. Every input read is first checked
 * against the command's `outputs` (declared before any input is read): an input is never an output.
 */
export function processEnv(io: Io, outputs: readonly (OutputFile | null)[] = []): SimEnv {
  return {
    readText: (path, option) => {
      checkInputsAndOutputs(outputs, [{ flag: option, path }]);
      const text = readInputFile(path, option, option === '--trace-data' ? MAX_CSV_INPUT_BYTES : MAX_INPUT_BYTES);
      io.logDebug?.(`read ${path} (${option}): ${text.length} characters`);
      return text;
    },
    readServeGen: (dir, option) => readServeGenDir(dir, option),
    warn: (m) => io.warn(m),
    info: (m) => io.logInfo?.(m),
    debug: (m) => io.logDebug?.(m),
  };
}

/** The output files both commands may write besides their own: the time series and the HTML report. */
interface SeriesAndReport {
  readonly timeseries: OutputFile | null;
  readonly report: OutputFile | null;
}

function checkSeriesAndReport(f: FlagValues): SeriesAndReport {
  const tp = f.str('timeseries-path');
  const rp = f.str('report');
  return { timeseries: tp === '' ? null : checkOutputPath('--timeseries-path', tp), report: rp === '' ? null : checkOutputPath('--report', rp) };
}

async function seriesAndReportFiles(o: SeriesAndReport, f: FlagValues, out: SimulationOutputs, source: 'run' | 'replay'): Promise<[OutputFile, Content][]> {
  const files: [OutputFile, Content][] = [];
  if (o.timeseries !== null && out.timeseriesFile !== null) files.push([o.timeseries, out.timeseriesFile]);
  if (o.report !== null) {
    const { simulationReportHtml } = await import('../report/index.js');
    files.push([o.report, await simulationReportHtml(out, f, source)]);
  }
  return files;
}

/** Runs `simulate` with a progress display (when one shows) and the time series a `--report` needs. */
async function withProgress(f: FlagValues, label: string, simulate: (opts: RunOptions) => Promise<SimulationOutputs>): Promise<SimulationOutputs> {
  const display = progressDisplay(label, f.bool('quiet'));
  try {
    return await simulate({ timeseries: f.str('report') !== '', ...(display === null ? {} : { onProgress: (p) => display.sim(p), onGenerate: (done, total) => display.generating(done, total) }) });
  } finally {
    display?.stop();
  }
}

/**
 * `run`: every output path is checked before the simulation; the files are written all or nothing after it, and
 * stdout last.
 */
export async function runCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  const mp = f.str('metrics-path');
  const tp = f.str('trace-output');
  const metrics = mp === '' ? null : checkOutputPath('--metrics-path', mp);
  const trace = tp === '' ? null : checkTracePrefix('--trace-output', tp);
  const extra = checkSeriesAndReport(f);
  const outputs = [metrics, ...(trace ?? []), extra.timeseries, extra.report];
  checkInputsAndOutputs(outputs);
  const out = await withProgress(f, 'run', (opts) => simulateRun(f, processEnv(io, outputs), observe, opts));
  const files = await seriesAndReportFiles(extra, f, out, 'run');
  if (metrics !== null) files.push([metrics, out.metricsFileChunks()]);
  if (trace !== null && out.trace !== null) files.push([trace[0], out.trace.yaml], [trace[1], out.trace.csvChunks()]);
  commitOutputs(files);
  io.stdout(out.stdout);
}

/** `replay`: as {@link runCommand}, with `--results-path`. */
export async function replayCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  const mp = f.str('metrics-path');
  const rp = f.str('results-path');
  const tp = f.str('trace-output');
  const metrics = mp === '' ? null : checkOutputPath('--metrics-path', mp);
  const results = rp === '' ? null : checkOutputPath('--results-path', rp);
  const trace = tp === '' ? null : checkTracePrefix('--trace-output', tp);
  const extra = checkSeriesAndReport(f);
  const outputs = [metrics, results, ...(trace ?? []), extra.timeseries, extra.report];
  checkInputsAndOutputs(outputs);
  const out = await withProgress(f, 'replay', (opts) => simulateReplay(f, processEnv(io, outputs), observe, opts));
  const files = await seriesAndReportFiles(extra, f, out, 'replay');
  if (metrics !== null) files.push([metrics, out.metricsFileChunks()]);
  const rows = results === null ? null : out.resultsChunks();
  if (results !== null && rows !== null) files.push([results, rows]);
  if (trace !== null && out.trace !== null) files.push([trace[0], out.trace.yaml], [trace[1], out.trace.csvChunks()]);
  commitOutputs(files);
  io.stdout(out.stdout);
}
