/**
 * What an external policy (template, decision tree or code) sees: plain, camelCase data copied from the
 * simulator's state at the decision. These shapes are the contract users and searches write against
 * (docs/policies.md); decision-tree features are dotted paths into them (features.ts).
 *
 * Views are built fresh for each decision, so nothing a policy does to them reaches the simulator.
 */
import { inputBlockHashes } from '../domain/block-hash.js';
import type { Request } from '../domain/request.js';
import type { SchedulerContext } from '../instance/scheduler.js';
import type { AutoScaleContext } from '../routing/autoscale.js';
import type { GlobalSignal, HistoryWindow, RouterSignals, RouterState, RoutingSnapshot, TenantSignal } from '../routing/types.js';

export type ControlPoint = 'admission' | 'priority' | 'routing' | 'scheduler' | 'autoscale' | 'disaggregation' | 'encode';
export const CONTROL_POINTS: readonly ControlPoint[] = ['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode'];

/** Default code entry point per control point (docs/policies.md). */
export const DEFAULT_ENTRYPOINTS: Readonly<Record<ControlPoint, string>> = {
  admission: 'admit',
  priority: 'prioritize',
  routing: 'route',
  scheduler: 'makeBatch',
  autoscale: 'evaluate',
  disaggregation: 'decide',
  encode: 'shouldEncode',
};

/** A request as the router knows it. */
export interface RequestView {
  id: string;
  /** Prompt length (tokens). */
  inputTokens: number;
  /** The client's output budget (max_tokens) when the workload states one, else null: routers do not know the true length. */
  outputTokens: number | null;
  tenant: string;
  sloClass: string;
  /** Instance priority so far (vLLM convention, lower = more urgent; from the SLO class or a priority policy). */
  priority: number;
  model: string;
  sessionId: string;
  /** Arrival time (µs). */
  arrivalUs: number;
  /** Chained hashes of the full prompt blocks (equal prefixes give equal leading hashes). */
  prefixHashes: number[];
  /** Admission DELAYs already waited out. */
  admissionDelays: number;
  /** LoRA adapter the request needs ('' = the base model). */
  adapter: string;
  /** Multimodal input tokens by modality (0 for text-only requests). */
  imageTokens: number;
  audioTokens: number;
  videoTokens: number;
}

export interface InstanceView {
  id: string;
  /** Position in `state.instances` (what a routing policy may also return). */
  index: number;
  queueDepth: number;
  batchSize: number;
  inFlight: number;
  kvUtilization: number;
  freeKvBlocks: number;
  cacheHitRate: number;
  recentTtftMs: number;
  recentTpotMs: number;
  estimatedWaitMs: number;
  availableCapacity: number;
  preemptionCount: number;
  /** Leading prompt blocks of this request cached there, as the router sees it (cache-signal staleness). */
  cachedPrefixBlocks: number;
  /** queueDepth + batchSize + inFlight (the load figure of the built-in load policies). */
  load: number;
  /** LoRA adapters resident there, sorted (refreshed like queueDepth); [] without LoRA. */
  residentAdapters: string[];
  /** The request's adapter is resident there (false for base-model requests): no cold load. */
  adapterResident: boolean;
  pool: 'monolithic';
}

export interface TenantView {
  requestCount: number;
  activeRequests: number;
  recentRate: number;
  sloClass: string;
  burstDetected: boolean;
}

export interface GlobalView {
  inFlight: number;
  requestRate: number;
  throughput: number;
  completedRequests: number;
  rejectedRequests: number;
  delayedRequests: number;
}

export interface ObservedKvView {
  id: string;
  utilization: { gpu: number; cpu: number; storage: number };
  freeBlocks: { gpu: number; cpu: number; storage: number };
  hitRate: number;
  offloadRate: number;
  reloadRate: number;
  storageOffloadRate: number;
  storageReloadRate: number;
}

export interface ShadowKvView {
  id: string;
  matchedBlocks: number;
  expectedHit: boolean;
  estimatedUtilization: number;
  trackedBlocks: number;
}

/** The router state of policy-search-design §3 for one decision. */
export interface StateView {
  /** Simulation clock (µs). */
  clock: number;
  instances: InstanceView[];
  /** Every tenant seen so far, by id. */
  tenants: Record<string, TenantView>;
  /** The deciding request's tenant ('' tenant included). */
  tenant: TenantView;
  global: GlobalView;
  history: HistoryWindow[];
  observedKv: ObservedKvView[];
  shadowKv: ShadowKvView[];
}

const EMPTY_TENANT: TenantSignal = { requestCount: 0, activeRequests: 0, recentRate: 0, sloClass: '', burstDetected: false };
const EMPTY_GLOBAL: GlobalSignal = { inFlight: 0, requestRate: 0, throughput: 0, completedRequests: 0, rejectedRequests: 0, delayedRequests: 0 };

export function requestView(req: Request, blockSize: number): RequestView {
  return {
    id: req.id,
    inputTokens: req.inputLen,
    outputTokens: req.maxOutputLen > 0 ? req.maxOutputLen : null,
    tenant: req.tenantId,
    sloClass: req.sloClass,
    priority: req.priority,
    model: req.model,
    sessionId: req.sessionId,
    arrivalUs: req.arrivalTime,
    prefixHashes: Array.from(inputBlockHashes(req, blockSize)),
    admissionDelays: req.admissionDelays,
    adapter: req.adapter,
    imageTokens: req.imageTokens,
    audioTokens: req.audioTokens,
    videoTokens: req.videoTokens,
  };
}

function tenantView(t: TenantSignal): TenantView {
  return { requestCount: t.requestCount, activeRequests: t.activeRequests, recentRate: t.recentRate, sloClass: t.sloClass, burstDetected: t.burstDetected };
}

export function instanceView(s: RoutingSnapshot, index: number, cachedPrefixBlocks: number, adapter = ''): InstanceView {
  return {
    id: s.id,
    index,
    queueDepth: s.queueDepth,
    batchSize: s.batchSize,
    inFlight: s.inFlightRequests,
    kvUtilization: s.kvUtilization,
    freeKvBlocks: s.freeKVBlocks,
    cacheHitRate: s.cacheHitRate,
    recentTtftMs: s.recentTtftMs,
    recentTpotMs: s.recentTpotMs,
    estimatedWaitMs: s.estimatedWaitMs,
    availableCapacity: s.availableCapacity,
    preemptionCount: s.preemptionCount,
    cachedPrefixBlocks,
    load: s.queueDepth + s.batchSize + s.inFlightRequests,
    residentAdapters: s.residentAdapters === null ? [] : [...s.residentAdapters].sort(),
    adapterResident: adapter !== '' && s.residentAdapters?.has(adapter) === true,
    pool: 'monolithic',
  };
}

/** The full state view for `req` (signals absent: tenants, global and KV views read as empty). */
export function stateView(req: Request | null, state: RouterState): StateView {
  const sig: RouterSignals | null = state.signals ?? null;
  const instances = state.snapshots.map((s, i) => instanceView(s, i, sig !== null && req !== null ? sig.cachedPrefixBlocks(i, req) : 0, req?.adapter ?? ''));
  const tenants: Record<string, TenantView> = {};
  if (sig !== null) for (const id of sig.tenantIds()) tenants[id] = tenantView(sig.tenant(id));
  const own = req === null ? EMPTY_TENANT : (sig?.tenant(req.tenantId) ?? EMPTY_TENANT);
  const observedKv: ObservedKvView[] = state.snapshots.map((s, i) => {
    const o = sig?.observedKv(i);
    return {
      id: s.id,
      utilization: { gpu: o?.gpuUtilization ?? s.kvUtilization, cpu: o?.cpuUtilization ?? 0, storage: o?.storageUtilization ?? 0 },
      freeBlocks: { gpu: o?.gpuFreeBlocks ?? s.freeKVBlocks, cpu: o?.cpuFreeBlocks ?? 0, storage: o?.storageFreeBlocks ?? 0 },
      hitRate: o?.hitRate ?? s.cacheHitRate,
      offloadRate: o?.offloadRate ?? 0,
      reloadRate: o?.reloadRate ?? 0,
      storageOffloadRate: o?.storageOffloadRate ?? 0,
      storageReloadRate: o?.storageReloadRate ?? 0,
    };
  });
  const shadowKv: ShadowKvView[] = state.snapshots.map((s, i) => {
    const sh = sig !== null && req !== null ? sig.shadowKv(i, req) : null;
    return {
      id: s.id,
      matchedBlocks: sh?.matchedBlocks ?? 0,
      expectedHit: (sh?.matchedBlocks ?? 0) > 0,
      estimatedUtilization: sh?.estimatedUtilization ?? 0,
      trackedBlocks: sh?.trackedBlocks ?? 0,
    };
  });
  const g = sig?.global() ?? EMPTY_GLOBAL;
  return {
    clock: state.clock,
    instances,
    tenants,
    tenant: tenantView(own),
    global: { ...g },
    history: sig === null ? [] : sig.history().map((h) => ({ ...h })),
    observedKv,
    shadowKv,
  };
}

/** A waiting or running request as an instance scheduler sees it. */
export interface SchedRequestView {
  id: string;
  inputTokens: number;
  outputTokens: number | null;
  tenant: string;
  sloClass: string;
  priority: number;
  arrivalUs: number;
  /** µs since arrival. */
  waitUs: number;
  /** Prompt tokens already computed (a preempted request restarts at 0). */
  progress: number;
  hints: Record<string, string | number | boolean>;
}

export interface SchedulerView {
  instanceId: string;
  clock: number;
  waiting: SchedRequestView[];
  running: SchedRequestView[];
  maxBatchSize: number;
  maxTokenBudget: number;
  kvFreeBlocks: number;
  kvTotalBlocks: number;
  blockSize: number;
}

export function schedRequestView(r: Request, clock: number): SchedRequestView {
  return {
    id: r.id,
    inputTokens: r.inputLen,
    outputTokens: r.maxOutputLen > 0 ? r.maxOutputLen : null,
    tenant: r.tenantId,
    sloClass: r.sloClass,
    priority: r.priority,
    arrivalUs: r.arrivalTime,
    waitUs: clock - r.arrivalTime,
    progress: Math.min(r.progressIndex, r.inputLen),
    hints: r.schedulingHints === null ? {} : { ...r.schedulingHints },
  };
}

export function schedulerView(ctx: SchedulerContext): SchedulerView {
  return {
    instanceId: ctx.instanceId,
    clock: ctx.clock,
    waiting: ctx.waiting.map((r) => schedRequestView(r, ctx.clock)),
    running: ctx.running.map((r) => schedRequestView(r, ctx.clock)),
    maxBatchSize: ctx.maxBatchSize,
    maxTokenBudget: ctx.maxTokenBudget,
    kvFreeBlocks: ctx.kvFreeBlocks,
    kvTotalBlocks: ctx.kvTotalBlocks,
    blockSize: ctx.blockSize,
  };
}

/** The autoscaler's context as plain data (same names as {@link AutoScaleContext}). */
export function autoscaleView(ctx: AutoScaleContext): AutoScaleContext {
  return JSON.parse(JSON.stringify(ctx)) as AutoScaleContext;
}
