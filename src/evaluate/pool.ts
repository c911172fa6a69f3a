/**
 * Evaluations across cores: a piscina worker pool, one evaluation per task. Each worker has a heap limit (a
 * memory bomb the sandbox accounting misses kills that worker, not the process) and each task a wall-clock
 * budget (the deterministic instruction budget is the real limit; the wall clock is the backstop). A task
 * that dies or times out yields a scored failure, like any other broken candidate. Workers are recycled after
 * a number of tasks, which also bounds any slowdown a sandboxed program could leave in its V8 isolate.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { BLIS_VERSION, candidateHash, type EvaluateOptions } from './evaluate.js';
import type { Candidate, EvaluationResult, Suite } from './types.js';
import type { EvaluationTask } from './worker.js';

export interface PoolOptions {
  readonly workers: number;
  /** Wall-clock budget per evaluation (ms); 0 = none. */
  readonly timeoutMs: number;
  /** Heap limit per worker (MiB). */
  readonly maxOldGenerationSizeMb?: number;
  /** Tasks a worker runs before it is replaced. */
  readonly recycleAfter?: number;
}

/**
 * The built worker module, dist/evaluate/worker.js (an entry point of the bundle). This code may sit in any
 * bundle chunk under dist/, or in src/ when tests run from sources (they use the build beside them).
 */
function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return here.replace(/\/src\/evaluate\/pool\.ts$/, '/dist/evaluate/worker.js');
  return `${here.slice(0, here.lastIndexOf('/dist/') + '/dist/'.length)}evaluate/worker.js`;
}

/** A task that did not finish: its worker died or its wall-clock budget passed (not a fact about the task). */
export class PoolTaskFailure extends Error {
  constructor(readonly code: 'EVAL_TIMEOUT' | 'EVAL_WORKER_DIED', message: string) {
    super(message);
    this.name = 'PoolTaskFailure';
  }
}

export class EvaluationPool {
  private pool: Piscina;
  private readonly recycleAfter: number;
  private started = 0;
  private readonly retiring: Promise<void>[] = [];

  constructor(private readonly opts: PoolOptions) {
    this.recycleAfter = opts.recycleAfter ?? 200;
    this.pool = this.create();
  }

  private create(): Piscina {
    return new Piscina({
      filename: workerFile(),
      minThreads: this.opts.workers,
      maxThreads: this.opts.workers,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: this.opts.maxOldGenerationSizeMb ?? 2048 },
    });
  }

  async run(candidate: Candidate, suite: Suite, evalOpts: EvaluateOptions): Promise<EvaluationResult> {
    const task: EvaluationTask = { candidate, suite, opts: evalOpts };
    const ac = new AbortController();
    const timer = this.opts.timeoutMs > 0 ? setTimeout(() => ac.abort(), this.opts.timeoutMs) : null;
    const pool = this.next();
    try {
      return (await pool.run(task, { signal: ac.signal })) as EvaluationResult;
    } catch (e) {
      const timedOut = ac.signal.aborted;
      const message = timedOut
        ? `the evaluation exceeded its wall-clock budget of ${this.opts.timeoutMs} ms and was stopped`
        : `the evaluation worker died: ${(e as Error).message.split('\n')[0] ?? ''} (a memory limit, usually)`;
      return {
        combined_score: 0,
        objectives: Object.fromEntries(suite.objectives.map((o) => [o.name, 0])),
        scores: Object.fromEntries(suite.objectives.map((o) => [o.name, 0])),
        features: {},
        scenarios: [],
        artifacts: { summary: `## Outcome\n- The candidate failed; it was scored 0.\n\n## Error\n${message}\n`, worst_decisions: '' },
        candidate: { id: candidate.id, hash: candidateHash(candidate) },
        suite: { name: suite.name, stage: evalOpts.stage ?? 2, stages_run: [] },
        blis_version: BLIS_VERSION,
        error: { code: timedOut ? 'EVAL_TIMEOUT' : 'EVAL_WORKER_DIED', message },
      };
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  /** The pool for the next task: every recycleAfter tasks new work goes to fresh workers (the old pool finishes what it has, then closes). */
  private next(): Piscina {
    if (++this.started % this.recycleAfter === 0) {
      const old = this.pool;
      this.pool = this.create();
      this.retiring.push(old.close());
    }
    return this.pool;
  }

  /**
   * Runs `task` through the default export of another worker module (`filename`, a built .js file) on the same
   * threads, heap limit, recycling and wall-clock budget. The module returns its errors as values: a rejection
   * is a {@link PoolTaskFailure} (the worker died, or the budget passed).
   */
  async runModule(filename: string, task: unknown): Promise<unknown> {
    const ac = new AbortController();
    const timer = this.opts.timeoutMs > 0 ? setTimeout(() => ac.abort(), this.opts.timeoutMs) : null;
    const pool = this.next();
    try {
      return await pool.run(task, { signal: ac.signal, filename });
    } catch (e) {
      if (ac.signal.aborted) throw new PoolTaskFailure('EVAL_TIMEOUT', `the task exceeded its wall-clock budget of ${this.opts.timeoutMs} ms and was stopped`);
      throw new PoolTaskFailure('EVAL_WORKER_DIED', `the worker died: ${(e as Error).message.split('\n')[0] ?? ''} (a memory limit, usually)`);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.retiring);
    await this.pool.destroy();
  }
}
