/**
 * Evaluation suites: the built-in ones (usable with no file) and the YAML/JSON suite format (docs/evaluate.md).
 * Every scenario is small enough that a whole suite runs in about a second on one core, so a search can afford
 * thousands of evaluations; stage 1 is one short scenario that rejects broken or hopeless candidates fast.
 */
import type { Semantics } from '../domain/semantics.js';
import { ConfigError } from '../sim/config-error.js';
import type { KnownPolicy, Objective, Scenario, SloTargets, Suite } from './types.js';

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

/** Held-out seeds of a scenario: `count` seeds from `first` on (disjoint from every search seed of the built-in suites). */
const holdout = (first: number, count = HOLDOUT_SETS * 2): number[] => Array.from({ length: count }, (_, i) => first + i);

/** The most seeds one scenario runs in one evaluation (declared, `--seeds`, or held-out seed sets times search seeds). */
export const MAX_SEEDS = 1000;

/** Seed sets `blis suites check` uses by default (each a whole evaluation's worth of held-out seeds). */
export const HOLDOUT_SETS = 10;

function diurnalScenario(name: string, description: string, n: number, rate: number, periodS: number, max: number, seeds: number[], held: number[]): Scenario {
  return {
    name,
    description,
    config: { model: MODEL.model, deployment: 'deployment.yaml', workloadSpec: 'workload.yaml' },
    files: { 'workload.yaml': DIURNAL_SPEC(n, rate, periodS), 'deployment.yaml': DIURNAL_DEPLOYMENT(max) },
    seeds,
    holdoutSeeds: held,
    weight: 1,
    slo: DIURNAL_SLO,
  };
}

function scenario(name: string, description: string, spec: string, extra: Record<string, unknown>, seeds: number[], held: number[], sloTargets: Readonly<Record<string, SloTargets>>, weight = 1): Scenario {
  return {
    name,
    description,
    config: { ...MODEL, workloadSpec: 'workload.yaml', ...extra },
    files: { 'workload.yaml': spec },
    seeds,
    holdoutSeeds: held,
    weight,
    slo: sloTargets,
  };
}

const obj = (name: string, metric: string, direction: 'maximize' | 'minimize', weight: number, normalization: Objective['normalization']): Objective => ({ name, metric, direction, weight, normalization });

const PREFIX_SLO = { standard: slo(150, 40, 0) };
const BURST_SLO = { critical: slo(300, 40, 0), sheddable: slo(5000, 100, 0) };
const DIURNAL_SLO = { standard: slo(200, 40, 0) };
const PD_SLO = { standard: slo(250, 10, 0), batch: slo(5000, 0, 0) };
const MIX_SLO = { critical: slo(150, 35, 0), standard: slo(500, 50, 0), batch: slo(3000, 100, 0) };

/** A bundle holding one control point's JavaScript (fast engine). */
const codeBundle = (point: string, source: string): string => JSON.stringify({ [point]: { type: 'code', language: 'javascript', engine: 'fast', source } }, null, 2);

const known = (id: string, kind: KnownPolicy['kind'], description: string, bundle: unknown): KnownPolicy => ({
  id, kind, description, bundle: typeof bundle === 'string' ? bundle : JSON.stringify(bundle, null, 2),
});

/**
 * Policies every suite must rank below its baseline: they game a naive score (nothing completes, so no latency
 * is bad; few complete, so their latency is good), break, or route as badly as possible.
 */
const CHEATERS: readonly KnownPolicy[] = [
  known('reject-all', 'cheating', 'rejects every request', { admission: { policy: 'reject-all' } }),
  known('admit-10pct', 'cheating', 'admits one request in ten (by request number) and rejects the rest',
    codeBundle('admission', "function admit(request) { let n = 0; for (const ch of request.id) { if (ch >= '0' && ch <= '9') n = (n * 10 + Number(ch)) % 1000; } return n % 10 === 0 ? 'admit' : 'reject'; }")),
  known('delay-all', 'cheating', 'delays every request by 2 s, again and again (rejected after 100 delays)', codeBundle('admission', 'function admit() { return { delayUs: 2000000 }; }')),
  known('throws', 'bad', 'a routing policy that throws on every call', codeBundle('routing', "function route() { throw new Error('not implemented'); }")),
  known('always-busiest', 'bad', 'routes every request to the busiest instance', { routing: { policy: 'always-busiest' } }),
];

export const BUILTIN_SUITES: readonly Suite[] = [
  {
    name: 'routing-prefix-heavy',
    description: 'Forty applications\' 1024-token system prompts on 4 instances whose KV caches hold only part of them, at 1.6x and 2x what cache-blind routing serves: routing that keeps each prefix where it is cached wins TTFT and SLO attainment. Baseline: least-loaded routing (cache-blind); a router must also complete 95% of the requests (a constraint).',
    load: { level: 1.7, note: '320 and 400 req/s against the throughput cache-blind routing sustains when saturated (about 175 and 245 req/s: 1.8x and 1.6x); the prefix-aware router sustains about 250 and 370 req/s (1.3x and 1.1x). Measured with the scenarios at 3x their rate, 4000 requests' },
    defaults: { routingPolicy: 'least-loaded' },
    baseline: known('least-loaded', 'baseline', 'least-loaded routing (the suite\'s default): balances load, blind to caches', {}),
    knownGood: [known('prefix-aware', 'good', 'weighted scoring with precise prefix-cache affinity (weight 2) against queue depth and KV utilization', { routing: { policy: 'weighted' } })],
    knownBad: CHEATERS,
    constraints: [{ name: 'completes_requests', metric: 'completed_share', kind: 'min', value: 0.95, relativeToBaseline: false }],
    stage1: [scenario('smoke', '300 requests at 400 req/s, 4 instances, 1200 KV blocks each', PREFIX_HEAVY_SPEC(300, 320), { numInstances: 4, totalKvBlocks: 1200 }, [101], holdout(10_101), PREFIX_SLO)],
    stage2: [
      scenario('steady', '1200 requests at 400 req/s, 4 instances, 1200 KV blocks each', PREFIX_HEAVY_SPEC(1200, 320), { numInstances: 4, totalKvBlocks: 1200 }, [1, 2], holdout(10_001), PREFIX_SLO),
      scenario('hot', '1200 requests at 480 req/s, 4 instances, 1600 KV blocks each', PREFIX_HEAVY_SPEC(1200, 400), { numInstances: 4, totalKvBlocks: 1600 }, [3, 4], holdout(10_201), PREFIX_SLO),
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
    description: 'A critical interactive tenant beside a bursty tenant sending long sheddable prompts, on 2 instances at 0.7x and 0.9x their capacity on average and far above it in bursts (least-loaded routing unless the candidate routes): admission decides whether the critical tenant keeps its TTFT, and shedding costs the sheddable tenant\'s goodput.',
    load: { level: 0.8, note: '24 and 30 req/s on average against about 33 req/s sustained when saturated (0.7x and 0.9x), in bursts (gamma arrivals, cv 6) far above it: the overload comes in bursts. Measured with the scenarios at 3x their rate, 3000 requests' },
    defaults: { routingPolicy: 'least-loaded' },
    baseline: known('always-admit', 'baseline', 'admits everything (the suite\'s default)', {}),
    knownGood: [known('slo-gated', 'good', 'sheds sheddable traffic while the queues hold more than 2 requests per instance, never the critical tenant', {
      admission: { type: 'parameterized', template: 'load_shedding_admission', parameters: { max_queue_depth_per_instance: 2, protected_priority: 0, overload_action: 'reject' } },
    })],
    knownBad: CHEATERS,
    constraints: [{ name: 'goodput_vs_baseline', metric: 'goodput_rps', kind: 'min', value: 0.8, relativeToBaseline: true }],
    stage1: [scenario('smoke', '200 requests at 24 req/s, 2 instances', BURSTY_TENANTS_SPEC(200, 24), { numInstances: 2 }, [201], holdout(10_501), BURST_SLO)],
    stage2: [
      scenario('overload', '2000 requests at 24 req/s, 2 instances', BURSTY_TENANTS_SPEC(2000, 24), { numInstances: 2 }, [5, 6, 15], holdout(10_401, 30), BURST_SLO),
      scenario('surge', '2000 requests at 30 req/s, 2 instances', BURSTY_TENANTS_SPEC(2000, 30), { numInstances: 2 }, [7, 17, 27], holdout(10_601, 30), BURST_SLO),
    ],
    objectives: [
      obj('critical_slo_attainment', 'slo_attainment@critical', 'maximize', 4, { kind: 'linear', best: 1, worst: 0 }),
      obj('critical_ttft_p99_ms', 'ttft_p99_ms@critical', 'minimize', 2, { kind: 'linear', best: 100, worst: 1000 }),
      obj('goodput_rps', 'goodput_rps', 'maximize', 2, { kind: 'ratio', target: 24 }),
      obj('sheddable_drop_rate', 'drop_rate@sheddable', 'minimize', 1, { kind: 'linear', best: 0, worst: 1 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'scheduling-slo-mix',
    description: 'Critical, standard and batch classes arriving in a burst at about 3x what 2 instances sustain (least-loaded routing unless the candidate routes): a queue builds, and priority and batch formation decide who meets its SLO.',
    load: { level: 3.0, note: '800 requests at 90 and 108 req/s, a 7-9 s burst at 2.7x and 3.3x the throughput the 2 instances sustain when saturated (about 33 req/s of this mix), then the drain. Measured with the scenarios at 3x their rate, 3000 requests' },
    defaults: { routingPolicy: 'least-loaded' },
    baseline: known('fcfs', 'baseline', 'first come, first served (the suite\'s default)', {}),
    knownGood: [known('priority-fcfs', 'good', 'serves the more urgent SLO class first (priority FCFS with SLO-class priorities)', { scheduler: 'priority-fcfs' })],
    knownBad: CHEATERS,
    constraints: [],
    stage1: [scenario('smoke', '300 requests at 90 req/s, 2 instances', SLO_MIX_SPEC(300, 90), { numInstances: 2 }, [301], holdout(10_701), MIX_SLO)],
    stage2: [
      scenario('mix', '800 requests at 90 req/s, 2 instances', SLO_MIX_SPEC(800, 90), { numInstances: 2 }, [8, 9], holdout(10_801), MIX_SLO),
      scenario('mix-tight', '800 requests at 108 req/s, 2 instances, 128 seats', SLO_MIX_SPEC(800, 108), { numInstances: 2, maxNumSeqs: 128 }, [10, 18], holdout(10_901), MIX_SLO),
    ],
    objectives: [
      obj('critical_slo_attainment', 'slo_attainment@critical', 'maximize', 4, { kind: 'linear', best: 1, worst: 0 }),
      obj('critical_ttft_p99_ms', 'ttft_p99_ms@critical', 'minimize', 2, { kind: 'linear', best: 30, worst: 1000 }),
      obj('standard_slo_attainment', 'slo_attainment@standard', 'maximize', 2, { kind: 'linear', best: 1, worst: 0 }),
      obj('batch_slo_attainment', 'slo_attainment@batch', 'maximize', 1, { kind: 'linear', best: 1, worst: 0 }),
      obj('throughput_tps', 'tokens_per_sec', 'maximize', 1, { kind: 'ratio', target: 6000 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'autoscale-diurnal',
    description: 'A busy day of chat traffic compressed into two minutes (0.2x to 2x a 40 req/s mean) on an autoscaled H100 configuration (1-8 replicas, 8-15 s model loads, warm-up): the autoscale policy trades SLO attainment and p99 TTFT against GPU-hours; scaling up late costs the peak.',
    load: { level: 1.2, note: 'the 80 req/s peak is 1.2x what one replica sustains when saturated (about 66 req/s, with multi-second TTFTs) and several times what it serves within the 200 ms TTFT SLO; the mean (40 req/s) is 0.6x. Measured on one replica at 100 req/s, 3000 requests' },
    defaults: {},
    baseline: known('saturation', 'baseline', 'the reference saturation analyzer (the suite\'s default)', {}),
    knownGood: [known('target-tracking', 'good', 'keeps the mean queue per replica near 0.5, re-deciding every 5 s: scales up ahead of the peak', {
      autoscale: { type: 'parameterized', template: 'target_tracking_autoscaler', parameters: { target_queue_per_replica: 0.5, cooldown_us: 5_000_000 } },
    })],
    knownBad: CHEATERS,
    constraints: [],
    stage1: [diurnalScenario('smoke', '60 s day at 30 req/s mean, 1-6 replicas', 2000, 30, 60, 6, [401], holdout(11_001))],
    stage2: [
      diurnalScenario('busy-day', '120 s day at 40 req/s mean, 1-8 replicas', 5500, 40, 120, 8, [11, 12, 13, 19], holdout(11_201, 40)),
    ],
    objectives: [
      obj('slo_attainment', 'slo_attainment', 'maximize', 4, { kind: 'linear', best: 1, worst: 0 }),
      obj('ttft_p99_ms', 'ttft_p99_ms', 'minimize', 2, { kind: 'linear', best: 100, worst: 2000 }),
      // One replica for the whole day is the floor (about 0.017 GPU-hours a minute of simulated time).
      obj('gpu_hours', 'gpu_hours', 'minimize', 1, { kind: 'ratio', target: 0.04 }),
    ],
    stage1Threshold: 0.05,
  },
  {
    name: 'pd-long-prompts',
    description: 'Cached short chats beside long documents on 1 prefill + 3 decode H100 pods: the P/D decider (bundle key disaggregation) trades the one prefill pod\'s queue (TTFT; a split request\'s TTFT spans its prefill, KV transfer and first decode step) against long prefills stalling the chats\' decodes (per-token latency, SLO attainment); objectives per class (chats: standard, documents: batch).',
    load: { level: 0.5, note: '24 and 32 req/s against about 60 req/s the 4 pods sustain when saturated without splitting (0.4x and 0.5x): the pods keep up, and what to split decides TTFT and per-token latency. Measured with the scenarios at 4x their rate, 2000 requests' },
    defaults: {},
    baseline: known('never-split', 'baseline', 'never disaggregates (the suite\'s default)', {}),
    knownGood: [known('conditional', 'good', 'splits uncached prompts over 2048 tokens while the prefill pod keeps up', {
      disaggregation: { type: 'parameterized', template: 'conditional_disaggregation', parameters: { max_local_prefill_tokens: 2048, max_prefill_queue_per_instance: 2 } },
    })],
    knownBad: CHEATERS,
    constraints: [],
    stage1: [scenario('smoke', '200 requests at 24 req/s', PD_LONG_PROMPTS_SPEC(200, 24), PD_POOLS, [501], holdout(11_301), PD_SLO)],
    stage2: [
      scenario('steady', '400 requests at 24 req/s', PD_LONG_PROMPTS_SPEC(400, 24), PD_POOLS, [21, 22], holdout(11_401), PD_SLO),
      scenario('busy', '400 requests at 32 req/s', PD_LONG_PROMPTS_SPEC(400, 32), PD_POOLS, [23, 24], holdout(11_501), PD_SLO),
    ],
    objectives: [
      obj('slo_attainment', 'slo_attainment', 'maximize', 3, { kind: 'linear', best: 1, worst: 0 }),
      obj('chat_ttft_p99_ms', 'ttft_p99_ms@standard', 'minimize', 2, { kind: 'linear', best: 20, worst: 1000 }),
      obj('chat_tpot_p99_ms', 'tpot_p99_ms@standard', 'minimize', 2, { kind: 'linear', best: 5, worst: 30 }),
      obj('doc_ttft_p99_ms', 'ttft_p99_ms@batch', 'minimize', 1, { kind: 'linear', best: 500, worst: 10_000 }),
    ],
    stage1Threshold: 0.05,
  },
];

/**
 * The seeds of `s` a stage runs: the declared search (`seeds`) or held-out (`holdoutSeeds`) ones, cut to `n`, or
 * extended to `n` by a fixed rule that keeps the two disjoint: search seeds 1000000, 1000002, ..., held-out seeds
 * 1000001, 1000003, ..., skipping any declared seed. `n` null: the declared search seeds, or the declared held-out
 * seeds (as many as the search seeds when none are declared).
 */
export function seedsFor(s: Scenario, which: 'search' | 'holdout', n: number | null): number[] {
  const declared = which === 'search' ? s.seeds : s.holdoutSeeds;
  const want = n ?? (declared.length > 0 ? declared.length : s.seeds.length);
  if (!(want <= MAX_SEEDS)) throw new ConfigError('bad-flag', `scenario ${s.name}: ${want} seeds asked for, above the limit of ${MAX_SEEDS} per scenario; ask for fewer (--seeds, --seed-sets)`);
  if (want <= declared.length) return declared.slice(0, want);
  const taken = new Set([...s.seeds, ...s.holdoutSeeds]);
  const out = [...declared];
  for (let k = 0; out.length < want; k++) {
    const seed = 1_000_000 + 2 * k + (which === 'holdout' ? 1 : 0);
    if (!taken.has(seed)) out.push(seed);
  }
  return out;
}

/**
 * Held-out seed set `j` (0, 1, ...) of `s`: the held-out seeds j*k .. j*k+k-1 (extended by seedsFor's rule), k the
 * number of search seeds: a set is a whole evaluation's worth of seeds no search has seen (`blis suites check`).
 */
export function holdoutSeedSet(s: Scenario, j: number): number[] {
  const k = s.seeds.length;
  return seedsFor(s, 'holdout', (j + 1) * k).slice(j * k, (j + 1) * k);
}

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
  const sc = (s: Scenario): Record<string, unknown> => ({ name: s.name, description: s.description, seeds: s.seeds, holdout_seeds: s.holdoutSeeds, weight: s.weight, slo: s.slo });
  const policy = (p: KnownPolicy): Record<string, unknown> => ({ id: p.id, kind: p.kind, description: p.description });
  return suites.map((s) => ({
    name: s.name,
    description: s.description,
    load: s.load,
    defaults: s.defaults,
    baseline: s.baseline === null ? null : policy(s.baseline),
    known_good: s.knownGood.map(policy),
    known_bad: s.knownBad.map(policy),
    stage1: s.stage1.map(sc),
    stage2: s.stage2.map(sc),
    stage1_threshold: s.stage1Threshold,
    objectives: s.objectives.map((o) => ({ name: o.name, metric: o.metric, direction: o.direction, weight: o.weight, normalization: o.normalization, ...(o.minCompleted === undefined ? {} : { min_completed: o.minCompleted }) })),
    constraints: s.constraints.map((c) => ({ name: c.name, metric: c.metric, [c.kind]: c.value, relative_to_baseline: c.relativeToBaseline })),
  }));
}
