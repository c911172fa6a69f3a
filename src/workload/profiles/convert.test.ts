/**
 * `blis convert` conversions. Presets: the converted spec generates exactly the requests of the distribution
 * workload it stands for (same seed → same requests, every field). inference-perf: same clients and request
 * shapes; per-stage rates equal in distribution (and exactly equal for multi-turn single-stage sources).
 */
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import { generateDistributionWorkload } from '../distribution.js';
import { DEFAULT_DISTRIBUTION, WORKLOAD_PRESETS } from '../presets.js';
import { loadSpecWorkloadForRun } from '../spec/run.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import { countIn, requestView, withinPoisson } from '../../../test/fixtures/workload-profiles.js';
import { ConvertError, composeSpecs, composeSpecsYaml, convertInferencePerf, convertPreset } from './convert.js';

describe('convert preset: the same requests as the distribution workload', () => {
  const cases = [
    { name: 'chatbot', rate: 5, numRequests: 300, seed: 42n },
    { name: 'contentgen', rate: 0.7, numRequests: 120, seed: 7n },
    { name: 'summarization', rate: 12.5, numRequests: 200, seed: -3n },
    { name: 'multidoc', rate: 1, numRequests: 60, seed: 2n ** 62n },
    { name: 'distribution', rate: 33, numRequests: 500, seed: 123n },
    { name: 'distribution', rate: 10, numRequests: 200, seed: 5n, prefixTokens: 64 },
    { name: 'chatbot', rate: 3, numRequests: 100, seed: 9n, timeoutSecs: 20 },
    { name: 'chatbot', rate: 3, numRequests: 100, seed: 9n, timeoutSecs: -1 },
  ] as const;
  for (const c of cases) {
    it(`${c.name} at ${c.rate} req/s, seed ${c.seed}${'prefixTokens' in c ? `, prefix ${c.prefixTokens}` : ''}${'timeoutSecs' in c ? `, timeout ${c.timeoutSecs}` : ''}`, () => {
      const shape = c.name === 'distribution' ? DEFAULT_DISTRIBUTION : WORKLOAD_PRESETS[c.name];
      const timeoutSecs = 'timeoutSecs' in c ? c.timeoutSecs : 300;
      const source = generateDistributionWorkload({
        seed: c.seed,
        rate: c.rate,
        numRequests: c.numRequests,
        horizon: MAX_INT64,
        prefixTokens: 'prefixTokens' in c ? c.prefixTokens : shape.prefixTokens,
        prompt: shape.prompt,
        output: shape.output,
        timeoutUs: timeoutSecs > 0 ? timeoutSecs * 1e6 : 0,
      });
      const yaml = convertPreset(c);
      // As `blis run --workload-spec converted.yaml` sees it: no flags, everything from the spec.
      const converted = loadSpecWorkloadForRun(yaml, 'converted.yaml', {}).requests;
      expect(converted.length).toBe(c.numRequests);
      expect(converted.map(requestView)).toEqual(source.map(requestView));
    });
  }

  it('writes the reference converter\'s layout', () => {
    expect(convertPreset({ name: 'chatbot', rate: 2, numRequests: 10 })).toBe(`version: "2"
seed: 42
category: language
clients:
    - id: distribution
      tenant_id: ""
      slo_class: ""
      rate_fraction: 1
      arrival:
        process: constant
      input_distribution:
        type: gaussian
        params:
            max: 800
            mean: 256
            min: 2
            std_dev: 100
      output_distribution:
        type: gaussian
        params:
            max: 1024
            mean: 256
            min: 1
            std_dev: 100
      streaming: false
      timeout: 300000000
aggregate_rate: 2
num_requests: 10
`);
  });

  it('rejects bad input with the flag named', () => {
    expect(() => convertPreset({ name: 'chatty', rate: 1, numRequests: 1 })).toThrow(/--name: unknown preset "chatty"; use one of distribution, chatbot/);
    expect(() => convertPreset({ name: 'chatbot', rate: 0, numRequests: 1 })).toThrow(ConvertError);
    expect(() => convertPreset({ name: 'chatbot', rate: Number.NaN, numRequests: 1 })).toThrow(/--rate must be a finite value > 0/);
    expect(() => convertPreset({ name: 'chatbot', rate: 1, numRequests: 0 })).toThrow(/--num-requests must be > 0, got 0/);
  });
});

const ipSpec = (stages: string, multiTurn = false, users = 3): string => `version: "2"
seed: 17
inference_perf:
  stages: ${stages}
  shared_prefix:
    num_unique_system_prompts: 2
    num_users_per_system_prompt: ${users}
    system_prompt_len: 50
    question_len: 20
    output_len: 10
    enable_multi_turn_chat: ${multiTurn}
`;

function runSpec(yaml: string): ReturnType<typeof loadSpecWorkloadForRun>['requests'] {
  const spec = parseWorkloadSpec(yaml, 'x.yaml');
  return loadSpecWorkloadForRun(yaml, 'x.yaml', spec.numRequests > 0 ? {} : { numRequests: 1_000_000 }).requests;
}

describe('convert inference-perf: explicit clients with equivalent load', () => {
  it('one stage: the expansion\'s clients, bounded to the stage, capped at the source\'s count', () => {
    const src = ipSpec('[{rate: 20, duration: 100}]');
    const yaml = convertInferencePerf(src, 'ip.yaml');
    const spec = parseWorkloadSpec(yaml, 'converted.yaml');
    expect(spec.inferencePerf).toBeNull();
    expect(spec.numRequests).toBe(2000);
    expect(spec.clients.map((c) => [c.id, c.tenantId, c.prefixGroup, c.prefixLength, c.sloClass])).toEqual(
      [0, 1].flatMap((p) => [0, 1, 2].map((u) => [`prompt-${p}-user-${u}`, `prompt-${p}`, `prompt-${p}`, 50, 'standard'])),
    );
    const source = runSpec(src);
    const converted = runSpec(yaml);
    expect(source).toHaveLength(2000);
    expect(converted.length).toBeLessThanOrEqual(2000);
    expect(converted.length).toBeGreaterThan(2000 - 4.5 * Math.sqrt(2000));
    for (const id of ['prompt-0-user-0', 'prompt-1-user-2']) {
      expect(withinPoisson(converted.filter((r) => r.clientId === id).length, 2000 / 6)).toBe(true);
    }
    expect(converted.every((r) => r.arrivalTime < 100e6)).toBe(true);
    const shape = (r: (typeof converted)[number]): unknown[] => [r.inputLen, r.outputLen, r.prefixLength, r.tenantId];
    expect(new Set(converted.map((r) => JSON.stringify(shape(r))))).toEqual(new Set(source.map((r) => JSON.stringify(shape(r)))));
  });

  it('several stages: a constant load_profile segment per stage restores each stage\'s rate', () => {
    const src = ipSpec('[{rate: 10, duration: 60}, {rate: 40, duration: 60}, {rate: 5, duration: 60}]');
    const yaml = convertInferencePerf(src, 'ip.yaml');
    const spec = parseWorkloadSpec(yaml, 'converted.yaml');
    expect(spec.loadProfile?.segments.map((s) => [s.startS, s.endS, s.multiplier])).toEqual([[0, 60, 10 / 55], [60, 120, 40 / 55], [120, 180, 5 / 55]]);
    const source = runSpec(src);
    const converted = runSpec(yaml);
    for (const [from, to, rate] of [[0, 60, 10], [60, 120, 40], [120, 180, 5]] as const) {
      expect(withinPoisson(countIn(source, from, to), rate * 60)).toBe(true);
      expect(withinPoisson(countIn(converted, from, to), rate * 60), `stage [${from}, ${to})`).toBe(true);
    }
  });

  it('multi-turn, one stage: nothing needed a custom sampler, so the requests are identical', () => {
    const src = ipSpec('[{rate: 4, duration: 30}]', true);
    const yaml = convertInferencePerf(src, 'ip.yaml');
    expect(parseWorkloadSpec(yaml, 'c.yaml').category).toBe('reasoning');
    const source = runSpec(src);
    expect(source.length).toBeGreaterThan(0);
    expect(runSpec(yaml).map(requestView)).toEqual(source.map(requestView));
  });

  it('refuses a spec without an inference_perf section, and reports spec errors located', () => {
    const plain = 'aggregate_rate: 1\nnum_requests: 1\nclients:\n  - {id: a, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 1}}, output_distribution: {type: constant, params: {value: 1}}}\n';
    expect(() => convertInferencePerf(plain, 'plain.yaml')).toThrow(/plain.yaml does not contain an inference_perf section/);
    expect(() => convertInferencePerf(ipSpec('[{rate: -1, duration: 10}]'), 'ip.yaml')).toThrow(/^ip\.yaml:4:19: inference_perf\.stages\[0\]\.rate: /);
  });
});

describe('composeSpecs', () => {
  const a = 'version: "2"\nseed: 3\ncategory: language\naggregate_rate: 12\nnum_requests: 10\nclients:\n  - {id: a1, rate_fraction: 0.7, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 5}}, output_distribution: {type: constant, params: {value: 5}}}\n  - {id: a2, rate_fraction: 0.3, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 5}}, output_distribution: {type: constant, params: {value: 5}}}\n';
  const b = 'version: "2"\nseed: 9\naggregate_rate: 7.5\nclients:\n  - {id: b1, rate_fraction: 2, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 5}}, output_distribution: {type: constant, params: {value: 5}}}\n';
  it('keeps every client\'s absolute rate: fractions scaled by their spec\'s share of the summed rate', () => {
    const m = composeSpecs([{ text: a, file: 'a.yaml' }, { text: b, file: 'b.yaml' }]);
    expect(m.aggregateRate).toBe(19.5);
    expect(m.clients.map((c) => c.id)).toEqual(['a1', 'a2', 'b1']);
    const absolute = m.clients.map((c) => c.rateFraction * m.aggregateRate);
    [0.7 * 12, 0.3 * 12, 2 * 7.5].forEach((r, i) => expect(absolute[i]).toBeCloseTo(r, 12));
    expect(m.clients[0]!.rateFraction).toBeCloseTo(0.7 * (12 / 19.5), 15);
    expect(m.clients[2]!.rateFraction).toBeCloseTo(2 * (7.5 / 19.5), 15);
    expect(m.seed).toBe(0n);
    expect(m.numRequests).toBe(0);
    expect(m.category).toBe('language');
  });
  it('specs of different categories: merged as the reference merges them (first category kept, cohorts dropped) with a warning; refused only under corrected semantics', () => {
    const cohort = '\ncohorts:\n  - {id: crowd, population: 3, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 5}}, output_distribution: {type: constant, params: {value: 5}}}\n';
    const r = b.replace('aggregate_rate: 7.5', 'category: reasoning\naggregate_rate: 7.5') + cohort;
    const warnings: string[] = [];
    const m = composeSpecs([{ text: a, file: 'a.yaml' }, { text: r, file: 'r.yaml' }], { warn: (w) => warnings.push(w) });
    expect(m.category).toBe('language');
    expect(m.cohorts).toEqual([]);
    expect(m.clients.map((c) => c.id)).toEqual(['a1', 'a2', 'b1']);
    expect(warnings).toEqual([
      'compose: as in the reference, the composed spec keeps only the clients and the first spec\'s category ("language"); dropped: seed 3, num_requests 10 of a.yaml; category "reasoning", 1 cohort, seed 9 of r.yaml (--semantics corrected keeps the cohorts, goodput targets, load profiles, seed, horizon and num_requests, and refuses different categories)',
    ]);
    expect(() => composeSpecs([{ text: a, file: 'a.yaml' }, { text: r, file: 'r.yaml' }], { corrected: true })).toThrow(/a\.yaml has category "language" but r\.yaml has "reasoning"/);
    // Nothing dropped: no warning.
    const quiet: string[] = [];
    composeSpecs([{ text: b, file: 'b.yaml' }, { text: b.replace('seed: 9', 'seed: 0').replace('id: b1', 'id: b2'), file: 'c.yaml' }], { warn: (w) => quiet.push(w) });
    expect(quiet).toEqual(['compose: as in the reference, the composed spec keeps only the clients and the first spec\'s category (none); dropped: seed 9 of b.yaml (--semantics corrected keeps the cohorts, goodput targets, load profiles, seed, horizon and num_requests, and refuses different categories)']);
  });

  it('refuses specs that cannot be merged, naming the composed spec', () => {
    const withClass = a.replace('id: a1,', 'id: a1, slo_class: critical,').replace('id: a2,', 'id: a2, slo_class: batch,');
    expect(() => composeSpecsYaml([{ text: withClass, file: 'a.yaml' }, { text: b, file: 'b.yaml' }])).toThrow(/composed spec/);
    expect(() => composeSpecs([])).toThrow(/at least one --from/);
  });
});
