/**
 * The `kv_tiers` JSON section (docs/kv-tiers.md): per-tier capacity, use, utilisation, lookups, hits and hit
 * rates, and the blocks and bytes moved between the tiers, per instance and for the cluster. Present only when
 * a storage tier is configured (the reference's GPU+CPU mode prints exactly what it always printed). The
 * transfer records go into the decision trace (`trace.kv_tier_transfers`).
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { KVTierFigures, KVTierReport } from '../kv/types.js';

import type { KvTierFiguresJson, KvTierTransfersJson, KvTiersJson, KvTiersSection, TraceKvTierTransfer } from './report-sections.js';
const TIERS = ['gpu', 'cpu', 'storage'] as const;

function rate(hits: number, lookups: number): number {
  return lookups === 0 ? 0 : hits / lookups;
}

function tierJson(t: KVTierFigures): KvTierFiguresJson {
  return {
    capacity_blocks: t.capacityBlocks,
    used_blocks: t.usedBlocks,
    utilization: t.capacityBlocks === 0 ? 0 : t.usedBlocks / t.capacityBlocks,
    lookups: t.lookups,
    hits: t.hits,
    hit_rate: rate(t.hits, t.lookups),
    ...(t.stores === undefined ? {} : { stores: t.stores }),
    ...(t.evictions === undefined ? {} : { evictions: t.evictions }),
  };
}

function transfersJson(r: KVTierReport): KvTierTransfersJson {
  let cycles = 0;
  for (const c of r.cycles) cycles += c.cpu + c.storage;
  return {
    gpu_to_cpu_blocks: r.gpuToCpuBlocks,
    cpu_to_gpu_blocks: r.cpuToGpuBlocks,
    cpu_to_storage_blocks: r.cpuToStorageBlocks,
    storage_to_gpu_blocks: r.storageToGpuBlocks,
    cpu_to_storage_bytes: r.cpuToStorageBlocks * r.blockBytes,
    storage_to_gpu_bytes: r.storageToGpuBlocks * r.blockBytes,
    reload_cycles: cycles,
  };
}

/** Instances with a storage tier, in cluster order, with their reports. */
export function tierReports(cs: ClusterSimulator): { id: string; report: KVTierReport }[] {
  const out: { id: string; report: KVTierReport }[] = [];
  for (const inst of cs.instances) {
    const r = inst.kv.tierReport?.() ?? null;
    if (r !== null) out.push({ id: inst.id, report: r });
  }
  return out;
}

export function kvTiersSection(cs: ClusterSimulator): KvTiersSection | null {
  const reps = tierReports(cs);
  if (reps.length === 0) return null;
  const sum = (pick: (r: KVTierReport) => KVTierFigures): KVTierFigures => {
    let capacityBlocks = 0;
    let usedBlocks = 0;
    let lookups = 0;
    let hits = 0;
    for (const { report } of reps) {
      const t = pick(report);
      capacityBlocks += t.capacityBlocks;
      usedBlocks += t.usedBlocks;
      lookups += t.lookups;
      hits += t.hits;
    }
    return { capacityBlocks, usedBlocks, lookups, hits };
  };
  const tiersOf = (pick: (tier: (typeof TIERS)[number]) => KvTierFiguresJson): Pick<KvTiersJson, 'gpu' | 'cpu' | 'storage'> => ({ gpu: pick('gpu'), cpu: pick('cpu'), storage: pick('storage') });
  const clusterTiers = tiersOf((tier) => tierJson(sum((r) => r[tier])));
  let moved = { gpuToCpu: 0, cpuToGpu: 0, cpuToStorage: 0, storageToGpu: 0, cpuToStorageBytes: 0, storageToGpuBytes: 0, cycles: 0 };
  for (const { report } of reps) {
    const t = transfersJson(report);
    moved = {
      gpuToCpu: moved.gpuToCpu + t.gpu_to_cpu_blocks,
      cpuToGpu: moved.cpuToGpu + t.cpu_to_gpu_blocks,
      cpuToStorage: moved.cpuToStorage + t.cpu_to_storage_blocks,
      storageToGpu: moved.storageToGpu + t.storage_to_gpu_blocks,
      cpuToStorageBytes: moved.cpuToStorageBytes + t.cpu_to_storage_bytes,
      storageToGpuBytes: moved.storageToGpuBytes + t.storage_to_gpu_bytes,
      cycles: moved.cycles + t.reload_cycles,
    };
  }
  const cluster: KvTiersJson = { ...clusterTiers, transfers: {
    gpu_to_cpu_blocks: moved.gpuToCpu, cpu_to_gpu_blocks: moved.cpuToGpu, cpu_to_storage_blocks: moved.cpuToStorage, storage_to_gpu_blocks: moved.storageToGpu,
    cpu_to_storage_bytes: moved.cpuToStorageBytes, storage_to_gpu_bytes: moved.storageToGpuBytes, reload_cycles: moved.cycles,
  } };
  return {
    cluster,
    instances: reps.map(({ id, report }) => ({ instance_id: id, ...tiersOf((tier) => tierJson(report[tier])), transfers: transfersJson(report) })),
  };
}

/** Every tier transfer of the run, by instance then issue order (`trace.kv_tier_transfers`). */
export function kvTierTransferTrace(cs: ClusterSimulator): TraceKvTierTransfer[] | null {
  const reps = tierReports(cs);
  if (reps.length === 0) return null;
  const out: TraceKvTierTransfer[] = [];
  for (const { id, report } of reps) {
    for (const t of report.transfers) {
      out.push({ instance: id, kind: t.kind, from: t.from, to: t.to, blocks: t.blocks, bytes: t.bytes, start_us: t.startUs, end_us: t.endUs });
    }
  }
  return out;
}
