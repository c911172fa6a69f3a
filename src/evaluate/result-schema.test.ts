import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { candidateFromBundle, candidateFromCode } from './candidate.js';
import { evaluateCandidate } from './evaluate.js';
import { rankPopulation } from './population.js';
import { evaluateOutputJsonSchema, evaluationResultSchema, populationResultSchema } from './result-schema.js';
import { findSuite } from './suites.js';

const roundTrip = (x: unknown): unknown => JSON.parse(JSON.stringify(x)) as unknown;

describe('evaluate output schema', () => {
  it('the committed JSON Schema file is the one generated from the schemas (npm run schema)', () => {
    const file = fileURLToPath(new URL('../../docs/evaluate-result.schema.json', import.meta.url));
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(evaluateOutputJsonSchema(), null, 2)}\n`);
  });

  it('real results, a scored failure and a ranked population all validate; a wrong shape does not', async () => {
    const suite = findSuite('routing-prefix-heavy')!;
    const good = await evaluateCandidate(candidateFromBundle('good.yaml', 'routing: {type: parameterized, template: weighted_affinity_routing, parameters: {}}\n'), suite, { stage: 1 });
    const bad = await evaluateCandidate(candidateFromCode('bad.js', 'function route(r, s) { return "nowhere"; }', 'routing'), suite, { stage: 1 });
    expect(bad.error).toBeDefined();
    for (const r of [good, bad]) expect(evaluationResultSchema.safeParse(roundTrip(r)).success).toBe(true);
    expect(populationResultSchema.safeParse(roundTrip(rankPopulation([good, bad], suite))).success).toBe(true);
    const broken = { ...(roundTrip(good) as Record<string, unknown>), combined_score: 1.5 };
    expect(evaluationResultSchema.safeParse(broken).success).toBe(false);
    const extra = { ...(roundTrip(good) as Record<string, unknown>), surprise: 1 };
    expect(evaluationResultSchema.safeParse(extra).success).toBe(false);
  });
});
