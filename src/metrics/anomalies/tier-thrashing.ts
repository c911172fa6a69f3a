/**
 * `cache_thrashing` across the KV tiers (the storage-tier part of cache-thrashing.ts; docs/kv-tiers.md). Fed
 * only when a storage tier is configured, from the reload cycles the tiered cache counts: a cycle is a block reloaded into the GPU
 * (from the CPU or the storage tier) less than the cycle window (`--kv-thrash-window-us`) after its previous
 * reload, so it was dropped from the GPU and brought back again in between. Per instance, the cycles are
 * summed per aligned window `[k·W, (k+1)·W)` (W = the anomaly window) of their time; a window with at least
 * `thrashingReloads` cycles is one event: timestamp = window start, severity = cycles / thrashingReloads,
 * no requests.
 */
export interface TierCycleSample {
  readonly timeUs: number;
  readonly instance: string;
  readonly cpu: number;
  readonly storage: number;
}

export interface TierThrashingEvent {
  readonly timestampUs: number;
  readonly description: string;
  readonly severity: number;
}

export function detectTierThrashing(samples: readonly TierCycleSample[], windowUs: number, minCycles: number): TierThrashingEvent[] {
  const byInstance = new Map<string, Map<number, { cpu: number; storage: number }>>();
  for (const s of samples) {
    let ws = byInstance.get(s.instance);
    if (ws === undefined) {
      ws = new Map();
      byInstance.set(s.instance, ws);
    }
    const start = Math.floor(s.timeUs / windowUs) * windowUs;
    const w = ws.get(start) ?? { cpu: 0, storage: 0 };
    w.cpu += s.cpu;
    w.storage += s.storage;
    ws.set(start, w);
  }
  const out: TierThrashingEvent[] = [];
  for (const instance of [...byInstance.keys()].sort()) {
    const ws = byInstance.get(instance) as Map<number, { cpu: number; storage: number }>;
    for (const start of [...ws.keys()].sort((a, b) => a - b)) {
      const w = ws.get(start) as { cpu: number; storage: number };
      const n = w.cpu + w.storage;
      if (n < minCycles) continue;
      out.push({
        timestampUs: start,
        description: `instance ${instance}: ${n} blocks reloaded into the GPU again soon after their previous reload (${w.cpu} from CPU, ${w.storage} from storage) in [${start}, ${start + windowUs})`,
        severity: n / minCycles,
      });
    }
  }
  return out;
}
