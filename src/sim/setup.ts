/**
 * What an engine is built from: EngineSetup and its parts (KV, policies, P/D pools, per-instance overrides,
 * deployment pools), the default policy setup, and the EngineDriver that runs a built cluster. The resolvers
 * (resolve-*.ts, env.ts) produce these and engine-setup.ts consumes them; apart from both so that neither
 * imports the other.
 */
import type { FlowControlConfig } from '../cluster/flow-control/controller.js';
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { PdBeyondConfig } from '../cluster/pd/beyond.js';
import type { TransferConfig } from '../cluster/pd/transfer.js';
import type { DeploymentSpec } from '../deploy/spec.js';
import type { Semantics } from '../domain/semantics.js';
import type { SchedulingMode } from '../instance/batch-formation.js';
import type { AdapterCost } from '../instance/lora.js';
import type { PlacementEntry } from '../config/lora-schedule.js';
import type { PreemptionPolicy, SchedulerName } from '../instance/scheduler.js';
import type { SpeculativeConfig } from '../instance/speculative.js';
import type { StorageTierConfig } from '../kv/index.js';
import type { LatencyModel } from '../latency/types.js';
import type { PreparedPolicies } from '../policy/build.js';
import type { ScorerConfig } from '../routing/scorer-config.js';
import type { ScalingSetup } from './engine-infra.js';

export interface KVSetup {
  readonly totalBlocks: number;
  readonly blockSize: number;
  readonly cpuBlocks: number;
  readonly transferBandwidth: number;
  readonly transferBaseLatency: number;
  /** The storage tier below the CPU tier; absent = none (docs/kv-tiers.md). */
  readonly storage?: StorageTierConfig | null;
  /** Identities of blocks filled in decode (default true); see KVStoreConfig.decodeIdentities. */
  readonly decodeIdentities?: boolean;
  /** No two requests' prompts share a full block (default false); see KVStoreConfig.privatePrompts. */
  readonly privatePrompts?: boolean;
}

/** Cluster-level policy settings (flags, policy bundles). Every field has the reference's default. */
export interface PolicySetup {
  readonly admissionPolicy: string;
  readonly tokenBucketCapacity: number;
  readonly tokenBucketRefillRate: number;
  readonly tierShedThreshold: number;
  readonly tierShedMinPriority: number;
  readonly gaieQdThreshold: number;
  readonly gaieKvThreshold: number;
  /** Fraction of cluster slots per tenant; null = no tenant-budget decorator (an empty map still installs it). */
  readonly tenantBudgets: ReadonlyMap<string, number> | null;
  readonly routingPolicy: string;
  /** Weighted profile; null = the default profile. */
  readonly routingScorers: readonly ScorerConfig[] | null;
  readonly snapshotRefreshInterval: number;
  readonly cacheSignalDelay: number;
  readonly traceDecisions: boolean;
  readonly counterfactualK: number;
  /** Gateway queue / flow control; null = off. */
  readonly flowControl: FlowControlConfig | null;
  /** Evolvable policies from the bundle (templates, trees, code); null/absent = the built-ins only. */
  readonly evolvable?: PreparedPolicies | null;
  /** Keep the router state of policy-search-design §3 even without evolvable policies (traces, anomalies). */
  readonly routerSignals?: boolean;
}

export const DEFAULT_POLICY_SETUP: PolicySetup = {
  admissionPolicy: 'always-admit',
  tokenBucketCapacity: 10000,
  tokenBucketRefillRate: 1000,
  tierShedThreshold: 0,
  tierShedMinPriority: 0,
  gaieQdThreshold: 0,
  gaieKvThreshold: 0,
  tenantBudgets: null,
  routingPolicy: 'round-robin',
  routingScorers: null,
  snapshotRefreshInterval: 50000,
  cacheSignalDelay: 50000,
  traceDecisions: false,
  counterfactualK: 0,
  flowControl: null,
};

/** What one pool's instances run with instead of the cluster-wide setup (P/D per-pool overrides). */
export interface InstanceOverrides {
  readonly latency: LatencyModel;
  readonly kvTotalBlocks: number;
  readonly maxModelLen: number;
  readonly tp: number;
  readonly gpuType: string;
  /** Speculative decoding of the pool's configuration (null = off there); absent = the run's. */
  readonly speculative?: SpeculativeConfig | null;
}

/** Prefill/decode disaggregation, resolved (reference flags --prefill-instances ... --decode-max-model-len). */
export interface PdEngineSetup {
  /** Role of each startup instance (see cluster/pd/pools.ts). */
  readonly roles: readonly number[];
  readonly decider: string;
  /** E/P/D encode decider; null/absent = no encode pool (the encode stage is off). */
  readonly encodeDecider?: string | null;
  readonly prefixThreshold: number;
  readonly transfer: TransferConfig;
  /** Pool-specific weighted profiles; null = the main routing policy serves that pool too. */
  readonly prefillScorers: readonly ScorerConfig[] | null;
  readonly decodeScorers: readonly ScorerConfig[] | null;
  /** Overrides of prefill-only instances; null = the cluster-wide setup. */
  readonly prefill: InstanceOverrides | null;
  /** Overrides of decode and shared-role instances (decode wins for shared pods). */
  readonly decode: InstanceOverrides | null;
  /** Overrides of encode-pool instances (--encode-tp, --encode-hardware); absent/null = the cluster-wide setup. */
  readonly encode?: InstanceOverrides | null;
  /** Models served by P/D pools (deployment file); absent/null = every request takes the P/D path. */
  readonly pdModels?: readonly string[] | null;
  /** KV bytes per token of a prefill instance's configuration (by its scaling target); absent = transfer's. */
  readonly kvBytesPerTokenOf?: (target: string | undefined) => number;
  /** Beyond-reference P/D behaviour; absent = the reference's. */
  readonly beyond?: PdBeyondConfig;
}

export interface EngineSetup {
  /** Reference bugs reproduced (default) or corrected (docs/reference-differences.md). */
  readonly semantics?: Semantics;
  /** Simulation seed (router tie-break stream); default 42. */
  readonly seed?: bigint;
  readonly numInstances: number;
  readonly horizon: number;
  readonly admissionLatency: number;
  readonly routingLatency: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly longPrefillTokenThreshold: number;
  /** vLLM's scheduler_reserve_full_isl admission (BatchLimits.reserveFullIsl). Default false. */
  readonly reserveFullIsl?: boolean;
  /** false: no automatic prefix caching (BatchLimits.prefixCaching). Default true. */
  readonly prefixCaching?: boolean;
  readonly maxModelLen: number;
  readonly scheduler: SchedulerName;
  readonly preemptionPolicy: PreemptionPolicy;
  /** How steps are formed (default `sync`, the reference's). */
  readonly schedulingMode?: SchedulingMode;
  /** false: no lazy decode slots (src/instance/running-batch.ts); they change no result. Default true. */
  readonly lazyDecode?: boolean;
  /** Speculative decoding / MTP (src/instance/speculative.ts); absent/null = off. */
  readonly speculative?: SpeculativeConfig | null;
  /** false: the prefix-affinity scorer never stands on ShadowKV's index (ClusterConfig.sharePrefixIndex). Default true. */
  readonly sharePrefixIndex?: boolean;
  readonly kv: KVSetup;
  readonly latency: LatencyModel;
  /** Model / GPU / TP the router sees on each instance ('' / 0 when unknown). */
  readonly model?: string;
  readonly gpuType?: string;
  readonly tp?: number;
  readonly sloPriorities?: Readonly<Record<string, number>>;
  readonly policy?: PolicySetup;
  /** LoRA adapters (cost model and slots per instance); absent/null = off. */
  readonly lora?: AdapterCost | null;
  /** The LoRA placement schedule (--lora-placement-schedule), checked against the run; absent/null = none. */
  readonly loraSchedule?: readonly PlacementEntry[] | null;
  /** Prefill/decode pools; null/absent = monolithic instances. */
  readonly pd?: PdEngineSetup | null;
  /** Node pools, instance lifecycle and the autoscaler; null/absent = a fixed set of Active instances. */
  readonly scaling?: ScalingSetup | null;
  /**
   * corrected-physics, a MoE model at --dp D > 1: every D consecutive instances are the ranks of one logical
   * instance stepping in lockstep (instance/lockstep.ts). Absent or 1: the instances step independently.
   */
  readonly lockstepRanks?: number;
  /** Models x configurations x pools from a deployment file; null/absent = the flags' one configuration. */
  readonly deployment?: DeploymentEngineSetup | null;
}

/** One pool of one configuration, resolved. */
export interface PoolConfigSetup {
  /** Scaling-target id: the configuration's name, or `<name>/prefill|decode`. */
  readonly target: string;
  readonly model: string;
  readonly role: number;
  readonly overrides: InstanceOverrides;
  readonly costPerGpuHour: number;
  /** Per-GPU KV bytes per token at this pool's TP (KV transfers from a prefill pool). */
  readonly kvBytesPerToken: number;
  readonly initialReplicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

export interface DeploymentEngineSetup {
  readonly file: string;
  readonly pools: readonly PoolConfigSetup[];
  /** Pool index of each startup instance. */
  readonly startup: readonly number[];
  readonly models: readonly string[];
  readonly defaultModel: string;
  readonly spec: DeploymentSpec;
}

/**
 * Runs a built cluster's events up to `until` (Infinity: to its end). The default runs them in one go; the library
 * API passes one that executes the events in slices and yields to the host between them. Either way the events
 * and their order are the same. `total`: the requests the run will see (progress), null when follow-ups make it
 * unknown; `guard` (the wall-clock backstop, when the run has one) wraps each synchronous stretch the driver runs.
 */
export type EngineDriver = (cs: ClusterSimulator, until?: number, total?: number | null, guard?: SyncGuard | null) => Promise<void>;

/**
 * The fast engine's wall-clock bounds on a run (sandbox/watchdog.ts's WallClock); they may only turn a run into a
 * thrown error, never change what it computes.
 */
export interface SyncGuard {
  /**
   * Runs a synchronous stretch of a run under the watchdog. With `sliced`, the stretch must be one slice: the
   * caller ends it at an event boundary once `sliceOver()` (or once `cs`, which a policy call asks to pause when
   * the slice has run its time, returns from advanceTo) and calls `run` again for the rest.
   */
  run<T>(fn: () => T, cs?: ClusterSimulator | null): T;
  /** The per-call bound is on: long stretches are cut into slices (sim/engine-setup.ts's runSliced). */
  readonly sliced: boolean;
  /** Whether the current slice has run its time (a clock read). */
  sliceOver(): boolean;
}
