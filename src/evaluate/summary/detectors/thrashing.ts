/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). KV_THRASHING: any `cache_thrashing` anomaly.
 */
import type { RunDigest } from '../../digest.js';
import type { Finding, RunCtx } from '../context.js';
import { cmpStr, sec } from '../format.js';

export function detectThrashing(c: RunCtx): Finding | null {
  const n = c.run.anomalyCounts['cache_thrashing'] ?? 0;
  if (n === 0) return null;
  const off = c.run.kvOffloads;
  const rel = c.run.kvReloads;
  const evs = c.run.anomalyEvents.filter((e) => e.type === 'cache_thrashing');
  const insts = new Set<string>();
  for (const e of evs) {
    const m = /^instance (\S+):/.exec(e.description);
    if (m !== null) insts.add(m[1] as string);
  }
  const details: string[] = [];
  if (evs.length > 0) {
    const first = evs[0] as RunDigest['anomalyEvents'][number];
    const lastEv = evs[evs.length - 1] as RunDigest['anomalyEvents'][number];
    details.push(`thrashing windows starting ${sec(first.timestampUs)}s to ${sec(lastEv.timestampUs)}s, on ${[...insts].sort(cmpStr).join(', ')}`);
  }
  return {
    kind: 'KV_THRASHING',
    title: 'KV OFFLOAD',
    run: c,
    count: n,
    total: 0,
    what: 'windows of GPU↔CPU KV thrashing',
    headline: `${n} window${n === 1 ? '' : 's'} of GPU↔CPU thrashing (reloads >= half the offloads); ${off} offloads, ${rel} reloads in the run`,
    details,
    severity: Math.min(1, rel / Math.max(1, off)),
    focus: `KV: ${rel} CPU→GPU reloads against ${off} offloads — consider KV headroom/tier in routing and admit fewer long prompts onto nearly full instances`,
  };
}
