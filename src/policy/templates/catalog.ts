/**
 * Parameterized policy templates (policy-search-design §8 Type 1): a fixed structure per template with named,
 * documented, range-checked parameters, every one with a default (so `parameters: {}` is valid). A search
 * evolves the numbers; `blis policies` lists the catalog as JSON.
 */
import { SCORER_NAMES } from '../../routing/scorer-registry.js';
import type { ControlPoint } from '../view.js';

export type ParamValue = number | boolean | string;
export type TemplateParameters = Readonly<Record<string, ParamValue>>;

export interface ParamSpec {
  readonly name: string;
  readonly type: 'number' | 'integer' | 'boolean' | 'enum';
  readonly min?: number;
  readonly max?: number;
  readonly values?: readonly string[];
  readonly default: ParamValue;
  readonly description: string;
  /** Where a search samples a number (`blis search`); enums and booleans are searched over all their values. */
  readonly search?: SearchRange;
}

/**
 * The part of a numeric parameter's range where its values change decisions on realistic workloads: sampled
 * uniformly, or log-uniformly when `log`; with probability `offShare` the parameter takes `off` instead (the value
 * that switches the feature off, e.g. 0 = no cap). A test samples every range on a suite scenario and fails on a
 * range whose values all decide alike.
 */
export interface SearchRange {
  readonly min: number;
  readonly max: number;
  readonly log?: boolean;
  readonly off?: number;
  readonly offShare?: number;
}

export interface TemplateSpec {
  readonly name: string;
  readonly point: ControlPoint;
  readonly description: string;
  readonly parameters: readonly ParamSpec[];
  /**
   * A typical active setting (the others at their defaults), where the defaults leave the template inert: what a
   * search tries first (`blis search` screening).
   */
  readonly example?: TemplateParameters;
}

const num = (name: string, def: number, min: number, max: number, description: string, search?: SearchRange): ParamSpec => ({ name, type: 'number', min, max, default: def, description, ...(search === undefined ? {} : { search }) });
const int = (name: string, def: number, min: number, max: number, description: string, search?: SearchRange): ParamSpec => ({ name, type: 'integer', min, max, default: def, description, ...(search === undefined ? {} : { search }) });
/** Search ranges (see SearchRange). */
const lin = (min: number, max: number): SearchRange => ({ min, max });
const logr = (min: number, max: number): SearchRange => ({ min, max, log: true });
const orOff = (r: SearchRange, off: number, offShare = 0.25): SearchRange => ({ ...r, off, offShare });
const WEIGHT = lin(0, 10);
const bool = (name: string, def: boolean, description: string): ParamSpec => ({ name, type: 'boolean', default: def, description });
const oneOf = (name: string, def: string, values: readonly string[], description: string): ParamSpec => ({ name, type: 'enum', values, default: def, description });

const WEIGHT_MAX = 1000;
const SCORER_DEFAULTS: Readonly<Record<string, number>> = { 'precise-prefix-cache': 2, 'queue-depth': 1, 'kv-utilization': 1 };

export const TEMPLATES: readonly TemplateSpec[] = [
  // ---- routing ----
  {
    name: 'weighted_affinity_routing',
    point: 'routing',
    description: 'Weighted scoring of cache affinity against load (the llm-d scorer pipeline). With the defaults it is the built-in weighted policy with its default profile, byte for byte. Instances above utilization_threshold are filtered out first (all are kept when none pass).',
    parameters: [
      num('cache_affinity_weight', 2, 0, WEIGHT_MAX, 'weight of precise-prefix-cache (share of the prompt\'s prefix cached on the instance, min-max normalised)', WEIGHT),
      num('queue_depth_weight', 1, 0, WEIGHT_MAX, 'weight of queue-depth (shorter wait queue scores higher)', WEIGHT),
      num('kv_utilization_weight', 1, 0, WEIGHT_MAX, 'weight of kv-utilization (1 - KV utilization)', WEIGHT),
      num('load_balance_weight', 0, 0, WEIGHT_MAX, 'weight of load-balance (fewer queued + running + in-flight requests scores higher)', WEIGHT),
      num('utilization_threshold', 1, 0, 1, 'filter out instances whose KV utilization exceeds this (1 = no filter)', logr(0.02, 1)),
    ],
  },
  {
    name: 'weighted_scorers',
    point: 'routing',
    description: 'The weighted policy with one weight per scorer (0 = scorer off); the defaults are the built-in default profile. Scorers run in the order listed here.',
    parameters: SCORER_NAMES.map((s) => num(s.replace(/-/g, '_'), SCORER_DEFAULTS[s] ?? 0, 0, WEIGHT_MAX, `weight of the ${s} scorer`, WEIGHT)),
  },
  {
    name: 'least_loaded_routing',
    point: 'routing',
    description: 'Lowest weighted load; ties broken with the router\'s random stream. With the defaults it is the built-in least-loaded policy.',
    parameters: [
      num('queue_weight', 1, 0, WEIGHT_MAX, 'weight of the wait-queue length', WEIGHT),
      num('batch_weight', 1, 0, WEIGHT_MAX, 'weight of the running batch size', WEIGHT),
      num('in_flight_weight', 1, 0, WEIGHT_MAX, 'weight of the router-side in-flight count', WEIGHT),
      num('kv_weight', 0, 0, WEIGHT_MAX, 'weight of KV utilization (0..1)', WEIGHT),
    ],
  },
  {
    name: 'power_of_d_choices',
    point: 'routing',
    description: 'Samples d distinct instances with the router\'s random stream and routes to the least loaded of them (first sampled on ties).',
    parameters: [int('d', 2, 1, 1024, 'instances sampled per decision (capped at the number of instances)', lin(1, 8))],
  },
  {
    name: 'prefix_affinity_threshold',
    point: 'routing',
    description: 'Routes to the instance holding the longest cached prefix of the prompt when it covers at least min_match_ratio of the prompt\'s blocks and its load is within max_load_gap of the least loaded instance; otherwise to the least loaded instance.',
    parameters: [
      num('min_match_ratio', 0.25, 0, 1, 'share of the prompt\'s full blocks that must be cached to prefer affinity', lin(0, 1)),
      int('max_load_gap', 8, 0, 1_000_000, 'how much busier (queue + batch + in-flight) the affine instance may be than the least loaded one', logr(1, 64)),
    ],
  },
  // ---- admission ----
  {
    name: 'load_shedding_admission',
    point: 'admission',
    description: 'Admits while the cluster is below its thresholds; above any of them, requests whose SLO class priority is below protected_priority are rejected or delayed.',
    parameters: [
      num('max_queue_depth_per_instance', 0, 0, 1e6, 'mean wait-queue length per instance above which the cluster is overloaded (0 = off)', orOff(logr(0.25, 64), 0)),
      num('max_kv_utilization', 1, 0, 1, 'mean KV utilization above which the cluster is overloaded (1 = off)', orOff(logr(0.02, 1), 1)),
      num('max_in_flight_per_instance', 0, 0, 1e6, 'mean in-flight requests per instance above which the cluster is overloaded (0 = off)', orOff(logr(1, 256), 0)),
      int('protected_priority', 3, -100, 100, 'SLO class priority at or above which requests are always admitted (critical 4, standard 3, batch -1, sheddable -2, background -3)', lin(-3, 5)),
      oneOf('overload_action', 'reject', ['reject', 'delay'], 'what happens to unprotected requests under overload'),
      int('delay_us', 50_000, 1, 3_600_000_000, 'DELAY length when overload_action is delay', logr(20_000, 2_000_000)),
    ],
    example: { max_queue_depth_per_instance: 2, protected_priority: 4, overload_action: 'delay', delay_us: 200_000 },
  },
  {
    name: 'tenant_rate_limit',
    point: 'admission',
    description: 'Limits each tenant\'s recent request rate; a tenant over its rate (or bursting, when reject_bursting) is rejected or delayed.',
    parameters: [
      num('max_rate_per_tenant', 0, 0, 1e9, 'requests per second per tenant over the recent window (0 = no limit)', orOff(logr(0.5, 200), 0)),
      bool('reject_bursting', false, 'also act on tenants whose burst detector fires'),
      oneOf('action', 'reject', ['reject', 'delay'], 'what happens to a request over the limit'),
      int('delay_us', 100_000, 1, 3_600_000_000, 'DELAY length when action is delay', logr(20_000, 2_000_000)),
    ],
    example: { reject_bursting: true, action: 'delay', delay_us: 200_000 },
  },
  {
    name: 'prompt_size_admission',
    point: 'admission',
    description: 'Rejects requests whose prompt is longer than max_input_tokens.',
    parameters: [int('max_input_tokens', 8192, 1, 100_000_000, 'longest prompt admitted (tokens)', logr(64, 16384))],
    example: { max_input_tokens: 4096 },
  },
  // ---- priority ----
  {
    name: 'slo_class_priority',
    point: 'priority',
    description: 'A score per SLO class (higher = more urgent), plus a bonus for short prompts.',
    parameters: [
      num('critical', 4, -1000, 1000, 'score of critical requests', lin(-10, 10)),
      num('standard', 3, -1000, 1000, 'score of standard requests and of requests without a class', lin(-10, 10)),
      num('batch', -1, -1000, 1000, 'score of batch requests', lin(-10, 10)),
      num('sheddable', -2, -1000, 1000, 'score of sheddable requests', lin(-10, 10)),
      num('background', -3, -1000, 1000, 'score of background requests', lin(-10, 10)),
      num('short_prompt_bonus', 0, -1000, 1000, 'added when the prompt has at most short_prompt_tokens tokens', lin(-10, 10)),
      int('short_prompt_tokens', 256, 0, 100_000_000, 'prompt length that counts as short', logr(16, 4096)),
    ],
  },
  {
    name: 'size_aware_priority',
    point: 'priority',
    description: 'score = class_weight x SLO class priority - size_weight x prompt tokens / 1000.',
    parameters: [
      num('class_weight', 1, 0, 1000, 'weight of the SLO class priority (critical 4 ... background -3)', WEIGHT),
      num('size_weight', 1, 0, 1000, 'penalty per thousand prompt tokens', WEIGHT),
    ],
  },
  // ---- scheduler ----
  {
    name: 'priority_aging',
    point: 'scheduler',
    description: 'Orders the wait queue by class_weight x urgency + age_weight_per_s x seconds waited (urgency = -instance priority); ties by arrival, then id.',
    parameters: [
      num('class_weight', 1, 0, 1e6, 'weight of the request\'s urgency (from its SLO class or priority policy)', WEIGHT),
      num('age_weight_per_s', 0, 0, 1e6, 'score gained per second of waiting (prevents starvation)', orOff(logr(0.01, 100), 0)),
    ],
    example: { class_weight: 1, age_weight_per_s: 1 },
  },
  {
    name: 'shortest_prompt_first',
    point: 'scheduler',
    description: 'Orders the wait queue by -size_weight x prompt tokens / 1000 + age_weight_per_s x seconds waited; ties by arrival, then id.',
    parameters: [
      num('size_weight', 1, 0, 1e6, 'penalty per thousand prompt tokens', WEIGHT),
      num('age_weight_per_s', 0, 0, 1e6, 'score gained per second of waiting', orOff(logr(0.01, 100), 0)),
    ],
  },
  {
    name: 'chunked_admission',
    point: 'scheduler',
    description: 'FCFS admission that caps each new request\'s first prefill chunk and how many requests join per step (through makeBatch).',
    parameters: [
      int('chunk_tokens', 0, 0, 1_000_000, 'first-chunk cap for newly admitted prompts (0 = no cap)', orOff(logr(64, 4096), 0)),
      int('max_admissions_per_step', 0, 0, 1_000_000, 'new requests per step (0 = as many as fit)', orOff(logr(1, 64), 0)),
    ],
    example: { chunk_tokens: 512 },
  },
  // ---- autoscale ----
  {
    name: 'threshold_autoscaler',
    point: 'autoscale',
    description: 'Scales up by step when queue depth or utilization is above its high mark, down when both are below their low marks, at most once per cooldown.',
    parameters: [
      num('scale_up_queue_depth', 8, 0, 1e6, 'mean queue depth that triggers a scale-up', logr(0.25, 64)),
      num('scale_down_queue_depth', 1, 0, 1e6, 'mean queue depth below which a scale-down is allowed', lin(0, 8)),
      num('scale_up_utilization', 0.8, 0, 1, 'mean KV utilization that triggers a scale-up', logr(0.02, 1)),
      num('scale_down_utilization', 0.3, 0, 1, 'mean KV utilization below which a scale-down is allowed', logr(0.005, 0.6)),
      int('cooldown_us', 60_000_000, 0, 86_400_000_000, 'minimum time between scale actions', logr(1_000_000, 120_000_000)),
      int('step', 1, 1, 1000, 'replicas added or removed per action', lin(1, 4)),
    ],
  },
  {
    name: 'target_tracking_autoscaler',
    point: 'autoscale',
    description: 'Keeps the mean queue depth per replica near a target: replicas = ceil(current x avgQueueDepth / target), clamped to the bounds, at most once per cooldown.',
    parameters: [
      num('target_queue_per_replica', 4, 0.01, 1e6, 'wanted mean queue depth', logr(0.1, 32)),
      int('cooldown_us', 60_000_000, 0, 86_400_000_000, 'minimum time between scale actions', logr(1_000_000, 120_000_000)),
    ],
  },
  // ---- disaggregation (P/D decider) ----
  {
    name: 'prefix_threshold_disaggregation',
    point: 'disaggregation',
    description: 'Prefill on a prefill pod when the prompt tokens not cached on the chosen decode pod exceed the threshold, else on the decode pod (with the default threshold, exactly --pd-decider prefix-threshold).',
    parameters: [
      int('threshold', 16, 0, 1e9, 'uncached prompt tokens above which the request is disaggregated (--pd-prefix-threshold)', orOff(logr(16, 8192), 0)),
    ],
  },
  {
    name: 'conditional_disaggregation',
    point: 'disaggregation',
    description: 'Disaggregate a long uncached prefill only while the prefill pool keeps up: prefill locally when the uncached tokens are at most max_local_prefill_tokens, or when the prefill pool\'s mean queue or KV utilization is above its cap, or when the chosen decode pod is idle enough to absorb the prefill.',
    parameters: [
      int('max_local_prefill_tokens', 512, 0, 1e9, 'uncached prompt tokens a decode pod prefills itself', logr(16, 8192)),
      num('max_prefill_queue_per_instance', 0, 0, 1e6, 'mean prefill-pool queue depth above which prefill stays local (0 = no cap)', orOff(logr(0.25, 32), 0)),
      num('max_prefill_kv_utilization', 1, 0, 1, 'mean prefill-pool KV utilization above which prefill stays local (1 = no cap)', orOff(logr(0.0005, 1), 1)),
      int('local_if_decode_load_below', 0, 0, 1e6, 'prefill locally when the chosen decode pod\'s load (queue + batch + in-flight) is below this (0 = off)', orOff(logr(1, 64), 0)),
    ],
  },
  // ---- encode (E/P/D encode decider) ----
  {
    name: 'multimodal_encode',
    point: 'encode',
    description: 'Sends a request through the encode pool when it carries at least min_multimodal_tokens image, audio and video tokens (with the default 1, exactly --encode-decider multimodal).',
    parameters: [
      int('min_multimodal_tokens', 1, 0, 1e9, 'image + audio + video tokens from which a request is encoded (0 = every request)', logr(1, 4096)),
    ],
  },
];

export function findTemplate(name: string): TemplateSpec | undefined {
  return TEMPLATES.find((t) => t.name === name);
}

/** Defaults of a template as a parameter map. */
export function templateDefaults(t: TemplateSpec): Record<string, ParamValue> {
  return Object.fromEntries(t.parameters.map((p) => [p.name, p.default]));
}
