/**
 * `blis suites check`: does a suite tell policies apart? Its baseline, known-good and known-bad policies are scored
 * on seed sets the suite does not use for scoring (held-out seed set j of every stage-2 scenario: suites.ts
 * holdoutSeedSet), and compared in pairs (same seed set: common random numbers). A suite passes when every
 * known-bad and cheating policy scores strictly below the baseline on every seed set, each known-good policy beats
 * the baseline by at least 3 standard deviations of the paired difference, and no policy saturates the scale.
 */
import { ConfigError } from '../sim/config-error.js';
import { knownPolicyCandidate } from './evaluate.js';
import { holdoutSeedSet } from './suites.js';
import type { EvaluateOptions } from './evaluate.js';
import type { Candidate, EvaluationResult, KnownPolicy, Suite } from './types.js';

/** A mean score at or above this leaves no room to tell a better policy apart. */
export const SATURATION = 0.98;
/** Known-good policies must beat the baseline by this many standard deviations of the paired difference. */
export const GOOD_MARGIN_SDS = 3;

export interface PolicyFigures {
  readonly id: string;
  readonly kind: KnownPolicy['kind'];
  readonly description: string;
  /** Combined score per seed set. */
  readonly scores: readonly number[];
  readonly mean: number;
  readonly sd: number;
  /** The error of a policy that failed (scored 0), e.g. a candidate that throws. */
  readonly error: string | null;
  /** Against the baseline, per seed set (absent for the baseline itself). */
  readonly difference?: { readonly mean: number; readonly sd: number; readonly min: number; readonly max: number; readonly below_sets: number; readonly above_sets: number };
  /** What this policy must show, and whether it does. */
  readonly check: { readonly requirement: string; readonly passed: boolean };
}

export interface SuiteCheck {
  readonly suite: string;
  readonly seed_sets: number;
  readonly seeds: Readonly<Record<string, readonly (readonly number[])[]>>;
  readonly policies: readonly PolicyFigures[];
  readonly saturation: { readonly best_mean: number; readonly threshold: number; readonly passed: boolean };
  readonly passed: boolean;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const sd = (xs: readonly number[]): number => {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) * (b - m), 0) / (xs.length - 1));
};

/** The suite as scored on held-out seed set `j`: stage 2 only, each scenario on its set j seeds. */
export function seedSetSuite(suite: Suite, j: number): Suite {
  return { ...suite, stage1: [], stage2: suite.stage2.map((s) => ({ ...s, seeds: holdoutSeedSet(s, j), holdoutSeeds: [] })) };
}

/**
 * Checks `suite` on `seedSets` held-out seed sets; `evaluate` scores one candidate on one suite (the CLI passes its
 * pool and cache). Throws ConfigError for a suite without a baseline.
 */
export async function checkSuite(
  suite: Suite,
  seedSets: number,
  evaluate: (c: Candidate, s: Suite, o: EvaluateOptions) => Promise<EvaluationResult>,
): Promise<SuiteCheck> {
  const base = suite.baseline;
  if (base === null) throw new ConfigError('bad-suite', `suite ${suite.name} declares no baseline: blis suites check compares its known policies with one (add baseline: to the suite)`);
  const sets = Array.from({ length: seedSets }, (_, j) => seedSetSuite(suite, j));
  const policies = [base, ...suite.knownGood, ...suite.knownBad];
  const results = await Promise.all(policies.map((p) => Promise.all(sets.map((s) => evaluate(knownPolicyCandidate(p), s, { stage: 2, baseline: false })))));
  const scoresOf = (i: number): number[] => (results[i] as EvaluationResult[]).map((r) => r.combined_score);
  const baseScores = scoresOf(0);
  const baseError = (results[0] as EvaluationResult[]).find((r) => r.error !== undefined)?.error;
  if (baseError !== undefined) throw new ConfigError('bad-suite', `suite ${suite.name}: its baseline ${base.id} fails (${baseError.code}): ${baseError.message}`);
  const figures: PolicyFigures[] = policies.map((p, i) => {
    const scores = scoresOf(i);
    const err = (results[i] as EvaluationResult[]).find((r) => r.error !== undefined)?.error;
    const common = { id: p.id, kind: p.kind, description: p.description, scores, mean: mean(scores), sd: sd(scores), error: err === undefined ? null : `${err.code}: ${err.message}` };
    if (i === 0) return { ...common, check: { requirement: 'the baseline', passed: true } };
    const d = scores.map((x, j) => x - (baseScores[j] as number));
    const difference = { mean: mean(d), sd: sd(d), min: Math.min(...d), max: Math.max(...d), below_sets: d.filter((x) => x < 0).length, above_sets: d.filter((x) => x > 0).length };
    if (p.kind === 'good') {
      const passed = difference.mean > 0 && difference.mean >= GOOD_MARGIN_SDS * difference.sd;
      return { ...common, difference, check: { requirement: `beats the baseline by >= ${GOOD_MARGIN_SDS} sd of the paired difference`, passed } };
    }
    return { ...common, difference, check: { requirement: 'scores strictly below the baseline on every seed set', passed: difference.below_sets === seedSets } };
  });
  const best = Math.max(...figures.map((f) => f.mean));
  const saturation = { best_mean: best, threshold: SATURATION, passed: best < SATURATION };
  return {
    suite: suite.name,
    seed_sets: seedSets,
    seeds: Object.fromEntries(suite.stage2.map((s) => [s.name, sets.map((x) => (x.stage2.find((y) => y.name === s.name) as { seeds: readonly number[] }).seeds)])),
    policies: figures,
    saturation,
    passed: saturation.passed && figures.every((f) => f.check.passed),
  };
}
