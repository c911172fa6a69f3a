/**
 * Saturation detectors that gate gateway-queue dispatch (reference `sim/saturation.go`, blis-cluster.md §2.4).
 *
 * A detector maps the router's view of the pool to a number: 0 = idle, ≥ 1.0 = saturated (dispatch holds in
 * the top band). The value is continuous because the per-band ceilings of the usage-limit threshold compare
 * against it below 1.0. With no routable instance both real detectors return exactly 1.0, so queued requests
 * wait until an instance becomes routable instead of being routed nowhere.
 */
import type { RouterState } from '../../routing/types.js';

export interface SaturationDetector {
  readonly name: SaturationDetectorName;
  saturation(state: RouterState): number;
  /**
   * What `pending` requests released to routing but not yet routed add to the saturation over `instances`
   * instances (an upper bound): the gateway counts them when it dispatches several at once (--semantics
   * corrected), since no instance sees them yet.
   */
  pendingShare(pending: number, instances: number): number;
}

/** Accepted `--saturation-detector` values; '' means the default (never). */
export const SATURATION_DETECTOR_NAMES = ['concurrency', 'never', 'utilization'] as const;
export type SaturationDetectorName = (typeof SATURATION_DETECTOR_NAMES)[number];

export function isSaturationDetectorName(name: string): name is SaturationDetectorName | '' {
  return name === '' || (SATURATION_DETECTOR_NAMES as readonly string[]).includes(name);
}

/** Defaults of the detector flags (`--queue-depth-threshold`, `--kv-cache-util-threshold`, `--max-concurrency`). */
export const DEFAULT_QUEUE_DEPTH_THRESHOLD = 5;
export const DEFAULT_KV_CACHE_UTIL_THRESHOLD = 0.8;
export const DEFAULT_MAX_CONCURRENCY = 100;

const NEVER: SaturationDetector = { name: 'never', saturation: () => 0, pendingShare: () => 0 };

/** Always 0: the gateway queue becomes a pass-through (each enqueue dispatches at once). */
export function neverSaturated(): SaturationDetector {
  return NEVER;
}

function requireFinitePositive(what: string, v: number): void {
  if (!(v > 0) || !Number.isFinite(v)) throw new RangeError(`utilization detector: ${what} must be a finite value > 0, got ${v}`);
}

/**
 * Mean over routable instances of max(QueueDepth / queueDepthThreshold, KVUtilization / kvCacheUtilThreshold).
 * Reads whatever the snapshots hold, so with periodic snapshots the gate only reopens at the next refresh.
 */
export function utilizationDetector(queueDepthThreshold: number, kvCacheUtilThreshold: number): SaturationDetector {
  requireFinitePositive('queue depth threshold', queueDepthThreshold);
  requireFinitePositive('KV cache utilization threshold', kvCacheUtilThreshold);
  return {
    name: 'utilization',
    saturation(state: RouterState): number {
      const snaps = state.snapshots;
      if (snaps.length === 0) return 1.0;
      let sum = 0;
      // Summed in snapshot order, then divided once, as the reference does (the float result depends on it).
      for (const s of snaps) sum += Math.max(s.queueDepth / queueDepthThreshold, s.kvUtilization / kvCacheUtilThreshold);
      return sum / snaps.length;
    },
    // Each pending request will join some instance's queue: max(q + 1, k) <= max(q, k) + 1 per request.
    pendingShare: (pending, instances) => (instances === 0 ? 0 : pending / queueDepthThreshold / instances),
  };
}

/** Σ InFlightRequests / (instances × maxConcurrency); in-flight counts are always live. */
export function concurrencyDetector(maxConcurrency: number): SaturationDetector {
  if (!Number.isInteger(maxConcurrency) || maxConcurrency <= 0) {
    throw new RangeError(`concurrency detector: max concurrency must be an integer > 0, got ${maxConcurrency}`);
  }
  return {
    name: 'concurrency',
    saturation(state: RouterState): number {
      const snaps = state.snapshots;
      if (snaps.length === 0) return 1.0;
      let inFlight = 0;
      for (const s of snaps) inFlight += s.inFlightRequests;
      return inFlight / (snaps.length * maxConcurrency);
    },
    pendingShare: (pending, instances) => (instances === 0 ? 0 : pending / (instances * maxConcurrency)),
  };
}

export interface SaturationDetectorOptions {
  readonly queueDepthThreshold: number;
  readonly kvCacheUtilThreshold: number;
  readonly maxConcurrency: number;
}

/** Builds a detector by flag name; only the parameters of the chosen detector are validated. */
export function makeSaturationDetector(name: string, opts: SaturationDetectorOptions): SaturationDetector {
  switch (name) {
    case '':
    case 'never':
      return neverSaturated();
    case 'utilization':
      return utilizationDetector(opts.queueDepthThreshold, opts.kvCacheUtilThreshold);
    case 'concurrency':
      return concurrencyDetector(opts.maxConcurrency);
    default:
      throw new RangeError(`unknown saturation detector ${JSON.stringify(name)}; valid: ${SATURATION_DETECTOR_NAMES.join(', ')}`);
  }
}
