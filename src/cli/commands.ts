/**
 * `blis run` and `blis replay`: the simulation layer renders everything; this writes the files and stdout.
 */
import type { SimEnv } from '../sim/env.js';
import type { FlagValues } from '../sim/options.js';
import { simulateReplay, simulateRun, type SimulationObserver } from '../sim/run.js';
import type { Io } from './io.js';
import { readInputText } from './read-input.js';
import { checkOutputPath, checkTracePrefix, commitOutputs, type Content, type OutputFile } from './outputs.js';

export type { SimulationObserver } from '../sim/run.js';

/** File access and warnings for the simulation layer, from the process. */
export function processEnv(io: Io): SimEnv {
  return {
    readText: (path, option) => readInputText(path, option),
    warn: (m) => io.warn(m),
  };
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
  const out = await simulateRun(f, processEnv(io), observe);
  const files: [OutputFile, Content][] = [];
  if (metrics !== null) files.push([metrics, out.metricsFileChunks()]);
  if (trace !== null && out.trace !== null) files.push([trace[0], out.trace.yaml], [trace[1], out.trace.csvChunks()]);
  commitOutputs(files);
  io.stdout(out.stdout);
}

/** `replay`: as {@link runCommand}, with `--results-path`. */
export async function replayCommand(f: FlagValues, io: Io, observe?: SimulationObserver): Promise<void> {
  const mp = f.str('metrics-path');
  const rp = f.str('results-path');
  const metrics = mp === '' ? null : checkOutputPath('--metrics-path', mp);
  const results = rp === '' ? null : checkOutputPath('--results-path', rp);
  const out = await simulateReplay(f, processEnv(io), observe);
  const files: [OutputFile, Content][] = [];
  if (metrics !== null) files.push([metrics, out.metricsFileChunks()]);
  const rows = results === null ? null : out.resultsChunks();
  if (results !== null && rows !== null) files.push([results, rows]);
  commitOutputs(files);
  io.stdout(out.stdout);
}
