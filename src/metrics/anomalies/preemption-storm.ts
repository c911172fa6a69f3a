/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `preemption_storm` — per instance, preemptions sorted by time (then request id): whenever at least
 * `preemptionStormCount` (default 10) fall within W, that run is a burst; bursts sharing a preemption merge
 * into one episode. One event per episode: timestamp = its first preemption, severity = preemptions in the
 * episode / preemptionStormCount, requests = the distinct preempted ids in order of first preemption.
 */
import type { AnomalyEvent, AnomalyInputs, AnomalyThresholds } from './types.js';
import { bursts, cmpNum, cmpStr, distinctCapped, groupBy } from './util.js';

export function detectPreemptionStorms(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const W = th.windowUs;
  for (const [instance, ps] of groupBy(inputs.preemptions, (p) => p.instance)) {
    ps.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpStr(a.requestId, b.requestId));
    const times = ps.map((p) => p.timeUs);
    for (const b of bursts(times, th.preemptionStormCount, W)) {
      const n = b.end - b.start + 1;
      const { list, total } = distinctCapped(
        ps.slice(b.start, b.end + 1).map((p) => p.requestId),
        th.maxRequestsPerEvent,
      );
      out.push({
        type: 'preemption_storm',
        timestampUs: times[b.start]!,
        description: `instance ${instance}: ${n} preemptions of ${total} request(s) between ${times[b.start]!} and ${times[b.end]!} (peak ${b.peak} within ${W} us)`,
        requests: list,
        severity: n / th.preemptionStormCount,
      });
    }
  }
}
