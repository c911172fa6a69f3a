/**
 * The per-LoRA-adapter block of MetricsOutput (`adapters`, the reference's buildAdapterMetrics): for every
 * adapter that served a completed request or was loaded or evicted, its load and eviction counts, the TTFT
 * p50/p99 (µs) of its completed requests and their output tokens per second. Absent (null) when no adapter
 * appears, so runs without adapters are unchanged.
 */
import type { Request } from '../domain/request.js';
import { goCompareStrings } from '../gocompat/go-format.js';
import { percentilesMs } from './stats.js';

export interface AdapterCounts {
  /** Cold loads and evictions per adapter id (summed over instances for the cluster). */
  readonly loads: ReadonlyMap<string, number>;
  readonly evictions: ReadonlyMap<string, number>;
}

export function adapterMetrics(requests: readonly Request[], counts: AdapterCounts, simEndedTime: number): Record<string, unknown> | null {
  const ttfts = new Map<string, number[]>();
  const tokens = new Map<string, number>();
  for (const r of requests) {
    if (r.adapter === '' || !r.registered || !r.hasE2E || !(r.e2e > 0)) continue;
    let list = ttfts.get(r.adapter);
    if (list === undefined) ttfts.set(r.adapter, (list = []));
    list.push(r.ttft);
    tokens.set(r.adapter, (tokens.get(r.adapter) ?? 0) + r.outputLen);
  }
  const ids = new Set([...ttfts.keys(), ...counts.loads.keys(), ...counts.evictions.keys()]);
  if (ids.size === 0) return null;
  const runtime = simEndedTime / 1e6;
  const out: Record<string, unknown> = {};
  for (const id of [...ids].sort(goCompareStrings)) {
    const m: Record<string, number> = { load_count: counts.loads.get(id) ?? 0, eviction_count: counts.evictions.get(id) ?? 0, ttft_p50_us: 0, ttft_p99_us: 0, throughput_tok_per_s: 0 };
    const t = ttfts.get(id);
    if (t !== undefined) {
      const [p50, p99] = percentilesMs(t, [50, 99]) as [number, number];
      m['ttft_p50_us'] = p50 * 1000;
      m['ttft_p99_us'] = p99 * 1000;
      if (runtime > 0) m['throughput_tok_per_s'] = (tokens.get(id) ?? 0) / runtime;
    }
    out[id] = m;
  }
  return out;
}

/** Sums per-instance counters (the cluster view). */
export function sumCounts(parts: readonly AdapterCounts[]): AdapterCounts {
  const loads = new Map<string, number>();
  const evictions = new Map<string, number>();
  for (const p of parts) {
    for (const [k, v] of p.loads) loads.set(k, (loads.get(k) ?? 0) + v);
    for (const [k, v] of p.evictions) evictions.set(k, (evictions.get(k) ?? 0) + v);
  }
  return { loads, evictions };
}
