/**
 * `blis run` and `blis replay`: the simulation layer renders everything; this writes stdout and the files.
 */
import { writeFileSync } from 'node:fs';
import { ConfigError } from '../sim/config-error.js';
import type { SimEnv } from '../sim/env.js';
import type { FlagValues } from '../sim/options.js';
import { simulateReplay, simulateRun, type RunOptions, type SimulationObserver, type SimulationOutputs } from '../sim/run.js';
import { progressDisplay } from './progress.js';
import type { Io } from './io.js';
import { MAX_CSV_INPUT_BYTES, MAX_INPUT_BYTES, readInputFile } from './read-input.js';

export type { SimulationObserver } from '../sim/run.js';

/** File access and warnings for the simulation layer, from the process. */
export function processEnv(io: Io): SimEnv {
  return {
    readText: (path, option) => {
      const text = readInputFile(path, option, option === '--trace-data' ? MAX_CSV_INPUT_BYTES : MAX_INPUT_BYTES);
      io.logDebug?.(`read ${path} (${option}): ${text.length} characters`);
      return text;
    },
    warn: (m) => io.warn(m),
    info: (m) => io.logInfo?.(m),
    debug: (m) => io.logDebug?.(m),
  };
}

function write(path: string, text: string, option: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new ConfigError('io', `${option}: cannot write ${path}: ${(e as Error).message}`);
  }
}

function emit(io: Io, f: FlagValues, out: SimulationOutputs): void {
  io.stdout(out.stdout);
  const mp = f.str('metrics-path');
  if (mp !== '' && out.metricsFile !== null) write(mp, out.metricsFile, '--metrics-path');
}

/**
 * The time series and the HTML report, written BEFORE stdout: a file that cannot be written is an error with
 * nothing printed yet.
 */
async function writeSeriesAndReport(f: FlagValues, out: SimulationOutputs, source: 'run' | 'replay'): Promise<void> {
  const tp = f.str('timeseries-path');
  if (tp !== '' && out.timeseriesFile !== null) write(tp, out.timeseriesFile, '--timeseries-path');
  const path = f.str('report');
  if (path === '') return;
  const { simulationReportHtml } = await import('../report/index.js');
  write(path, await simulationReportHtml(out, f, source), '--report');
}

/** Runs `simulate` with a progress display (when one shows) and the time series a `--report` needs. */
async function withProgress(f: FlagValues, label: string, simulate: (opts: RunOptions) => Promise<SimulationOutputs>): Promise<SimulationOutputs> {
  const display = progressDisplay(label, f.bool('quiet'));
  try {
    return await simulate({ timeseries: f.str('report') !== '', ...(display === null ? {} : { onProgress: (p) => display.sim(p) }) });
  } finally {
    display?.stop();
  }
}

export async function runCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  const out = await withProgress(f, 'run', (opts) => simulateRun(f, processEnv(io), observe, opts));
  await writeSeriesAndReport(f, out, 'run');
  emit(io, f, out);
  const tp = f.str('trace-output');
  if (tp !== '' && out.trace) {
    write(`${tp}.yaml`, out.trace.yaml, '--trace-output');
    write(`${tp}.csv`, out.trace.csv, '--trace-output');
  }
}

export async function replayCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  const out = await withProgress(f, 'replay', (opts) => simulateReplay(f, processEnv(io), observe, opts));
  await writeSeriesAndReport(f, out, 'replay');
  emit(io, f, out);
  const rp = f.str('results-path');
  if (rp !== '' && out.results !== null) write(rp, out.results, '--results-path');
}
