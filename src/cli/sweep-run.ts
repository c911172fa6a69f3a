/**
 * `blis sweep FILE`: the sweep file checked whole (every point, files included) before anything runs, the
 * points run locally (threads) or through the job queue, the rows written in the sweep's order, the summary.
 * Ctrl-C stops waiting (exit 130); on a queue, what was queued stays there and a rerun collects it.
 */
import path from 'node:path';
import { buildRows, loadSweep, LocalRunner, rowsCsv, rowsJsonl, simulationJob, summarize, summaryText, type JobRunner } from '../sweep/index.js';
import { RunFailure, UsageError } from './errors.js';
import type { Io } from './io.js';
import { MAX_CSV_INPUT_BYTES, MAX_INPUT_BYTES, readInputFile } from './read-input.js';
import { jobProgress } from './job-progress.js';
import { checkInputsAndOutputs, checkOutputPath, commitOutputs, type Content, type OutputFile } from './outputs.js';
import { asRunFailure, int, queueConnection } from './queue-run.js';
import { threadCount } from './threads.js';
import type { QueueFlags } from './queue-flags.js';

export interface SweepFlags extends QueueFlags {
  output?: string;
  summary?: string;
  workers: string;
  timeoutS: string;
  workerWaitS: string;
}

function read(file: string, what: string, outputs: readonly (OutputFile | null)[]): string {
  checkInputsAndOutputs(outputs, [{ flag: what, path: file }]);
  return readInputFile(file, what, what.endsWith('--trace-data') ? MAX_CSV_INPUT_BYTES : MAX_INPUT_BYTES);
}


/** Ctrl-C / SIGTERM as an abort signal; a second one exits at once. */
export function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  let n = 0;
  const on = (): void => {
    if (++n === 1) ac.abort(new RunFailure('INTERRUPTED', 'interrupted', 130));
    else process.exit(130);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

export async function sweepCommand(file: string, o: SweepFlags, io: Io): Promise<void> {
  const format = o.output === undefined ? 'jsonl' : /\.csv$/i.test(o.output) ? 'csv' : /\.jsonl$/i.test(o.output) ? 'jsonl' : null;
  if (format === null) throw new UsageError('bad-flag', `--output ${o.output}: name a .jsonl or .csv file`);
  const outputFile = o.output === undefined ? null : checkOutputPath('--output', o.output);
  const summaryFile = o.summary === undefined ? null : checkOutputPath('--summary', o.summary);
  const outputs = [outputFile, summaryFile];
  checkInputsAndOutputs(outputs);
  const workers = threadCount('--workers', o.workers);
  const timeoutMs = int('--timeout-s', o.timeoutS, 0) * 1000;
  const workerWaitMs = int('--worker-wait-s', o.workerWaitS, 0) * 1000;
  const q = o.queue === undefined ? null : queueConnection(o, io);
  if (q !== null && (workers !== 1 || timeoutMs !== 0)) throw new UsageError('bad-flag', '--workers and --timeout-s are for local runs; with --queue, give each blis worker --concurrency and --timeout-s');
  const dir = path.dirname(file);
  const plan = await loadSweep(read(file, 'sweep file', outputs), file, {
    readText: (p, option) => read(path.isAbsolute(p) ? p : path.join(dir, p), `${file}: ${option}`, outputs),
  });
  for (const w of plan.warnings) io.warn(w);
  // The point's budget also bounds its run in the thread running it (the fast engine's in-run wall-clock budget,
  // which names the policy call it stops), as blis evaluate --timeout-s does for each scenario run. (The pool's
  // own timer, started with the task, usually fires first.)
  const jobs = plan.points.map((p) => simulationJob(p.config, timeoutMs));
  let runner: JobRunner;
  if (q === null) runner = new LocalRunner({ workers, timeoutMs });
  else {
    const { QueueRunner } = await import('../queue/index.js');
    runner = new QueueRunner({ ...q, noWorkerTimeoutMs: workerWaitMs, warn: (m) => io.warn(m) });
  }
  const progress = jobProgress('sweep', jobs.length);
  const interrupt = interruptSignal();
  let finished = 0;
  let outcomes;
  try {
    outcomes = await runner.runAll(jobs, (_i, outcome, cached) => {
      finished++;
      progress.done(cached, !outcome.ok || (typeof outcome.value === 'object' && outcome.value !== null && 'error' in outcome.value));
    }, interrupt.signal);
  } catch (e) {
    if (interrupt.signal.aborted) {
      const where = q === null ? 'nothing was written' : `the other points stay queued at ${q.target.display} and workers finish them: rerun the same command to collect every row (finished points are not run again), or clear them with blis queue clean`;
      throw new RunFailure('INTERRUPTED', `interrupted after ${finished} of ${jobs.length} points; ${where}`, 130);
    }
    throw asRunFailure(e);
  } finally {
    progress.finish();
    interrupt.dispose();
    await runner.close();
  }
  const rows = buildRows(plan.points, outcomes);
  const summary = summarize(rows, plan.objectives, !plan.defaultObjectives);
  const summaryJson = `${JSON.stringify(summary, null, 2)}\n`;
  const files: [OutputFile, Content][] = [];
  if (summaryFile !== null) files.push([summaryFile, summaryJson]);
  if (outputFile !== null) files.push([outputFile, format === 'csv' ? rowsCsv(rows, plan.params) : rowsJsonl(rows)]);
  commitOutputs(files);
  if (outputFile !== null) {
    io.stdout(summaryJson);
  } else {
    io.stdout(rowsJsonl(rows));
    io.info?.(summaryText(summary).trimEnd());
  }
}
