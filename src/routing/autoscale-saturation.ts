/**
 * The reference autoscaler's decision pipeline (default_collector.go, saturation_analyzer.go, engine.go;
 * blis-cluster.md §7.2), pure over the router's snapshots:
 *
 *   collect: routable snapshots grouped by model (empty model or GPU type skipped), variant = (GPU type,
 *            max(TP, 1)); loading instances with capacity are pending supply; models sorted.
 *   analyze (V2 saturation): per replica with KV capacity, supply = capacity × kvThreshold and demand = KV
 *            tokens in use + queue depth × avg input tokens; required = demand/upThreshold − (supply +
 *            pending × kvThreshold) > 0 -> scale up; else, with > 1 replica, spare = supply − demand/boundary
 *            when removing the largest replica still leaves supply above demand/boundary -> scale down.
 *   engine (unlimited): up on the cheapest variant by ceil(required / per-replica supply); down on the most
 *            expensive variant with replicas by clamp(floor(spare / per-replica supply), 1, replicas).
 */
import type { RouterState, RoutingSnapshot } from './types.js';

export interface Variant {
  readonly gpuType: string;
  readonly tp: number;
}

export interface ReplicaSignal {
  readonly instanceId: string;
  readonly variant: Variant;
  readonly kvUtilization: number;
  readonly queueDepth: number;
  readonly inFlight: number;
  /** Running-batch size and its cap (max-num-seqs): batch occupancy is the compute-side load. */
  readonly batchSize: number;
  readonly maxBatchSize: number;
  readonly costPerHour: number;
  readonly totalKvCapacityTokens: number;
  readonly kvTokensInUse: number;
}

export interface ModelSignals {
  readonly model: string;
  readonly replicas: readonly ReplicaSignal[];
  readonly pendingReplicas: number;
  readonly pendingCapacityTokens: number;
}

export interface VariantCapacity {
  readonly variant: Variant;
  readonly supply: number;
  readonly demand: number;
  readonly replicas: number;
  readonly costPerReplica: number;
}

export interface AnalyzerResult {
  readonly model: string;
  readonly totalSupply: number;
  readonly totalDemand: number;
  readonly utilization: number;
  /** Scale-up signal (tokens of capacity missing); 0 = none. */
  readonly requiredCapacity: number;
  /** Scale-down signal (tokens of capacity removable); 0 = none. */
  readonly spareCapacity: number;
  /** Sorted by (cost, GPU type, TP). */
  readonly variants: readonly VariantCapacity[];
}

export interface ScaleDelta {
  readonly model: string;
  readonly variant: Variant;
  /** +n adds n replicas, −n drains n; never 0. */
  readonly delta: number;
}

export interface SaturationConfig {
  readonly kvCacheThreshold: number;
  readonly scaleUpThreshold: number;
  readonly scaleDownBoundary: number;
  readonly avgInputTokens: number;
}

/** Reference defaults for fields left 0 (effectiveAnalyzerConfig). */
export function effectiveSaturationConfig(c: Partial<SaturationConfig>): SaturationConfig {
  return {
    kvCacheThreshold: c.kvCacheThreshold || 0.8,
    scaleUpThreshold: c.scaleUpThreshold || 0.8,
    scaleDownBoundary: c.scaleDownBoundary || 0.4,
    avgInputTokens: c.avgInputTokens || 512,
  };
}

/** Null when valid, else the problem (reference NewV2SaturationAnalyzer checks). */
export function saturationConfigError(c: SaturationConfig): string | null {
  if (!(c.kvCacheThreshold > 0 && c.kvCacheThreshold <= 1)) return `kv_cache_threshold must be in (0, 1], got ${c.kvCacheThreshold}`;
  if (!(c.scaleUpThreshold > 0) || !Number.isFinite(c.scaleUpThreshold)) return `scale_up_threshold must be > 0, got ${c.scaleUpThreshold}`;
  if (!(c.scaleDownBoundary > 0) || !Number.isFinite(c.scaleDownBoundary)) return `scale_down_boundary must be > 0, got ${c.scaleDownBoundary}`;
  if (!(c.avgInputTokens > 0) || !Number.isFinite(c.avgInputTokens)) return `avg_input_tokens must be > 0, got ${c.avgInputTokens}`;
  if (c.scaleDownBoundary >= c.scaleUpThreshold) return `scale_down_boundary (${c.scaleDownBoundary}) must be < scale_up_threshold (${c.scaleUpThreshold})`;
  return null;
}

export function replicaSignal(s: RoutingSnapshot): ReplicaSignal {
  return {
    instanceId: s.id,
    variant: { gpuType: s.gpuType, tp: Math.max(s.tpDegree, 1) },
    kvUtilization: s.kvUtilization,
    queueDepth: s.queueDepth,
    inFlight: s.inFlightRequests,
    batchSize: s.batchSize,
    maxBatchSize: s.maxBatchSize,
    costPerHour: s.costPerHour,
    totalKvCapacityTokens: s.totalKvCapacityTokens,
    kvTokensInUse: s.kvTokensInUse,
  };
}

/** Reference DefaultCollector. */
export function collectModelSignals(state: RouterState): ModelSignals[] {
  const by = new Map<string, ReplicaSignal[]>();
  for (const s of state.snapshots) {
    if (s.model === '' || s.gpuType === '') continue;
    const list = by.get(s.model);
    if (list === undefined) by.set(s.model, [replicaSignal(s)]);
    else list.push(replicaSignal(s));
  }
  const pending = new Map<string, { n: number; cap: number }>();
  for (const s of state.loadingSnapshots ?? []) {
    if (s.model === '' || s.gpuType === '' || s.totalKvCapacityTokens <= 0) continue;
    const p = pending.get(s.model) ?? { n: 0, cap: 0 };
    p.n++;
    p.cap += s.totalKvCapacityTokens;
    pending.set(s.model, p);
  }
  const models = [...new Set([...by.keys(), ...pending.keys()])].sort(byString);
  return models.map((m) => ({ model: m, replicas: by.get(m) ?? [], pendingReplicas: pending.get(m)?.n ?? 0, pendingCapacityTokens: pending.get(m)?.cap ?? 0 }));
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function variantKey(v: Variant): string {
  return `${v.gpuType}\u0000${v.tp}`;
}

function byCostAsc(a: VariantCapacity, b: VariantCapacity): number {
  if (a.costPerReplica !== b.costPerReplica) return a.costPerReplica < b.costPerReplica ? -1 : 1;
  if (a.variant.gpuType !== b.variant.gpuType) return byString(a.variant.gpuType, b.variant.gpuType);
  return a.variant.tp - b.variant.tp;
}

function byCostDesc(a: VariantCapacity, b: VariantCapacity): number {
  if (a.costPerReplica !== b.costPerReplica) return a.costPerReplica > b.costPerReplica ? -1 : 1;
  if (a.variant.gpuType !== b.variant.gpuType) return byString(a.variant.gpuType, b.variant.gpuType);
  return a.variant.tp - b.variant.tp;
}

/** Reference V2SaturationAnalyzer.Analyze. */
export function analyzeSaturation(m: ModelSignals, c: SaturationConfig): AnalyzerResult {
  const empty: AnalyzerResult = { model: m.model, totalSupply: 0, totalDemand: 0, utilization: 0, requiredCapacity: 0, spareCapacity: 0, variants: [] };
  if (m.replicas.length === 0) return empty;
  const agg = new Map<string, { variant: Variant; supply: number; demand: number; replicas: number; cost: number }>();
  for (const r of m.replicas) {
    if (r.totalKvCapacityTokens <= 0) continue;
    const supply = r.totalKvCapacityTokens * c.kvCacheThreshold;
    const demand = r.kvTokensInUse + r.queueDepth * c.avgInputTokens;
    const k = variantKey(r.variant);
    let a = agg.get(k);
    if (a === undefined) {
      a = { variant: r.variant, supply: 0, demand: 0, replicas: 0, cost: r.costPerHour };
      agg.set(k, a);
    }
    a.supply += supply;
    a.demand += demand;
    a.replicas++;
  }
  const variants = [...agg.values()].map((a): VariantCapacity => ({ variant: a.variant, supply: a.supply, demand: a.demand, replicas: a.replicas, costPerReplica: a.cost })).sort(byCostAsc);
  let supply = 0;
  let demand = 0;
  for (const v of variants) {
    supply += v.supply;
    demand += v.demand;
  }
  const base = { model: m.model, totalSupply: supply, totalDemand: demand, utilization: supply > 0 ? demand / supply : 0, variants };
  const pendingSupply = m.pendingCapacityTokens > 0 ? m.pendingCapacityTokens * c.kvCacheThreshold : 0;
  const required = demand / c.scaleUpThreshold - (supply + pendingSupply);
  if (required > 0) return { ...base, requiredCapacity: required, spareCapacity: 0 };
  const replicas = variants.reduce((s, v) => s + v.replicas, 0);
  if (replicas <= 1) return { ...base, requiredCapacity: 0, spareCapacity: 0 };
  const spare = supply - demand / c.scaleDownBoundary;
  if (spare <= 0) return { ...base, requiredCapacity: 0, spareCapacity: 0 };
  let maxPer = 0;
  for (const v of variants) if (v.replicas > 0 && v.supply / v.replicas > maxPer) maxPer = v.supply / v.replicas;
  return { ...base, requiredCapacity: 0, spareCapacity: supply - maxPer > demand / c.scaleDownBoundary ? spare : 0 };
}

/**
 * Reference UnlimitedEngine.Optimize. `minReplicas` (corrected semantics; the reference has none, 0): a scale-down
 * never leaves a model with fewer replicas, as the HPA's minReplicas (default 1) — the reference removes
 * floor(spare / per-replica supply) clamped only to the replica count, so an idle model is drained to zero.
 */
export function unlimitedEngine(results: readonly AnalyzerResult[], minReplicas = 0): ScaleDelta[] {
  const out: ScaleDelta[] = [];
  for (const r of results) {
    if (r.requiredCapacity > 0) {
      const first = [...r.variants].sort(byCostAsc)[0];
      if (first !== undefined) out.push({ model: r.model, variant: first.variant, delta: scaleUpN(r.requiredCapacity, first) });
      continue;
    }
    if (r.spareCapacity > 0) {
      const v = [...r.variants].sort(byCostDesc).find((x) => x.replicas > 0);
      if (v === undefined) continue;
      const removable = r.variants.reduce((s, x) => s + x.replicas, 0) - minReplicas;
      const n = Math.min(scaleDownN(r.spareCapacity, v), removable);
      if (n > 0) out.push({ model: r.model, variant: v.variant, delta: -n });
    }
  }
  return out;
}

function scaleUpN(required: number, v: VariantCapacity): number {
  const per = v.replicas > 0 && v.supply > 0 ? v.supply / v.replicas : 0;
  if (per <= 0) return 1;
  return Math.max(1, Math.ceil(required / per));
}

function scaleDownN(spare: number, v: VariantCapacity): number {
  if (v.replicas <= 0) return 0;
  if (v.supply <= 0) return 1;
  const per = v.supply / v.replicas;
  if (per <= 0) return 1;
  return Math.min(v.replicas, Math.max(1, Math.floor(spare / per)));
}
