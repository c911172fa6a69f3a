/** A pool worker: one evaluation per task, in its own thread (heap limit and recycling are the pool's). */
import { evaluateCandidate, type EvaluateOptions } from './evaluate.js';
import type { Candidate, EvaluationResult, Suite } from './types.js';

export interface EvaluationTask {
  readonly candidate: Candidate;
  readonly suite: Suite;
  readonly opts: EvaluateOptions;
}

export default function evaluateTask(task: EvaluationTask): Promise<EvaluationResult> {
  return evaluateCandidate(task.candidate, task.suite, task.opts);
}
