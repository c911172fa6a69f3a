/**
 * Anomaly detector (one per file; index.ts runs them).
 *
 * `scale_oscillation` — per deployment, scale events sorted by time; events with `to === from` are
 * ignored. A flip is an event whose direction (sign of `to - from`) is opposite to the previous non-zero
 * event's. Whenever `scaleOscillationFlips` (default 2) flips fall within 4 × W (first and last flip less
 * than 4·W apart), that is an oscillation; overlapping oscillations (sharing a flip) merge into one
 * episode. One event per episode: timestamp = its first flip, severity = flips in the episode /
 * scaleOscillationFlips, description = the replica path from the event before the first flip, no requests.
 * With the defaults, up-down-up (or down-up-down) whose two reversals are less than 4 s apart is one.
 */
import { SCALE_OSCILLATION_WINDOWS, type AnomalyEvent, type AnomalyInputs, type AnomalyThresholds } from './types.js';
import { bursts, cmpNum, groupBy } from './util.js';

export function detectScaleOscillation(inputs: AnomalyInputs, th: AnomalyThresholds, out: AnomalyEvent[]): void {
  const span = SCALE_OSCILLATION_WINDOWS * th.windowUs;
  for (const [deployment, evs] of groupBy(inputs.scaleEvents, (e) => e.deployment)) {
    evs.sort((a, b) => cmpNum(a.timeUs, b.timeUs) || cmpNum(a.from, b.from) || cmpNum(a.to, b.to));
    const moves = evs.filter((e) => e.to !== e.from);
    // flips[k] = index into moves of the k-th reversing move.
    const flips: number[] = [];
    for (let i = 1; i < moves.length; i++) {
      if (Math.sign(moves[i]!.to - moves[i]!.from) !== Math.sign(moves[i - 1]!.to - moves[i - 1]!.from)) flips.push(i);
    }
    const flipTimes = flips.map((i) => moves[i]!.timeUs);
    for (const b of bursts(flipTimes, th.scaleOscillationFlips, span)) {
      const first = flips[b.start]!;
      const last = flips[b.end]!;
      const n = b.end - b.start + 1;
      const path: number[] = [moves[first - 1]!.from];
      for (let i = first - 1; i <= last; i++) path.push(moves[i]!.to);
      const maxPath = Math.max(2, th.maxRequestsPerEvent + 1);
      const shown = path.length > maxPath ? `${path.slice(0, maxPath).join('->')}->...` : path.join('->');
      out.push({
        type: 'scale_oscillation',
        timestampUs: flipTimes[b.start]!,
        description: `deployment ${deployment}: ${n} scale direction changes between ${flipTimes[b.start]!} and ${flipTimes[b.end]!} (replicas ${shown})`,
        requests: [],
        severity: n / th.scaleOscillationFlips,
      });
    }
  }
}
