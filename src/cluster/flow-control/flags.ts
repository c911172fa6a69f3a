/**
 * Validation of the flow-control flags (reference cmd/root.go, the "Flow control validation" block), kept
 * pure: it returns the first error and the warnings the reference would log before reaching it, and never
 * exits. Checks run in the reference's order, so the error reported for several bad flags is the same one.
 * Most checks apply only with `--flow-control`; `--request-ttl` and `--dispatch-tick-interval` are checked
 * always, and flags that need flow control only warn without it.
 */
import { goFormatV, goQuote } from '../../gocompat/go-text.js';
import { FAIRNESS_POLICY_NAMES, type FairnessPolicyName } from './bands.js';
import type { FlowControlConfig } from './controller.js';
import { DISPATCH_ORDERS, type DispatchOrder } from './gateway-queue.js';
import { isSaturationDetectorName, SATURATION_DETECTOR_NAMES } from './saturation.js';

/** The raw flag values (CLI defaults in brackets). */
export interface FlowControlFlagValues {
  readonly flowControl: boolean; // --flow-control [false]
  readonly saturationDetector: string; // --saturation-detector [never]
  readonly dispatchOrder: string; // --dispatch-order [fifo]
  readonly sloTargets: string; // --slo-targets ['']
  readonly maxGatewayQueueDepth: number; // --max-gateway-queue-depth [0]
  readonly queueDepthThreshold: number; // --queue-depth-threshold [5]
  readonly kvCacheUtilThreshold: number; // --kv-cache-util-threshold [0.8]
  readonly maxConcurrency: number; // --max-concurrency [100]
  readonly perBandCapacity: number; // --per-band-capacity [0]
  readonly usageLimitThreshold: number; // --usage-limit-threshold [1.0]
  readonly fairnessPolicy: string; // --fairness-policy [global-strict]
  readonly requestTtl: number; // --request-ttl [0]
  readonly queueShedding: boolean; // --queue-shedding [false]
  readonly dispatchTickInterval: number; // --dispatch-tick-interval [1000]
  readonly inFlightEviction: boolean; // --in-flight-eviction [false]
  /** A policy bundle's `admission.slo_targets`, used when --slo-targets is empty; null when absent. */
  readonly bundleSloTargets?: ReadonlyMap<string, number> | null;
}

export type FlowControlFlagResult =
  | { readonly ok: true; readonly config: FlowControlConfig | null; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly error: string; readonly warnings: readonly string[] };

type SloTargetsParse = { readonly ok: true; readonly targets: Map<string, number> } | { readonly ok: false; readonly error: string };

/** `--slo-targets class=µs,...` (e.g. "critical=100000,standard=500000"); every value a positive integer. */
export function parseSloTargets(text: string): SloTargetsParse {
  const targets = new Map<string, number>();
  for (const pair of text.split(',')) {
    const trimmed = pair.trim();
    const eq = trimmed.indexOf('=');
    if (eq < 0) return { ok: false, error: `--slo-targets: invalid format ${goQuote(pair)} (expected key=value)` };
    const key = trimmed.slice(0, eq).trim();
    if (key === '') return { ok: false, error: `--slo-targets: empty key in pair ${goQuote(pair)} (expected key=value)` };
    const raw = trimmed.slice(eq + 1).trim();
    const v = /^[+-]?\d+$/.test(raw) ? BigInt(raw) : null;
    if (v === null || v <= 0n || v > 9223372036854775807n) {
      return { ok: false, error: `--slo-targets: value for ${goQuote(key)} must be a positive integer (µs), got ${raw}` };
    }
    targets.set(key, Number(v));
  }
  return { ok: true, targets };
}

/** The checks that only apply with --flow-control, in the reference's order; returns the first error. */
function checkEnabled(f: FlowControlFlagValues, warn: (m: string) => void): string | null {
  if (!isSaturationDetectorName(f.saturationDetector)) {
    return `Unknown saturation detector ${goQuote(f.saturationDetector)} (--saturation-detector). Valid: ${SATURATION_DETECTOR_NAMES.join(', ')}`;
  }
  if (!(DISPATCH_ORDERS as readonly string[]).includes(f.dispatchOrder)) {
    return `--dispatch-order must be 'fifo', 'priority', or 'slo-deadline', got ${goQuote(f.dispatchOrder)}`;
  }
  if (f.maxGatewayQueueDepth < 0) return `--max-gateway-queue-depth must be >= 0, got ${f.maxGatewayQueueDepth}`;
  if (f.perBandCapacity < 0) return `--per-band-capacity must be >= 0, got ${f.perBandCapacity}`;
  if (!(f.usageLimitThreshold > 0 && f.usageLimitThreshold <= 1.0)) {
    return `--usage-limit-threshold must be in (0, 1.0], got ${goFormatV(f.usageLimitThreshold)}`;
  }
  if (!(FAIRNESS_POLICY_NAMES as readonly string[]).includes(f.fairnessPolicy)) {
    return `--fairness-policy must be 'global-strict' or 'round-robin', got ${goQuote(f.fairnessPolicy)}`;
  }
  if (f.usageLimitThreshold < 1.0 && f.dispatchOrder === 'fifo') {
    warn('--usage-limit-threshold < 1.0 with --dispatch-order fifo: HoL blocking uses priority-order iteration, FIFO semantics will not apply to gating decisions');
  }
  return null;
}

function checkDetectorParams(f: FlowControlFlagValues, warn: (m: string) => void): string | null {
  switch (f.saturationDetector) {
    case 'utilization':
      if (!(f.queueDepthThreshold > 0) || !Number.isFinite(f.queueDepthThreshold)) {
        return `--queue-depth-threshold must be a finite value > 0, got ${goFormatV(f.queueDepthThreshold)}`;
      }
      if (!(f.kvCacheUtilThreshold > 0) || !Number.isFinite(f.kvCacheUtilThreshold)) {
        return `--kv-cache-util-threshold must be a finite value > 0, got ${goFormatV(f.kvCacheUtilThreshold)}`;
      }
      return null;
    case 'concurrency':
      return f.maxConcurrency <= 0 ? `--max-concurrency must be > 0, got ${f.maxConcurrency}` : null;
    default:
      warn(`--flow-control enabled but --saturation-detector is ${goQuote(f.saturationDetector)} (pass-through); specify 'utilization' or 'concurrency' for actual gating`);
      return null;
  }
}

function checkAlways(f: FlowControlFlagValues, warn: (m: string) => void): string | null {
  // Stricter than the reference (checked with or without --flow-control): KV utilisation is a fraction, so a
  // threshold above 1 can never be reached and one at or below 0 is always exceeded.
  if (!(f.kvCacheUtilThreshold > 0 && f.kvCacheUtilThreshold <= 1)) {
    return `--kv-cache-util-threshold must be in (0, 1] (a fraction of the KV cache), got ${goFormatV(f.kvCacheUtilThreshold)}; e.g. 0.8 = saturated at 80% use`;
  }
  if (f.requestTtl < 0) return `--request-ttl must be >= 0, got ${f.requestTtl}`;
  if (f.requestTtl > 0 && !f.flowControl) warn(`--request-ttl ${f.requestTtl} has no effect without --flow-control`);
  if (f.dispatchTickInterval < 0) return `--dispatch-tick-interval must be >= 0, got ${f.dispatchTickInterval}`;
  if (f.queueShedding && !f.flowControl) warn('--queue-shedding has no effect without --flow-control');
  if (f.inFlightEviction && !f.flowControl) warn('--in-flight-eviction has no effect without --flow-control');
  return null;
}

/**
 * Validates the flags and resolves the controller config (null when --flow-control is off). --slo-targets, when
 * given, replaces the bundle's targets; either one with a dispatch order other than slo-deadline only warns.
 */
export function resolveFlowControlFlags(f: FlowControlFlagValues): FlowControlFlagResult {
  const warnings: string[] = [];
  const warn = (m: string): void => {
    warnings.push(m);
  };
  const fail = (error: string): FlowControlFlagResult => ({ ok: false, error, warnings });
  let sloTargets: ReadonlyMap<string, number> | null = f.bundleSloTargets ?? null;
  if (f.flowControl) {
    const e = checkEnabled(f, warn);
    if (e !== null) return fail(e);
    if (f.sloTargets !== '') {
      const parsed = parseSloTargets(f.sloTargets);
      if (!parsed.ok) return fail(parsed.error);
      sloTargets = parsed.targets;
    }
    if (sloTargets !== null && f.dispatchOrder !== 'slo-deadline') warn('--slo-targets has no effect without --dispatch-order slo-deadline');
    const d = checkDetectorParams(f, warn);
    if (d !== null) return fail(d);
  }
  const a = checkAlways(f, warn);
  if (a !== null) return fail(a);
  if (!f.flowControl) return { ok: true, config: null, warnings };
  const config: FlowControlConfig = {
    detector: f.saturationDetector as FlowControlConfig['detector'],
    dispatchOrder: f.dispatchOrder as DispatchOrder,
    sloTargets,
    maxQueueDepth: f.maxGatewayQueueDepth,
    queueDepthThreshold: f.queueDepthThreshold,
    kvCacheUtilThreshold: f.kvCacheUtilThreshold,
    maxConcurrency: f.maxConcurrency,
    perBandCapacity: f.perBandCapacity,
    usageLimitThreshold: f.usageLimitThreshold,
    fairnessPolicy: f.fairnessPolicy as FairnessPolicyName,
    requestTtl: f.requestTtl,
    queueShedding: f.queueShedding,
    dispatchTickInterval: f.dispatchTickInterval,
    inFlightEviction: f.inFlightEviction,
  };
  return { ok: true, config, warnings };
}
