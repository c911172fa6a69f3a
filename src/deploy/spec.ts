/**
 * The deployment model (policy-search-design §2): models × deployment configurations × pools. A
 * configuration is monolithic (one pool of replicas) or disaggregated (a prefill and a decode pool), each
 * with its own hardware, TP, latency model and KV settings and its own replica bounds; the autoscaler scales
 * each pool of each configuration independently within them.
 */

export type PoolKind = 'monolithic' | 'prefill' | 'decode';

export interface PoolSpec {
  readonly kind: PoolKind;
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  /** Overrides of the configuration's values for this pool (absent = the configuration's). */
  readonly hardware?: string;
  readonly tp?: number;
  readonly latencyModel?: string;
  readonly totalKvBlocks?: number;
  readonly maxModelLen?: number;
}

export interface ConfigSpec {
  readonly name: string;
  readonly hardware: string;
  readonly tp: number;
  /** '' = the run's --latency-model. */
  readonly latencyModel: string;
  /** 0 = derived from the GPU's memory (or the run's --total-kv-blocks when given). */
  readonly totalKvBlocks: number;
  /** 0 = derived from the model, capped at the KV capacity. */
  readonly maxModelLen: number;
  readonly costPerGpuHour: number;
  /** GPUs per node of this configuration (`gpus_per_node`; absent = the run's --gpus-per-node). */
  readonly gpusPerNode?: number;
  /** Inter-node bandwidth per GPU, GB/s (`inter_node_bandwidth`; absent = the run's flag, 0 = the GPU's). */
  readonly interNodeBandwidth?: number;
  /** Latency of one crossing collective, ms (`inter_node_latency`; absent = the run's flag). */
  readonly interNodeLatency?: number;
  /** kv_cache_dtype: the KV-cache element type of this configuration (absent = the run's --kv-cache-dtype). */
  readonly kvCacheDtype?: string;
  /**
   * num_speculative_tokens / speculative_acceptance_rate / speculative_method: speculative decoding of this
   * configuration (absent = the run's flags; tokens 0 = off here whatever the flags say).
   */
  readonly speculative?: { readonly tokens: number; readonly acceptanceRate: number; readonly method: string };
  /** Data parallelism of this configuration (`dp`; absent = the run's --dp). */
  readonly dp?: number;
  /**
   * How trained-physics runs a MoE configuration's dp ranks (`dp_placement`; absent = the run's --dp-placement):
   * 'replicas' makes each of its replicas dp engines at DP 1 (upstream #1555).
   */
  readonly dpPlacement?: 'combined' | 'replicas';
  /** One monolithic pool, or a prefill and a decode pool. */
  readonly pools: readonly PoolSpec[];
}

export interface ModelSpec {
  readonly name: string;
  /** Folder holding the model's config.json ('' = the embedded catalog or --model-config-folder). */
  readonly modelConfigFolder: string;
  readonly configs: readonly ConfigSpec[];
}

export type DelayDistributionSpec =
  | { readonly kind: 'constant'; readonly valueS: number }
  | { readonly kind: 'normal'; readonly meanS: number; readonly stddevS: number }
  | { readonly kind: 'uniform'; readonly minS: number; readonly maxS: number }
  | { readonly kind: 'exponential'; readonly meanS: number }
  | { readonly kind: 'lognormal'; readonly meanS: number; readonly sigma: number };

export interface AutoscalerSpec {
  /** Built-in policy name ('' = the policy bundle's autoscale section, else saturation). */
  readonly policy: string;
  /** Parameters of the built-in policy (camelCase keys, e.g. target, queueWeight); absent keys keep its defaults. */
  readonly policyParams: Readonly<Record<string, number>>;
  /** Periodic evaluation interval (µs); 0 = event triggers only. */
  readonly intervalUs: number;
  readonly scaleUpStabilizationWindowUs: number;
  readonly scaleDownStabilizationWindowUs: number;
  readonly triggers: {
    readonly queueDepth: number;
    readonly sloAttainment: number;
    readonly utilization: number;
    readonly sustainedUs: number;
    readonly rateChange: number;
    readonly minGapUs: number;
    readonly checkEveryUs: number;
  } | null;
  readonly provisioningDelay: DelayDistributionSpec | null;
  readonly modelLoadTime: DelayDistributionSpec | null;
  readonly warmup: { readonly curve: 'linear' | 'exponential' | 'step'; readonly durationUs: number; readonly initialPenalty: number } | null;
  readonly drain: { readonly mode: 'wait' | 'immediate' | 'redirect'; readonly timeoutUs: number };
}

export interface DeploymentSpec {
  readonly file: string;
  readonly models: readonly ModelSpec[];
  /** Requests that name no model go to this one. */
  readonly defaultModel: string;
  readonly autoscaler: AutoscalerSpec | null;
}

/** The scaling-target id of a pool: the configuration's name, or `<name>/prefill|decode`. */
export function poolTargetId(config: ConfigSpec, pool: PoolSpec): string {
  return pool.kind === 'monolithic' ? config.name : `${config.name}/${pool.kind}`;
}
