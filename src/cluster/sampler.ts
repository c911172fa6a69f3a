/**
 * The sampler contract of the cluster loop (ClusterSampler): what ClusterSimulator calls at simulated-time
 * ticks. timeseries.ts implements it; apart so that cluster.ts and timeseries.ts do not import each other.
 */

/** What the cluster loop calls (see ClusterSimulator.sampler). */
export interface ClusterSampler {
  /** The next sample tick (µs); the loop calls {@link sampleUpTo} once an event reaches it. */
  readonly next: number;
  sampleUpTo(time: number): void;
  /** The run ended at `time` (the last executed event): records the closing row. */
  finish(time: number): void;
}
