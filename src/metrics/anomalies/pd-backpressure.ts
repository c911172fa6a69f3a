/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `pd_backpressure` — per instance, samples sorted by time: a sample with `pending >=
 * pdBackpressureQueue` (default 16) opens an episode, which lasts until the first sample with pending
 * below it (or the end of the samples). One event per episode: timestamp = the opening sample, severity =
 * peak pending / pdBackpressureQueue, requests = the distinct ids of the episode's samples in order of
 * first appearance.
 */
import type { AnomalyEvent, AnomalyInputs, AnomalyThresholds } from './types.js';
import { cmpNum, cmpStr, distinctCapped, groupBy } from './util.js';

export function detectPdBackpressure(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const Q = th.pdBackpressureQueue;
  for (const [instance, ss] of groupBy(inputs.pdQueueSamples, (s) => s.instance)) {
    ss.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpNum(a.pending, b.pending) || cmpStr(a.requestIds.join('\u0000'), b.requestIds.join('\u0000')));
    let i = 0;
    while (i < ss.length) {
      if (ss[i]!.pending < Q) {
        i++;
        continue;
      }
      const start = i;
      let peak = 0;
      for (; i < ss.length && ss[i]!.pending >= Q; i++) peak = Math.max(peak, ss[i]!.pending);
      const ep = ss.slice(start, i);
      const { list, total } = distinctCapped(
        ep.flatMap((s) => s.requestIds),
        th.maxRequestsPerEvent,
      );
      const t0 = ep[0]!.timeUs;
      const until = i < ss.length ? `until ${ss[i]!.timeUs}` : 'until the last sample';
      out.push({
        type: 'pd_backpressure',
        timestampUs: t0,
        description: `instance ${instance}: prefill->decode KV transfer queue at or above ${Q} from ${t0} ${until} (peak ${peak} pending over ${ep.length} sample(s), ${total} request(s))`,
        requests: list,
        severity: peak / Q,
      });
    }
  }
}
