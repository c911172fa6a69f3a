/**
 * The shape of a workload spec file as zod schemas: which keys exist (strict objects reject the rest) and what
 * kind of value each holds. Ranges and cross-field rules are checked afterwards in validate.ts, which can say more
 * precisely what is wrong. Each schema's output is the typed form from types.ts (absent pointer-like fields
 * become null, other absent fields their zero value).
 */
import { z } from 'zod';
import { PROFILE_ITEM_KEYS, PROFILE_KEYS_BY_NAME, loadProfileSchema, misbehaviorSchema } from '../profiles/schema.js';
import type {
  ActiveWindow,
  ArrivalSpec,
  ClientSpec,
  CohortSpec,
  DistSpec,
  InferencePerfSpec,
  MultimodalSpec,
  ReasoningSpec,
  SloDimTargets,
  TrafficSource,
  WorkloadSpec,
} from './types.js';

/** A Go float64 field: any finite number (big integers included, as yaml.v3 would convert them). */
const float = z.preprocess((v) => (typeof v === 'bigint' ? Number(v) : v), z.number());
/** A Go int/int64 field: an integer within ±2^53 (yaml.v3 also accepts integral floats such as 1e6). */
const int = z.number().int();
const str = z.string();
const bool = z.boolean();

/** Optional field defaulting to a zero value. */
const opt = <T extends z.ZodType, D extends z.output<T>>(schema: T, zero: D) => schema.optional().transform((v) => v ?? zero);
/** Optional pointer-like field: absent = null. */
const ptr = <T extends z.ZodType>(schema: T) => schema.optional().transform((v) => v ?? null);
/** A list whose null items mean "an entry with every field at its zero value", as yaml.v3 decodes them. */
const list = <T extends z.ZodType>(item: T) => z.array(z.preprocess((v) => v ?? {}, item)).optional().transform((v) => v ?? []);

const emptyDist = (): DistSpec => ({ type: '', params: new Map(), file: '' });
const emptyArrival = (): ArrivalSpec => ({ process: '', cv: null, shape: null, scale: null });

const distObject = z.strictObject({
  type: opt(str, ''),
  // A null parameter value decodes to 0 in the reference's map[string]float64.
  params: ptr(z.map(z.string(), z.preprocess((v) => v ?? 0, float))),
  file: opt(str, ''),
});
const distSchema = distObject.transform((d): DistSpec => ({ type: d.type, params: d.params ?? new Map<string, number>(), file: d.file }));
const dist = () => distSchema.optional().transform((v) => v ?? emptyDist());

const arrivalObject = z.strictObject({ process: opt(str, ''), cv: ptr(float), shape: ptr(float), scale: ptr(float) });
const arrivalSchema = arrivalObject.transform((a): ArrivalSpec => a);

const networkObject = z.strictObject({ rtt_ms: opt(float, 0), bandwidth_mbps: opt(float, 0) });
const networkSchema = networkObject.transform((n) => ({ rttMs: n.rtt_ms, bandwidthMbps: n.bandwidth_mbps }));

const windowObject = z.strictObject({
  start_us: opt(int, 0),
  end_us: opt(int, 0),
  trace_rate: ptr(float),
  arrival: ptr(arrivalSchema),
  input_distribution: ptr(distSchema),
  output_distribution: ptr(distSchema),
});
const windowSchema = windowObject.transform(
    (w): ActiveWindow => ({
      startUs: w.start_us,
      endUs: w.end_us,
      traceRate: w.trace_rate,
      arrival: w.arrival,
      inputDist: w.input_distribution,
      outputDist: w.output_distribution,
    }),
  );

const lifecycleObject = z.strictObject({ windows: list(windowSchema) });
const lifecycleSchema = lifecycleObject;

const multimodalObject = z.strictObject({
  text_distribution: dist(),
  image_distribution: dist(),
  image_count_distribution: dist(),
  audio_distribution: dist(),
  audio_count_distribution: dist(),
  video_distribution: dist(),
  video_count_distribution: dist(),
});
const multimodalSchema = multimodalObject.transform(
    (m): MultimodalSpec => ({
      textDist: m.text_distribution,
      imageDist: m.image_distribution,
      imageCountDist: m.image_count_distribution,
      audioDist: m.audio_distribution,
      audioCountDist: m.audio_count_distribution,
      videoDist: m.video_distribution,
      videoCountDist: m.video_count_distribution,
    }),
  );

/** blis-ts extension (agentic sessions): each follow-up round also waits for a tool call of sampled latency (µs). */
const toolCallObject = z.strictObject({ latency_distribution: dist() });
const multiTurnObject = z.strictObject({
  max_rounds: opt(int, 0),
  think_time_us: opt(int, 0),
  context_growth: opt(str, ''),
  single_session: opt(bool, false),
  tool_call: ptr(toolCallObject),
});
const multiTurnSchema = multiTurnObject.transform((m) => ({
  maxRounds: m.max_rounds,
  thinkTimeUs: m.think_time_us,
  contextGrowth: m.context_growth,
  singleSession: m.single_session,
  toolCall: m.tool_call === null ? null : { latencyDist: m.tool_call.latency_distribution },
}));

const reasoningObject = z.strictObject({ reason_ratio_distribution: dist(), multi_turn: ptr(multiTurnSchema) });
const reasoningSchema = reasoningObject.transform((r): ReasoningSpec => ({ reasonRatioDist: r.reason_ratio_distribution, multiTurn: r.multi_turn }));

/** Keys a client and a cohort share, with their zero values. */
const sourceKeys = {
  id: opt(str, ''),
  tenant_id: opt(str, ''),
  slo_class: opt(str, ''),
  model: opt(str, ''),
  adapter: opt(str, ''),
  rate_fraction: opt(float, 0),
  arrival: arrivalSchema.optional().transform((v) => v ?? emptyArrival()),
  input_distribution: dist(),
  output_distribution: dist(),
  prefix_group: opt(str, ''),
  prefix_length: opt(int, 0),
  streaming: opt(bool, false),
  network: ptr(networkSchema),
  multimodal: ptr(multimodalSchema),
  reasoning: ptr(reasoningSchema),
  timeout: ptr(int),
  slo_target_us: ptr(int),
  closed_loop: ptr(bool),
};

type SourceRaw = z.output<z.ZodObject<typeof sourceKeys>>;

function toSource(c: SourceRaw): TrafficSource {
  return {
    tenantId: c.tenant_id,
    sloClass: c.slo_class,
    model: c.model,
    adapter: c.adapter,
    rateFraction: c.rate_fraction,
    arrival: c.arrival,
    inputDist: c.input_distribution,
    outputDist: c.output_distribution,
    prefixGroup: c.prefix_group,
    prefixLength: c.prefix_length,
    streaming: c.streaming,
    network: c.network,
    multimodal: c.multimodal,
    reasoning: c.reasoning,
    timeout: c.timeout,
    sloTargetUs: c.slo_target_us,
    closedLoop: c.closed_loop,
  };
}

const clientObject = z.strictObject({
  ...sourceKeys,
  concurrency: opt(int, 0),
  think_time_us: opt(int, 0),
  lifecycle: ptr(lifecycleSchema),
  // Extensions (src/workload/profiles); absent keys leave the fields out entirely.
  load_profile: loadProfileSchema.optional(),
  misbehavior: misbehaviorSchema.optional(),
});
const clientSchema = clientObject.transform(
    (c): ClientSpec => ({
      ...toSource(c),
      id: c.id,
      concurrency: c.concurrency,
      thinkTimeUs: c.think_time_us,
      lifecycle: c.lifecycle,
      ...(c.load_profile === undefined ? {} : { loadProfile: c.load_profile }),
      ...(c.misbehavior === undefined ? {} : { misbehavior: c.misbehavior }),
    }),
  );

const diurnalObject = z.strictObject({ peak_hour: opt(int, 0), peak_to_trough_ratio: opt(float, 0) });
const spikeObject = z.strictObject({ start_time_us: opt(int, 0), duration_us: opt(int, 0), trace_rate: ptr(float) });
const drainObject = z.strictObject({ start_time_us: opt(int, 0), ramp_duration_us: opt(int, 0) });
const cohortObject = z.strictObject({
  ...sourceKeys,
  population: opt(int, 0),
  prefix_sharing: opt(str, ''),
  diurnal: ptr(diurnalObject),
  spike: ptr(spikeObject),
  drain: ptr(drainObject),
});
const cohortSchema = cohortObject.transform(
    (c): CohortSpec => ({
      ...toSource(c),
      id: c.id,
      population: c.population,
      prefixSharing: c.prefix_sharing,
      diurnal: c.diurnal === null ? null : { peakHour: c.diurnal.peak_hour, peakToTroughRatio: c.diurnal.peak_to_trough_ratio },
      spike: c.spike === null ? null : { startTimeUs: c.spike.start_time_us, durationUs: c.spike.duration_us, traceRate: c.spike.trace_rate },
      drain: c.drain === null ? null : { startTimeUs: c.drain.start_time_us, rampDurationUs: c.drain.ramp_duration_us },
    }),
  );

const servegenObject = z.strictObject({
  path: opt(str, ''),
  time_window: opt(str, ''),
  span_start: opt(int, 0),
  span_end: opt(int, 0),
  window_duration_secs: opt(int, 0),
  drain_timeout_secs: ptr(int),
});
const servegenSchema = servegenObject.transform((s) => ({
    path: s.path,
    timeWindow: s.time_window,
    spanStart: s.span_start,
    spanEnd: s.span_end,
    windowDurationSecs: s.window_duration_secs,
    drainTimeoutSecs: s.drain_timeout_secs ?? 0,
    drainTimeoutSet: s.drain_timeout_secs !== null,
  }));

const stageObject = z.strictObject({ rate: opt(float, 0), duration: opt(int, 0) });
const sharedPrefixObject = z.strictObject({
  num_unique_system_prompts: opt(int, 0),
  num_users_per_system_prompt: opt(int, 0),
  system_prompt_len: opt(int, 0),
  question_len: opt(int, 0),
  output_len: opt(int, 0),
  enable_multi_turn_chat: opt(bool, false),
});
const inferencePerfObject = z.strictObject({ stages: list(stageObject), shared_prefix: ptr(sharedPrefixObject) });
const inferencePerfSchema = inferencePerfObject.transform(
    (p): InferencePerfSpec => ({
      stages: p.stages,
      sharedPrefix:
        p.shared_prefix === null
          ? null
          : {
              numUniqueSystemPrompts: p.shared_prefix.num_unique_system_prompts,
              numUsersPerSystemPrompt: p.shared_prefix.num_users_per_system_prompt,
              systemPromptLen: p.shared_prefix.system_prompt_len,
              questionLen: p.shared_prefix.question_len,
              outputLen: p.shared_prefix.output_len,
              enableMultiTurnChat: p.shared_prefix.enable_multi_turn_chat,
            },
    }),
  );

const sloTargetsObject = z.strictObject({ ttft_ms: opt(float, 0), itl_ms: opt(float, 0), e2e_ms: opt(float, 0) });
const sloTargetsSchema = z
  .preprocess((v) => v ?? {}, sloTargetsObject)
  .transform((t): SloDimTargets => ({ ttftMs: t.ttft_ms, itlMs: t.itl_ms, e2eMs: t.e2e_ms }));

/** The seed is an int64; numbers arrive for values within ±2^53 and bigints beyond. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
// An int64 (the reference's type): a larger seed is refused rather than wrapped.
const seedSchema = z
  .union([int, z.bigint()])
  .transform((v) => BigInt(v))
  .refine((v) => v >= INT64_MIN && v <= INT64_MAX, { message: `must fit in int64 (${INT64_MIN} to ${INT64_MAX}); use a smaller seed` });

const topObject = z.strictObject({
  version: opt(str, ''),
  seed: seedSchema.optional().transform((v) => v ?? 0n),
  category: opt(str, ''),
  clients: list(clientSchema),
  cohorts: list(cohortSchema),
  aggregate_rate: opt(float, 0),
  horizon: opt(int, 0),
  num_requests: opt(int, 0),
  servegen_data: ptr(servegenSchema),
  inference_perf: ptr(inferencePerfSchema),
  goodput_slo_targets: ptr(z.map(z.string(), sloTargetsSchema)),
  load_profile: loadProfileSchema.optional(),
});
export const workloadSpecSchema = topObject.transform(
    (s): WorkloadSpec => ({
      version: s.version,
      seed: s.seed,
      category: s.category,
      clients: s.clients,
      cohorts: s.cohorts,
      aggregateRate: s.aggregate_rate,
      horizon: s.horizon,
      numRequests: s.num_requests,
      servegenData: s.servegen_data,
      inferencePerf: s.inference_perf,
      goodputSloTargets: s.goodput_slo_targets ?? new Map<string, SloDimTargets>(),
      ...(s.load_profile === undefined ? {} : { loadProfile: s.load_profile }),
    }),
  );

const keysOf = (o: { shape: object }): readonly string[] => Object.keys(o.shape);

/** Keys of the mapping a key name introduces (for the structs reached through a named key). */
const KEYS_BY_NAME: ReadonlyMap<string, readonly string[]> = new Map([
  ['arrival', keysOf(arrivalObject)],
  ['network', keysOf(networkObject)],
  ['lifecycle', keysOf(lifecycleObject)],
  ['multimodal', keysOf(multimodalObject)],
  ['reasoning', keysOf(reasoningObject)],
  ['multi_turn', keysOf(multiTurnObject)],
  ['tool_call', keysOf(toolCallObject)],
  ['diurnal', keysOf(diurnalObject)],
  ['spike', keysOf(spikeObject)],
  ['drain', keysOf(drainObject)],
  ['servegen_data', keysOf(servegenObject)],
  ['inference_perf', keysOf(inferencePerfObject)],
  ['shared_prefix', keysOf(sharedPrefixObject)],
  ...PROFILE_KEYS_BY_NAME,
]);

/** Keys of list items, by the list's key name. */
const ITEM_KEYS: ReadonlyMap<string, readonly string[]> = new Map([
  ['clients', keysOf(clientObject)],
  ['cohorts', keysOf(cohortObject)],
  ['windows', keysOf(windowObject)],
  ['stages', keysOf(stageObject)],
  ...PROFILE_ITEM_KEYS,
]);

/** The valid keys of the mapping at a YAML path (for "unknown key" hints). */
export const SCHEMA_KEYS = {
  forPath(path: readonly (string | number)[]): readonly string[] {
    if (path.length === 0) return keysOf(topObject);
    const last = path[path.length - 1]!;
    const parent = path[path.length - 2];
    if (typeof last === 'number') return ITEM_KEYS.get(String(parent)) ?? [];
    if (parent === 'goodput_slo_targets') return keysOf(sloTargetsObject);
    if (last.endsWith('_distribution')) return keysOf(distObject);
    return KEYS_BY_NAME.get(last) ?? [];
  },
};
