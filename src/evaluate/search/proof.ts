/**
 * A search's proof on the suite's held-out seeds (`--stage validate`: seeds no search has seen). The best and the
 * start (and the suite's baseline, when the start is not it) are scored on the same held-out runs and compared in
 * pairs: the combined score and every objective, and the requests that met their SLO, each with its 95% interval.
 * A verdict states whether the gain is significant; a search that found nothing says so.
 */
import { estimate } from '../noise.js';
import type { Candidate, Estimate, EvaluationResult, ScenarioResult, Suite } from '../types.js';
import { candidateHash, knownPolicyCandidate } from '../evaluate.js';
import type { Evaluator } from './race.js';

/** One paired comparison on the held-out runs. */
export interface PairedFigure {
  /** The best's and the other side's weighted means. */
  readonly best: number;
  readonly other: number;
  /** best - other over the same runs. */
  readonly difference: Estimate;
  /** The difference is significant and in the objective's good direction (or the bad one). */
  readonly better: boolean;
  readonly worse: boolean;
}

export interface Comparison {
  readonly against: string;
  readonly runs: number;
  readonly combined_score: PairedFigure;
  /** Per objective of the suite (raw values: ms, rates, shares). */
  readonly objectives: Readonly<Record<string, PairedFigure & { readonly metric: string; readonly direction: 'maximize' | 'minimize' }>>;
  /** Requests that met their SLO (per run: arrivals x SLO attainment). */
  readonly slo_met_requests: PairedFigure;
}

export interface HeldOutProof {
  readonly seeds: string;
  readonly runs: number;
  readonly start: Readonly<Record<string, unknown>>;
  readonly best: Readonly<Record<string, unknown>>;
  /** The paired improvement of the combined score, best - start. */
  readonly improvement: Estimate;
  readonly significant: boolean;
  readonly verdict: string;
  readonly versus_start: Comparison | null;
  readonly versus_baseline: Comparison | null;
}

const fmt = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(4)}`;

function paired(suite: Suite, a: EvaluationResult, b: EvaluationResult, value: (r: ScenarioResult) => number | undefined, direction: 'maximize' | 'minimize'): PairedFigure {
  const weight = (name: string): number => suite.stage2.find((x) => x.name === name)?.weight ?? 1;
  const other = new Map(b.scenarios.map((r) => [`${r.scenario}@${r.seed}`, r]));
  const diffs: { scenario: string; weight: number; value: number }[] = [];
  const as: { scenario: string; weight: number; value: number }[] = [];
  const bs: { scenario: string; weight: number; value: number }[] = [];
  for (const r of a.scenarios) {
    const o = other.get(`${r.scenario}@${r.seed}`);
    const x = value(r);
    const y = o === undefined ? undefined : value(o);
    if (x === undefined || y === undefined || !Number.isFinite(x) || !Number.isFinite(y)) continue;
    const w = weight(r.scenario);
    diffs.push({ scenario: r.scenario, weight: w, value: x - y });
    as.push({ scenario: r.scenario, weight: w, value: x });
    bs.push({ scenario: r.scenario, weight: w, value: y });
  }
  const d = estimate(diffs);
  const up = d.ci95 !== null && d.ci95[0] > 0;
  const down = d.ci95 !== null && d.ci95[1] < 0;
  return { best: estimate(as).mean, other: estimate(bs).mean, difference: d, better: direction === 'maximize' ? up : down, worse: direction === 'maximize' ? down : up };
}

function compare(suite: Suite, against: string, best: EvaluationResult, other: EvaluationResult): Comparison {
  const objectives: Record<string, PairedFigure & { metric: string; direction: 'maximize' | 'minimize' }> = {};
  for (const o of suite.objectives) {
    objectives[o.name] = { metric: o.metric, direction: o.direction, ...paired(suite, best, other, (r) => r.objectives[o.name], o.direction) };
  }
  const sloMet = (r: ScenarioResult): number => (r.metrics['arrived_requests'] ?? 0) * (r.metrics['slo_attainment'] ?? 0);
  const combined = paired(suite, best, other, (r) => r.score, 'maximize');
  return { against, runs: combined.difference.runs, combined_score: combined, objectives, slo_met_requests: paired(suite, best, other, sloMet, 'maximize') };
}

const side = (r: EvaluationResult): Record<string, unknown> => ({
  combined_score: r.combined_score,
  combined_score_se: r.combined_score_se,
  ...(r.baseline === undefined ? {} : { baseline: r.baseline }),
  ...(r.error === undefined ? {} : { error: r.error }),
});

/** Proves `best` against `start` (and the suite's baseline) on the held-out seeds; see the module comment. */
export async function proveOnHoldout(suite: Suite, start: Candidate, best: Candidate, evaluate: Evaluator): Promise<HeldOutProof> {
  const s = await evaluate(start, { stage: 'validate' });
  const b = candidateHash(best) === candidateHash(start) ? s : await evaluate(best, { stage: 'validate' });
  const versusStart = s.error === undefined && b.error === undefined ? compare(suite, 'start', b, s) : null;
  let versusBaseline: Comparison | null = null;
  if (suite.baseline !== null && b.error === undefined) {
    const baseCandidate = knownPolicyCandidate(suite.baseline);
    const base = candidateHash(baseCandidate) === candidateHash(start) ? s : await evaluate(baseCandidate, { stage: 'validate' });
    if (base.error === undefined) versusBaseline = compare(suite, `baseline ${suite.baseline.id}`, b, base);
  }
  const improvement = versusStart?.combined_score.difference ?? { mean: 0, se: null, ci95: null, runs: 0 };
  const ci = improvement.ci95;
  const significant = ci !== null && ci[0] > 0;
  const failed = s.error ?? b.error;
  const verdict = failed !== undefined
    ? `no held-out proof: ${failed.code}: ${failed.message}`
    : ci === null
      ? `the best differs from the start by ${fmt(improvement.mean)} on the held-out seeds (no interval: a scenario has one held-out seed; raise --seeds)`
      : significant
        ? `the best beats the start on the held-out seeds by ${fmt(improvement.mean)} (95% CI ${fmt(ci[0])} to ${fmt(ci[1])}, ${improvement.runs} paired runs)`
        : `no significant improvement on the held-out seeds: ${fmt(improvement.mean)} (95% CI ${fmt(ci[0])} to ${fmt(ci[1])}, ${improvement.runs} paired runs)`;
  return { seeds: 'held-out (--stage validate)', runs: improvement.runs, start: side(s), best: side(b), improvement, significant, verdict, versus_start: versusStart, versus_baseline: versusBaseline };
}
