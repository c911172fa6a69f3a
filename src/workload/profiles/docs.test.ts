/**
 * Every YAML example in docs/workload.md is a valid spec that generates requests (so the guide cannot drift from
 * the schema), and the extension examples do what the guide says they do.
 */
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import { generateSpecWorkload } from '../spec/generate.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import { countIn, docYamlExamples } from '../../../test/fixtures/workload-profiles.js';

const examples = docYamlExamples();

describe('docs/workload.md examples', () => {
  it('has one example per feature', () => {
    expect(examples.length).toBeGreaterThanOrEqual(11);
  });
  examples.forEach((ex, i) => {
    it(`example ${i + 1} (${ex.heading}) parses and generates`, () => {
      const spec = parseWorkloadSpec(ex.yaml, `docs/workload.md example ${i + 1}`);
      // Capped so the day-long examples stay quick; the cap keeps each client's first requests.
      const cap = spec.numRequests > 0 ? Math.min(spec.numRequests, 3000) : 3000;
      const reqs = generateSpecWorkload(spec, { numRequests: cap, horizon: spec.horizon > 0 ? spec.horizon : MAX_INT64 });
      expect(reqs.length).toBeGreaterThan(0);
    });
  });

  it('the three-phase load test runs at 10, 25 and 5 req/s, then stops', () => {
    const ex = examples.find((e) => e.yaml.includes('multiplier: 2.5'))!;
    const reqs = generateSpecWorkload(parseWorkloadSpec(ex.yaml, 'ex.yaml'), { numRequests: 0, horizon: 2000e6 });
    expect(countIn(reqs, 0, 300) / 300).toBeCloseTo(10, 0);
    expect(countIn(reqs, 300, 600) / 300).toBeCloseTo(25, 0);
    expect(countIn(reqs, 600, 900) / 300).toBeCloseTo(5, 0);
    expect(countIn(reqs, 900, 2000)).toBe(0);
  });
});
