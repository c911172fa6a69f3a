/**
 * What a ClusterSimulator is built from and what it calls: its configuration (ClusterConfig, InfraSetup), the
 * policies it consults (ClusterPolicies), the instance factory, the follow-up hook and the routing observation
 * its observers see. Types only; cluster.ts re-exports them.
 */
import type { Request } from '../domain/request.js';
import type { EventSink, Instance } from '../instance/instance.js';
import type { TenantTracker } from '../routing/tenant.js';
import type { AdmissionPolicy, PriorityPolicy, RoutingDecision, RoutingPolicy } from '../routing/types.js';
import type { FlowControlConfig } from './flow-control/controller.js';
import type { SignalsConfig } from './signals.js';
import type { PdPolicies, PdSetup } from './pd/coordinator.js';
import type { StaticFacts } from './snapshot.js';
import type { AutoscalerSetup, ReplicaBuild } from './autoscaler/autoscaler.js';
import type { DelaySpec, PlacementManager } from './autoscaler/infra.js';
import type { InstanceState } from './autoscaler/lifecycle.js';
import type { GoRand } from '../gocompat/go-rand.js';

export interface ClusterConfig {
  readonly horizon: number;
  readonly admissionLatency: number;
  readonly routingLatency: number;
  /** Periodic refresh of queue/batch/KV signals (µs); 0 = always live. */
  readonly snapshotRefreshInterval: number;
  /** Staleness of the prefix-cache view (µs); 0 = live. */
  readonly cacheSignalDelay: number;
  /** Record admission and routing decisions (`--trace-level decisions`). */
  readonly traceDecisions: boolean;
  /** Top-k counterfactual candidates per routing record (0 = none). */
  readonly counterfactualK: number;
  /** Static per-instance facts the router sees. */
  readonly model: string;
  readonly gpuType: string;
  readonly tpDegree: number;
  readonly maxBatchSize: number;
  /** Gateway queue / flow control (`--flow-control`); null = off. */
  readonly flowControl: FlowControlConfig | null;
  /**
   * Keep the router state of policy-search-design §3 (tenants, rates, history, ObservedKV, ShadowKV) and
   * hand it to policies as `RouterState.signals`; also records expected/actual cache hits on routing
   * records. Off by default (the built-in policies never read it).
   */
  readonly routerSignals?: SignalsConfig | boolean;
  /** DELAYs one request may wait out before its next DELAY counts as a rejection (default 100). */
  readonly maxAdmissionDelays?: number;
  /** --semantics corrected: the cluster-layer corrections of docs/reference-differences.md. */
  readonly corrected?: boolean;
  /** Prefill/decode pools; null/absent = every request routes to one instance (no disaggregation). */
  readonly pd?: PdSetup | null;
  /** Per startup instance: what it reports to the router (default: the fields above, for all). */
  readonly facts?: readonly StaticFacts[];
  /** Instance lifecycle, node pools and the autoscaler; null/absent = a fixed set of Active instances. */
  readonly infra?: InfraSetup | null;
  /** Requests naming no model are served as this one (a deployment of several models); '' = unfiltered. */
  readonly defaultModel?: string;
  /** false: the prefix-affinity scorer keeps its own index even beside ShadowKV (they change no result; tests compare both). */
  readonly sharePrefixIndex?: boolean;
}

/** Lifecycle and scaling (node pools, loading delays, the autoscaler). */
export interface InfraSetup {
  /** State of each startup instance: Active (or warm start), else Loading until its loading delay passes. */
  readonly initialStates: readonly InstanceState[];
  readonly placement: PlacementManager | null;
  readonly loadingDelay: DelaySpec;
  /** The "instance-loading" random stream. */
  readonly loadingRng: GoRand;
  /** The autoscaler; null = instances never added or drained. */
  readonly autoscaler: AutoscalerSetup | null;
  /** The "autoscaler" random stream (HPA scrape delay). */
  readonly autoscalerRng: GoRand;
  /** The "node-provisioning" random stream (beyond the reference: provisioning delays). */
  readonly provisioningRng: GoRand;
  /** KV capacity / max-model-len of a replica of `target` (null = cluster-wide) on a GPU with this much memory. */
  readonly buildFor: (gpuMemoryGiB: number, target: string | null) => ReplicaBuild;
}

/** A routing decision about to be applied, for observers (anomaly detectors, traces). */
export interface RoutingObservation {
  readonly req: Request;
  readonly clock: number;
  readonly decision: RoutingDecision;
  /** Instance index of the target. */
  readonly instanceIndex: number;
  /** ShadowKV predicted a hit there (null when the router keeps no ShadowKV). */
  readonly expectedCacheHit: boolean | null;
  /** The target held at least one leading block of the request at routing time (null without ShadowKV). */
  readonly cacheHit: boolean | null;
}

export interface ClusterPolicies {
  readonly admission: AdmissionPolicy;
  readonly routing: RoutingPolicy;
  /** Priority policy (after admission, before routing); null = the SLO class decides. */
  readonly priority?: PriorityPolicy | null;
  /** Tenant in-flight accounting for budgets; null when no budgets are configured. */
  readonly tenants: TenantTracker | null;
  /** The P/D decider and pool routing policies (required when ClusterConfig.pd is set). */
  readonly pd?: PdPolicies | null;
}

/** Builds instance `index`: a startup instance, or (with `replica`) one the autoscaler adds during the run. */
export type InstanceFactory = (index: number, sink: EventSink, replica?: { readonly id: string; readonly build: ReplicaBuild }) => Instance;

/**
 * Called once for every request that reaches a terminal state — completed, timed out or dropped on an instance
 * (`tick` = the instance's completion tick: the end of the step for completions), or rejected, shed, expired or
 * evicted at the gateway (`tick` = the cluster clock). The requests it returns enter the cluster as fresh
 * arrivals at their own arrival time (>= tick), through admission and routing like any other: this is how
 * closed-loop session follow-ups are produced (the SessionManager's `hook`).
 */
export type FollowUpHook = (req: Request, tick: number) => readonly Request[];
