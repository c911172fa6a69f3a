/**
 * A memo of scenario runs for a long-lived evaluator (`blis evaluate --serve`): a run already simulated in this
 * process — the same candidate (label, bundle, files), scenario, seed, objectives, suite defaults and report
 * flag — is not simulated again. OpenEvolve's cascade asks for stage 1, then for stage 2, which runs stage 1
 * first: with the memo, stage 2 reuses stage 1's runs and simulates only the full suite.
 *
 * Only successful runs are kept (a failure may be a wall-clock fact: a timeout, a dead worker). A run is
 * deterministic given its task, so a remembered outcome is the outcome a new simulation would give: results are
 * the same bytes with or without the memo. Entries are evicted oldest first beyond `maxEntries` (a run's digest
 * is about 140 KB for 500 requests on 4 instances).
 */
import { createHash } from 'node:crypto';
import type { ScenarioRunner } from './evaluate.js';
import type { RunOutcome, RunTask } from './run.js';

export class RunMemo {
  private readonly entries = new Map<string, RunOutcome>();
  private hitCount = 0;
  private missCount = 0;

  constructor(private readonly maxEntries = 128) {}

  /** The memo key of a run: a content hash of everything its outcome depends on. */
  static key(t: RunTask): string {
    const c = t.candidate;
    const files = Object.keys(c.files).sort().map((k) => [k, c.files[k]]);
    return createHash('sha256')
      .update(JSON.stringify([c.label, c.bundle, files, t.scenario, t.seed, t.objectives, t.defaults, t.candidatePoints, t.reportData]))
      .digest('hex');
  }

  /** Runs answered from the memo (hits) and simulated (misses) so far. */
  get stats(): { hits: number; misses: number; entries: number } {
    return { hits: this.hitCount, misses: this.missCount, entries: this.entries.size };
  }

  /**
   * `inner`, answering remembered runs from the memo and running only the others (in task order, with the
   * ScenarioRunner contract: outcomes of a prefix of the tasks, stopping at the first failure).
   */
  wrap(inner: ScenarioRunner): ScenarioRunner {
    return {
      runAll: async (tasks, onDone) => {
        const keys = tasks.map((t) => RunMemo.key(t));
        const known = keys.map((k) => this.entries.get(k));
        const missing = tasks.filter((_, i) => known[i] === undefined);
        this.hitCount += tasks.length - missing.length;
        for (const k of known) if (k !== undefined) onDone();
        const ran = missing.length === 0 ? [] : await inner.runAll(missing, onDone);
        this.missCount += ran.length;
        const out: RunOutcome[] = [];
        let next = 0;
        for (let i = 0; i < tasks.length; i++) {
          let o = known[i];
          if (o !== undefined) this.remember(keys[i] as string, o);
          else {
            o = ran[next++];
            if (o === undefined) break;
            if (o.ok) this.remember(keys[i] as string, o);
          }
          out.push(o);
          if (!o.ok) break;
        }
        return out;
      },
    };
  }

  private remember(key: string, o: RunOutcome): void {
    this.entries.delete(key);
    this.entries.set(key, o);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}
