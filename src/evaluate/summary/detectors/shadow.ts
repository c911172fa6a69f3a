/**
 * Issue detector of the reflection summary (one per file; detectors/index.ts lists them). SHADOW: ShadowKV predictions that differed from the actual cache state >= 10% of routings (and >= 5).
 */
import type { Finding, RunCtx } from '../context.js';
import { pct } from '../format.js';

export function detectShadow(c: RunCtx): Finding | null {
  const rs = { length: c.run.shadowRoutings };
  const d = { length: c.run.shadowWrong };
  if (d.length < 5 || d.length < 0.1 * rs.length) return null;
  const falseHit = c.run.shadowFalseHits;
  return {
    kind: 'SHADOW',
    title: 'SHADOW KV',
    run: c,
    count: d.length,
    total: rs.length,
    what: 'routings where the ShadowKV prediction differed from the cache',
    headline: `ShadowKV prediction wrong in ${d.length} of ${rs.length} routings (${pct(d.length / Math.max(1, rs.length))}): ${falseHit} predicted hits missed, ${d.length - falseHit} predicted misses hit`,
    details: [],
    severity: d.length / Math.max(1, rs.length),
    focus: `Router state: ShadowKV expected-hit predictions were wrong ${pct(d.length / Math.max(1, rs.length))} of the time — prefer the observed cache signal (or discount predictions) when scoring prefix affinity`,
  };
}
