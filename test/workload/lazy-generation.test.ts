/**
 * The lazy spec generator (merge of client streams, sessions built only as far as they can survive) against the
 * pre-generating oracle it replaced: the same requests, in the same order, token for token, over random specs
 * mixing every client kind, caps and horizons.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../src/domain/units.js';
import type { Draft } from '../../src/workload/spec/draft.js';
import { generateSpecDrafts } from '../../src/workload/spec/generate.js';
import { parseWorkloadSpec } from '../../src/workload/spec/parse.js';
import { eagerSpecDrafts } from './eager-spec-generate.js';

const ARRIVALS = ['{process: poisson}', '{process: gamma, cv: 2.5}', '{process: weibull, cv: 0.6}', '{process: constant}'];
const LENGTHS = [
  '{type: constant, params: {value: 7}}',
  '{type: gaussian, params: {mean: 20, std_dev: 8, min: 1, max: 40}}',
  '{type: exponential, params: {mean: 12, max: 50}}',
  '{type: empirical, params: {"3": 0.5, "9": 0.5}}',
];

interface ClientArb {
  kind: 'plain' | 'prefix' | 'window' | 'multimodal' | 'session' | 'single' | 'closed' | 'bursty' | 'abusive';
  arrival: number;
  input: number;
  output: number;
  weight: number;
  rounds: number;
  accumulate: boolean;
}

function clientYaml(c: ClientArb, i: number): string {
  const lines = [
    `  - id: c${i}`,
    `    tenant_id: t${i % 2}`,
    `    rate_fraction: ${c.weight}`,
    `    arrival: ${ARRIVALS[c.arrival]}`,
    `    input_distribution: ${LENGTHS[c.input]}`,
    `    output_distribution: ${LENGTHS[c.output]}`,
  ];
  if (c.kind === 'prefix') lines.push('    prefix_group: shared', `    prefix_length: ${5 + i}`);
  if (c.kind === 'window') lines.push('    lifecycle:', '      windows: [{start_us: 200000, end_us: 900000}, {start_us: 1500000, end_us: 2500000}]');
  if (c.kind === 'multimodal') {
    lines.push('    multimodal:', `      text_distribution: ${LENGTHS[c.input]}`, '      image_distribution: {type: constant, params: {value: 5}}', '      image_count_distribution: {type: empirical, params: {"0": 0.5, "2": 0.5}}');
  }
  if (c.kind === 'session' || c.kind === 'single' || c.kind === 'closed') {
    lines.push('    reasoning:', '      multi_turn:', `        max_rounds: ${c.rounds}`, `        think_time_us: ${c.rounds * 1000}`, `        context_growth: ${c.accumulate ? 'accumulate' : '""'}`);
    if (c.kind === 'single') lines.push('        single_session: true');
    lines.push(`    closed_loop: ${c.kind === 'closed' ? 'true' : 'false'}`);
  }
  if (c.kind === 'bursty') lines.push('    misbehavior: {kind: bursty, burst_rate_multiplier: 5, mean_on_s: 0.2, mean_off_s: 0.4}');
  if (c.kind === 'abusive') lines.push('    misbehavior: {kind: abusive, rate_multiplier: 2, input_multiplier: 3, fraction: 0.5}');
  return lines.join('\n');
}

const clientArb: fc.Arbitrary<ClientArb> = fc.record({
  kind: fc.constantFrom('plain', 'prefix', 'window', 'multimodal', 'session', 'single', 'closed', 'bursty', 'abusive'),
  arrival: fc.integer({ min: 0, max: ARRIVALS.length - 1 }),
  input: fc.integer({ min: 0, max: LENGTHS.length - 1 }),
  output: fc.integer({ min: 0, max: LENGTHS.length - 1 }),
  weight: fc.integer({ min: 1, max: 4 }),
  rounds: fc.integer({ min: 1, max: 12 }),
  accumulate: fc.boolean(),
});

const specArb = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  rate: fc.constantFrom(5, 40, 300),
  clients: fc.array(clientArb, { minLength: 1, maxLength: 6 }),
  cohort: fc.option(fc.record({ population: fc.integer({ min: 1, max: 30 }), diurnal: fc.boolean() }), { nil: null }),
  cap: fc.constantFrom(0, 1, 5, 30, 120),
  horizon: fc.constantFrom(400_000, 3_000_000, 20_000_000),
});

type RandomSpec = typeof specArb extends fc.Arbitrary<infer T> ? T : never;

function specYaml(s: RandomSpec): string {
  const parts = [`version: "2"`, `seed: ${s.seed}`, `aggregate_rate: ${s.rate}`, 'clients:', ...s.clients.map(clientYaml)];
  if (s.cohort !== null) {
    parts.push('cohorts:', '  - id: crowd', `    population: ${s.cohort.population}`, '    rate_fraction: 2', '    arrival: {process: poisson}',
      `    input_distribution: ${LENGTHS[1]}`, `    output_distribution: ${LENGTHS[2]}`, '    prefix_group: crowd', '    prefix_sharing: per_member');
    if (s.cohort.diurnal) parts.push('    diurnal: {peak_hour: 0, peak_to_trough_ratio: 3}');
  }
  return `${parts.join('\n')}\n`;
}

function row(d: Draft): unknown[] {
  return [d.arrival, d.client.id, Array.from(d.input), Array.from(d.output), d.prefixGroup, d.prefixLength, d.deadline, d.modality, d.session ?? null, d.streaming ?? null, d.sloTargetUs ?? null];
}

describe('lazy spec generation = the pre-generating reference algorithm', () => {
  it('gives the same requests, order and tokens on random specs', () => {
    fc.assert(
      fc.property(specArb, (s) => {
        const spec = parseWorkloadSpec(specYaml(s), 'random.yaml');
        const opts = { numRequests: s.cap, horizon: s.cap === 0 ? s.horizon : MAX_INT64 };
        const lazy = generateSpecDrafts(spec, opts).drafts.map(row);
        const eager = eagerSpecDrafts(spec, opts).drafts.map(row);
        expect(lazy).toEqual(eager);
      }),
      { seed: 20261125, numRuns: 150 },
    );
  });

  it('also when a horizon and a cap both bound the workload', () => {
    fc.assert(
      fc.property(specArb, (s) => {
        const spec = parseWorkloadSpec(specYaml(s), 'random.yaml');
        const opts = { numRequests: Math.max(1, s.cap), horizon: s.horizon };
        expect(generateSpecDrafts(spec, opts).drafts.map(row)).toEqual(eagerSpecDrafts(spec, opts).drafts.map(row));
      }),
      { seed: 7, numRuns: 80 },
    );
  });
});
