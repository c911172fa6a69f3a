/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `cache_thrashing` — per instance, samples sorted by time; each consecutive pair contributes
 * `max(0, cur - prev)` offloads and reloads to the aligned window of the later sample (the first sample is
 * a baseline only: counts before it have unknown times). A window is thrashing when reloads >=
 * `thrashingReloads` (default 32) AND reloads >= `thrashingReloadShare` (default 0.5) × offloads. One event
 * per such window: timestamp = window start, severity = reloads / thrashingReloads, no requests.
 * With a storage tier, also per instance and aligned window: at least `thrashingReloads` reload
 * cycles (a block reloaded into the GPU again within the cycle window of its previous reload; see
 * tier-thrashing.ts) is one more event of this type.
 */
import { detectTierThrashing } from './tier-thrashing.js';
import type { AnomalyEvent, AnomalyInputs, AnomalyThresholds } from './types.js';
import { cmpNum, groupBy, windowStart } from './util.js';

export function detectCacheThrashing(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const W = th.windowUs;
  for (const [instance, samples] of groupBy(inputs.kvSamples, (s) => s.instance)) {
    samples.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpNum(a.offloads, b.offloads) || cmpNum(a.reloads, b.reloads));
    const windows: { start: number; offloads: number; reloads: number }[] = [];
    for (let i = 1; i < samples.length; i++) {
      const prev = samples[i - 1]!;
      const cur = samples[i]!;
      const start = windowStart(cur.timeUs, W);
      let w = windows[windows.length - 1];
      if (w?.start !== start) {
        w = { start, offloads: 0, reloads: 0 };
        windows.push(w);
      }
      w.offloads += Math.max(0, cur.offloads - prev.offloads);
      w.reloads += Math.max(0, cur.reloads - prev.reloads);
    }
    for (const w of windows) {
      if (w.reloads < th.thrashingReloads || w.reloads < th.thrashingReloadShare * w.offloads) continue;
      out.push({
        type: 'cache_thrashing',
        timestampUs: w.start,
        description: `instance ${instance}: ${w.reloads} CPU->GPU reloads and ${w.offloads} GPU->CPU offloads in [${w.start}, ${w.start + W})`,
        requests: [],
        severity: w.reloads / th.thrashingReloads,
      });
    }
  }
  for (const e of detectTierThrashing(inputs.tierCycles ?? [], W, th.thrashingReloads)) out.push({ type: 'cache_thrashing', requests: [], ...e });
}
