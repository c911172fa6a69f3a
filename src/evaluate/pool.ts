/**
 * Evaluations across cores: a piscina worker pool whose tasks are scenario runs. An evaluation is driven from
 * this thread (the cascade, the scores, the reflection summary) and its runs — a whole population's, and the
 * scenarios × seeds of one candidate alike — are spread over the workers; each worker returns a run's result
 * and digest (run.ts, digest.ts), never the simulator. The output is the same bytes as in one thread.
 *
 * Scheduling: at most one run per worker is handed to piscina at a time (so a task never waits inside
 * piscina), the evaluation started first going first and its runs in scenario/seed order. So an evaluation,
 * once started, is not slowed by the ones queued behind it, and its wall-clock budget — which starts when its
 * first run starts — measures its own work, not the queue.
 *
 * Failures: each worker has a heap limit (a memory bomb the sandbox accounting misses kills that worker, not
 * the process); a run whose worker dies fails the evaluation with EVAL_WORKER_DIED. An evaluation over its
 * wall-clock budget (the deterministic instruction budget is the real limit; the wall clock is the backstop)
 * is stopped: its queued runs are dropped, its running ones are cancelled (piscina terminates their workers
 * and starts new ones), and it fails with EVAL_TIMEOUT. A candidate that fails a run has its queued runs
 * dropped; its runs already going finish and are ignored. Workers stay warm between runs and are replaced
 * after a number of runs, which bounds any slowdown a sandboxed program could leave in its V8 isolate.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { HEAP_GUARD_EXIT_CODE } from '../sandbox/heap-guard.js';
import { evaluateCandidate, type EvaluateHooks, type EvaluateOptions, type ScenarioRunner } from './evaluate.js';
import type { RunOutcome, RunTask } from './run.js';
import type { Candidate, EvaluationResult, Suite } from './types.js';

export interface PoolOptions {
  readonly workers: number;
  /** Wall-clock budget per evaluation (ms), from its first run's start; 0 = none. */
  readonly timeoutMs: number;
  /** Heap limit per worker (MiB). */
  readonly maxOldGenerationSizeMb?: number;
  /** Runs (tasks) a pool's workers take before new workers replace them. */
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

type Settled = { readonly kind: 'done'; readonly value: unknown } | { readonly kind: 'failed'; readonly error: unknown } | { readonly kind: 'dropped' };

interface Pending {
  readonly job: Job;
  readonly index: number;
  readonly task: unknown;
  readonly filename: string | undefined;
  readonly settle: (s: Settled) => void;
}

/** One evaluation (or one runModule task): its place in line, its budget and its cancellation. */
class Job {
  readonly ac = new AbortController();
  /** No more of its tasks are started (it failed, timed out or ended). */
  closed = false;
  tasks = 0;
  private timer: NodeJS.Timeout | null = null;
  private started = false;

  constructor(
    readonly seq: number,
    private readonly timeoutMs: number,
    private readonly onTimeout: (job: Job) => void,
  ) {}

  /** Its first task starts: the wall-clock budget starts. */
  begin(): void {
    if (this.started) return;
    this.started = true;
    if (this.timeoutMs > 0) {
      this.timer = setTimeout(() => {
        this.closed = true;
        this.ac.abort();
        this.onTimeout(this);
      }, this.timeoutMs);
    }
  }

  get timedOut(): boolean {
    return this.ac.signal.aborted;
  }

  end(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
  }
}

export class EvaluationPool {
  private pool: Piscina;
  private readonly recycleAfter: number;
  private dispatched = 0;
  private readonly retiring: Promise<void>[] = [];
  private readonly queue: Pending[] = [];
  private active = 0;
  private jobs = 0;

  constructor(private readonly opts: PoolOptions) {
    this.recycleAfter = opts.recycleAfter ?? 1000;
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

  private newJob(): Job {
    return new Job(this.jobs++, this.opts.timeoutMs, (job) => this.drop(job));
  }

  /** Settles a job's queued tasks as dropped (it failed, timed out or ended). */
  private drop(job: Job): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const p = this.queue[i] as Pending;
      if (p.job !== job) continue;
      this.queue.splice(i, 1);
      p.settle({ kind: 'dropped' });
    }
  }

  private submit(job: Job, task: unknown, filename?: string): Promise<Settled> {
    return new Promise<Settled>((settle) => {
      if (job.closed) {
        settle({ kind: 'dropped' });
        return;
      }
      this.queue.push({ job, index: job.tasks++, task, filename, settle });
      this.pump();
    });
  }

  /** Starts queued tasks while a worker is free: the earliest job first, its tasks in order. */
  private pump(): void {
    while (this.active < this.opts.workers && this.queue.length > 0) {
      let k = 0;
      for (let i = 1; i < this.queue.length; i++) {
        const a = this.queue[i] as Pending;
        const b = this.queue[k] as Pending;
        if (a.job.seq < b.job.seq || (a.job.seq === b.job.seq && a.index < b.index)) k = i;
      }
      const p = this.queue.splice(k, 1)[0] as Pending;
      if (p.job.closed) {
        p.settle({ kind: 'dropped' });
        continue;
      }
      this.active++;
      p.job.begin();
      const pool = this.next();
      pool.run(p.task, { signal: p.job.ac.signal, ...(p.filename === undefined ? {} : { filename: p.filename }) }).then(
        (value: unknown) => p.settle({ kind: 'done', value }),
        (error: unknown) => p.settle({ kind: 'failed', error }),
      ).finally(() => {
        this.active--;
        this.pump();
      });
    }
  }

  /** The pool for the next task: every recycleAfter tasks new work goes to fresh workers (the old pool finishes what it has, then closes). */
  private next(): Piscina {
    if (++this.dispatched % this.recycleAfter === 0) {
      const old = this.pool;
      this.pool = this.create();
      this.retiring.push(old.close());
    }
    return this.pool;
  }

  /** Why a task gave no value (not a fact about the task: never cached). */
  private lost(job: Job, s: Settled, what: 'evaluation' | 'task'): { code: PoolTaskFailure['code']; message: string } {
    if (job.timedOut) return { code: 'EVAL_TIMEOUT', message: `the ${what} exceeded its wall-clock budget of ${this.opts.timeoutMs} ms and was stopped` };
    if (s.kind === 'dropped') return { code: 'EVAL_WORKER_DIED', message: `the worker pool was closed before the ${what} ran` };
    const e = s.kind === 'failed' ? s.error : null;
    const detail = e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e);
    const worker = what === 'evaluation' ? 'evaluation worker' : 'worker';
    if (detail.endsWith(`code: ${HEAP_GUARD_EXIT_CODE}`)) {
      return { code: 'EVAL_WORKER_DIED', message: `the ${worker} stopped at its memory limit: fast-engine policy code kept more memory across calls than the thread's heap (${this.opts.maxOldGenerationSizeMb ?? 2048} MB) leaves room for` };
    }
    return { code: 'EVAL_WORKER_DIED', message: `the ${worker} died: ${detail} (a memory limit, usually)` };
  }

  /** The runner of one evaluation: its runs as tasks of `job` (see ScenarioRunner for the contract). */
  private runner(job: Job): ScenarioRunner {
    return {
      runAll: (tasks: readonly RunTask[], onDone: () => void): Promise<RunOutcome[]> =>
        new Promise<RunOutcome[]>((resolve) => {
          const n = tasks.length;
          const outcomes: (RunOutcome | undefined)[] = new Array<RunOutcome | undefined>(n);
          let settled = false;
          // Done when every run is in, or a failure is in with every run before it.
          const check = (): void => {
            let k = 0;
            while (k < n && outcomes[k]?.ok === true) k++;
            if (k < n && outcomes[k] === undefined) return;
            settled = true;
            resolve(outcomes.slice(0, Math.min(k + 1, n)) as RunOutcome[]);
          };
          if (n === 0) return resolve([]);
          tasks.forEach((t, i) => {
            void this.submit(job, t).then((s) => {
              if (settled) return;
              const o: RunOutcome = s.kind === 'done' ? (s.value as RunOutcome) : { ok: false, error: this.lost(job, s, 'evaluation') };
              outcomes[i] = o;
              if (o.ok) onDone();
              else if (!job.closed) {
                // A failed run fails the evaluation: start none of its other runs.
                job.closed = true;
                this.drop(job);
              }
              check();
            });
          });
        }),
    };
  }

  /**
   * Evaluates `candidate` with its runs on the pool; the same result as evaluateCandidate in this thread, or a
   * scored failure when a run's worker died or the evaluation's wall-clock budget passed. `wrap` wraps the
   * runner (e.g. RunMemo.wrap, so that runs already simulated in this process are not simulated again).
   */
  async run(candidate: Candidate, suite: Suite, evalOpts: EvaluateOptions, hooks: EvaluateHooks = {}, wrap: (r: ScenarioRunner) => ScenarioRunner = (r) => r): Promise<EvaluationResult> {
    const job = this.newJob();
    try {
      return await evaluateCandidate(candidate, suite, evalOpts, hooks, wrap(this.runner(job)));
    } finally {
      job.end();
      this.drop(job);
    }
  }

  /**
   * Runs `task` through the default export of another worker module (`filename`, a built .js file) on the same
   * threads, heap limit, recycling and wall-clock budget. The module returns its errors as values: a rejection
   * is a {@link PoolTaskFailure} (the worker died, or the budget passed).
   */
  async runModule(filename: string, task: unknown): Promise<unknown> {
    const job = this.newJob();
    try {
      const s = await this.submit(job, task, filename);
      if (s.kind === 'done') return s.value;
      const e = this.lost(job, s, 'task');
      throw new PoolTaskFailure(e.code, e.message);
    } finally {
      job.end();
    }
  }

  async close(): Promise<void> {
    for (const p of this.queue.splice(0)) p.settle({ kind: 'dropped' });
    await Promise.all(this.retiring);
    await this.pool.destroy();
  }
}
