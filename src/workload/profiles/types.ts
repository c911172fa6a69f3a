/**
 * Typed forms of the two spec v2 extensions this project adds on top of the reference's schema:
 *
 * - `load_profile:` (top level, or per client): rate multipliers over time, by segment;
 * - `misbehavior:` (per client): bursty, abusive or adversarial tenants for robustness testing.
 *
 * Times are in seconds in the YAML (as a person writes a load test) and kept in seconds here; the generator
 * converts them to µs ticks. Parameters a segment or misbehavior kind does not use are null (absent), so the
 * validator can tell "not given" from "given as 0" and name a parameter that does not belong to the kind.
 */

export const SEGMENT_KINDS = ['constant', 'step', 'ramp', 'diurnal', 'spike'] as const;
export type SegmentKind = (typeof SEGMENT_KINDS)[number];

/** One `[start_s, end_s)` piece of a load profile. Which parameters apply depends on `kind`. */
export interface LoadSegment {
  startS: number;
  endS: number;
  kind: string;
  /** constant: the multiplier. */
  multiplier: number | null;
  /** step: multipliers of equal-length steps that split the segment. */
  levels: number[] | null;
  /** ramp: multiplier at start_s and at end_s (linear in between). */
  from: number | null;
  to: number | null;
  /** diurnal: cosine between `trough` and `peak` with period `period_s`, peaking at `peak_at_s` (mod period). */
  periodS: number | null;
  peakAtS: number | null;
  /** diurnal and spike: the highest multiplier. */
  peak: number | null;
  /** diurnal: the lowest multiplier. */
  trough: number | null;
  /** spike: the spike starts at `at_s` (absolute, default start_s) and lasts `duration_s` (default to end_s). */
  atS: number | null;
  durationS: number | null;
  /** spike: the multiplier around the spike inside the segment (default 1). */
  base: number | null;
  /** spike: exponential decay time constant from peak back towards base; absent or 0 = a flat-topped spike. */
  decayS: number | null;
}

export interface LoadProfileSpec {
  /** Multiplier wherever no segment applies (before, between and after segments); default 1. */
  defaultMultiplier: number;
  segments: LoadSegment[];
}

export const MISBEHAVIOR_KINDS = ['bursty', 'abusive', 'adversarial'] as const;
export type MisbehaviorKind = (typeof MISBEHAVIOR_KINDS)[number];

/** A misbehaving tenant. Parameters of other kinds must stay absent (null). */
export interface MisbehaviorSpec {
  kind: string;
  // bursty: on/off periods with Pareto-distributed lengths.
  burstRateMultiplier: number | null;
  offRateMultiplier: number | null;
  meanOnS: number | null;
  meanOffS: number | null;
  paretoAlpha: number | null;
  // abusive: rapid fire and oversized requests.
  rateMultiplier: number | null;
  inputMultiplier: number | null;
  fixedInputTokens: number | null;
  outputMultiplier: number | null;
  fraction: number | null;
  // adversarial: synchronised bursts shared by every client of the same group.
  group: string | null;
  periodS: number | null;
  startS: number | null;
  burstSize: number | null;
  jitterMs: number | null;
  backgroundMultiplier: number | null;
}

/** Defaults of the optional parameters (documented in docs/workload.md). */
export const MISBEHAVIOR_DEFAULTS = {
  offRateMultiplier: 0,
  paretoAlpha: 1.5,
  rateMultiplier: 1,
  inputMultiplier: 1,
  outputMultiplier: 1,
  fraction: 1,
  jitterMs: 0,
  backgroundMultiplier: 1,
} as const;

export const SPIKE_DEFAULT_BASE = 1;
export const DIURNAL_DEFAULT_PERIOD_S = 86_400;
