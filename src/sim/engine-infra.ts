/**
 * Startup instances and scaling infrastructure for the composition root (reference NewClusterSimulator's
 * construction loop, blis-cluster.md §7): without node pools every configured instance starts Active; with
 * node pools each instance is placed first-fit on the initial nodes (any GPU type, the global TP), takes the
 * pool's GPU type, cost and — unless --total-kv-blocks was given — a KV capacity computed from the pool's GPU
 * memory, and starts Loading (Active with warm start). Instances that cannot be placed are deferred and, as
 * in the reference (nodes are never provisioned), never start.
 */
import type { InfraSetup } from '../cluster/cluster.js';
import type { AutoscalerSetup, ReplicaBuild, ScaleTarget } from '../cluster/autoscaler/autoscaler.js';
import { makeAutoscalePolicy, type AutoscalePolicyName } from '../routing/autoscale-policies.js';
import type { AutoScalePolicy } from '../routing/autoscale.js';
import { PlacementManager, type DelaySpec, type NodePoolConfig } from '../cluster/autoscaler/infra.js';
import { InstanceState } from '../cluster/autoscaler/lifecycle.js';
import type { StaticFacts } from '../cluster/snapshot.js';
import type { PartitionedRng } from '../engine/partitioned-rng.js';

export interface ScalingSetup {
  /** The autoscaler pipeline; null = no autoscaler (node pools may still place instances). */
  readonly autoscaler: AutoscalerSetup | null;
  readonly nodePools: readonly NodePoolConfig[] | null;
  readonly loadingDelay: DelaySpec;
  readonly warmStartInitialInstances: boolean;
  /** Corrected semantics: node pools provision nodes (min_nodes, max_nodes, provisioning_delay). */
  readonly provisionNodes?: boolean;
  /** --gpus-per-node given: an instance with TP larger than a pool's nodes spans whole nodes of it (upstream #1537). */
  readonly multiNodePlacement?: boolean;
  /**
   * KV blocks of an instance at TP `tp` on a GPU with `gpuMemoryGiB` (per-instance auto-capacity); null =
   * every instance keeps the configured capacity (explicit --total-kv-blocks, blackbox, unknown model).
   */
  readonly kvForGpu: ((gpuMemoryGiB: number, tp: number) => number | null) | null;
  /** A scaling target's own configuration (deployment file); absent = replicas run the cluster-wide one. */
  readonly targetBuild?: (target: string) => { tp: number; maxModelLen: number; kvTotalBlocks: number; role: number } | undefined;
  /**
   * The pluggable policy mode: a built-in by name, or null for the policy bundle's evolvable autoscale
   * policy; absent = the reference's saturation pipeline.
   */
  readonly policy?: {
    readonly name: AutoscalePolicyName | null;
    /** Overrides of the built-in policy's defaults. */
    readonly params?: Readonly<Record<string, number>>;
    /** Explicit targets (deployment pools); null = one per model. */
    readonly targets: readonly ScaleTarget[] | null;
    readonly minReplicas: number;
    readonly maxReplicas: number;
  } | null;
}

/** The autoscaler setup with its policy built for this simulation (evolvable policies are fresh per run). */
export function autoscalerWithPolicy(s: ScalingSetup, evolvable: AutoScalePolicy | null): AutoscalerSetup | null {
  const a = s.autoscaler;
  if (a === null || !s.policy) return a;
  const p = s.policy;
  const policy = p.name === null ? evolvable : makeAutoscalePolicy(p.name, a.saturation, p.params);
  // resolve-scaling.ts leaves the name null only when the bundle has an evolvable autoscale policy, which the
  // policy build always returns: a plan never reaches this.
  if (policy === null) throw new Error('internal: the autoscaler plan names no policy and the bundle built none');
  return { ...a, policy: { policy, targets: p.targets, minReplicas: p.minReplicas, maxReplicas: p.maxReplicas } };
}

/** One startup instance as planned. */
export interface StartupPlan {
  readonly id: string;
  /** The configured index (`instance_<index>`; P/D membership is by this index). */
  readonly index: number;
  readonly facts: StaticFacts;
  readonly build: ReplicaBuild;
  readonly state: InstanceState;
}

export interface InstanceDefaults {
  readonly numInstances: number;
  readonly factsOf: (index: number) => StaticFacts;
  /** TP each startup instance runs with (its pool's override in P/D), for per-instance KV capacity. */
  readonly tpOf: (index: number) => number;
  /** Max-model-len of instance `index` before any per-instance KV cap. */
  readonly maxModelLenOf: (index: number) => number;
}

const NO_BUILD: ReplicaBuild = { kvTotalBlocks: null, maxModelLen: null };

/** KV capacity and the max-model-len it allows on a GPU with `gpuMemoryGiB` (reference applyPerInstanceKVCapacity). */
export function buildForGpu(s: ScalingSetup, gpuMemoryGiB: number, tp: number, maxModelLen: number, blockSize: number): ReplicaBuild {
  const blocks = s.kvForGpu === null || !(gpuMemoryGiB > 0) ? null : s.kvForGpu(gpuMemoryGiB, tp);
  if (blocks === null) return NO_BUILD;
  const feasible = blocks * blockSize;
  return { kvTotalBlocks: blocks, maxModelLen: maxModelLen > 0 && feasible < maxModelLen ? feasible : null };
}

export function planStartup(s: ScalingSetup | null | undefined, d: InstanceDefaults, placement: PlacementManager | null, blockSize: number): StartupPlan[] {
  const plans: StartupPlan[] = [];
  for (let i = 0; i < d.numInstances; i++) {
    const id = `instance_${i}`;
    if (placement === null || !s) {
      plans.push({ id, index: i, facts: d.factsOf(i), build: NO_BUILD, state: InstanceState.Active });
      continue;
    }
    const facts = d.factsOf(i);
    const tp = Math.max(facts.tpDegree, 1);
    const placed = placement.place(id, '', tp);
    if (placed === null) continue;
    plans.push({
      id,
      index: i,
      facts: { ...facts, gpuType: placed.gpuType, tpDegree: tp, costPerHour: placed.pool.costPerHour },
      build: buildForGpu(s, placed.pool.gpuMemoryGiB, d.tpOf(i), d.maxModelLenOf(i), blockSize),
      state: s.warmStartInitialInstances ? InstanceState.Active : InstanceState.Loading,
    });
  }
  return plans;
}

/** The cluster's infrastructure setup, or null when nothing scales or loads (all Active, fixed). */
export function infraSetup(s: ScalingSetup | null | undefined, plans: readonly StartupPlan[], placement: PlacementManager | null, rng: PartitionedRng, blockSize: number, globalMaxModelLen: number, globalTp: number, evolvable: AutoScalePolicy | null): InfraSetup | null {
  if (!s || (s.autoscaler === null && s.nodePools === null)) return null;
  return {
    initialStates: plans.map((p) => p.state),
    placement,
    loadingDelay: s.loadingDelay,
    loadingRng: rng.forSubsystem('instance-loading'),
    autoscaler: autoscalerWithPolicy(s, evolvable),
    autoscalerRng: rng.forSubsystem('autoscaler'),
    provisioningRng: rng.forSubsystem('node-provisioning'),
    // Replicas the autoscaler adds run their target's configuration; without one, the cluster-wide one.
    buildFor: (mem, target) => {
      const t = target === null ? undefined : s.targetBuild?.(target);
      const b = buildForGpu(s, mem, t?.tp ?? globalTp, t?.maxModelLen ?? globalMaxModelLen, blockSize);
      return t === undefined ? b : { kvTotalBlocks: b.kvTotalBlocks ?? t.kvTotalBlocks, maxModelLen: b.maxModelLen ?? t.maxModelLen, target: target ?? undefined, role: t.role };
    },
  };
}

export function placementFor(s: ScalingSetup | null | undefined, rng: PartitionedRng): PlacementManager | null {
  if (!s || s.nodePools === null || s.nodePools.length === 0) return null;
  return new PlacementManager(s.nodePools, s.provisionNodes === true ? { rng: rng.forSubsystem('node-pool-provisioning') } : null, s.multiNodePlacement === true);
}
