/**
 * A pool worker module for sweep points (run through EvaluationPool.runModule). It returns every outcome as a
 * value — the point's result, or `{internal}` for a bug — so a rejection always means the thread died.
 */
import { JobInternalError, JobTimeoutError, runSimulation } from './jobs.js';
import type { PointResult, SimulationJob } from './types.js';

export type WorkerReply = { readonly result: PointResult } | { readonly internal: string } | { readonly timeout: string };

export default async function runPoint(job: SimulationJob): Promise<WorkerReply> {
  try {
    return { result: await runSimulation(job) };
  } catch (e) {
    if (e instanceof JobTimeoutError) return { timeout: e.message };
    return { internal: e instanceof JobInternalError ? e.message : `internal: ${String(e)}` };
  }
}
