// Scenarios and numbers from the reference's sim/saturation_test.go.
import { describe, expect, it } from 'vitest';
import { concurrencyDetector, isSaturationDetectorName, makeSaturationDetector, neverSaturated, utilizationDetector } from './saturation.js';
import { snaps, state } from './test-helpers.js';

const OPTS = { queueDepthThreshold: 5, kvCacheUtilThreshold: 0.8, maxConcurrency: 100 };

describe('saturation detectors', () => {
  it('never is always 0, loaded or empty', () => {
    const d = neverSaturated();
    expect(d.saturation(state([]))).toBe(0);
    expect(d.saturation(state(snaps({ queueDepth: 100, kvUtilization: 0.99, inFlightRequests: 50 }, { queueDepth: 100, kvUtilization: 0.99, inFlightRequests: 50 })))).toBe(0);
  });

  it('utilization: mean of max(QD/qThr, KV/kvThr); 1.0 with no snapshots', () => {
    expect(utilizationDetector(5, 0.8).saturation(state([]))).toBe(1.0);
    const below = utilizationDetector(10, 0.8).saturation(state(snaps({ queueDepth: 2, kvUtilization: 0.3 }, { queueDepth: 3, kvUtilization: 0.4 })));
    expect(below).toBe((Math.max(2 / 10, 0.3 / 0.8) + Math.max(3 / 10, 0.4 / 0.8)) / 2);
    expect(below).toBeCloseTo(0.4375, 15);
    const above = utilizationDetector(5, 0.8).saturation(state(snaps({ queueDepth: 6, kvUtilization: 0.9 }, { queueDepth: 7, kvUtilization: 0.95 })));
    expect(above).toBeGreaterThanOrEqual(1.0);
    expect(above).toBeLessThanOrEqual(2.0);
  });

  it('p11a detector (queue-depth threshold 3): three queued on one of four instances saturates a quarter', () => {
    const d = utilizationDetector(3, 0.8);
    expect(d.saturation(state(snaps({ queueDepth: 3 }, {}, {}, {})))).toBe(0.25);
    expect(d.saturation(state(snaps({ queueDepth: 3 }, { queueDepth: 3 }, { queueDepth: 3 }, { queueDepth: 3 })))).toBe(1);
  });

  it('concurrency: in-flight / (n × max); 1.0 with no snapshots', () => {
    expect(concurrencyDetector(100).saturation(state([]))).toBe(1.0);
    expect(concurrencyDetector(100).saturation(state(snaps({ inFlightRequests: 30 }, { inFlightRequests: 20 })))).toBe(0.25);
    expect(concurrencyDetector(50).saturation(state(snaps({ inFlightRequests: 50 }, { inFlightRequests: 50 })))).toBe(1.0);
    // p11b: 3 instances × --max-concurrency 7 → 21 in flight saturates.
    expect(concurrencyDetector(7).saturation(state(snaps({ inFlightRequests: 7 }, { inFlightRequests: 7 }, { inFlightRequests: 6 })))).toBe(20 / 21);
    expect(concurrencyDetector(7).saturation(state(snaps({ inFlightRequests: 7 }, { inFlightRequests: 7 }, { inFlightRequests: 7 })))).toBe(1);
  });

  it('invalid parameters throw', () => {
    expect(() => utilizationDetector(0, 0.8)).toThrow();
    expect(() => utilizationDetector(5, -0.1)).toThrow();
    expect(() => utilizationDetector(Infinity, 0.8)).toThrow();
    expect(() => utilizationDetector(5, NaN)).toThrow();
    expect(() => concurrencyDetector(0)).toThrow();
  });

  it('factory by name', () => {
    const s = state(snaps({ queueDepth: 10, kvUtilization: 0.9, inFlightRequests: 50 }));
    expect(makeSaturationDetector('never', OPTS).saturation(s)).toBe(0);
    expect(makeSaturationDetector('', OPTS).saturation(s)).toBe(0);
    expect(makeSaturationDetector('utilization', OPTS).saturation(s)).toBe(2);
    expect(makeSaturationDetector('concurrency', OPTS).saturation(s)).toBe(0.5);
    expect(() => makeSaturationDetector('bogus', OPTS)).toThrow(/unknown saturation detector/);
    // Only the chosen detector's parameters are checked.
    expect(makeSaturationDetector('concurrency', { ...OPTS, queueDepthThreshold: 0 }).name).toBe('concurrency');
  });

  it('valid names', () => {
    for (const n of ['', 'never', 'utilization', 'concurrency']) expect(isSaturationDetectorName(n)).toBe(true);
    expect(isSaturationDetectorName('bogus')).toBe(false);
  });
});
