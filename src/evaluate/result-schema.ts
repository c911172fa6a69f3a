/**
 * The output schema of `blis evaluate`, as zod schemas that mirror the result types in types.ts and
 * population.ts. The compile-time checks at the bottom fail `tsc` when a type and its schema drift apart, so
 * the JSON Schema file generated from these (docs/evaluate-result.schema.json, `npm run schema`) always
 * describes what the code emits. Adapters and searches can validate results against that file.
 */
import { z } from 'zod';
import type { RankedResult, PopulationResult } from './population.js';
import type { EvaluationError, EvaluationResult, ScenarioResult, SimulationKey } from './types.js';

const numbers = z.record(z.string(), z.number());

export const simulationKeySchema = z
  .object({
    policy_id: z.string().describe('candidate id (bundle metadata.id or file name)'),
    workload_seed: z.number().int(),
    sim_seed: z.number().int(),
    jitter_seed: z.number().int().describe('no timing noise is modelled: always 0'),
  })
  .strict()
  .describe('policy-search-design §13: the same key gives bit-identical metrics, traces and decisions');

export const constraintCheckSchema = z
  .object({
    name: z.string(),
    value: z.number().nullable().describe('the run\'s value of the metric (null: none, e.g. a latency with no completed request)'),
    bound: z.number().describe('the bound the value was held to (relative constraints: the baseline\'s value on the same run times the ratio)'),
    satisfied: z.boolean(),
    factor: z.number().min(0).max(1).describe('the run\'s score is multiplied by this: 1 - the relative shortfall'),
  })
  .strict();

const estimateSchema = z
  .object({
    mean: z.number(),
    se: z.number().nullable().describe('standard error over seeds (null when a scenario ran a single seed)'),
    ci95: z.array(z.number()).length(2).nullable().describe('95% confidence interval (Student\'s t); null without a standard error'),
    runs: z.number().int(),
  })
  .strict();

export const baselineComparisonSchema = z
  .object({
    id: z.string().describe('the suite\'s baseline policy'),
    combined_score: z.number().min(0).max(1).describe('the baseline\'s combined score on the same runs'),
    difference: estimateSchema.describe('paired difference candidate - baseline of the run scores (same scenarios and seeds)'),
    wins: z.number().int(),
    losses: z.number().int(),
    ties: z.number().int(),
  })
  .strict();

export const scenarioResultSchema = z
  .object({
    scenario: z.string(),
    seed: z.number().int(),
    key: simulationKeySchema,
    metrics: numbers.describe('RawMetrics (policy-search-design §9), flattened; per SLO class as <metric>@<class> (docs/evaluate.md)'),
    objectives: numbers.describe('raw objective values of this run (a latency objective without enough completed requests has none)'),
    scores: numbers.describe('normalised objective scores in [0, 1] of this run'),
    score: z.number().min(0).max(1).describe("this run's combined score: objective_score times constraint_factor"),
    objective_score: z.number().min(0).max(1).describe('the weighted mean of the objective scores, before constraints'),
    constraint_factor: z.number().min(0).max(1).describe('the product of the constraints\' factors (1: every constraint met)'),
    constraints: z.array(constraintCheckSchema).describe('each constraint\'s verdict on this run'),
    anomalies: numbers.describe('anomaly counts by type'),
    report_data: z.unknown().optional().describe('the run\'s report data (library option reportData; never in blis evaluate\'s stdout): what the HTML report draws, see docs/report.md'),
  })
  .strict();

export const evaluationErrorSchema = z
  .object({
    code: z.string().describe('SANDBOX_* / POLICY_* / a config error code'),
    message: z.string(),
  })
  .strict();

const evaluationResultShape = {
  combined_score: z.number().min(0).max(1).describe('weighted mean over the runs of each run\'s score (objective scores times constraint factors); 0 for a failed candidate'),
  combined_score_se: z.number().nullable().describe('standard error of combined_score over seeds (null when a scenario ran a single seed, or the candidate failed)'),
  combined_score_ci95: z.array(z.number()).length(2).nullable().describe('95% confidence interval of combined_score'),
  baseline: baselineComparisonSchema.optional().describe('the paired comparison with the suite\'s baseline (absent without one, for the baseline itself, or for a failed candidate)'),
  constraints: z.record(z.string(), z.object({ violated_runs: z.number().int(), mean_factor: z.number() }).strict()).describe('per constraint: runs that violated it and the mean factor it applied'),
  objectives: numbers.describe('raw objective values, weighted means over the runs that have one; empty for a failed candidate'),
  scores: numbers.describe('normalised objective scores in [0, 1], weighted means over the runs'),
  features: numbers.describe('MAP-Elites feature values (raw continuous numbers)'),
  scenarios: z.array(scenarioResultSchema),
  artifacts: z.record(z.string(), z.string()).describe('reflection text: summary (trace summary), worst_decisions, ...'),
  candidate: z.object({ id: z.string(), hash: z.string() }).strict(),
  suite: z
    .object({
      name: z.string(),
      stage: z.union([z.literal(1), z.literal(2), z.literal('validate')]),
      stages_run: z.array(z.union([z.number().int(), z.literal('validate')])),
    })
    .strict(),
  blis_version: z.string(),
  error: evaluationErrorSchema.optional().describe('present when the candidate failed: combined_score is 0 and the reason is the feedback'),
};

export const evaluationResultSchema = z.object(evaluationResultShape).strict().describe('blis evaluate --candidate: one candidate on one suite');

export const rankedResultSchema = z
  .object({
    ...evaluationResultShape,
    pareto_rank: z.number().int().min(1).describe('1 = the non-dominated front'),
    crowding_distance: z.number().nullable().describe('NSGA-II crowding distance; null for an infinite distance (a front boundary)'),
  })
  .strict();

export const populationResultSchema = z
  .object({
    suite: z.string(),
    objectives: z.array(z.string()),
    candidates: z.array(rankedResultSchema),
    fronts: z.array(z.array(z.string())).describe('candidate ids per Pareto front, best front first'),
  })
  .strict()
  .describe('blis evaluate --population: every candidate on the same scenarios and seeds, ranked');

/** JSON Schema (draft 2020-12) of one evaluation result and of a population result. */
export function evaluateOutputJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'blis evaluate output',
    description: 'The JSON document `blis evaluate` prints: one result (--candidate) or a ranked population (--population).',
    oneOf: [z.toJSONSchema(evaluationResultSchema, { target: 'draft-2020-12' }), z.toJSONSchema(populationResultSchema, { target: 'draft-2020-12' })].map(
      (s) => {
        const { $schema: _drop, ...rest } = s as Record<string, unknown>;
        return rest;
      },
    ),
  };
}

// Compile-time: each schema's type and the hand-written type are assignable both ways.
type Mutable<T> = T extends readonly (infer U)[] ? Mutable<U>[] : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _checks: [
  Same<z.infer<typeof simulationKeySchema>, Mutable<SimulationKey>>,
  Same<z.infer<typeof scenarioResultSchema>, Mutable<ScenarioResult>>,
  Same<z.infer<typeof evaluationErrorSchema>, Mutable<EvaluationError>>,
  Same<z.infer<typeof evaluationResultSchema>, Mutable<EvaluationResult>>,
  Same<z.infer<typeof rankedResultSchema>, Mutable<RankedResult>>,
  Same<z.infer<typeof populationResultSchema>, Mutable<PopulationResult>>,
] = [true, true, true, true, true, true];
void _checks;
