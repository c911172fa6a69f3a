/**
 * `--scrape-kv-metrics`: the server's prefix-cache counters before and after the workload, reduced to the
 * observed hit rate over that window for the trace header (calibrate compares it with the replay's).
 */
import type { TraceObservedKvMetrics } from '../workload/tracev2-types.js';

/**
 * Sample lines of a Prometheus text exposition, summed per metric family over all label sets, with a
 * counter's `_total` suffix folded into the family name. Comments, blank and unparseable lines are skipped.
 */
export function parsePromSums(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const v = Number((m[3] as string).replace(/^\+Inf$/, 'Infinity').replace(/^-Inf$/, '-Infinity'));
    if (Number.isNaN(v)) continue;
    const name = (m[1] as string).replace(/_total$/, '');
    sums.set(name, (sums.get(name) ?? 0) + v);
  }
  return sums;
}

/** Counter families, strongest signal first: tiered offload, then the GPU prefix cache (v0 and v1 names). */
const FAMILIES: readonly { source: string; queries: string; hits: string; read?: string; write?: string }[] = [
  { source: 'tiered', queries: 'vllm:kv_offload_tiering_block_queries', hits: 'vllm:kv_offload_tiering_block_hits', read: 'vllm:kv_offload_tiering_read_time', write: 'vllm:kv_offload_tiering_write_time' },
  { source: 'gpu-prefix-cache-fallback', queries: 'vllm:gpu_prefix_cache_queries', hits: 'vllm:gpu_prefix_cache_hits' },
  { source: 'gpu-prefix-cache-fallback', queries: 'vllm:prefix_cache_queries', hits: 'vllm:prefix_cache_hits' },
];

/** The hit rate over [start, end], or an error message (a scrape problem must never fail the run). */
export function deriveObservedHitRate(start: ReadonlyMap<string, number>, end: ReadonlyMap<string, number>, vllmCommit: string): TraceObservedKvMetrics | string {
  const delta = (name: string): number | string => {
    const d = (end.get(name) ?? 0) - (start.get(name) ?? 0);
    return d < 0 ? `counter ${name} went backwards over the window (server restart?)` : d;
  };
  for (const f of FAMILIES) {
    if (!end.has(f.queries)) continue;
    const q = delta(f.queries);
    const h = delta(f.hits);
    if (typeof q === 'string') return q;
    if (typeof h === 'string') return h;
    if (q <= 0) return `${f.queries} shows no queries over the window; cannot derive a hit rate`;
    if (h > q) return `${f.hits} (${h}) exceeds ${f.queries} (${q}) over the window`;
    const r = f.read === undefined ? 0 : delta(f.read);
    const w = f.write === undefined ? 0 : delta(f.write);
    return {
      source: f.source,
      hitRate: h / q,
      blockHits: Math.round(h),
      blockQueries: Math.round(q),
      readTimeTotal: typeof r === 'number' ? r : 0,
      writeTimeTotal: typeof w === 'number' ? w : 0,
      vllmCommit,
    };
  }
  const gauge = end.get('vllm:gpu_prefix_cache_hit_rate');
  if (gauge !== undefined) return { source: 'gpu-prefix-cache-fallback', hitRate: gauge, blockHits: 0, blockQueries: 0, readTimeTotal: 0, writeTimeTotal: 0, vllmCommit };
  return 'no prefix-cache counters found in /metrics (looked for the kv_offload_tiering, gpu_prefix_cache and prefix_cache families)';
}

/** GETs a metrics page; an error message instead of throwing. */
export async function scrapeMetrics(url: string, apiKey: string, timeoutMs: number): Promise<Map<string, number> | string> {
  try {
    const res = await fetch(url, { headers: apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) return `GET ${url}: HTTP ${res.status}`;
    return parsePromSums(await res.text());
  } catch (e) {
    return `GET ${url}: ${(e as Error).message}`;
  }
}
