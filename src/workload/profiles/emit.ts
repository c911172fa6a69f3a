/**
 * A typed workload spec back to spec v2 YAML text, laid out as the reference's `yaml.Marshal(spec)` lays it out
 * (its struct field order, its omitempty choices, 4-space indentation), so `blis convert` output reads like the
 * reference's. The project's extensions (`load_profile`, `misbehavior`) follow the reference fields, with only
 * the parameters actually set.
 *
 * Parsing the output with parseWorkloadSpec gives back an equivalent spec (same generated requests); the
 * round trip is tested over every parity spec.
 */
import type { YamlTree } from '../../gocompat/go-yaml-emit.js';
import { emitYamlDocument, sortYamlKeys, yBool, yFloat, yInt, yScalar, yStr } from '../../gocompat/go-yaml-emit.js';
import type {
  ActiveWindow,
  ArrivalSpec,
  ClientSpec,
  CohortSpec,
  DistSpec,
  InferencePerfSpec,
  MultimodalSpec,
  NetworkSpec,
  ReasoningSpec,
  TrafficSource,
  WorkloadSpec,
} from '../spec/types.js';
import type { LoadProfileSpec, LoadSegment, MisbehaviorSpec } from './types.js';

type Entry = readonly [string, YamlTree];
type Entries = Entry[];

const map = (entries: Entries): YamlTree => ({ k: 'map', entries });
const seq = (items: YamlTree[]): YamlTree => ({ k: 'seq', items });

/** Appends `key` only when `v` is present (a Go pointer field with omitempty). */
function opt<T>(out: Entries, key: string, v: T | null | undefined, f: (v: T) => YamlTree): void {
  if (v !== null && v !== undefined) out.push([key, f(v)]);
}

/** Appends `key` unless the value is the Go zero value (a non-pointer field with omitempty). */
function nz(out: Entries, key: string, v: string | number | boolean): void {
  if (v === '' || v === 0 || v === false) return;
  out.push([key, typeof v === 'string' ? yStr(v) : typeof v === 'boolean' ? yBool(v) : yFloat(v)]);
}

function int(out: Entries, key: string, v: number): void {
  if (v !== 0) out.push([key, yInt(v)]);
}

function dist(d: DistSpec): YamlTree {
  const e: Entries = [['type', yStr(d.type)]];
  if (d.params.size > 0) e.push(['params', map(sortYamlKeys(d.params.keys()).map((k) => [k, yFloat(d.params.get(k)!)]))]);
  nz(e, 'file', d.file);
  return map(e);
}

function arrival(a: ArrivalSpec): YamlTree {
  const e: Entries = [['process', yStr(a.process)]];
  opt(e, 'cv', a.cv, yFloat);
  opt(e, 'shape', a.shape, yFloat);
  opt(e, 'scale', a.scale, yFloat);
  return map(e);
}

function network(n: NetworkSpec): YamlTree {
  const e: Entries = [['rtt_ms', yFloat(n.rttMs)]];
  nz(e, 'bandwidth_mbps', n.bandwidthMbps);
  return map(e);
}

function window(w: ActiveWindow): YamlTree {
  const e: Entries = [['start_us', yInt(w.startUs)], ['end_us', yInt(w.endUs)]];
  opt(e, 'trace_rate', w.traceRate, yFloat);
  opt(e, 'arrival', w.arrival, arrival);
  opt(e, 'input_distribution', w.inputDist, dist);
  opt(e, 'output_distribution', w.outputDist, dist);
  return map(e);
}

function multimodal(m: MultimodalSpec): YamlTree {
  return map([
    ['text_distribution', dist(m.textDist)],
    ['image_distribution', dist(m.imageDist)],
    ['image_count_distribution', dist(m.imageCountDist)],
    ['audio_distribution', dist(m.audioDist)],
    ['audio_count_distribution', dist(m.audioCountDist)],
    ['video_distribution', dist(m.videoDist)],
    ['video_count_distribution', dist(m.videoCountDist)],
  ]);
}

function reasoning(r: ReasoningSpec): YamlTree {
  const e: Entries = [['reason_ratio_distribution', dist(r.reasonRatioDist)]];
  opt(e, 'multi_turn', r.multiTurn, (mt) => {
    const m: Entries = [['max_rounds', yInt(mt.maxRounds)], ['think_time_us', yInt(mt.thinkTimeUs)], ['context_growth', yStr(mt.contextGrowth)]];
    nz(m, 'single_session', mt.singleSession);
    return map(m);
  });
  return map(e);
}

function segment(s: LoadSegment): YamlTree {
  const e: Entries = [['start_s', yFloat(s.startS)], ['end_s', yFloat(s.endS)], ['kind', yStr(s.kind)]];
  opt(e, 'multiplier', s.multiplier, yFloat);
  opt(e, 'levels', s.levels, (l) => seq(l.map(yFloat)));
  const rest: [string, number | null][] = [
    ['from', s.from], ['to', s.to], ['period_s', s.periodS], ['peak_at_s', s.peakAtS], ['peak', s.peak], ['trough', s.trough],
    ['at_s', s.atS], ['duration_s', s.durationS], ['base', s.base], ['decay_s', s.decayS],
  ];
  for (const [k, v] of rest) opt(e, k, v, yFloat);
  return map(e);
}

export function loadProfileTree(p: LoadProfileSpec): YamlTree {
  const e: Entries = [];
  if (p.defaultMultiplier !== 1) e.push(['default_multiplier', yFloat(p.defaultMultiplier)]);
  e.push(['segments', seq(p.segments.map(segment))]);
  return map(e);
}

export function misbehaviorTree(m: MisbehaviorSpec): YamlTree {
  const e: Entries = [['kind', yStr(m.kind)]];
  const nums: [string, number | null][] = [
    ['burst_rate_multiplier', m.burstRateMultiplier], ['off_rate_multiplier', m.offRateMultiplier], ['mean_on_s', m.meanOnS],
    ['mean_off_s', m.meanOffS], ['pareto_alpha', m.paretoAlpha], ['rate_multiplier', m.rateMultiplier],
    ['input_multiplier', m.inputMultiplier], ['fixed_input_tokens', m.fixedInputTokens], ['output_multiplier', m.outputMultiplier],
    ['fraction', m.fraction],
  ];
  for (const [k, v] of nums) opt(e, k, v, k === 'fixed_input_tokens' ? yInt : yFloat);
  opt(e, 'group', m.group, yStr);
  const adv: [string, number | null][] = [
    ['period_s', m.periodS], ['start_s', m.startS], ['burst_size', m.burstSize], ['jitter_ms', m.jitterMs], ['background_multiplier', m.backgroundMultiplier],
  ];
  for (const [k, v] of adv) opt(e, k, v, k === 'burst_size' ? yInt : yFloat);
  return map(e);
}

/** The pointer fields a client and a cohort both end with (their order differs, so each caller picks). */
function ptrs(c: TrafficSource): Record<'timeout' | 'slo_target_us' | 'closed_loop', YamlTree | null> {
  return {
    timeout: c.timeout === null ? null : yInt(c.timeout),
    slo_target_us: c.sloTargetUs === null ? null : yInt(c.sloTargetUs),
    closed_loop: c.closedLoop === null ? null : yBool(c.closedLoop),
  };
}

function client(c: ClientSpec): YamlTree {
  const e: Entries = [['id', yStr(c.id)], ['tenant_id', yStr(c.tenantId)], ['slo_class', yStr(c.sloClass)]];
  nz(e, 'model', c.model);
  nz(e, 'adapter', c.adapter);
  e.push(['rate_fraction', yFloat(c.rateFraction)]);
  int(e, 'concurrency', c.concurrency);
  int(e, 'think_time_us', c.thinkTimeUs);
  e.push(['arrival', arrival(c.arrival)], ['input_distribution', dist(c.inputDist)], ['output_distribution', dist(c.outputDist)]);
  nz(e, 'prefix_group', c.prefixGroup);
  int(e, 'prefix_length', c.prefixLength);
  e.push(['streaming', yBool(c.streaming)]);
  opt(e, 'network', c.network, network);
  opt(e, 'lifecycle', c.lifecycle, (l) => map([['windows', seq(l.windows.map(window))]]));
  opt(e, 'multimodal', c.multimodal, multimodal);
  opt(e, 'reasoning', c.reasoning, reasoning);
  const p = ptrs(c);
  opt(e, 'timeout', p.timeout, (v) => v);
  opt(e, 'slo_target_us', p.slo_target_us, (v) => v);
  opt(e, 'closed_loop', p.closed_loop, (v) => v);
  opt(e, 'load_profile', c.loadProfile, loadProfileTree);
  opt(e, 'misbehavior', c.misbehavior, misbehaviorTree);
  return map(e);
}

function cohort(c: CohortSpec): YamlTree {
  const e: Entries = [['id', yStr(c.id)], ['population', yInt(c.population)]];
  nz(e, 'tenant_id', c.tenantId);
  nz(e, 'slo_class', c.sloClass);
  nz(e, 'model', c.model);
  nz(e, 'adapter', c.adapter);
  e.push(['arrival', arrival(c.arrival)], ['input_distribution', dist(c.inputDist)], ['output_distribution', dist(c.outputDist)]);
  nz(e, 'prefix_group', c.prefixGroup);
  nz(e, 'prefix_sharing', c.prefixSharing);
  nz(e, 'streaming', c.streaming);
  e.push(['rate_fraction', yFloat(c.rateFraction)]);
  opt(e, 'diurnal', c.diurnal, (d) => map([['peak_hour', yInt(d.peakHour)], ['peak_to_trough_ratio', yFloat(d.peakToTroughRatio)]]));
  opt(e, 'spike', c.spike, (s) => {
    const m: Entries = [['start_time_us', yInt(s.startTimeUs)], ['duration_us', yInt(s.durationUs)]];
    opt(m, 'trace_rate', s.traceRate, yFloat);
    return map(m);
  });
  opt(e, 'drain', c.drain, (d) => map([['start_time_us', yInt(d.startTimeUs)], ['ramp_duration_us', yInt(d.rampDurationUs)]]));
  int(e, 'prefix_length', c.prefixLength);
  opt(e, 'reasoning', c.reasoning, reasoning);
  const p = ptrs(c);
  opt(e, 'closed_loop', p.closed_loop, (v) => v);
  opt(e, 'timeout', p.timeout, (v) => v);
  opt(e, 'slo_target_us', p.slo_target_us, (v) => v);
  opt(e, 'network', c.network, network);
  opt(e, 'multimodal', c.multimodal, multimodal);
  return map(e);
}

function inferencePerf(ip: InferencePerfSpec): YamlTree {
  const stages = seq(ip.stages.map((s) => map([['rate', yFloat(s.rate)], ['duration', yInt(s.duration)]])));
  const sp = ip.sharedPrefix;
  const shared =
    sp === null
      ? yScalar('null')
      : map([
          ['num_unique_system_prompts', yInt(sp.numUniqueSystemPrompts)],
          ['num_users_per_system_prompt', yInt(sp.numUsersPerSystemPrompt)],
          ['system_prompt_len', yInt(sp.systemPromptLen)],
          ['question_len', yInt(sp.questionLen)],
          ['output_len', yInt(sp.outputLen)],
          ['enable_multi_turn_chat', yBool(sp.enableMultiTurnChat)],
        ]);
  return map([['stages', stages], ['shared_prefix', shared]]);
}

/**
 * The spec as YAML text. Clients built in code with a custom arrival sampler (inference-perf expansion) cannot
 * be written: the sampler has no YAML form.
 * @throws RangeError for such a client.
 */
export function specToYaml(spec: WorkloadSpec): string {
  const bad = spec.clients.find((c) => c.customSamplerFactory !== undefined);
  if (bad !== undefined) throw new RangeError(`client "${bad.id}" has a custom arrival sampler, which has no YAML form`);
  const e: Entries = [['version', yStr(spec.version)], ['seed', yInt(spec.seed)], ['category', yStr(spec.category)]];
  e.push(['clients', seq(spec.clients.map(client))]);
  if (spec.cohorts.length > 0) e.push(['cohorts', seq(spec.cohorts.map(cohort))]);
  e.push(['aggregate_rate', yFloat(spec.aggregateRate)]);
  int(e, 'horizon', spec.horizon);
  int(e, 'num_requests', spec.numRequests);
  opt(e, 'servegen_data', spec.servegenData, (s) => {
    const m: Entries = [];
    nz(m, 'path', s.path);
    nz(m, 'time_window', s.timeWindow);
    int(m, 'span_start', s.spanStart);
    int(m, 'span_end', s.spanEnd);
    int(m, 'window_duration_secs', s.windowDurationSecs);
    int(m, 'drain_timeout_secs', s.drainTimeoutSecs);
    return map(m);
  });
  opt(e, 'inference_perf', spec.inferencePerf, inferencePerf);
  if (spec.goodputSloTargets.size > 0) {
    const classes = sortYamlKeys(spec.goodputSloTargets.keys()).map((cls): Entry => {
      const t = spec.goodputSloTargets.get(cls)!;
      const m: Entries = [];
      nz(m, 'ttft_ms', t.ttftMs);
      nz(m, 'itl_ms', t.itlMs);
      nz(m, 'e2e_ms', t.e2eMs);
      return [cls, map(m)];
    });
    e.push(['goodput_slo_targets', map(classes)]);
  }
  opt(e, 'load_profile', spec.loadProfile, loadProfileTree);
  return emitYamlDocument(e);
}
