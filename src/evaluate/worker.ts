/** A pool worker: one scenario run per task, in its own thread (heap limit and recycling are the pool's). */
import { loadSandboxEngine } from '../sandbox/index.js';
import { runScenario, type RunOutcome, type RunTask } from './run.js';

// The modules a run loads on first use — policy bundles, workload specs, the fast sandbox — load while the
// thread starts (piscina waits for this module), in parallel on every worker, instead of inside a worker's
// first run, where they would delay that evaluation and count against its wall-clock budget.
await Promise.all([import('../policy/index.js'), import('../workload/spec/index.js'), loadSandboxEngine('fast')]);

export default async function runTask(task: RunTask): Promise<RunOutcome> {
  try {
    return await runScenario(task);
  } catch (e) {
    // A bug, not the candidate's failure: the parent throws it again (an error's class does not cross threads).
    return { ok: false, internal: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}
