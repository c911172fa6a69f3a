/**
 * The composition root: a fully resolved engine setup in, a finished simulation out. The one place that picks
 * implementations (KV store kind, admission and routing policies) for the layers below.
 */
import type { Request } from '../domain/request.js';
import { SloPriorityMap } from '../domain/slo.js';
import { isCorrected } from '../domain/semantics.js';
import { ClusterSimulator, type ClusterPolicies, type FollowUpHook } from '../cluster/cluster.js';
import { PartitionedRng } from '../engine/partitioned-rng.js';
import { Instance } from '../instance/instance.js';
import { LockstepGroup } from '../instance/lockstep.js';
import { instanceSchedule } from '../config/lora-schedule.js';
import { createKVStore, type KVStoreConfig } from '../kv/index.js';
import type { LatencyModel } from '../latency/types.js';
import { tenantBudget } from '../routing/admission.js';
import { makeAdmissionPolicy, makeRoutingPolicy } from '../routing/registry.js';
import { defaultScorerConfigs, type ScorerConfig } from '../routing/scorer-config.js';
import { TenantTracker } from '../routing/tenant.js';
import { makeDisaggregationDecider } from '../routing/disaggregation.js';
import type { RoutingPolicy } from '../routing/types.js';
import { makeEncodeDecider } from '../routing/encode-decider.js';
import type { PdPolicies } from '../cluster/pd/coordinator.js';
import { PoolRole } from '../cluster/pd/pools.js';
import { infraSetup, placementFor, planStartup } from './engine-infra.js';
import type { StaticFacts } from '../cluster/snapshot.js';
import type { ReplicaBuild } from '../cluster/autoscaler/actuator.js';
import { withWarmup } from '../latency/warmup.js';
import type { BuiltPolicies } from '../policy/build.js';
import type { PolicyBuildContext } from '../policy/templates/build.js';
import type { ControlPoint } from '../policy/view.js';
import { DEFAULT_POLICY_SETUP, type DeploymentEngineSetup, type EngineDriver, type EngineSetup, type InstanceOverrides, type KVSetup, type PdEngineSetup, type PolicySetup, type PoolConfigSetup, type SyncGuard } from './setup.js';

export { DEFAULT_POLICY_SETUP };
export type { DeploymentEngineSetup, EngineDriver, EngineSetup, InstanceOverrides, KVSetup, PdEngineSetup, PolicySetup, PoolConfigSetup, SyncGuard };

function buildPolicies(setup: EngineSetup, p: PolicySetup, slo: SloPriorityMap, cs: ClusterSimulator, rng: PartitionedRng, built: BuiltPolicies | null, rebuild: ((sub: string) => BuiltPolicies) | null): ClusterPolicies {
  // Flow control replaces the configured admission policy (tenant budgets still wrap it).
  let admission = cs.flowController?.admission ?? built?.admission ?? makeAdmissionPolicy(p.admissionPolicy, {
    tokenBucketCapacity: p.tokenBucketCapacity,
    tokenBucketRefillRate: p.tokenBucketRefillRate,
    tierShedThreshold: p.tierShedThreshold,
    tierShedMinPriority: p.tierShedMinPriority,
    gaieQdThreshold: p.gaieQdThreshold,
    gaieKvThreshold: p.gaieKvThreshold,
    priorities: slo,
  });
  let tenants: TenantTracker | null = null;
  if (p.tenantBudgets !== null) {
    tenants = new TenantTracker(p.tenantBudgets, setup.numInstances * setup.maxNumSeqs);
    admission = tenantBudget(admission, tenants, slo);
  }
  const routing = built?.routing ?? makeRoutingPolicy(p.routingPolicy, {
    scorers: p.routingScorers,
    blockSize: setup.kv.blockSize,
    rng: rng.forSubsystem('router'),
    cachedBlocks: (id, req) => cs.cachedBlocksFor(id, req),
    corrected: isCorrected(setup.semantics),
  });
  const pd = setup.pd;
  const corrected = isCorrected(setup.semantics);
  // The reference routes every pool with the one main policy object (a shared round-robin counter, D5/D10);
  // corrected semantics give each pool without its own scorers a fresh instance of the main policy.
  const ownMain = (subsystem: string): RoutingPolicy | null => {
    if (!corrected) return null;
    if (built?.routing) return rebuild === null ? null : rebuild(subsystem).routing;
    return makeRoutingPolicy(p.routingPolicy, { scorers: p.routingScorers, blockSize: setup.kv.blockSize, rng: rng.forSubsystem(subsystem), cachedBlocks: (id, req) => cs.cachedBlocksFor(id, req), corrected });
  };
  const poolPolicy = (scorers: readonly ScorerConfig[] | null, subsystem: string): RoutingPolicy | null =>
    scorers === null ? ownMain(`${subsystem}-main`) : makeRoutingPolicy('weighted', { scorers, blockSize: setup.kv.blockSize, rng: rng.forSubsystem(subsystem), cachedBlocks: (id, req) => cs.cachedBlocksFor(id, req), corrected });
  const pdPolicies: PdPolicies | null = pd
    ? {
      // A bundle's disaggregation policy replaces the --pd-decider built-in (resolve-deciders checks the pair).
      decider: built?.disaggregation ?? makeDisaggregationDecider(pd.decider, pd.prefixThreshold),
      prefillRouting: poolPolicy(pd.prefillScorers, 'prefill-router'),
      decodeRouting: poolPolicy(pd.decodeScorers, 'decode-router'),
      encode: pd.encodeDecider === null || pd.encodeDecider === undefined ? null : (built?.encode ?? makeEncodeDecider(pd.encodeDecider)),
      encodeRouting: pd.encodeDecider === null || pd.encodeDecider === undefined ? null : ownMain('encode-router-main'),
    }
    : null;
  return { admission, routing, priority: built?.priority ?? null, tenants, pd: pdPolicies };
}

/** Scorers that read the instances' actual prefix caches (and so need the stale cache view). */
const CACHE_AWARE_SCORERS = new Set(['precise-prefix-cache', 'no-hit-lru']);

function readsInstanceCaches(p: PolicySetup, pd: PdEngineSetup | null): boolean {
  // Evolvable policies may read cachedPrefixBlocks (observed, with the configured staleness).
  if (p.evolvable?.active === true) return true;
  const cacheAware = (scorers: readonly ScorerConfig[] | null): boolean =>
    (scorers === null || scorers.length === 0 ? defaultScorerConfigs() : scorers).some((c) => CACHE_AWARE_SCORERS.has(c.name));
  if (pd) {
    if (pd.decider === 'prefix-threshold') return true;
    if (pd.prefillScorers !== null && cacheAware(pd.prefillScorers)) return true;
    if (pd.decodeScorers !== null && cacheAware(pd.decodeScorers)) return true;
  }
  return p.routingPolicy === 'weighted' && cacheAware(p.routingScorers);
}

/** The overrides startup instance `i` runs with (deployment pool, P/D pool), or null for the cluster-wide setup. */
export function instanceOverrides(setup: EngineSetup, i: number): InstanceOverrides | null {
  const d = setup.deployment;
  if (d) return (d.pools[d.startup[i] ?? 0] as PoolConfigSetup).overrides;
  return overridesFor(setup.pd, i);
}

/** The facts startup instance `i` reports to the router. */
function factsOf(setup: EngineSetup, i: number): StaticFacts {
  const d = setup.deployment;
  const base = { model: setup.model ?? '', gpuType: setup.gpuType ?? '', tpDegree: setup.tp ?? 0, maxBatchSize: setup.maxNumSeqs };
  if (!d) return base;
  const p = d.pools[d.startup[i] ?? 0] as PoolConfigSetup;
  return { ...base, model: p.model, gpuType: p.overrides.gpuType, tpDegree: p.overrides.tp, target: p.target, costPerHour: p.costPerGpuHour * p.overrides.tp };
}

function overridesFor(pd: PdEngineSetup | null | undefined, i: number): InstanceOverrides | null {
  if (!pd) return null;
  const role = pd.roles[i] ?? PoolRole.None;
  if (role === PoolRole.Prefill) return pd.prefill;
  if (role === PoolRole.Decode || role === PoolRole.PrefillDecode) return pd.decode;
  if (role === PoolRole.Encode) return pd.encode ?? null;
  return null;
}

export function buildCluster(setup: EngineSetup): ClusterSimulator {
  const corrected = isCorrected(setup.semantics);
  // Private prompts hold only while prompt blocks are looked up by requests holding none (routing, admission):
  // P/D moves prompt blocks between instances by identity, and an evolvable policy may ask about any request.
  const privateOk = !setup.pd && setup.policy?.evolvable?.active !== true;
  const kvStoreConfig = (kv: KVSetup, reprefill: boolean): KVStoreConfig => {
    let k = !privateOk && kv.privatePrompts === true ? { ...kv, privatePrompts: false } : kv;
    // E13: a request re-prefilling after a preemption looks up its own blocks filled in decode.
    if (reprefill && k.decodeIdentities === false) k = { ...k, decodeIdentities: true };
    return corrected ? { ...k, corrected } : k;
  };
  const slo = new SloPriorityMap(setup.sloPriorities ?? {});
  const p = setup.policy ?? DEFAULT_POLICY_SETUP;
  const rng = new PartitionedRng(setup.seed ?? 42n);
  // Evolvable policies are built before the cluster (schedulers go into the instances); their cache
  // query reaches the cluster once it exists.
  let cluster: ClusterSimulator | null = null;
  let built: BuiltPolicies | null = null;
  let rebuild: ((sub: string) => BuiltPolicies) | null = null;
  if (p.evolvable?.active === true) {
    const ctx: PolicyBuildContext = {
      blockSize: setup.kv.blockSize,
      routerRng: rng.forSubsystem('router'),
      rngFor: (point: ControlPoint) => rng.forSubsystem(`policy-${point}`),
      cachedBlocks: (id, req) => (cluster === null ? 0 : cluster.cachedBlocksFor(id, req)),
      priorities: slo,
    };
    built = p.evolvable.build(ctx);
    const ev = p.evolvable;
    rebuild = (sub) => ev.build({ ...ctx, routerRng: rng.forSubsystem(sub) });
  }
  const schedulerOf = built?.scheduler ?? null;
  const baseFacts = factsOf(setup, 0);
  const placement = placementFor(setup.scaling, rng);
  const plans = planStartup(setup.scaling, {
    numInstances: setup.numInstances,
    factsOf: (i) => factsOf(setup, i),
    tpOf: (i) => instanceOverrides(setup, i)?.tp ?? Math.max(setup.tp ?? 1, 1),
    maxModelLenOf: (i) => instanceOverrides(setup, i)?.maxModelLen ?? setup.maxModelLen,
  }, placement, setup.kv.blockSize);
  const poolByTarget = new Map((setup.deployment?.pools ?? []).map((p) => [p.target, p]));
  const infra = infraSetup(setup.scaling, plans, placement, rng, setup.kv.blockSize, setup.maxModelLen, Math.max(setup.tp ?? 1, 1), built?.autoscale ?? null);
  const pd = setup.pd;
  cluster = new ClusterSimulator(
    {
      horizon: setup.horizon,
      admissionLatency: setup.admissionLatency,
      routingLatency: setup.routingLatency,
      snapshotRefreshInterval: p.snapshotRefreshInterval,
      // Freezing cache views costs work on every KV change; skip it when no policy reads them.
      cacheSignalDelay: readsInstanceCaches(p, setup.pd ?? null) ? p.cacheSignalDelay : 0,
      traceDecisions: p.traceDecisions,
      counterfactualK: p.counterfactualK,
      ...baseFacts,
      flowControl: p.flowControl,
      routerSignals: p.evolvable?.active === true || p.routerSignals === true,
      ...(setup.sharePrefixIndex === false ? { sharePrefixIndex: false } : {}),
      corrected,
      // P/D membership is by configured index; deferred (unplaced) instances leave no position.
      pd: pd
        ? {
          roles: plans.map((x) => pd.roles[x.index] ?? PoolRole.None), transfer: pd.transfer, blockSize: setup.kv.blockSize,
          models: pd.pdModels ?? null, ...(pd.kvBytesPerTokenOf ? { kvBytesPerTokenOf: pd.kvBytesPerTokenOf } : {}),
          ...(pd.beyond ? { beyond: pd.beyond } : {}), ...(corrected ? { corrected } : {}),
        }
        : null,
      facts: plans.map((x) => x.facts),
      infra,
      defaultModel: setup.deployment?.defaultModel ?? '',
    },
    setup.numInstances,
    (i, sink, replica) => {
      const plan = plans[i];
      // Replicas the autoscaler adds run their target's configuration (none: the cluster-wide one).
      const o = replica === undefined ? (plan !== undefined ? instanceOverrides(setup, plan.index) : null) : (poolByTarget.get(replica.build.target ?? '')?.overrides ?? null);
      const build = replica?.build ?? plan?.build;
      const kvBlocks = build?.kvTotalBlocks ?? (o === null ? setup.kv.totalBlocks : o.kvTotalBlocks);
      const mml = build?.maxModelLen ?? (o === null ? setup.maxModelLen : o.maxModelLen);
      // A deployment configuration's own speculative decoding, else the run's.
      const speculative = (o?.speculative !== undefined ? o.speculative : setup.speculative) ?? null;
      // E13 and E14: vLLM's recompute preemption (re-prefill of prompt + outputs) and one step at a time on a GPU,
      // under corrected semantics, and always with a model of a real vLLM engine (corrected-physics).
      const reprefill = corrected || (o === null ? setup.latency : o.latency).vllmPreemption === true;
      const holder: { inst: Instance | null } = { inst: null };
      holder.inst = new Instance(
        {
          id: replica?.id ?? plan?.id ?? `instance_${i}`,
          hardware: { gpu: o?.gpuType ?? setup.gpuType ?? '', tp: o?.tp ?? Math.max(setup.tp ?? 1, 1) },
          horizon: setup.horizon,
          scheduler: setup.scheduler,
          schedulerPolicy: schedulerOf === null ? null : schedulerOf(i),
          maxNumSeqs: setup.maxNumSeqs,
          maxNumBatchedTokens: setup.maxNumBatchedTokens,
          longPrefillTokenThreshold: setup.longPrefillTokenThreshold,
          ...(setup.reserveFullIsl === true ? { reserveFullIsl: true } : {}),
          ...(setup.prefixCaching === false ? { prefixCaching: false } : {}),
          maxModelLen: mml,
          preemptionPolicy: setup.preemptionPolicy,
          lora: setup.lora ?? null,
          ...(replica === undefined && setup.loraSchedule ? { loraSchedule: instanceSchedule(setup.loraSchedule, i) } : {}),
          schedulingMode: setup.schedulingMode ?? 'sync',
          holdPrefillKV: pd?.beyond?.ownership === 'single',
          ...(corrected ? { corrected } : {}),
          ...(setup.lazyDecode === false ? { lazyDecode: false } : {}),
          ...(speculative === null ? {} : { speculative }),
          ...(reprefill ? { reprefillPreemption: true, serialSteps: true } : {}),
        },
        createKVStore(kvStoreConfig(kvBlocks === setup.kv.totalBlocks ? setup.kv : { ...setup.kv, totalBlocks: kvBlocks }, reprefill)),
        latencyFor(o === null ? setup.latency : o.latency, replica?.build, holder),
        slo,
        sink,
      );
      return holder.inst;
    },
    (cs) => buildPolicies(setup, p, slo, cs, rng, built, rebuild),
    slo,
  );
  const d = setup.lockstepRanks ?? 1;
  if (d > 1) {
    // Every d consecutive instances are the ranks of one logical instance (resolution refused what breaks this).
    const pricing = setup.latency.lockstep;
    if (pricing === undefined || setup.numInstances % d !== 0) throw new Error(`lockstep DP groups of ${d}: the latency model ${setup.latency.name} prices none, or ${setup.numInstances} instances do not split into them`);
    const insts = cluster.instances;
    for (let g = 0; g + d <= setup.numInstances; g += d) new LockstepGroup(insts.slice(g, g + d), pricing);
  }
  return cluster;
}

/** A replica's latency model: wrapped with its warm-up penalty (read on the replica's own clock) when it has one. */
function latencyFor(base: LatencyModel, build: ReplicaBuild | undefined, holder: { inst: Instance | null }): LatencyModel {
  const w = build?.warmup;
  return w === undefined ? base : withWarmup(base, w.profile, w.state, () => holder.inst?.clock ?? 0);
}

/**
 * Runs `requests` (sorted by arrival) through a fresh cluster built from `setup`. `followUps` (closed-loop
 * sessions: a SessionManager's hook) turns finished requests into new arrivals. With `releaseTokens`, every
 * request drops its token ids once it has left the system (after its follow-ups were made from them).
 */
export function runEngine(setup: EngineSetup, requests: readonly Request[], followUps: FollowUpHook | null = null, prepare: ((cs: ClusterSimulator) => void) | null = null, progress: ProgressCallback | null = null, releaseTokens = false): ClusterSimulator {
  const cs = buildCluster(setup);
  const hook = releaseTokens ? releasing(followUps) : followUps;
  if (hook !== null) cs.setFollowUpHook(hook);
  prepare?.(cs);
  if (progress === null) cs.run(requests);
  else runWithProgress(cs, requests, followUps === null ? requests.length : null, progress);
  return cs;
}

function releasing(followUps: FollowUpHook | null): FollowUpHook {
  return (req, tick) => {
    const next = followUps === null ? NO_FOLLOW_UPS : followUps(req, tick);
    req.releaseTokens();
    return next;
  };
}

const NO_FOLLOW_UPS: readonly Request[] = [];

/**
 * How many generated arrivals wait in the event queue at most while a streamed workload runs. Few: their token
 * ids are held from generation to departure (domain/token-slab.ts reuses a slab once its requests have left),
 * every pending arrival deepens the event heap each step's push and pop walk, and a request generated just
 * before it arrives is hashed while its tokens are still in the CPU caches. On scenario A, 8 ran 4% faster than
 * 512, and 512 than the 4096 before it (which kept ~16 MB of prompts alive for nothing).
 */
const STREAM_CHUNK = 8;


/**
 * Events per advanceTo call inside a slice of the per-call wall-clock bound (runSliced): the slice's clock is
 * read after each such chunk (policy calls inside a chunk check it too, sandbox/watchdog.ts's callWatch).
 */
const SLICE_EVENTS = 1024;

/**
 * Runs `cs` to its end under the fast engine's per-call wall-clock bound: in slices of about the guard's slice
 * time, each under its own arm of the watchdog, cut between events (advanceTo with a chunk of events, or paused
 * by a policy call that found the slice over its time), which changes nothing the run computes.
 * `inject` (streamed workloads): adds the next chunk of arrivals and returns the first arrival time after it
 * (null: the source is done); every event strictly before that time runs before the next chunk is injected,
 * as driveEngineStreaming does in one go. `progress`: reported whenever the simulated time passes a multiple of
 * {@link PROGRESS_STEP_US} (between chunks, so at slightly later times than a run without slices reports).
 */
function runSliced(cs: ClusterSimulator, guard: SyncGuard, inject: (() => number | null) | null, progress: ProgressCallback | null, total: number | null): void {
  let target = inject === null ? null : guard.run(inject);
  let nextReport = PROGRESS_STEP_US;
  const report = (): void => progress?.({ simTimeUs: cs.clock, requestsArrived: cs.arrivals.length, requestsDone: finishedRequests(cs), requestsTotal: total });
  /** One chunk of work; true when the run is done. */
  const unit = (): boolean => {
    const until = target === null ? Infinity : target - 1;
    const more = cs.advanceTo(until, SLICE_EVENTS);
    if (progress !== null && cs.clock >= nextReport) {
      report();
      nextReport = (Math.floor(cs.clock / PROGRESS_STEP_US) + 1) * PROGRESS_STEP_US;
    }
    if (more && cs.nextEventTime() <= until) return false;
    if (target === null) return true;
    target = (inject as () => number | null)();
    return false;
  };
  const slice = (): boolean => {
    for (;;) {
      if (unit()) return true;
      if (guard.sliceOver()) return false;
    }
  };
  while (!guard.run(slice, cs));
  if (progress !== null) report();
}

/** {@link runEngine} under the per-call wall-clock bound (runSliced). */
function runEngineSliced(setup: EngineSetup, requests: readonly Request[], followUps: FollowUpHook | null, prepare: ((cs: ClusterSimulator) => void) | null, progress: ProgressCallback | null, releaseTokens: boolean, guard: SyncGuard): ClusterSimulator {
  const cs = guard.run(() => {
    const c = buildCluster(setup);
    const hook = releaseTokens ? releasing(followUps) : followUps;
    if (hook !== null) c.setFollowUpHook(hook);
    prepare?.(c);
    // As runEngine: the arrivals merged in from the list (cs.run), or pushed upfront (runWithProgress).
    if (progress === null) c.load(requests);
    else for (const r of requests) c.inject(r);
    return c;
  });
  runSliced(cs, guard, null, progress, followUps === null ? requests.length : null);
  guard.run(() => cs.finish());
  return cs;
}

const unguarded = <T>(fn: () => T): T => fn();
const DRIVEN_STREAM_CHUNK = 256;

/**
 * Runs a workload produced while the simulation runs (sorted by arrival), holding only the arrivals of the next
 * few thousand requests instead of every request's tokens from the start. Returns the cluster and every request
 * the source produced. Through `drive` (the library's yields to the event loop) when given, else in one go.
 *
 * Only for workloads without follow-ups: then every ClusterArrival comes from the source, so injecting them in
 * chunks, each before any event at or after its first arrival time runs, executes exactly the events, in exactly
 * the order, that injecting them all at the start does (ties between arrivals keep source order; an arrival and
 * another kind of event never share an order key).
 */
export async function driveEngineStreaming(
  setup: EngineSetup,
  source: Iterable<Request>,
  prepare: ((cs: ClusterSimulator) => void) | null,
  drive: EngineDriver | null,
  progress: ProgressCallback | null = null,
  total: number | null = null,
  guard: SyncGuard | null = null,
): Promise<{ cluster: ClusterSimulator; requests: Request[] }> {
  const cs = buildCluster(setup);
  cs.setFollowUpHook(releasing(null));
  prepare?.(cs);
  const all: Request[] = [];
  const step = progress === null ? (until: number): void => void cs.advanceTo(until) : reportingAdvance(cs, progress, total);
  // Driven runs inject smaller chunks (generating a chunk is work between the driver's yields), as before.
  const chunk = drive === null ? STREAM_CHUNK : DRIVEN_STREAM_CHUNK;
  const it = source[Symbol.iterator]();
  let next = it.next();
  /** Injects the next chunk; returns the arrival time of the one after it (null: the source is done). */
  const inject = (): number | null => {
    if (next.done) return null;
    // A chunk: `chunk` arrivals, extended to every arrival at the time of its last one.
    let last = next.value.arrivalTime;
    // (Arrivals past the horizon are injected too, and never run: the run stops at the horizon as before.)
    let n = 0;
    while (!next.done && (n < chunk || next.value.arrivalTime === last)) {
      last = next.value.arrivalTime;
      cs.inject(next.value);
      all.push(next.value);
      n++;
      next = it.next();
    }
    return next.done ? null : next.value.arrivalTime;
  };
  // Without a driver the run goes in one go, with no await between chunks (an await would let other runs in this
  // thread, blis evaluate's, interleave with this one every few arrivals, all their state alive at once), under
  // `guard` (the wall-clock backstop) as one synchronous stretch (in slices under the per-call bound). Everything strictly before the next chunk's
  // first arrival runs before that chunk is injected.
  if (drive === null && guard?.sliced === true) {
    runSliced(cs, guard, inject, progress, total);
  } else if (drive === null) {
    (guard === null ? unguarded : guard.run.bind(guard))(() => {
      for (let t = inject(); t !== null; t = inject()) step(t - 1);
      step(Infinity);
    });
  } else {
    for (let t = inject(); t !== null; t = inject()) await drive(cs, t - 1, total, guard);
    await drive(cs, Infinity, total, guard);
  }
  cs.finish();
  return { cluster: cs, requests: all };
}

/**
 * advanceTo in steps of {@link PROGRESS_STEP_US} of simulated time, reporting after each. Pausing between events
 * changes nothing.
 */
function reportingAdvance(cs: ClusterSimulator, progress: ProgressCallback, total: number | null): (until: number) => void {
  let reached = 0;
  return (until) => {
    for (;;) {
      const step = Math.min(until, Math.max(reached + PROGRESS_STEP_US, cs.nextEventTime()));
      const more = cs.advanceTo(step);
      progress({ simTimeUs: cs.clock, requestsArrived: cs.arrivals.length, requestsDone: finishedRequests(cs), requestsTotal: total });
      if (!more || step >= until) return;
      reached = step;
    }
  };
}

/** How far a run has got, for progress displays (simulated time, requests that reached a terminal state). */
export interface SimProgress {
  readonly simTimeUs: number;
  /** Arrivals the cluster has taken in so far (fresh requests; follow-ups included). */
  readonly requestsArrived: number;
  readonly requestsDone: number;
  /** Requests the run will see in all; null when follow-ups (closed-loop sessions) make it unknown. */
  readonly requestsTotal: number | null;
}

export type ProgressCallback = (p: SimProgress) => void;

/** Simulated time between progress reports (µs). */
export const PROGRESS_STEP_US = 100_000;

/**
 * The same run as `cs.run(requests)`, paused every {@link PROGRESS_STEP_US} of simulated time to report
 * progress: pausing between events changes nothing (advanceTo runs exactly the events up to its bound).
 */
function runWithProgress(cs: ClusterSimulator, requests: readonly Request[], total: number | null, progress: ProgressCallback): void {
  for (const r of requests) cs.inject(r);
  let until = 0;
  for (;;) {
    until = Math.max(until + PROGRESS_STEP_US, cs.nextEventTime());
    const more = cs.advanceTo(until);
    progress({ simTimeUs: cs.clock, requestsArrived: cs.arrivals.length, requestsDone: finishedRequests(cs), requestsTotal: total });
    if (!more) break;
  }
  cs.finish();
}

/** Requests that reached a terminal state so far (completed, timed out, dropped, rejected, lost at the gateway). */
export function finishedRequests(cs: ClusterSimulator): number {
  let n = cs.rejectedRequests + cs.routingRejections + cs.encodeRoutingRejections;
  const g = cs.gatewayCounters();
  n += g.queueRejected + g.queueShed + g.expired + g.evicted;
  for (const inst of cs.instances) {
    const m = inst.metrics;
    n += m.completedRequests + m.timedOutRequests + m.droppedUnservable;
  }
  return n;
}

/** {@link runEngine} through `drive` (null = run to the end in one go). */
export async function driveEngine(
  setup: EngineSetup,
  requests: readonly Request[],
  followUps: FollowUpHook | null,
  prepare: ((cs: ClusterSimulator) => void) | null,
  drive: EngineDriver | null,
  progress: ProgressCallback | null = null,
  releaseTokens = false,
  guard: SyncGuard | null = null,
): Promise<ClusterSimulator> {
  if (drive === null && guard?.sliced === true) return runEngineSliced(setup, requests, followUps, prepare, progress, releaseTokens, guard);
  if (drive === null) return (guard === null ? unguarded : guard.run.bind(guard))(() => runEngine(setup, requests, followUps, prepare, progress, releaseTokens));
  const cs = buildCluster(setup);
  const hook = releaseTokens ? releasing(followUps) : followUps;
  if (hook !== null) cs.setFollowUpHook(hook);
  prepare?.(cs);
  for (const r of requests) cs.inject(r);
  await drive(cs, Infinity, followUps === null ? requests.length : null, guard);
  cs.finish();
  return cs;
}
