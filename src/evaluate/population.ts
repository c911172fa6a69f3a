/**
 * A population evaluated on the same suite, scenarios and seeds (common random numbers: comparisons are
 * paired), ranked by Pareto dominance over the objective scores with NSGA-II crowding distances.
 */
import { crowdingDistances, paretoRanks } from './fitness.js';
import type { Candidate, EvaluationResult, Suite } from './types.js';

export interface RankedResult extends EvaluationResult {
  readonly pareto_rank: number;
  readonly crowding_distance: number | null;
}

export interface PopulationResult {
  readonly suite: string;
  readonly objectives: readonly string[];
  readonly candidates: readonly RankedResult[];
  /** Candidate ids per front, best front first. */
  readonly fronts: readonly (readonly string[])[];
}

export async function evaluatePopulation(candidates: readonly Candidate[], suite: Suite, evaluate: (c: Candidate) => Promise<EvaluationResult>): Promise<PopulationResult> {
  const results = await Promise.all(candidates.map((c) => evaluate(c)));
  return rankPopulation(results, suite);
}

/** Ranks finished results (failed candidates score 0 everywhere, so they sit in the last front). */
export function rankPopulation(results: readonly EvaluationResult[], suite: Suite): PopulationResult {
  const names = suite.objectives.map((o) => o.name);
  const points = results.map((r) => names.map((n) => r.scores[n] ?? 0));
  const ranks = paretoRanks(points);
  const crowd = crowdingDistances(points, ranks);
  const ranked = results.map((r, i) => ({ ...r, pareto_rank: ranks[i] as number, crowding_distance: Number.isFinite(crowd[i]) ? (crowd[i] as number) : null }));
  const fronts: string[][] = [];
  ranked.forEach((r) => {
    while (fronts.length < r.pareto_rank) fronts.push([]);
    (fronts[r.pareto_rank - 1] as string[]).push(r.candidate.id);
  });
  return { suite: suite.name, objectives: names, candidates: ranked, fronts };
}
