// The reference's flow-control flag checks (cmd/root.go), in its order and wording.
import { describe, expect, it } from 'vitest';
import { DEFAULT_FLOW_CONTROL_CONFIG } from './controller.js';
import { parseSloTargets, resolveFlowControlFlags, type FlowControlFlagValues } from './flags.js';

const DEFAULTS: FlowControlFlagValues = {
  flowControl: false,
  saturationDetector: 'never',
  dispatchOrder: 'fifo',
  sloTargets: '',
  maxGatewayQueueDepth: 0,
  queueDepthThreshold: 5,
  kvCacheUtilThreshold: 0.8,
  maxConcurrency: 100,
  perBandCapacity: 0,
  usageLimitThreshold: 1.0,
  fairnessPolicy: 'global-strict',
  requestTtl: 0,
  queueShedding: false,
  dispatchTickInterval: 1000,
  inFlightEviction: false,
};

const on = (over: Partial<FlowControlFlagValues>): FlowControlFlagValues => ({ ...DEFAULTS, flowControl: true, ...over });

function errorOf(f: FlowControlFlagValues): string {
  const r = resolveFlowControlFlags(f);
  if (r.ok) throw new Error('expected an error');
  return r.error;
}

describe('resolveFlowControlFlags', () => {
  it('off by default: no config, no warnings', () => {
    expect(resolveFlowControlFlags(DEFAULTS)).toEqual({ ok: true, config: null, warnings: [] });
  });

  it('flow-control flags without --flow-control only warn', () => {
    const r = resolveFlowControlFlags({ ...DEFAULTS, requestTtl: 5000, queueShedding: true, inFlightEviction: true });
    expect(r).toEqual({
      ok: true,
      config: null,
      warnings: [
        '--request-ttl 5000 has no effect without --flow-control',
        '--queue-shedding has no effect without --flow-control',
        '--in-flight-eviction has no effect without --flow-control',
      ],
    });
  });

  it('defaults with --flow-control resolve to the default config and warn about pass-through', () => {
    const r = resolveFlowControlFlags(on({}));
    expect(r).toEqual({
      ok: true,
      config: DEFAULT_FLOW_CONTROL_CONFIG,
      warnings: [`--flow-control enabled but --saturation-detector is "never" (pass-through); specify 'utilization' or 'concurrency' for actual gating`],
    });
  });

  it('the p11b flags', () => {
    const r = resolveFlowControlFlags(on({ saturationDetector: 'concurrency', maxConcurrency: 7, maxGatewayQueueDepth: 40, queueShedding: true, usageLimitThreshold: 0.8, dispatchOrder: 'priority', fairnessPolicy: 'round-robin' }));
    expect(r.ok && r.warnings).toEqual([]);
    expect(r.ok && r.config).toMatchObject({ detector: 'concurrency', maxConcurrency: 7, maxQueueDepth: 40, queueShedding: true, usageLimitThreshold: 0.8, dispatchOrder: 'priority', fairnessPolicy: 'round-robin' });
  });

  it('each bad value names its flag', () => {
    expect(errorOf(on({ saturationDetector: 'bogus' }))).toBe('Unknown saturation detector "bogus" (--saturation-detector). Valid: concurrency, never, utilization');
    expect(errorOf(on({ dispatchOrder: 'lifo' }))).toBe(`--dispatch-order must be 'fifo', 'priority', or 'slo-deadline', got "lifo"`);
    expect(errorOf(on({ maxGatewayQueueDepth: -1 }))).toBe('--max-gateway-queue-depth must be >= 0, got -1');
    expect(errorOf(on({ perBandCapacity: -2 }))).toBe('--per-band-capacity must be >= 0, got -2');
    expect(errorOf(on({ usageLimitThreshold: 0 }))).toBe('--usage-limit-threshold must be in (0, 1.0], got 0');
    expect(errorOf(on({ usageLimitThreshold: 1.5 }))).toBe('--usage-limit-threshold must be in (0, 1.0], got 1.5');
    expect(errorOf(on({ fairnessPolicy: '' }))).toBe(`--fairness-policy must be 'global-strict' or 'round-robin', got ""`);
    expect(errorOf(on({ saturationDetector: 'utilization', queueDepthThreshold: 0 }))).toBe('--queue-depth-threshold must be a finite value > 0, got 0');
    expect(errorOf(on({ saturationDetector: 'utilization', kvCacheUtilThreshold: -0.1 }))).toBe('--kv-cache-util-threshold must be a finite value > 0, got -0.1');
    // A fraction: above 1 it could never be reached (refused with or without --flow-control).
    expect(errorOf(on({ saturationDetector: 'utilization', kvCacheUtilThreshold: 5 }))).toMatch(/^--kv-cache-util-threshold must be in \(0, 1\] \(a fraction of the KV cache\), got 5/);
    expect(errorOf({ ...DEFAULTS, kvCacheUtilThreshold: 5 })).toMatch(/^--kv-cache-util-threshold must be in \(0, 1\]/);
    expect(errorOf(on({ saturationDetector: 'concurrency', maxConcurrency: 0 }))).toBe('--max-concurrency must be > 0, got 0');
    expect(errorOf({ ...DEFAULTS, requestTtl: -1 })).toBe('--request-ttl must be >= 0, got -1');
    expect(errorOf({ ...DEFAULTS, dispatchTickInterval: -5 })).toBe('--dispatch-tick-interval must be >= 0, got -5');
  });

  it('only the chosen detector parameters are checked; the empty detector name is accepted', () => {
    expect(resolveFlowControlFlags(on({ saturationDetector: 'utilization', maxConcurrency: 0 })).ok).toBe(true);
    expect(resolveFlowControlFlags(on({ saturationDetector: 'concurrency', queueDepthThreshold: -1 })).ok).toBe(true);
    const r = resolveFlowControlFlags(on({ saturationDetector: '' }));
    expect(r.ok && r.config?.detector).toBe('');
    expect(r.warnings[0]).toContain('--saturation-detector is "" (pass-through)');
  });

  it('checks run in the reference order, keeping the warnings logged before the error', () => {
    expect(errorOf(on({ saturationDetector: 'bogus', dispatchOrder: 'lifo' }))).toMatch(/^Unknown saturation detector/);
    const r = resolveFlowControlFlags(on({ usageLimitThreshold: 0.5, sloTargets: 'x' }));
    expect(r).toEqual({
      ok: false,
      error: '--slo-targets: invalid format "x" (expected key=value)',
      warnings: ['--usage-limit-threshold < 1.0 with --dispatch-order fifo: HoL blocking uses priority-order iteration, FIFO semantics will not apply to gating decisions'],
    });
  });

  it('--slo-targets replaces bundle targets; any targets without slo-deadline warn', () => {
    const bundle = new Map([['batch', 9]]);
    const a = resolveFlowControlFlags(on({ saturationDetector: 'concurrency', dispatchOrder: 'slo-deadline', sloTargets: 'critical=100000, standard = 500000', bundleSloTargets: bundle }));
    expect(a.ok && a.config?.sloTargets).toEqual(new Map([['critical', 100000], ['standard', 500000]]));
    expect(a.warnings).toEqual([]);
    const b = resolveFlowControlFlags(on({ saturationDetector: 'concurrency', bundleSloTargets: bundle }));
    expect(b.ok && b.config?.sloTargets).toBe(bundle);
    expect(b.warnings).toEqual(['--slo-targets has no effect without --dispatch-order slo-deadline']);
  });
});

describe('parseSloTargets', () => {
  it('parses pairs and keeps the last duplicate', () => {
    expect(parseSloTargets('critical=100000,standard=500000,critical=+7')).toEqual({ ok: true, targets: new Map([['critical', 7], ['standard', 500000]]) });
  });

  it('rejects malformed pairs with the reference messages', () => {
    expect(parseSloTargets('critical')).toEqual({ ok: false, error: '--slo-targets: invalid format "critical" (expected key=value)' });
    expect(parseSloTargets('a=1,')).toEqual({ ok: false, error: '--slo-targets: invalid format "" (expected key=value)' });
    expect(parseSloTargets(' =5')).toEqual({ ok: false, error: '--slo-targets: empty key in pair " =5" (expected key=value)' });
    expect(parseSloTargets('a=0')).toEqual({ ok: false, error: '--slo-targets: value for "a" must be a positive integer (µs), got 0' });
    expect(parseSloTargets('a=1.5')).toEqual({ ok: false, error: '--slo-targets: value for "a" must be a positive integer (µs), got 1.5' });
    expect(parseSloTargets('a=b=c').ok).toBe(false);
    expect(parseSloTargets('a=9223372036854775808').ok).toBe(false);
  });
});
