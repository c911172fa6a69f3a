/**
 * Every template parameter's search range is one where its values change decisions: each range is sampled on a
 * scenario where its template acts (the built-in suite of its control point, or a small LoRA, encode-pool or
 * five-class scenario), with the other parameters at their defaults or at random values of their own ranges, and the run's
 * metrics must differ between at least two of the sampled values. A no-op range (protected_priority in
 * [-100, -70], every class protected) fails the same check.
 */
import { describe, expect, it } from 'vitest';
import { GoRand } from '../../gocompat/go-rand.js';
import { TEMPLATES, templateDefaults, type ParamSpec, type ParamValue, type SearchRange, type TemplateSpec } from '../../policy/templates/catalog.js';
import { candidateFromBundle } from '../candidate.js';
import { evaluateCandidate } from '../evaluate.js';
import { findSuite } from '../suites.js';
import type { Scenario, Suite } from '../types.js';
import { sampleParam, sampleRange } from './ranges.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

function customSuite(name: string, sc: Omit<Scenario, 'seeds' | 'holdoutSeeds' | 'weight' | 'slo' | 'description'>): Suite {
  const base = findSuite('routing-prefix-heavy') as Suite;
  const scenario: Scenario = { ...sc, description: name, seeds: [1], holdoutSeeds: [2], weight: 1, slo: { default: { ttftMs: 200, itlMs: 50, e2eMs: 0 } } };
  return { ...base, name, defaults: {}, baseline: null, constraints: [], stage1: [scenario], stage2: [scenario], objectives: [base.objectives[0] as Suite['objectives'][number]] };
}

/** Four adapters on four instances with one adapter slot each: where a request's adapter is resident matters. */
const LORA_SUITE = customSuite('lora', {
  name: 'lora',
  config: { model: MODEL, hardware: 'H100', tp: 1, numInstances: 4, workloadSpec: 'w.yaml', loraConfig: 'l.yaml' },
  files: {
    'l.yaml': `lora:\n  adapter_capacity: 1\n  adapters:\n${['a', 'b', 'c', 'd'].map((a) => `    - {id: ${a}, rank: 16, base_model: ${MODEL}}`).join('\n')}\n`,
    'w.yaml': `version: "2"\nseed: 1\naggregate_rate: 40\nnum_requests: 300\nclients:\n${['a', 'b', 'c', 'd'].map((a) => `  - id: c-${a}\n    model: ${MODEL}\n    adapter: ${a}\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: lognormal, params: {mu: 5, sigma: 0.5, min: 16, max: 2000}}\n    output_distribution: {type: exponential, params: {mean: 64, min: 4, max: 256}}`).join('\n')}\n`,
  },
});

/** Requests with 1 to 4096 image tokens beside text-only ones, on P/D pools with an encode pool. */
const ENCODE_SUITE = customSuite('encode', {
  name: 'encode',
  config: { model: MODEL, hardware: 'H100', tp: 1, numInstances: 4, prefillInstances: 1, decodeInstances: 2, encodeInstances: 1, pdDecider: 'always', workloadSpec: 'w.yaml' },
  files: {
    'w.yaml': `version: "2"\nseed: 1\naggregate_rate: 10\nnum_requests: 150\nclients:\n  - id: vision\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 100}}\n    output_distribution: {type: constant, params: {value: 32}}\n    multimodal:\n      text_distribution: {type: constant, params: {value: 100}}\n      image_distribution: {type: lognormal, params: {mu: 6, sigma: 1.5, min: 1, max: 4096}}\n      image_count_distribution: {type: constant, params: {value: 1}}\n  - id: text\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: constant, params: {value: 100}}\n    output_distribution: {type: constant, params: {value: 32}}\n`,
  },
});

/** Five SLO classes at once on 2 instances, in a burst: the order of service decides every class's latency. */
const CLASSES_SUITE = customSuite('classes', {
  name: 'classes',
  config: { model: MODEL, hardware: 'H100', tp: 1, numInstances: 2, workloadSpec: 'w.yaml' },
  files: {
    'w.yaml': `version: "2"\nseed: 1\naggregate_rate: 120\nnum_requests: 500\nclients:\n${['critical', 'standard', 'batch', 'sheddable', 'background'].map((c) => `  - id: c-${c}\n    slo_class: ${c}\n    rate_fraction: 1\n    arrival: {process: poisson}\n    input_distribution: {type: lognormal, params: {mu: 7, sigma: 0.7, min: 16, max: 6000}}\n    output_distribution: {type: exponential, params: {mean: 256, min: 8, max: 1024}}`).join('\n')}\n`,
  },
});

interface Place {
  readonly suite: Suite;
  readonly scenario: Scenario;
  /** What else the bundle needs for the template to act (priorities act through a priority scheduler). */
  readonly extra: Readonly<Record<string, unknown>>;
}

/** Where a template's parameter acts: scenarios tried in turn. */
function placesOf(t: TemplateSpec, p: ParamSpec): Place[] {
  const at = (name: string, which: 'smoke' | 'stage2' = 'smoke', extra: Record<string, unknown> = {}): Place => {
    const suite: Suite = findSuite(name) ?? ([LORA_SUITE, ENCODE_SUITE, CLASSES_SUITE].find((x) => x.name === name) as Suite);
    return { suite, scenario: (which === 'smoke' ? suite.stage1[0] : suite.stage2[0]) as Scenario, extra };
  };
  if (t.name === 'weighted_scorers' && p.name === 'lora_affinity') return [at('lora')];
  switch (t.point) {
    case 'routing': return [at('routing-prefix-heavy'), at('scheduling-slo-mix'), at('routing-prefix-heavy', 'stage2')];
    case 'admission': return [at('admission-bursty-tenants'), at('admission-bursty-tenants', 'stage2')];
    case 'priority': return [at('classes', 'smoke', { scheduler: 'priority-fcfs' })];
    case 'scheduler': return [at('scheduling-slo-mix')];
    case 'autoscale': return [at('autoscale-diurnal'), at('autoscale-diurnal', 'stage2')];
    case 'disaggregation': return [at('pd-long-prompts')];
    case 'encode': return [at('encode')];
    default: throw new Error(`no place for ${String(t.point)}`);
  }
}

/** Values of `p` to try: the off value and four draws of the range (all values of a boolean or enum). */
function trialValues(p: ParamSpec, range: SearchRange | undefined, rng: GoRand): ParamValue[] {
  if (p.type === 'boolean') return [false, true];
  if (p.type === 'enum') return [...(p.values ?? [])];
  const r = range as SearchRange;
  const draws = Array.from({ length: 4 }, () => {
    const v = sampleRange(r, rng);
    return p.type === 'integer' ? Math.round(v) : v;
  });
  return [...new Set([...(r.off === undefined ? [] : [r.off]), r.min, ...draws, r.max].map((v) => Math.min(Math.max(v, p.min ?? -Infinity), p.max ?? Infinity)))];
}

/**
 * Whether values of `p` drawn from `range` change what happens on the template's scenario (smoke scenario, one
 * seed): in some context (the other parameters at their defaults, then at random draws), two values give runs
 * with different metrics.
 */
async function rangeChangesDecisions(t: TemplateSpec, p: ParamSpec, range: SearchRange | undefined, contexts = 6): Promise<boolean> {
  const rng = new GoRand(7n);
  for (const { suite, scenario: sc, extra } of placesOf(t, p)) for (let c = 0; c < contexts; c++) {
    const others = c === 0 ? templateDefaults(t) : Object.fromEntries(t.parameters.map((q) => [q.name, sampleParam(q, rng)]));
    if (t.name === 'weighted_scorers' || t.name === 'weighted_affinity_routing') for (const q of t.parameters) if (q.name !== p.name && q.name !== 'utilization_threshold' && c > 0) others[q.name] = Math.max(Number(others[q.name]), 0.5);
    const seen = new Set<string>();
    for (const v of trialValues(p, range, rng)) {
      const bundle = JSON.stringify({ ...extra, [t.point]: { type: 'parameterized', template: t.name, parameters: { ...others, [p.name]: v } } });
      const r = await evaluateCandidate(candidateFromBundle(`${t.name}.${p.name}`, bundle), suite, { only: [{ scenario: sc.name, seed: sc.seeds[0] as number }], baseline: false });
      if (r.error !== undefined) throw new Error(`${t.name} ${JSON.stringify({ [p.name]: v })} on ${suite.name}/${sc.name}: ${r.error.code}: ${r.error.message}`);
      seen.add(JSON.stringify(r.scenarios[0]?.metrics));
      if (seen.size >= 2) return true;
    }
  }
  return false;
}

const params = TEMPLATES.flatMap((t) => t.parameters.map((p) => ({ t, p })));

describe('search ranges change decisions', () => {
  it.each(params.map(({ t, p }) => [`${t.name}.${p.name}`, t, p] as const))('%s', async (_name, t, p) => {
    if (p.type === 'number' || p.type === 'integer') expect(p.search, `${t.name}.${p.name} has no search range`).toBeDefined();
    expect(await rangeChangesDecisions(t, p, p.search)).toBe(true);
  }, 120_000);

  it('fails on a no-op range: protected_priority in [-100, -70] protects every class', async () => {
    const t = TEMPLATES.find((x) => x.name === 'load_shedding_admission') as TemplateSpec;
    const p = t.parameters.find((x) => x.name === 'protected_priority') as ParamSpec;
    expect(await rangeChangesDecisions(t, p, { min: -100, max: -70 })).toBe(false);
    // Its real range does change decisions.
    expect(await rangeChangesDecisions(t, p, p.search)).toBe(true);
  }, 120_000);
});
