/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `slo_violation` — a request with any measured outcome (TTFT, mean ITL or E2E not null) is attributed to
 * its class (`""` → `"default"`, targets looked up under that key, falling back to the raw class name) and
 * to the aligned window of its outcome time: `arrivalUs + e2eUs` if finished, else `arrivalUs + ttftUs`,
 * else `arrivalUs`. It violates when TTFT > ttftMs·1000, mean ITL > itlMs·1000 or E2E > e2eMs·1000 (a
 * target of 0 or a missing class does not gate that dimension), or TTFT > `sloTargetUs` when that is > 0.
 * Comparisons are strict: a latency exactly at its target meets it. One event per (class, window) with at
 * least one violator: timestamp = window start, description = violators / requests with an outcome in
 * that window and the worst ratio (dimension and request), severity = the worst measured/target ratio
 * among the violated dimensions, requests = the violators by outcome time, then id.
 */
import { sloClassKey } from '../breakdowns.js';
import type { AnomalyEvent, AnomalyInputs, AnomalyRequestRecord, AnomalyThresholds } from './types.js';
import { cmpNum, cmpStr, fmt, groupBy, windowStart } from './util.js';

export function detectSloViolations(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  interface Outcome { r: AnomalyRequestRecord; t: number; ratio: number; dim: string }
  const W = th.windowUs;
  const outcomes: Outcome[] = [];
  for (const r of inputs.requests) {
    if (r.ttftUs === null && r.itlMeanUs === null && r.e2eUs === null) continue;
    const t = r.e2eUs !== null ? r.arrivalUs + r.e2eUs : r.ttftUs !== null ? r.arrivalUs + r.ttftUs : r.arrivalUs;
    const cls = sloClassKey(r.sloClass);
    const tg = inputs.sloTargets?.get(cls) ?? inputs.sloTargets?.get(r.sloClass);
    let ratio = 0;
    let dim = '';
    const gate = (measured: number | null, targetUs: number, name: string): void => {
      if (measured === null || !(targetUs > 0) || !(measured > targetUs)) return;
      const q = measured / targetUs;
      if (q > ratio) {
        ratio = q;
        dim = name;
      }
    };
    if (tg) {
      gate(r.ttftUs, tg.ttftMs * 1000, 'TTFT');
      gate(r.itlMeanUs, tg.itlMs * 1000, 'ITL');
      gate(r.e2eUs, tg.e2eMs * 1000, 'E2E');
    }
    gate(r.ttftUs, r.sloTargetUs, 'request TTFT target');
    outcomes.push({ r, t, ratio, dim });
  }
  const groups = groupBy(outcomes, (o) => `${sloClassKey(o.r.sloClass)}\u0000${windowStart(o.t, W)}`);
  for (const [, g] of groups) {
    const bad = g.filter((o) => o.ratio > 0).sort((a, b) => cmpNum(a.t, b.t) || cmpStr(a.r.id, b.r.id));
    if (bad.length === 0) continue;
    let worst = bad[0] as Outcome;
    for (const o of bad) if (o.ratio > worst.ratio || (o.ratio === worst.ratio && cmpStr(o.r.id, worst.r.id) < 0)) worst = o;
    const ws = windowStart(worst.t, W);
    out.push({
      type: 'slo_violation',
      timestampUs: ws,
      description: `class ${sloClassKey(worst.r.sloClass)}: ${bad.length}/${g.length} requests with an outcome in [${ws}, ${ws + W}) missed their SLO; worst ${worst.dim} ${fmt(worst.ratio)}x target (request ${worst.r.id})`,
      requests: bad.slice(0, th.maxRequestsPerEvent).map((o) => o.r.id),
      severity: worst.ratio,
    });
  }
}
