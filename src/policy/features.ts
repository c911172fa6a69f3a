/**
 * The named features that decision trees (and `blis policies`) expose: dotted paths into the plain views of
 * view.ts, grouped by what they describe. A feature is valid at a control point when its root is present in
 * that point's environment:
 *
 * | control point | environment roots |
 * |---|---|
 * | admission, priority | request, tenant, global, cluster, clock |
 * | routing | the same, plus `instance` inside routing rules (filters, minimize/maximize) |
 * | scheduler | request (a waiting request), instance (this instance), clock |
 * | autoscale | deployment, clock |
 * | disaggregation | request, tenant, global, clock, `selected` (the chosen decode pod), `decode` and `prefill` (pool aggregates) |
 * | encode | request, tenant, global, clock, `encode` (the encode pool's aggregates) |
 */
import type { ControlPoint, GlobalView, InstanceView, RequestView, SchedRequestView, SchedulerView, StateView, TenantView } from './view.js';
import type { AutoScaleContext } from '../routing/autoscale.js';

export type FeatureType = 'number' | 'boolean' | 'string';

export interface FeatureSpec {
  readonly name: string;
  readonly type: FeatureType;
  /** Control points whose environment holds it. */
  readonly points: readonly ControlPoint[];
  /** `decision`: one value per decision; `instance`: one value per candidate instance (routing rules). */
  readonly scope: 'decision' | 'instance';
  readonly description: string;
}

const ROUTER: readonly ControlPoint[] = ['admission', 'priority', 'routing'];
/** Points that see the request as the router knows it (the P/D decider decides per request too). */
const REQUEST_POINTS: readonly ControlPoint[] = [...ROUTER, 'disaggregation', 'encode'];

function f(name: string, type: FeatureType, points: readonly ControlPoint[], description: string, scope: 'decision' | 'instance' = 'decision'): FeatureSpec {
  return { name, type, points, scope, description };
}

/** Aggregates over the routable instances, for decisions that are not per instance. */
export interface ClusterView {
  instances: number;
  totalQueueDepth: number;
  maxQueueDepth: number;
  meanQueueDepth: number;
  totalInFlight: number;
  minLoad: number;
  maxLoad: number;
  meanKvUtilization: number;
  maxKvUtilization: number;
  totalFreeKvBlocks: number;
  totalAvailableCapacity: number;
  /** Instances that hold at least one leading block of the request (observed view). */
  instancesWithPrefix: number;
  /** Largest cachedPrefixBlocks over the instances. */
  maxCachedPrefixBlocks: number;
  instancesWithAdapter: number;
  /** Largest ShadowKV matchedBlocks over the instances. */
  maxShadowMatchedBlocks: number;
}

/** An instance inside a routing rule: its view plus its ObservedKV and ShadowKV figures. */
export interface RoutedInstanceView extends InstanceView {
  cpuUtilization: number;
  cpuFreeBlocks: number;
  offloadRate: number;
  reloadRate: number;
  storageUtilization: number;
  storageFreeBlocks: number;
  storageReloadRate: number;
  shadowMatchedBlocks: number;
  /** cachedPrefixBlocks / the request's full prompt blocks (0 when the prompt is shorter than a block). */
  prefixMatchRatio: number;
}

const FEATURES_BASE: readonly FeatureSpec[] = [
  f('clock', 'number', ['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode'], 'simulation clock (µs)'),
  // request (router view)
  f('request.inputTokens', 'number', [...REQUEST_POINTS, 'scheduler'], 'prompt length (tokens)'),
  f('request.outputTokens', 'number', [...REQUEST_POINTS, 'scheduler'], 'client output budget (max_tokens); 0 when the workload does not state one'),
  f('request.tenant', 'string', [...REQUEST_POINTS, 'scheduler'], 'tenant id (\'\' when none)'),
  f('request.sloClass', 'string', [...REQUEST_POINTS, 'scheduler'], 'SLO class (critical, standard, sheddable, batch, background or \'\')'),
  f('request.priority', 'number', [...REQUEST_POINTS, 'scheduler'], 'instance priority so far (lower = more urgent)'),
  f('request.model', 'string', REQUEST_POINTS, 'model the request names (\'\' when none)'),
  f('request.sessionId', 'string', REQUEST_POINTS, 'session id (\'\' when none)'),
  f('request.arrivalUs', 'number', [...REQUEST_POINTS, 'scheduler'], 'arrival time (µs)'),
  f('request.prefixBlocks', 'number', REQUEST_POINTS, 'number of full prompt blocks (length of prefixHashes)'),
  f('request.admissionDelays', 'number', REQUEST_POINTS, 'admission DELAYs already waited out'),
  f('request.adapter', 'string', REQUEST_POINTS, 'LoRA adapter the request needs (\'\' = base model)'),
  f('request.imageTokens', 'number', REQUEST_POINTS, 'image input tokens (0 for text-only requests)'),
  f('request.audioTokens', 'number', REQUEST_POINTS, 'audio input tokens'),
  f('request.videoTokens', 'number', REQUEST_POINTS, 'video input tokens'),
  f('request.multimodalTokens', 'number', REQUEST_POINTS, 'image + audio + video tokens (> 0: the request is multimodal)'),
  f('request.waitUs', 'number', ['scheduler'], 'µs since arrival'),
  f('request.progress', 'number', ['scheduler'], 'prompt tokens already computed'),
  // tenant
  f('tenant.requestCount', 'number', REQUEST_POINTS, 'requests of the tenant seen by admission so far'),
  f('tenant.activeRequests', 'number', REQUEST_POINTS, 'requests of the tenant routed and not finished'),
  f('tenant.recentRate', 'number', REQUEST_POINTS, 'tenant arrivals per second over the recent window'),
  f('tenant.burstDetected', 'boolean', REQUEST_POINTS, 'tenant rate above the burst factor times its long-run rate'),
  // global
  f('global.inFlight', 'number', REQUEST_POINTS, 'requests routed and not finished, all instances'),
  f('global.requestRate', 'number', REQUEST_POINTS, 'arrivals per second over the recent window'),
  f('global.throughput', 'number', REQUEST_POINTS, 'output tokens per second completed over the recent window'),
  f('global.completedRequests', 'number', REQUEST_POINTS, 'requests completed so far'),
  f('global.rejectedRequests', 'number', REQUEST_POINTS, 'requests rejected so far'),
  f('global.delayedRequests', 'number', REQUEST_POINTS, 'requests waiting out an admission DELAY now'),
  // cluster aggregates
  f('cluster.instances', 'number', ROUTER, 'routable instances'),
  f('cluster.totalQueueDepth', 'number', ROUTER, 'sum of wait-queue lengths'),
  f('cluster.maxQueueDepth', 'number', ROUTER, 'longest wait queue'),
  f('cluster.meanQueueDepth', 'number', ROUTER, 'mean wait-queue length'),
  f('cluster.totalInFlight', 'number', ROUTER, 'sum of in-flight counts'),
  f('cluster.minLoad', 'number', ROUTER, 'smallest load (queue + batch + in-flight)'),
  f('cluster.maxLoad', 'number', ROUTER, 'largest load'),
  f('cluster.meanKvUtilization', 'number', ROUTER, 'mean KV utilization'),
  f('cluster.maxKvUtilization', 'number', ROUTER, 'largest KV utilization'),
  f('cluster.totalFreeKvBlocks', 'number', ROUTER, 'free KV blocks, all instances'),
  f('cluster.totalAvailableCapacity', 'number', ROUTER, 'free seats, all instances'),
  f('cluster.instancesWithPrefix', 'number', ROUTER, 'instances holding at least one leading block of the request'),
  f('cluster.maxCachedPrefixBlocks', 'number', ROUTER, 'most leading blocks of the request cached on one instance'),
  f('cluster.instancesWithAdapter', 'number', ROUTER, 'instances holding the request\'s LoRA adapter resident (0 for base-model requests)'),
  f('cluster.maxShadowMatchedBlocks', 'number', ROUTER, 'most leading blocks of the request on one instance per ShadowKV'),
  // per instance, inside routing rules
  ...([
    ['id', 'string', 'instance id'],
    ['index', 'number', 'position in the routable list'],
    ['queueDepth', 'number', 'wait-queue length'],
    ['batchSize', 'number', 'running batch size'],
    ['inFlight', 'number', 'requests routed there and not finished'],
    ['load', 'number', 'queueDepth + batchSize + inFlight'],
    ['kvUtilization', 'number', 'GPU KV utilization in [0, 1]'],
    ['freeKvBlocks', 'number', 'free GPU KV blocks'],
    ['cacheHitRate', 'number', 'block-level prefix cache hit rate so far'],
    ['recentTtftMs', 'number', 'mean TTFT of recent requests (ms)'],
    ['recentTpotMs', 'number', 'mean inter-token latency of recent requests (ms)'],
    ['estimatedWaitMs', 'number', 'estimated queueing delay of a new arrival (ms)'],
    ['availableCapacity', 'number', 'free seats'],
    ['preemptionCount', 'number', 'preemptions so far'],
    ['cachedPrefixBlocks', 'number', 'leading blocks of the request cached there (observed)'],
    ['adapterResident', 'boolean', 'the request\'s LoRA adapter is resident there (no cold load)'],
    ['prefixMatchRatio', 'number', 'cachedPrefixBlocks / the request\'s full prompt blocks'],
    ['shadowMatchedBlocks', 'number', 'leading blocks of the request there per ShadowKV'],
    ['cpuUtilization', 'number', 'CPU KV tier utilization'],
    ['cpuFreeBlocks', 'number', 'free CPU KV blocks'],
    ['offloadRate', 'number', 'GPU->CPU block offloads per second'],
    ['reloadRate', 'number', 'CPU->GPU block reloads per second'],
    ['storageUtilization', 'number', 'storage KV tier utilization (0 without one)'],
    ['storageFreeBlocks', 'number', 'free storage KV blocks (0 without a storage tier)'],
    ['storageReloadRate', 'number', 'storage->GPU block reloads per second'],
  ] as const).map(([n, t, d]) => f(`instance.${n}`, t, ['routing'], d, 'instance')),
  // the instance a scheduler runs on
  f('instance.queueDepth', 'number', ['scheduler'], 'wait-queue length'),
  f('instance.batchSize', 'number', ['scheduler'], 'running batch size'),
  f('instance.kvFreeBlocks', 'number', ['scheduler'], 'free KV blocks'),
  f('instance.kvUtilization', 'number', ['scheduler'], 'KV utilization in [0, 1]'),
  f('instance.maxBatchSize', 'number', ['scheduler'], 'max running requests'),
  f('instance.maxTokenBudget', 'number', ['scheduler'], 'token budget per step'),
  // autoscale
  ...([
    ['currentReplicas', 'replicas now'],
    ['minReplicas', 'lower bound'],
    ['maxReplicas', 'upper bound'],
    ['pendingRequests', 'requests waiting (gateway and queues)'],
    ['timeSinceLastScaleUs', 'µs since the last scale action'],
    ['avgQueueDepth', 'mean wait-queue length'],
    ['avgUtilization', 'mean KV utilization'],
    ['requestRate', 'arrivals per second'],
    ['avgLatencyMs', 'mean E2E latency of recent requests (ms)'],
    ['p99LatencyMs', 'p99 E2E latency of recent requests (ms)'],
  ] as const).map(([n, d]) => f(`deployment.${n}`, 'number', ['autoscale'], d)),
  // disaggregation: the decode pod the decode routing chose, and both pools' aggregates
  ...([
    ['id', 'string', 'instance id'],
    ['queueDepth', 'number', 'wait-queue length'],
    ['batchSize', 'number', 'running batch size'],
    ['inFlight', 'number', 'requests routed there and not finished'],
    ['load', 'number', 'queueDepth + batchSize + inFlight'],
    ['kvUtilization', 'number', 'GPU KV utilization in [0, 1]'],
    ['freeKvBlocks', 'number', 'free GPU KV blocks'],
    ['availableCapacity', 'number', 'free seats'],
    ['estimatedWaitMs', 'number', 'estimated queueing delay of a new arrival (ms)'],
    ['recentTtftMs', 'number', 'mean TTFT of recent requests (ms)'],
    ['recentTpotMs', 'number', 'mean inter-token latency of recent requests (ms)'],
    ['cachedPrefixBlocks', 'number', 'leading blocks of the request cached there (observed, as prefix-threshold reads it)'],
    ['cachedTokens', 'number', 'cachedPrefixBlocks x block size'],
    ['uncachedTokens', 'number', 'prompt tokens not cached there: what a local prefill computes (prefix-threshold compares it)'],
    ['prefixMatchRatio', 'number', 'cachedPrefixBlocks / the request\'s full prompt blocks'],
  ] as const).map(([n, t, d]) => f(`selected.${n}`, t, ['disaggregation'], `chosen decode pod: ${d}`)),
];

/** `cluster.*` re-rooted over one pool (`decode.*`, `prefill.*` for the P/D decider, `encode.*` for the encode decider). */
function poolFeatures(root: 'decode' | 'prefill' | 'encode', point: ControlPoint): FeatureSpec[] {
  return FEATURES_BASE.filter((x) => x.name.startsWith('cluster.')).map((x) =>
    f(`${root}.${x.name.slice('cluster.'.length)}`, x.type, [point], `${root} pool: ${x.description.replace('routable instances', 'routable pods')}`));
}

export const FEATURES: readonly FeatureSpec[] = [
  ...FEATURES_BASE, ...poolFeatures('decode', 'disaggregation'), ...poolFeatures('prefill', 'disaggregation'), ...poolFeatures('encode', 'encode'),
];

/** Feature by name and control point. */
export function findFeature(name: string, point: ControlPoint): FeatureSpec | undefined {
  return FEATURES.find((x) => x.name === name && x.points.includes(point));
}

/** The feature names valid at a control point (for error messages: the closest names). */
export function featureNames(point: ControlPoint, scope?: 'decision' | 'instance'): string[] {
  return FEATURES.filter((x) => x.points.includes(point) && (scope === undefined || x.scope === scope)).map((x) => x.name);
}

/** An environment a feature reads from: roots by name. */
export type FeatureEnv = Readonly<Record<string, unknown>>;

/**
 * Reads a dotted feature path (already validated) from an environment. Missing values read as 0 / '' /
 * false by the feature's declared type (e.g. `request.outputTokens` when the workload states none).
 */
export function readFeature(env: FeatureEnv, path: readonly string[], type: FeatureType): number | boolean | string {
  let v: unknown = env;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') {
      v = undefined;
      break;
    }
    v = (v as Record<string, unknown>)[seg];
  }
  if (type === 'number') return typeof v === 'number' ? v : 0;
  if (type === 'boolean') return v === true;
  return typeof v === 'string' ? v : '';
}

export function clusterView(state: StateView): ClusterView {
  const inst = state.instances;
  const n = inst.length;
  let tq = 0, mq = 0, tif = 0, minL = Infinity, maxL = 0, skv = 0, mkv = 0, free = 0, cap = 0, withPrefix = 0, withAdapter = 0, maxCached = 0, maxShadow = 0;
  inst.forEach((x, i) => {
    tq += x.queueDepth;
    if (x.queueDepth > mq) mq = x.queueDepth;
    tif += x.inFlight;
    if (x.load < minL) minL = x.load;
    if (x.load > maxL) maxL = x.load;
    skv += x.kvUtilization;
    if (x.kvUtilization > mkv) mkv = x.kvUtilization;
    free += x.freeKvBlocks;
    cap += x.availableCapacity;
    if (x.cachedPrefixBlocks > 0) withPrefix++;
    if (x.cachedPrefixBlocks > maxCached) maxCached = x.cachedPrefixBlocks;
    if (x.adapterResident) withAdapter++;
    const sh = state.shadowKv[i]?.matchedBlocks ?? 0;
    if (sh > maxShadow) maxShadow = sh;
  });
  return {
    instances: n,
    totalQueueDepth: tq,
    maxQueueDepth: mq,
    meanQueueDepth: n === 0 ? 0 : tq / n,
    totalInFlight: tif,
    minLoad: n === 0 ? 0 : minL,
    maxLoad: maxL,
    meanKvUtilization: n === 0 ? 0 : skv / n,
    maxKvUtilization: mkv,
    totalFreeKvBlocks: free,
    totalAvailableCapacity: cap,
    instancesWithPrefix: withPrefix,
    maxCachedPrefixBlocks: maxCached,
    instancesWithAdapter: withAdapter,
    maxShadowMatchedBlocks: maxShadow,
  };
}

/** The `request` root of a router-side decision (the view plus the derived request features). */
export function requestEnv(request: RequestView): Record<string, unknown> {
  return { ...request, prefixBlocks: request.prefixHashes.length, outputTokens: request.outputTokens ?? 0, multimodalTokens: request.imageTokens + request.audioTokens + request.videoTokens };
}

/** The environment of an admission, priority or routing decision. */
export function routerEnv(request: RequestView, state: StateView): FeatureEnv {
  return {
    clock: state.clock,
    request: requestEnv(request),
    tenant: state.tenant satisfies TenantView,
    global: state.global satisfies GlobalView,
    cluster: clusterView(state),
  };
}

/** Each routable instance as routing rules see it (aligned with `state.instances`). */
export function routedInstances(request: RequestView, state: StateView): RoutedInstanceView[] {
  const blocks = request.prefixHashes.length;
  return state.instances.map((x, i) => {
    const o = state.observedKv[i];
    return {
      ...x,
      cpuUtilization: o?.utilization.cpu ?? 0,
      cpuFreeBlocks: o?.freeBlocks.cpu ?? 0,
      offloadRate: o?.offloadRate ?? 0,
      reloadRate: o?.reloadRate ?? 0,
      storageUtilization: o?.utilization.storage ?? 0,
      storageFreeBlocks: o?.freeBlocks.storage ?? 0,
      storageReloadRate: o?.storageReloadRate ?? 0,
      shadowMatchedBlocks: state.shadowKv[i]?.matchedBlocks ?? 0,
      prefixMatchRatio: blocks === 0 ? 0 : x.cachedPrefixBlocks / blocks,
    };
  });
}

/** The environment of a scheduler decision about one waiting request. */
export function schedulerEnv(request: SchedRequestView, view: SchedulerView): FeatureEnv {
  return {
    clock: view.clock,
    request: { ...request, outputTokens: request.outputTokens ?? 0 },
    instance: {
      queueDepth: view.waiting.length,
      batchSize: view.running.length,
      kvFreeBlocks: view.kvFreeBlocks,
      kvUtilization: view.kvTotalBlocks === 0 ? 0 : 1 - view.kvFreeBlocks / view.kvTotalBlocks,
      maxBatchSize: view.maxBatchSize,
      maxTokenBudget: view.maxTokenBudget,
    },
  };
}

export function autoscaleEnv(ctx: AutoScaleContext): FeatureEnv {
  return {
    clock: ctx.clock,
    deployment: {
      currentReplicas: ctx.currentReplicas,
      minReplicas: ctx.minReplicas,
      maxReplicas: ctx.maxReplicas,
      pendingRequests: ctx.pendingRequests,
      timeSinceLastScaleUs: ctx.timeSinceLastScaleUs,
      ...ctx.metrics,
    },
  };
}
