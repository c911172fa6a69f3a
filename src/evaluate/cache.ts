/**
 * A content-addressed result cache: the key is a hash of the candidate, the suite (its whole definition),
 * the stage, the run filter and the blis-ts version, so re-evaluating an unchanged candidate is free and a
 * changed suite never reuses stale results. In memory, optionally backed by a store the caller provides
 * (the CLI's `--cache DIR`).
 */
import { createHash } from 'node:crypto';
import { BLIS_VERSION, candidateHash, type EvaluateOptions } from './evaluate.js';
import type { Candidate, EvaluationResult, Suite } from './types.js';

export interface CacheStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
}

export class ResultCache {
  private readonly memory = new Map<string, EvaluationResult>();
  hits = 0;
  misses = 0;

  constructor(private readonly store: CacheStore | null = null, private readonly maxEntries = 10_000) {}

  static key(c: Candidate, suite: Suite, opts: EvaluateOptions): string {
    return createHash('sha256').update(JSON.stringify([candidateHash(c), c.id, suite, opts.stage ?? 2, opts.only ?? null, opts.seeds ?? null, opts.baseline ?? true, BLIS_VERSION, ...(opts.reportData === true ? ['report_data'] : [])])).digest('hex');
  }

  get(key: string): EvaluationResult | null {
    const m = this.memory.get(key);
    if (m !== undefined) {
      this.hits++;
      return m;
    }
    const s = this.store?.get(key) ?? null;
    if (s !== null) {
      const r = JSON.parse(s) as EvaluationResult;
      this.remember(key, r);
      this.hits++;
      return r;
    }
    this.misses++;
    return null;
  }

  set(key: string, r: EvaluationResult): void {
    this.remember(key, r);
    this.store?.set(key, JSON.stringify(r));
  }

  private remember(key: string, r: EvaluationResult): void {
    if (this.memory.size >= this.maxEntries) {
      const first = this.memory.keys().next();
      if (first.done !== true) this.memory.delete(first.value);
    }
    this.memory.set(key, r);
  }
}
