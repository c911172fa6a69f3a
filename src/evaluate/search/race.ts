/**
 * Racing: a challenger is compared with the incumbent on common random numbers (the same scenario runs, the same
 * seeds), first on a few seeds per scenario; more seeds are added only while the paired comparison is undecided
 * (its 95% interval straddles 0), doubling up a ladder of rungs (successive halving's idea applied to a pair).
 * A challenger that decides the same as the incumbent on every run is a tie at once; one that fails is out at once;
 * one that violates the suite's constraints significantly more than the incumbent loses whatever its score.
 *
 * Run scores are remembered per candidate and run, so a candidate pays for each run once, however often it races.
 */
import { ConfigError } from '../../sim/config-error.js';
import type { EvaluateOptions } from '../evaluate.js';
import { candidateHash } from '../evaluate.js';
import { estimate } from '../noise.js';
import { seedsFor } from '../suites.js';
import type { Candidate, EvaluationError, EvaluationResult, Estimate, ScenarioResult, Suite } from '../types.js';

export type Evaluator = (c: Candidate, opts: EvaluateOptions) => Promise<EvaluationResult>;

export interface RunRef {
  readonly scenario: string;
  readonly seed: number;
}

/** A candidate's scored runs at one rung, or its failure. */
export type RungScores = { readonly ok: true; readonly runs: readonly ScenarioResult[] } | { readonly ok: false; readonly error: EvaluationError };

/**
 * better / worse: the 95% interval of the paired difference lies above 0 / below 0; no-gain: it lies below the
 * smallest gain worth having (`minGain`) without being below 0; tie: the same score on every run; failed: the
 * challenger broke; undecided: still straddling at the last rung (the incumbent stays); infeasible: the challenger
 * violates the suite's constraints more than the incumbent (the mean of their runs' constraint factors is lower by
 * more than FEASIBILITY_TOLERANCE, significantly), whatever its score: feasibility first.
 */
export type Verdict = 'better' | 'worse' | 'no-gain' | 'tie' | 'failed' | 'undecided' | 'infeasible';

/** A constraint-factor shortfall smaller than this (0.5%) is noise, not a violation. */
export const FEASIBILITY_TOLERANCE = 0.005;

export interface RaceResult {
  readonly verdict: Verdict;
  /** Seeds per scenario at the rung where the race ended. */
  readonly seeds: number;
  /** The paired difference challenger - incumbent at that rung (null for a failure). */
  readonly difference: Estimate | null;
  readonly error?: EvaluationError;
}

export interface RacingStats {
  comparisons: number;
  /** Comparisons ended at each rung (seeds per scenario -> count). */
  ended_at: Record<string, number>;
  /** Comparisons that reached the last rung still undecided (the incumbent stayed). */
  undecided_at_last_rung: number;
  /** Times an undecided comparison was moved up a rung (seeds added). */
  seed_rungs_added: number;
  /** Scenario runs simulated for candidates (cache misses). */
  runs_simulated: number;
  /** Runs every comparison would have cost at the last rung without racing (both sides, nothing remembered). */
  runs_without_racing: number;
}

const TIE_EPS = 1e-12;

export class Racer {
  private readonly runs = new Map<string, Map<string, ScenarioResult>>();
  private readonly failures = new Map<string, EvaluationError>();
  readonly stats: RacingStats;

  /**
   * `rungs`: seeds per scenario, increasing (e.g. [2, 4, 8]); `baseline`: evaluate with the suite's baseline (needed
   * by constraints relative to it); `minGain`: the smallest combined-score gain worth more seeds.
   */
  constructor(
    private readonly suite: Suite,
    private readonly evaluate: Evaluator,
    readonly rungs: readonly number[],
    private readonly baseline: boolean,
    private readonly minGain = 0,
  ) {
    if (rungs.length === 0 || rungs.some((k, i) => !(Number.isInteger(k) && k >= 1 && (i === 0 || k > (rungs[i - 1] as number))))) {
      throw new ConfigError('bad-flag', `--rungs: seeds per scenario must be increasing positive integers, got ${rungs.join(',')}`);
    }
    this.stats = { comparisons: 0, ended_at: Object.fromEntries(rungs.map((k) => [String(k), 0])), undecided_at_last_rung: 0, seed_rungs_added: 0, runs_simulated: 0, runs_without_racing: 0 };
  }

  /** The runs of rung `k`: every stage-2 scenario on its first `k` search seeds. */
  runsAt(k: number): RunRef[] {
    return this.suite.stage2.flatMap((s) => seedsFor(s, 'search', k).map((seed) => ({ scenario: s.name, seed })));
  }

  private weight(scenario: string): number {
    return this.suite.stage2.find((s) => s.name === scenario)?.weight ?? 1;
  }

  /** `c`'s scored runs at rung `k` (only the runs it has not run yet are simulated). */
  async scoresAt(c: Candidate, k: number): Promise<RungScores> {
    const key = candidateHash(c);
    const failed = this.failures.get(key);
    if (failed !== undefined) return { ok: false, error: failed };
    let known = this.runs.get(key);
    if (known === undefined) {
      known = new Map();
      this.runs.set(key, known);
    }
    const want = this.runsAt(k);
    const missing = want.filter((r) => !known.has(`${r.scenario}@${r.seed}`));
    if (missing.length > 0) {
      const maxSeeds = this.rungs[this.rungs.length - 1] as number;
      const r = await this.evaluate(c, { only: missing, seeds: maxSeeds, baseline: this.baseline });
      this.stats.runs_simulated += missing.length;
      if (r.error !== undefined) {
        this.failures.set(key, r.error);
        return { ok: false, error: r.error };
      }
      for (const s of r.scenarios) known.set(`${s.scenario}@${s.seed}`, s);
    }
    return { ok: true, runs: want.map((r) => known.get(`${r.scenario}@${r.seed}`) as ScenarioResult) };
  }

  /** The weighted mean score (with its noise) of `c` at rung `k`; a failed candidate scores 0. */
  async scoreAt(c: Candidate, k: number): Promise<Estimate & { error?: EvaluationError }> {
    const s = await this.scoresAt(c, k);
    if (!s.ok) return { mean: 0, se: null, ci95: null, runs: 0, error: s.error };
    return estimate(s.runs.map((r) => ({ scenario: r.scenario, weight: this.weight(r.scenario), value: r.score })));
  }

  /** Races `challenger` against `incumbent` (see the module comment). */
  async race(challenger: Candidate, incumbent: Candidate): Promise<RaceResult> {
    this.stats.comparisons++;
    this.stats.runs_without_racing += 2 * this.runsAt(this.rungs[this.rungs.length - 1] as number).length;
    for (let i = 0; i < this.rungs.length; i++) {
      const k = this.rungs[i] as number;
      const end = (r: RaceResult): RaceResult => {
        this.stats.ended_at[String(k)] = (this.stats.ended_at[String(k)] ?? 0) + 1;
        return r;
      };
      const a = await this.scoresAt(challenger, k);
      if (!a.ok) return end({ verdict: 'failed', seeds: k, difference: null, error: a.error });
      const b = await this.scoresAt(incumbent, k);
      const diffs = a.runs.map((r, j) => ({ scenario: r.scenario, weight: this.weight(r.scenario), value: r.score - (b.ok ? (b.runs[j] as ScenarioResult).score : 0) }));
      const d = estimate(diffs);
      if (diffs.every((x) => Math.abs(x.value) <= TIE_EPS)) return end({ verdict: 'tie', seeds: k, difference: d });
      if (b.ok && this.suite.constraints.length > 0) {
        const f = estimate(a.runs.map((r, j) => ({ scenario: r.scenario, weight: this.weight(r.scenario), value: r.constraint_factor - (b.runs[j] as ScenarioResult).constraint_factor })));
        if (f.mean < -FEASIBILITY_TOLERANCE && f.ci95 !== null && f.ci95[1] < 0) return end({ verdict: 'infeasible', seeds: k, difference: d });
      }
      if (d.ci95 !== null && d.ci95[0] > 0) return end({ verdict: 'better', seeds: k, difference: d });
      if (d.ci95 !== null && d.ci95[1] < 0) return end({ verdict: 'worse', seeds: k, difference: d });
      if (d.ci95 !== null && d.ci95[1] < this.minGain) return end({ verdict: 'no-gain', seeds: k, difference: d });
      if (i === this.rungs.length - 1) {
        this.stats.undecided_at_last_rung++;
        return end({ verdict: 'undecided', seeds: k, difference: d });
      }
      this.stats.seed_rungs_added++;
    }
    throw new Error('unreachable: a race ends at its last rung');
  }
}
