/** A pool worker: one scenario run per task, in its own thread (heap limit and recycling are the pool's). */
import { runScenario, type RunOutcome, type RunTask } from './run.js';

export default async function runTask(task: RunTask): Promise<RunOutcome> {
  try {
    return await runScenario(task);
  } catch (e) {
    // A bug, not the candidate's failure: the parent throws it again (an error's class does not cross threads).
    return { ok: false, internal: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}
