/**
 * Workload specs, generated from the schema's keys with valid and hostile values, then damaged (text mutations,
 * anchors, merge keys, expansion bombs), run through `blis run --workload-spec`: the outcome contract holds.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { applyMutations, expansionBomb, mutations, smallCount, sometimes, weirdText, yamlScalar } from './gen.js';
import { CliWorker, caseDir, checkOutcome, cleanupSandbox, fuzzParams, fuzzTimeout, writeFiles } from './harness.js';

const worker = new CliWorker();
afterAll(async () => {
  await worker.close('workload specs');
  cleanupSandbox();
});

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);

/**
 * Spec text in one of two moods: `clean` draws only values the spec accepts (so the run must succeed or fail on
 * a cross-field rule), `hostile` mixes in nonsense values, damage and expansion bombs.
 */
function specText(hostile: boolean): fc.Arbitrary<string> {
  /** A sensible value, or (hostile) sometimes a bad one, or anything. */
  const value = (good: string[], bad: string[] = []): fc.Arbitrary<string> =>
    hostile ? fc.oneof({ weight: 4, arbitrary: pick(...good) }, { weight: 1, arbitrary: bad.length > 0 ? pick(...bad) : yamlScalar }, { weight: 1, arbitrary: yamlScalar }) : pick(...good);
  const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined });
  const dist: fc.Arbitrary<string> = fc.oneof(
    value(['1', '20', '400'], ['0', '-5']).map((v) => `{type: constant, params: {value: ${v}}}`),
    fc.tuple(value(['50', '200']), value(['10', '0'], ['-5']), value(['1', '10']), value(['400', '1000'], ['5'])).map(([m, sd, lo, hi]) => `{type: gaussian, params: {mean: ${m}, std_dev: ${sd}, min: ${lo}, max: ${hi}}}`),
    value(['100', '30'], ['0', '-1']).map((m) => `{type: exponential, params: {mean: ${m}}}`),
    fc.tuple(value(['4', '3.5']), value(['0.5', '1'], ['-1'])).map(([mu, sd]) => `{type: lognormal, params: {mu: ${mu}, sigma: ${sd}, max: 500}}`),
    pick('{type: empirical, params: {"10": 0.5, "20": 0.5}}'),
    ...(hostile ? [pick('{type: empirical, params: {}}', '{type: zipf}', '{}', 'constant', '[1, 2]', '{type: constant}')] : []),
  );
  const client = (i: number, sloAll: string | undefined): fc.Arbitrary<string> =>
    fc
      .record({
        id: hostile ? fc.oneof(pick(`c${i}`, `c${i}`, 'c0', ''), weirdText.map((t) => JSON.stringify(t))) : pick(`c${i}`),
        rate: value(['1', '0.5', '2'], ['0', '-1']),
        process: hostile ? fc.oneof(pick('poisson', 'gamma', 'weibull', 'constant', ''), weirdText.map((t) => JSON.stringify(t))) : pick('poisson', 'gamma', 'weibull', 'constant'),
        cv: opt(value(['1', '2'], ['0', '20'])),
        input: dist,
        output: dist,
        // Clean specs set slo_class on every source or on none (a rule of the format).
        slo: hostile ? opt(pick('critical', 'standard', 'batch', 'realtime', 'gold')) : fc.constant(sloAll),
        streaming: opt(value(['true', 'false'], ['3'])),
        prefix: opt(value(['16', '0'], ['-4'])),
        rounds: opt(value(['2', '3'], ['0', '-2'])),
        profile: opt(
          fc.tuple(value(['1', '0.5'], ['0', '-1']), value(['2', '0']), value(['0', '1']), value(['10', '3'], ['0'])).map(
            ([d, m, a, b]) => `    load_profile:\n      default_multiplier: ${d}\n      segments:\n        - {start_s: ${a}, end_s: ${b}, kind: constant, multiplier: ${m}}\n`,
          ),
        ),
        extra: opt(hostile ? pick('    bogus: 1\n', '    timeout: -5\n', '    think_time_us: 1000\n', '    network: {rtt_ms: 5}\n', '    <<: {tenant_id: t}\n') : pick('    tenant_id: t1\n', '    timeout: 5000000\n', '    <<: {tenant_id: t}\n')),
      })
      .map((c) => {
        let t = `  - id: ${c.id}\n    rate_fraction: ${c.rate}\n    arrival: {process: ${c.process}${c.cv === undefined ? '' : `, cv: ${c.cv}`}}\n`;
        t += `    input_distribution: ${c.input}\n    output_distribution: ${c.output}\n`;
        if (c.slo !== undefined) t += `    slo_class: ${c.slo}\n`;
        if (c.streaming !== undefined) t += `    streaming: ${c.streaming}\n`;
        if (c.prefix !== undefined) t += `    prefix_group: g\n    prefix_length: ${c.prefix}\n`;
        if (c.rounds !== undefined) t += `    reasoning:\n      multi_turn: {max_rounds: ${c.rounds}, think_time_us: 1000}\n`;
        else if (c.profile !== undefined) t += c.profile;
        if (c.extra !== undefined) t += c.extra;
        return t;
      });
  return (hostile ? fc.constant(undefined) : opt(pick('critical', 'standard', 'batch'))).chain((sloAll) => fc
    .record({
      version: opt(value(['"2"', '"1"', '2'], ['"3"'])),
      rate: value(['10', '1', '50'], ['0', '-3']),
      numRequests: opt(value(['20', '5'], ['0', '-1'])),
      horizon: opt(value(['500000', '2000000'], ['0', '-1'])),
      seed: opt(value(['7', '-1', '9223372036854775807'], ['99999999999999999999'])),
      clients: fc.integer({ min: hostile ? 0 : 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => client(i, sloAll)))),
      cohort: opt(value(['3', '1'], ['0', '-1']).map((n) => `cohorts:\n  - id: h\n    population: ${n}\n${sloAll === undefined ? '' : `    slo_class: ${sloAll}\n`}    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 10}}\n    output_distribution: {type: constant, params: {value: 5}}\n`)),
      goodput: opt(value(['100', '0'], ['-1']).map((t) => `goodput_slo_targets:\n  critical: {ttft_ms: ${t}}\n`)),
      bomb: hostile ? sometimes(fc.tuple(expansionBomb, pick('top', 'bogus', 'goodput_slo_targets')), 6) : fc.constant(undefined),
      damage: hostile ? mutations : fc.constant([]),
    })
    .map((s) => {
      let t = '';
      if (s.version !== undefined) t += `version: ${s.version}\n`;
      t += `aggregate_rate: ${s.rate}\n`;
      // Valid runs need a bound: the spec's own num_requests or horizon, or the flag (see below).
      if (s.numRequests !== undefined) t += `num_requests: ${s.numRequests}\n`;
      if (s.horizon !== undefined) t += `horizon: ${s.horizon}\n`;
      if (s.seed !== undefined) t += `seed: ${s.seed}\n`;
      if (s.bomb !== undefined) {
        const [bomb, where] = s.bomb;
        t += where === 'top' ? bomb : `${where}:\n${bomb.replace(/^/gm, '  ').trimEnd()}\n`;
      }
      if (s.clients.length > 0) t += `clients:\n${s.clients.join('')}`;
      if (s.cohort !== undefined) t += s.cohort;
      if (s.goodput !== undefined) t += s.goodput;
      return applyMutations(t, s.damage);
    }));
}

describe('fuzz: workload specs', () => {
  it('every spec ends in a run or one located error line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.tuple(specText(false), fc.integer({ min: 1, max: 30 }).map(String)), fc.tuple(specText(true), smallCount)), fc.boolean(), async ([text, n], capFlag) => {
        const dir = caseDir();
        const files = writeFiles(dir, { 'spec.yaml': text });
        // An explicit request cap keeps legitimate runs short; without it the spec's own (small) bounds apply.
        const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--workload-spec', files['spec.yaml']!, ...(capFlag ? ['--num-requests', n] : [])];
        checkOutcome(await worker.run(argv, dir), { 'spec.yaml': text });
      }),
      fuzzParams('workload specs', 150),
    );
  }, fuzzTimeout(120_000));
});
