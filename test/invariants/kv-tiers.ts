/**
 * Block conservation across the three KV tiers (docs/kv-tiers.md), for instances with a storage tier:
 * - each lower tier holds what was stored minus what it evicted, never more than its capacity (the tiered
 *   cache's own count, {@link TieredKVCache.checkTierConservation});
 * - storage is written only by CPU evictions, and every block read back was found there;
 * - the transfer records agree with the counters (blocks per direction, bytes = blocks x block bytes), every
 *   record ends at or after it starts, and the storage channel runs one job at a time (jobs never overlap).
 * The GPU tier's own conservation (INV-4) is checked by checkKV.
 */
import type { Instance } from '../../src/instance/instance.js';
import { TieredKVCache } from '../../src/kv/tiered.js';

/** `records`: also check the transfer records (a scan of the whole run; the end-of-run checker does it). */
export function kvTierViolations(inst: Instance, records = true): string[] {
  const kv = inst.kv;
  if (!(kv instanceof TieredKVCache)) return [];
  const v: string[] = [];
  const err = kv.checkTierConservation();
  if (err !== null) v.push(`INV-KV-TIERS ${inst.id}: ${err}`);
  const rep = kv.tierReport();
  if (rep === null || !records) return v;
  const sums = new Map<string, number>();
  let channelEnd = -Infinity;
  for (const t of rep.transfers) {
    const key = `${t.from}->${t.to}`;
    sums.set(key, (sums.get(key) ?? 0) + t.blocks);
    if (t.endUs < t.startUs) v.push(`INV-KV-TIERS ${inst.id}: ${key} transfer ends at ${t.endUs} before it starts at ${t.startUs}`);
    if (t.bytes !== t.blocks * rep.blockBytes) v.push(`INV-KV-TIERS ${inst.id}: ${key} transfer of ${t.blocks} blocks claims ${t.bytes} bytes`);
    if (t.from === 'storage' || t.to === 'storage') {
      if (t.startUs < channelEnd) v.push(`INV-KV-TIERS ${inst.id}: storage ${t.kind} starts at ${t.startUs} while the channel is busy until ${channelEnd}`);
      channelEnd = t.endUs;
    }
  }
  const eq = (key: string, counter: number): void => {
    if ((sums.get(key) ?? 0) !== counter) v.push(`INV-KV-TIERS ${inst.id}: ${key} records move ${sums.get(key) ?? 0} blocks, counter says ${counter}`);
  };
  eq('gpu->cpu', rep.gpuToCpuBlocks);
  eq('cpu->gpu', rep.cpuToGpuBlocks);
  eq('cpu->storage', rep.cpuToStorageBlocks);
  eq('storage->gpu', rep.storageToGpuBlocks);
  if (rep.storage.hits > rep.storage.lookups || rep.cpu.hits > rep.cpu.lookups) v.push(`INV-KV-TIERS ${inst.id}: more hits than lookups`);
  return v;
}
