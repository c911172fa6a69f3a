/**
 * The load a latency profile was fitted on, and the warning for using it elsewhere (kept apart from profile.ts,
 * which loads the YAML library, so `run` can check without it).
 */

/** What a profile was fitted on: request rate (req/s) and requests decoding per step, each [low, high]. */
export interface ProfileRange {
  readonly requestRate: readonly [number, number];
  readonly batchSize: readonly [number, number];
}

/**
 * The warning for a workload arriving at `rateRps` on a profile fitted at other rates, or undefined inside
 * [low/1.1, high·1.1] (the traces' own rate varies by that much). Fitted coefficients extrapolate outside it:
 * a profile fitted at low rates over-predicted TPOT by ~30 % at high ones (issue 28).
 */
export function profileRangeWarning(range: ProfileRange | undefined, label: string, rateRps: number): string | undefined {
  if (range === undefined || !(rateRps > 0)) return undefined;
  const [lo, hi] = range.requestRate;
  if (!(hi > 0) || (rateRps >= lo / 1.1 && rateRps <= hi * 1.1)) return undefined;
  const f = (x: number): string => x.toPrecision(3);
  return `--latency-profile ${label} was fitted on ${f(lo)}–${f(hi)} req/s (decode batches of ${range.batchSize[0]}–${range.batchSize[1]} requests); this workload arrives at ${f(rateRps)} req/s, outside that range: its coefficients extrapolate (fit it on traces at this load too)`;
}

/** Requests per second of arrival times in µs (n − 1 over their span); 0 below two distinct times. */
export function arrivalRate(arrivalsUs: readonly number[]): number {
  if (arrivalsUs.length < 2) return 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of arrivalsUs) {
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  return hi > lo ? ((arrivalsUs.length - 1) * 1e6) / (hi - lo) : 0;
}
