/**
 * Evaluation suites: the built-in ones (usable with no file) and the YAML/JSON suite format (docs/evaluate.md).
 * Every scenario is small enough that a whole suite runs in about a second on one core, so a search can afford
 * thousands of evaluations; stage 1 is one short scenario that rejects broken or hopeless candidates fast.
 */
import type { Semantics } from '../domain/semantics.js';
import type { Objective, Scenario, SloTargets, Suite } from './types.js';

const MODEL = { model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1 };

const slo = (ttftMs: number, itlMs: number, e2eMs: number): SloTargets => ({ ttftMs, itlMs, e2eMs });

/**
 * Forty applications' 1024-token system prompts (eight popular ones) ahead of short user turns, on instances
 * whose KV cache holds only part of them: routing that keeps each prefix where it is cached avoids
 * recomputing 1024 tokens per request, which decides TTFT under load.
 */
const PREFIX_HEAVY_SPEC = (n: number, rate: number): string => `version: "2"
seed: 1
aggregate_rate: ${rate}
num_requests: ${n}
clients:
${Array.from({ length: 40 }, (_, i) => `  - id: app-${i}
    tenant_id: tenant-${i % 4}
    slo_class: standard
    rate_fraction: ${i < 8 ? 4 : 1}
    arrival: {process: gamma, cv: 1.5}
    input_distribution: {type: lognormal, params: {mu: 4.5, sigma: 0.6, min: 16, max: 1000}}
    output_distribution: {type: exponential, params: {mean: 48, min: 4, max: 256}}
    prefix_group: system-${i}
    prefix_length: 1024`).join('\n')}
`;

/** A well-behaved critical tenant next to a bursty batch tenant that sends long prompts in bursts. */
const BURSTY_TENANTS_SPEC = (n: number, rate: number): string => `version: "2"
seed: 1
aggregate_rate: ${rate}
num_requests: ${n}
clients:
  - id: interactive
    tenant_id: acme
    slo_class: critical
    rate_fraction: 2
    arrival: {process: poisson}
    input_distribution: {type: lognormal, params: {mu: 5.5, sigma: 0.5, min: 16, max: 3000}}
    output_distribution: {type: exponential, params: {mean: 128, min: 8, max: 512}}
  - id: scraper
    tenant_id: globex
    slo_class: sheddable
    rate_fraction: 3
    arrival: {process: gamma, cv: 6}
    input_distribution: {type: gaussian, params: {mean: 3000, std_dev: 800, min: 500, max: 6000}}
    output_distribution: {type: exponential, params: {mean: 256, min: 8, max: 1024}}
`;

/** Critical, standard and batch traffic at once, near saturation: the order of service decides the SLOs. */
const SLO_MIX_SPEC = (n: number, rate: number): string => `version: "2"
seed: 1
aggregate_rate: ${rate}
num_requests: ${n}
clients:
  - id: chat
    tenant_id: acme
    slo_class: critical
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: lognormal, params: {mu: 5.3, sigma: 0.6, min: 16, max: 3000}}
    output_distribution: {type: exponential, params: {mean: 96, min: 8, max: 512}}
  - id: api
    tenant_id: initech
    slo_class: standard
    rate_fraction: 2
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: lognormal, params: {mu: 6.0, sigma: 0.7, min: 16, max: 4000}}
    output_distribution: {type: exponential, params: {mean: 160, min: 8, max: 1024}}
  - id: reports
    tenant_id: globex
    slo_class: batch
    rate_fraction: 2
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 2500, std_dev: 700, min: 200, max: 6000}}
    output_distribution: {type: exponential, params: {mean: 400, min: 16, max: 2048}}
`;

/**
 * One chat population whose rate follows a day compressed into `periodS` seconds (0.2x at night, 2x at noon).
 * Output lengths are moderate so a replica's capacity, not one request, decides the latency.
 */
const DIURNAL_SPEC = (n: number, rate: number, periodS: number): string => `version: "2"
seed: 1
aggregate_rate: ${rate}
load_profile:
  segments:
    - {start_s: 0, end_s: ${periodS}, kind: diurnal, period_s: ${periodS}, peak_at_s: ${periodS / 2}, peak: 2.0, trough: 0.2}
clients:
  - id: chat
    slo_class: standard
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: lognormal, params: {mu: 6.0, sigma: 0.6, min: 16, max: 4000}}
    output_distribution: {type: exponential, params: {mean: 160, min: 8, max: 1024}}
horizon: ${periodS * 1_000_000}
num_requests: ${n}
`;

/**
 * One H100 configuration between 1 and `max` replicas, evaluated every 5 s; a new replica loads for 8-15 s and
 * warms up for 10 s, and replicas drain without losing work. No `policy:` key: the candidate's autoscale
 * control point decides (the reference's saturation analyzer when it has none).
 */
const DIURNAL_DEPLOYMENT = (max: number): string => `models:
  - name: ${MODEL.model}
    configurations:
      - name: llama
        hardware: H100
        tp: 1
        cost_per_gpu_hour: 4
        replicas: 2
        min_replicas: 1
        max_replicas: ${max}
autoscaler:
  interval_us: 5000000
  scale_down_stabilization_window_us: 20000000
  model_load_time: {distribution: uniform, min: 8, max: 15}
  warmup: {curve: exponential, duration_us: 10000000, initial_penalty: 1.5}
  drain: {mode: wait}
`;

/**
 * Short chats behind four cached 768-token app prompts beside long documents (2000-10000 tokens), on one
 * prefill pod and three decode pods: splitting everything queues the prefill pod (TTFT), splitting nothing
 * lets long prefills stall the decode pods' running chats (ITL). What to split is the P/D decider's call.
 */
const PD_LONG_PROMPTS_SPEC = (n: number, rate: number): string => `version: "2"
seed: 1
aggregate_rate: ${rate}
num_requests: ${n}
clients:
${Array.from({ length: 4 }, (_, i) => `  - id: chat-${i}
    slo_class: standard
    rate_fraction: 2
    arrival: {process: poisson}
    input_distribution: {type: lognormal, params: {mu: 5.0, sigma: 0.6, min: 16, max: 1000}}
    output_distribution: {type: exponential, params: {mean: 96, min: 8, max: 512}}
    prefix_group: app-${i}
    prefix_length: 768`).join('\n')}
  - id: docs
    slo_class: batch
    rate_fraction: 3
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: gaussian, params: {mean: 6000, std_dev: 1500, min: 2000, max: 10000}}
    output_distribution: {type: exponential, params: {mean: 160, min: 8, max: 1024}}
`;

/** No --pd-decider: a candidate without a disaggregation policy runs the default (never split). */
const PD_POOLS = { numInstances: 4, prefillInstances: 1, decodeInstances: 3 };

function diurnalScenario(name: string, description: string, n: number, rate: number, periodS: number, max: number, seeds: number[]): Scenario {
  return {
    name,
    description,
    config: { model: MODEL.model, deployment: 'deployment.yaml', workloadSpec: 'workload.yaml' },
    files: { 'workload.yaml': DIURNAL_SPEC(n, rate, periodS), 'deployment.yaml': DIURNAL_DEPLOYMENT(max) },
    seeds,
    weight: 1,
    slo: DIURNAL_SLO,
  };
}

function scenario(name: string, description: string, spec: string, extra: Record<string, unknown>, seeds: number[], sloTargets: Readonly<Record<string, SloTargets>>, weight = 1): Scenario {
  return {
    name,
    description,
    config: { ...MODEL, workloadSpec: 'workload.yaml', ...extra },
    files: { 'workload.yaml': spec },
    seeds,
    weight,
    slo: sloTargets,
  };
}

const obj = (name: string, metric: string, direction: 'maximize' | 'minimize', weight: number, normalization: Objective['normalization']): Objective => ({ name, metric, direction, weight, normalization });

const PREFIX_SLO = { standard: slo(150, 40, 0) };
const BURST_SLO = { critical: slo(300, 40, 0), sheddable: slo(5000, 100, 0) };
const DIURNAL_SLO = { standard: slo(200, 40, 0) };
const PD_SLO = { standard: slo(250, 10, 0), batch: slo(5000, 0, 0) };
const MIX_SLO = { critical: slo(250, 35, 0), standard: slo(1000, 50, 0), batch: slo(10_000, 100, 0) };

export const BUILTIN_SUITES: readonly Suite[] = [
  {
    name: 'routing-prefix-heavy',
    description: 'Forty applications\' 1024-token system prompts on 4 instances whose KV caches hold only part of them, near saturation: routing that keeps each prefix where it is cached wins TTFT.',
    stage1: [scenario('smoke', '300 requests at 160 req/s, 4 instances, 1200 KV blocks each', PREFIX_HEAVY_SPEC(300, 160), { numInstances: 4, totalKvBlocks: 1200 }, [101], PREFIX_SLO)],
    stage2: [
      scenario('steady', '600 requests at 160 req/s, 4 instances, 1200 KV blocks each', PREFIX_HEAVY_SPEC(600, 160), { numInstances: 4, totalKvBlocks: 1200 }, [1, 2], PREFIX_SLO),
      scenario('hot', '600 requests at 200 req/s, 4 instances, 1600 KV blocks each', PREFIX_HEAVY_SPEC(600, 200), { numInstances: 4, totalKvBlocks: 1600 }, [3, 4], PREFIX_SLO),
    ],
    objectives: [
      obj('slo_attainment', 'slo_attainment', 'maximize', 3, { kind: 'linear', best: 1, worst: 0 }),
      obj('ttft_p99_ms', 'ttft_p99_ms', 'minimize', 2, { kind: 'ratio', target: 100 }),
      obj('ttft_mean_ms', 'ttft_mean_ms', 'minimize', 2, { kind: 'ratio', target: 30 }),
      obj('cache_hit_rate', 'cache_hit_rate', 'maximize', 1, { kind: 'linear', best: 1, worst: 0 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'admission-bursty-tenants',
    description: 'A critical interactive tenant beside a bursty tenant sending long sheddable prompts, on 2 instances: admission decides whether the critical tenant keeps its TTFT.',
    stage1: [scenario('smoke', '200 requests, 2 instances', BURSTY_TENANTS_SPEC(200, 12), { numInstances: 2, routingPolicy: 'least-loaded' }, [201], BURST_SLO)],
    stage2: [
      scenario('bursts', '600 requests at 12 req/s, 2 instances', BURSTY_TENANTS_SPEC(600, 12), { numInstances: 2, routingPolicy: 'least-loaded' }, [5, 6], BURST_SLO),
      scenario('overload', '600 requests at 18 req/s, 2 instances', BURSTY_TENANTS_SPEC(600, 18), { numInstances: 2, routingPolicy: 'least-loaded' }, [7], BURST_SLO),
    ],
    objectives: [
      obj('critical_slo_attainment', 'slo_attainment_critical', 'maximize', 4, { kind: 'linear', best: 1, worst: 0 }),
      obj('goodput_rps', 'goodput_rps', 'maximize', 2, { kind: 'ratio', target: 12 }),
      obj('jain_fairness', 'jain_fairness', 'maximize', 1, { kind: 'linear', best: 1, worst: 0.5 }),
      obj('admission_rate', 'admission_rate', 'maximize', 1, { kind: 'linear', best: 1, worst: 0 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'scheduling-slo-mix',
    description: 'Critical, standard and batch classes on 2 instances near saturation: priority and batch formation decide who meets its SLO.',
    stage1: [scenario('smoke', '200 requests, 2 instances', SLO_MIX_SPEC(200, 10), { numInstances: 2, routingPolicy: 'least-loaded' }, [301], MIX_SLO)],
    stage2: [
      scenario('mix', '600 requests at 10 req/s, 2 instances', SLO_MIX_SPEC(600, 10), { numInstances: 2, routingPolicy: 'least-loaded' }, [8, 9], MIX_SLO),
      scenario('mix-tight', '600 requests at 12 req/s, 2 instances, 128 seats', SLO_MIX_SPEC(600, 12), { numInstances: 2, routingPolicy: 'least-loaded', maxNumSeqs: 128 }, [10], MIX_SLO),
    ],
    objectives: [
      obj('critical_slo_attainment', 'slo_attainment_critical', 'maximize', 4, { kind: 'linear', best: 1, worst: 0 }),
      obj('standard_slo_attainment', 'slo_attainment_standard', 'maximize', 2, { kind: 'linear', best: 1, worst: 0 }),
      obj('batch_slo_attainment', 'slo_attainment_batch', 'maximize', 1, { kind: 'linear', best: 1, worst: 0 }),
      obj('throughput_tps', 'tokens_per_sec', 'maximize', 1, { kind: 'ratio', target: 3000 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'autoscale-diurnal',
    description: 'A day of chat traffic compressed into two minutes (0.2x to 2x the mean rate) on an autoscaled H100 configuration (1-8 replicas, 8-15 s model loads, warm-up): the autoscale policy trades TTFT SLOs against GPU-hours.',
    stage1: [diurnalScenario('smoke', '60 s day at 30 req/s mean, 1-6 replicas', 2000, 30, 60, 6, [401])],
    stage2: [
      diurnalScenario('day', '120 s day at 30 req/s mean, 1-8 replicas', 4000, 30, 120, 8, [11, 12]),
      diurnalScenario('busy-day', '120 s day at 40 req/s mean, 1-8 replicas', 5500, 40, 120, 8, [13]),
    ],
    objectives: [
      obj('slo_attainment', 'slo_attainment', 'maximize', 3, { kind: 'linear', best: 1, worst: 0 }),
      obj('ttft_p99_ms', 'ttft_p99_ms', 'minimize', 2, { kind: 'ratio', target: 150 }),
      // One replica for the whole day is the floor (about 0.017 GPU-hours a minute of simulated time).
      obj('gpu_hours', 'gpu_hours', 'minimize', 2, { kind: 'ratio', target: 0.04 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'pd-long-prompts',
    description: 'Cached short chats beside long documents on 1 prefill + 3 decode H100 pods: the P/D decider (bundle key disaggregation) trades the one prefill pod\'s queue (TTFT; a split request\'s TTFT spans its prefill, KV transfer and first decode step) against long prefills stalling decodes (ITL, SLO attainment).',
    stage1: [scenario('smoke', '200 requests at 24 req/s', PD_LONG_PROMPTS_SPEC(200, 24), PD_POOLS, [501], PD_SLO)],
    stage2: [
      scenario('steady', '400 requests at 24 req/s', PD_LONG_PROMPTS_SPEC(400, 24), PD_POOLS, [21, 22], PD_SLO),
      scenario('busy', '400 requests at 32 req/s', PD_LONG_PROMPTS_SPEC(400, 32), PD_POOLS, [23], PD_SLO),
    ],
    objectives: [
      obj('slo_attainment', 'slo_attainment', 'maximize', 3, { kind: 'linear', best: 1, worst: 0 }),
      obj('ttft_p99_ms', 'ttft_p99_ms', 'minimize', 2, { kind: 'ratio', target: 150 }),
      obj('itl_p99_ms', 'itl_p99_ms', 'minimize', 2, { kind: 'ratio', target: 10 }),
    ],
    stage1Threshold: 0.05,
  },
];

export function findSuite(name: string): Suite | undefined {
  return BUILTIN_SUITES.find((s) => s.name === name);
}

/**
 * `suite` with every scenario run under `semantics` (`blis evaluate --semantics`), replacing any scenario's
 * own `config.semantics`. The suite is part of every cache key and job, so results of the two modes never mix.
 */
export function withSemantics(suite: Suite, semantics: Semantics): Suite {
  const set = (sc: Scenario): Scenario => ({ ...sc, config: { ...sc.config, semantics } });
  return { ...suite, stage1: suite.stage1.map(set), stage2: suite.stage2.map(set) };
}

/** The suites as `blis suites` prints them. */
export function describeSuites(suites: readonly Suite[] = BUILTIN_SUITES): unknown[] {
  const sc = (s: Scenario): Record<string, unknown> => ({ name: s.name, description: s.description, seeds: s.seeds, weight: s.weight, slo: s.slo });
  return suites.map((s) => ({
    name: s.name,
    description: s.description,
    stage1: s.stage1.map(sc),
    stage2: s.stage2.map(sc),
    stage1_threshold: s.stage1Threshold,
    objectives: s.objectives.map((o) => ({ name: o.name, metric: o.metric, direction: o.direction, weight: o.weight, normalization: o.normalization })),
  }));
}
