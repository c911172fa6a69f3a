/**
 * The policy bundle's typed shape (PolicyBundle and its sections), apart from the parser (bundle.ts) so that
 * the parser and the validator (validate.ts) both import it and not each other. Field names follow the YAML keys
 * in camelCase; "not set" is null (the reference's nil pointers / nil maps) or "" for names.
 */
import type { ScorerSetting } from './names.js';
import type { EvolvablePolicies } from './spec.js';

export interface AdmissionBundle {
  /** "" = not set. */
  readonly policy: string;
  readonly tokenBucketCapacity: number | null;
  readonly tokenBucketRefillRate: number | null;
  readonly tierShedThreshold: number | null;
  readonly tierShedMinPriority: number | null;
  readonly gaieQdThreshold: number | null;
  readonly gaieKvThreshold: number | null;
  /** SLO class → priority overrides, in YAML order. */
  readonly sloPriorities: ReadonlyMap<string, number> | null;
  /** SLO class → TTFT target in µs for slo-deadline dispatch (not range-checked by the reference). */
  readonly sloTargets: ReadonlyMap<string, number> | null;
}

export interface DelayBundle {
  /** Seconds. */
  readonly mean: number;
  readonly stddev: number;
}

export interface NodePoolBundle {
  readonly name: string;
  readonly gpuType: string;
  readonly gpusPerNode: number;
  readonly gpuMemoryGiB: number;
  readonly initialNodes: number;
  readonly minNodes: number;
  readonly maxNodes: number;
  readonly provisioningDelay: DelayBundle;
  readonly costPerHour: number;
}

export interface AnalyzerBundle {
  /** 0 = use the analyzer's default. */
  readonly kvCacheThreshold: number;
  readonly scaleUpThreshold: number;
  readonly scaleDownBoundary: number;
  readonly avgInputTokens: number;
}

export interface AutoscalerBundle {
  /** 0 = autoscaler disabled. */
  readonly intervalUs: number;
  readonly scaleUpStabilizationWindowUs: number;
  readonly scaleDownStabilizationWindowUs: number;
  readonly hpaScrapeDelay: DelayBundle;
  readonly analyzer: AnalyzerBundle;
}

export interface InstanceLifecycleBundle {
  readonly loadingDelay: DelayBundle;
  readonly warmStartInitialInstances: boolean;
}

export interface PolicyBundle {
  readonly admission: AdmissionBundle;
  readonly routing: { readonly policy: string; readonly scorers: readonly ScorerSetting[] | null };
  /** Only "constant" (or "") has meaning now; anything else is accepted with a warning. */
  readonly priority: { readonly policy: string };
  readonly scheduler: string;
  readonly preemption: { readonly policy: string };
  /** Tenant → fraction of cluster capacity in [0, 1]; null = no tenant enforcement (an empty map is not null). */
  readonly tenantBudgets: ReadonlyMap<string, number> | null;
  readonly nodePools: readonly NodePoolBundle[] | null;
  readonly autoscaler: AutoscalerBundle;
  readonly instanceLifecycle: InstanceLifecycleBundle;
  /** Things accepted but worth telling the user, each `file:line:col: field: text`; never printed here. */
  readonly warnings: readonly string[];
  /** Evolvable control points (`type: parameterized | decision_tree | code`) and the candidate's metadata. */
  readonly evolvable: EvolvablePolicies;
}
