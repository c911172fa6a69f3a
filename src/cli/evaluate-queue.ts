/**
 * `blis evaluate --population DIR --queue URL`: the candidates as evaluation jobs on the Redis queue (each
 * under its content address: a candidate the queue already evaluated on the same suite, stage and runs is
 * not evaluated again), collected in the population's order. A job that did not finish (its worker died,
 * its budget, too many stalls) is the same scored failure a local pool gives, and is not cached.
 */
import { ResultCache, type Candidate, type EvaluateOptions, type EvaluationResult, type Suite } from '../evaluate/index.js';
import { evaluationJob, failedEvaluation } from '../sweep/index.js';
import { RunFailure } from './errors.js';
import type { Io } from './io.js';
import { jobProgress } from './job-progress.js';
import { asRunFailure, int, queueConnection } from './queue-run.js';
import type { QueueFlags } from './queue-flags.js';
import { interruptSignal } from './sweep-run.js';

export async function evaluateOnQueue(cands: readonly Candidate[], suite: Suite, opts: EvaluateOptions, cache: ResultCache, o: QueueFlags & { workerWaitS: string }, io: Io): Promise<EvaluationResult[]> {
  const q = queueConnection(o, io);
  const workerWaitMs = int('--worker-wait-s', o.workerWaitS, 0) * 1000;
  const results = new Array<EvaluationResult | undefined>(cands.length);
  const todo: number[] = [];
  cands.forEach((c, i) => {
    const hit = cache.get(ResultCache.key(c, suite, opts));
    if (hit !== null) results[i] = hit;
    else todo.push(i);
  });
  const jobs = todo.map((i) => evaluationJob(cands[i] as Candidate, suite, opts));
  const { QueueRunner } = await import('../queue/index.js');
  const runner = new QueueRunner({ ...q, noWorkerTimeoutMs: workerWaitMs, warn: (m) => io.warn(m) });
  const progress = jobProgress('evaluate', jobs.length);
  const interrupt = interruptSignal();
  let finished = 0;
  try {
    const outcomes = await runner.runAll(jobs, (_i, out, cached) => {
      finished++;
      progress.done(cached, !out.ok);
    }, interrupt.signal);
    outcomes.forEach((out, k) => {
      const i = todo[k] as number;
      const job = jobs[k]!;
      if (out.ok) {
        const r = out.value as EvaluationResult;
        cache.set(ResultCache.key(job.candidate, suite, opts), r);
        results[i] = r;
      } else results[i] = failedEvaluation(job, out.error);
    });
  } catch (e) {
    if (interrupt.signal.aborted) throw new RunFailure('INTERRUPTED', `interrupted after ${finished} of ${jobs.length} evaluations; the others stay queued at ${q.target.display}: rerun the same command to collect them (finished ones are not run again), or clear them with blis queue clean`, 130);
    throw asRunFailure(e);
  } finally {
    progress.finish();
    interrupt.dispose();
    await runner.close();
  }
  return results as EvaluationResult[];
}
