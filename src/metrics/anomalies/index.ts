/**
 * Anomaly detectors (policy-search-design §10 "Anomaly Types"): pure functions run once after a simulation
 * over the event records the cluster collects. Each detector turns records into {@link AnomalyEvent}s
 * `{type, timestampUs, description, requests, severity}`; `counts` is the number of EVENTS of each type for
 * every type (request counts live in the descriptions), and is never capped.
 *
 * Conventions shared by every rule (W = `windowUs`, default 1_000_000 µs):
 * - "Aligned window" = `[k·W, (k+1)·W)` containing the time (floor of time / W).
 * - "Within W" for a sliding window = a run of records whose first and last times differ by LESS than W
 *   (a half-open span of length W), so 10 preemptions 100 ms apart (span 900 ms) are a storm and 10
 *   preemptions 111.2 ms apart (span 1.0008 s) are not.
 * - Inputs are re-sorted (by time, then id / instance / other fields) before use, so the report does not
 *   depend on input order. Groups (instances, classes, deployments) are visited in sorted key order.
 * - `requests` lists at most `maxRequestsPerEvent` ids (default 10); the description carries the full count.
 * - At most `maxEventsPerType` events (default 100) are kept per type: the earliest, by (timestampUs,
 *   description). The report's events are sorted by timestampUs, then by the order of {@link ANOMALY_TYPES},
 *   then by description (UTF-16 code-unit order).
 *
 * The seven rules, one file each (their full statements are in the files' opening comments):
 * 1. `priority_inversion` (priority-inversion.ts, only when the scheduler promises priority order),
 * 2. `slo_violation` (slo-violation.ts), 3. `cache_thrashing` (cache-thrashing.ts; tier-thrashing.ts for
 *    reload cycles with a storage tier), 4. `shadow_divergence` (shadow-divergence.ts), 5. `scale_oscillation`
 *    (scale-oscillation.ts), 6. `pd_backpressure` (pd-backpressure.ts), 7. `preemption_storm`
 *    (preemption-storm.ts). Shared types are in types.ts, shared helpers in util.ts.
 *
 * Pure: no clock, no randomness, no output. Throws RangeError on invalid thresholds.
 */
import { detectCacheThrashing } from './cache-thrashing.js';
import { detectPdBackpressure } from './pd-backpressure.js';
import { detectPreemptionStorms } from './preemption-storm.js';
import { detectPriorityInversions } from './priority-inversion.js';
import { detectScaleOscillation } from './scale-oscillation.js';
import { detectShadowDivergence } from './shadow-divergence.js';
import { detectSloViolations } from './slo-violation.js';
import { ANOMALY_TYPES, type AnomalyEvent, type AnomalyInputs, type AnomalyReport, type AnomalyThresholds, type AnomalyType } from './types.js';
import { cmpNum, cmpStr, resolveThresholds } from './util.js';

export * from './types.js';

/** Runs every detector; see the module comment for the rules. */
export function detectAnomalies(inputs: AnomalyInputs, thresholds?: Partial<AnomalyThresholds>): AnomalyReport {
  const th = resolveThresholds(thresholds);
  const raw: AnomalyEvent[] = [];
  if (inputs.priorityScheduling) detectPriorityInversions(inputs.requests, th, raw);
  detectSloViolations(inputs, th, raw);
  detectCacheThrashing(inputs, th, raw);
  detectShadowDivergence(inputs, th, raw);
  detectScaleOscillation(inputs, th, raw);
  detectPdBackpressure(inputs, th, raw);
  detectPreemptionStorms(inputs, th, raw);

  const order = new Map<AnomalyType, number>(ANOMALY_TYPES.map((t, i) => [t, i]));
  const cmp = (a: AnomalyEvent, b: AnomalyEvent): number =>
    cmpNum(a.timestampUs, b.timestampUs) || (order.get(a.type)! - order.get(b.type)!) || cmpStr(a.description, b.description);
  raw.sort(cmp);
  const counts = Object.fromEntries(ANOMALY_TYPES.map((t) => [t, 0])) as Record<AnomalyType, number>;
  const events: AnomalyEvent[] = [];
  for (const e of raw) {
    // raw is sorted, so the first maxEventsPerType of a type are its earliest by (timestamp, description).
    if (counts[e.type]++ < th.maxEventsPerType) events.push(e);
  }
  return { counts, events };
}
