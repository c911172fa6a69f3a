/**
 * Node pools and GPU placement (reference infra_config.go, infra_node.go, infra_placement.go, blis-cluster.md
 * §7.5): only `initial_nodes` nodes exist (Ready at t=0, ids `<pool>-<k>`, GPUs `<node>-gpu-<g>`); placement is
 * first-fit — pools in configuration order (filtered by GPU type unless any), nodes in creation order, the
 * lowest-index free GPUs of the first Ready node with enough of them. Delays are {mean, stddev} in seconds:
 * stddev 0 gives the mean, else N(mean, stddev) clamped at 0, truncated to µs.
 */
import type { GoRand } from '../../gocompat/go-rand.js';

export interface DelaySpec {
  /** Seconds. */
  readonly mean: number;
  readonly stddev: number;
}

export const ZERO_DELAY: DelaySpec = { mean: 0, stddev: 0 };

/** Reference DelaySpec.Sample: µs. Draws from `rng` only when stddev > 0. */
export function sampleDelayUs(d: DelaySpec, rng: GoRand): number {
  let secs = d.stddev <= 0 ? d.mean : rng.normFloat64() * d.stddev + d.mean;
  if (secs < 0) secs = 0;
  if (!Number.isFinite(secs)) secs = 0;
  return Math.trunc(secs * 1e6);
}

export interface NodePoolConfig {
  readonly name: string;
  readonly gpuType: string;
  readonly gpusPerNode: number;
  readonly gpuMemoryGiB: number;
  readonly initialNodes: number;
  readonly minNodes: number;
  readonly maxNodes: number;
  readonly provisioningDelay: DelaySpec;
  readonly costPerHour: number;
}

/** Reference NodePoolConfig.IsValid: null when valid, else the problem. */
export function nodePoolError(c: NodePoolConfig): string | null {
  if (c.name === '') return 'node pool name must not be empty';
  if (c.gpuType === '') return `node pool "${c.name}": gpu_type must not be empty`;
  if (c.gpusPerNode < 1) return `node pool "${c.name}": gpus_per_node must be >= 1, got ${c.gpusPerNode}`;
  if (!Number.isFinite(c.gpuMemoryGiB) || c.gpuMemoryGiB <= 0) return `node pool "${c.name}": gpu_memory_gib must be > 0, got ${c.gpuMemoryGiB}`;
  if (c.initialNodes < 0) return `node pool "${c.name}": initial_nodes must be >= 0, got ${c.initialNodes}`;
  if (c.minNodes < 0) return `node pool "${c.name}": min_nodes must be >= 0, got ${c.minNodes}`;
  if (c.maxNodes < c.initialNodes) return `node pool "${c.name}": max_nodes (${c.maxNodes}) must be >= initial_nodes (${c.initialNodes})`;
  if (c.minNodes > c.maxNodes) return `node pool "${c.name}": min_nodes (${c.minNodes}) must be <= max_nodes (${c.maxNodes})`;
  for (const [k, v] of [['provisioning_delay.mean', c.provisioningDelay.mean], ['provisioning_delay.stddev', c.provisioningDelay.stddev], ['cost_per_hour', c.costPerHour]] as const) {
    if (!Number.isFinite(v) || v < 0) return `node pool "${c.name}": ${k} must be a finite number >= 0, got ${v}`;
  }
  return null;
}

interface Gpu {
  readonly id: string;
  allocatedTo: string;
}

interface Node {
  readonly id: string;
  readonly pool: NodePoolConfig;
  readonly gpus: Gpu[];
  /** When the node is Ready (µs; 0 for the nodes that exist at the start). */
  readonly readyAt: number;
}

export interface Placement {
  readonly nodeId: string;
  readonly gpuIds: readonly string[];
  readonly gpuType: string;
  readonly pool: NodePoolConfig;
  /** When the node is Ready (µs): later than now on a node still being provisioned. */
  readonly readyAt: number;
}

/** Node provisioning (corrected semantics): `min_nodes` floor, new nodes up to `max_nodes` after their delay. */
export interface Provisioning {
  readonly rng: GoRand;
}

export class PlacementManager {
  private readonly nodes: Node[] = [];
  /** Nodes provisioned during the run. */
  provisioned = 0;

  constructor(
    readonly pools: readonly NodePoolConfig[],
    private readonly provisioning: Provisioning | null = null,
    /**
     * Multi-node TP placement (upstream #1537, beyond the pinned reference; on with --gpus-per-node): an instance
     * whose TP is larger than a pool's nodes takes tp/gpus_per_node whole free nodes of that pool (TP a multiple
     * of gpus_per_node). Off: an instance fits on one node or is not placed, as in the reference.
     */
    private readonly multiNode = false,
  ) {
    const seen = new Set<string>();
    for (const p of pools) {
      const err = nodePoolError(p);
      if (err !== null) throw new RangeError(err);
      if (seen.has(p.name)) throw new RangeError(`duplicate node pool name "${p.name}"`);
      seen.add(p.name);
      // The reference starts `initial_nodes` only; provisioning starts at least `min_nodes`.
      const start = provisioning === null ? p.initialNodes : Math.max(p.initialNodes, p.minNodes);
      for (let k = 0; k < start; k++) this.addNode(p, 0);
    }
  }

  private addNode(pool: NodePoolConfig, readyAt: number): Node {
    const id = `${pool.name}-${this.nodes.filter((n) => n.pool === pool).length}`;
    const node: Node = { id, pool, readyAt, gpus: Array.from({ length: pool.gpusPerNode }, (_, g) => ({ id: `${id}-gpu-${g}`, allocatedTo: '' })) };
    this.nodes.push(node);
    return node;
  }

  /**
   * First-fit placement of `tp` GPUs of `gpuType` ('' = any) for `instanceId`; null when nothing fits. With
   * provisioning, `now` given and nothing free, the first pool below `max_nodes` whose nodes hold `tp` GPUs
   * gets a new node, Ready after the pool's provisioning delay.
   */
  place(instanceId: string, gpuType: string, tp: number, now?: number): Placement | null {
    if (tp < 1) return null;
    for (const pool of this.pools) {
      if (gpuType !== '' && pool.gpuType !== gpuType) continue;
      for (const node of this.nodes) {
        if (node.pool !== pool) continue;
        const hit = take(node, instanceId, tp);
        if (hit !== null) return hit;
      }
    }
    if (this.multiNode) {
      for (const pool of this.pools) {
        if (gpuType !== '' && pool.gpuType !== gpuType) continue;
        if (tp <= pool.gpusPerNode || tp % pool.gpusPerNode !== 0) continue;
        const whole = this.nodes.filter((n) => n.pool === pool && n.gpus.every((g) => g.allocatedTo === ''));
        const k = tp / pool.gpusPerNode;
        if (whole.length >= k) return takeNodes(whole.slice(0, k), instanceId);
      }
    }
    if (this.provisioning === null || now === undefined) return null;
    for (const pool of this.pools) {
      if (gpuType !== '' && pool.gpuType !== gpuType) continue;
      if (pool.gpusPerNode < tp || this.nodes.filter((n) => n.pool === pool).length >= pool.maxNodes) continue;
      this.provisioned++;
      return take(this.addNode(pool, now + sampleDelayUs(pool.provisioningDelay, this.provisioning.rng)), instanceId, tp);
    }
    return null;
  }

  release(instanceId: string): void {
    for (const n of this.nodes) for (const g of n.gpus) if (g.allocatedTo === instanceId) g.allocatedTo = '';
  }

  /** GPUs allocated + free == total on every node (reference INV-A). */
  conservationError(): string | null {
    for (const n of this.nodes) {
      const alloc = n.gpus.filter((g) => g.allocatedTo !== '').length;
      if (alloc > n.gpus.length) return `node ${n.id}: ${alloc} of ${n.gpus.length} GPUs allocated`;
    }
    return null;
  }

  /** GPUs held by `instanceId`. */
  gpusOf(instanceId: string): number {
    let k = 0;
    for (const n of this.nodes) for (const g of n.gpus) if (g.allocatedTo === instanceId) k++;
    return k;
  }

  totalGpus(): number {
    return this.nodes.reduce((s, n) => s + n.gpus.length, 0);
  }
}

function take(node: Node, instanceId: string, tp: number): Placement | null {
  const free = node.gpus.filter((g) => g.allocatedTo === '');
  if (free.length < tp) return null;
  const chosen = free.slice(0, tp);
  for (const g of chosen) g.allocatedTo = instanceId;
  return { nodeId: node.id, gpuIds: chosen.map((g) => g.id), gpuType: node.pool.gpuType, pool: node.pool, readyAt: node.readyAt };
}

/** Every GPU of `nodes` for one instance spanning them: its placement names the first node, Ready when all are. */
function takeNodes(nodes: readonly Node[], instanceId: string): Placement {
  const gpuIds: string[] = [];
  for (const n of nodes) for (const g of n.gpus) {
    g.allocatedTo = instanceId;
    gpuIds.push(g.id);
  }
  const first = nodes[0]!;
  return { nodeId: nodes.map((n) => n.id).join('+'), gpuIds, gpuType: first.pool.gpuType, pool: first.pool, readyAt: Math.max(...nodes.map((n) => n.readyAt)) };
}

/** A delay drawn from a distribution (provisioning, model load), µs; beyond the reference's normal DelaySpec. */
export type DelayDistribution =
  | { readonly kind: 'constant'; readonly valueS: number }
  | { readonly kind: 'normal'; readonly meanS: number; readonly stddevS: number }
  | { readonly kind: 'uniform'; readonly minS: number; readonly maxS: number }
  | { readonly kind: 'exponential'; readonly meanS: number }
  | { readonly kind: 'lognormal'; readonly meanS: number; readonly sigma: number };

export function sampleDistributionUs(d: DelayDistribution, rng: GoRand): number {
  let secs: number;
  switch (d.kind) {
    case 'constant':
      secs = d.valueS;
      break;
    case 'normal':
      secs = d.stddevS <= 0 ? d.meanS : rng.normFloat64() * d.stddevS + d.meanS;
      break;
    case 'uniform':
      secs = d.minS + rng.float64() * (d.maxS - d.minS);
      break;
    case 'exponential':
      secs = rng.expFloat64() * d.meanS;
      break;
    case 'lognormal':
      // mean of the distribution itself is meanS: mu = ln(mean) - sigma^2/2.
      secs = d.meanS <= 0 ? 0 : Math.exp(Math.log(d.meanS) - (d.sigma * d.sigma) / 2 + d.sigma * rng.normFloat64());
      break;
  }
  if (!Number.isFinite(secs) || secs < 0) secs = 0;
  return Math.trunc(secs * 1e6);
}

/** Null when valid, else the problem (negative or non-finite parameters). */
export function delayDistributionError(d: DelayDistribution): string | null {
  const vals: [string, number][] = d.kind === 'constant' ? [['value', d.valueS]] : d.kind === 'normal' ? [['mean', d.meanS], ['stddev', d.stddevS]] : d.kind === 'uniform' ? [['min', d.minS], ['max', d.maxS]] : d.kind === 'exponential' ? [['mean', d.meanS]] : [['mean', d.meanS], ['sigma', d.sigma]];
  for (const [k, v] of vals) if (!Number.isFinite(v) || v < 0) return `${k} must be a finite number >= 0 (seconds), got ${v}`;
  if (d.kind === 'uniform' && d.minS > d.maxS) return `min (${d.minS}) must be <= max (${d.maxS})`;
  return null;
}
