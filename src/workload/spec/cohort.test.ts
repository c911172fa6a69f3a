import { describe, expect, it } from 'vitest';
import { diurnalWindows, drainWindows, expandCohorts, spikeWindow } from './cohort.js';
import { parseWorkloadSpec } from './parse.js';
import { isInActiveWindow, lastWindowEndUs, normalizeRateFractions, windowsOverlap } from './rates.js';

const HOUR = 3_600_000_000;
const span = (w: { startUs: number; endUs: number }): [number, number] => [w.startUs, w.endUs];

describe('cohort lifecycle patterns', () => {
  it('diurnal: 24 hourly windows, full hour at the peak, 1/R of it at the trough', () => {
    const ws = diurnalWindows({ peakHour: 0, peakToTroughRatio: 4 });
    expect(ws).toHaveLength(24);
    expect(span(ws[0]!)).toEqual([0, HOUR]);
    expect(span(ws[12]!)).toEqual([12 * HOUR, 12 * HOUR + HOUR / 4]);
    for (let h = 1; h < 12; h++) {
      const d = (w: { startUs: number; endUs: number }): number => w.endUs - w.startUs;
      // Symmetric up to the truncation of cos's last-bit asymmetry (hours 6 and 18 differ by 1 µs, as in Go).
      expect(Math.abs(d(ws[h]!) - d(ws[24 - h]!))).toBeLessThanOrEqual(1);
      expect(d(ws[h]!)).toBeLessThan(d(ws[h - 1]!));
      expect(ws[h]!.startUs).toBe(h * HOUR);
    }
    // R = 1 keeps every hour fully active.
    expect(diurnalWindows({ peakHour: 7, peakToTroughRatio: 1 }).every((w) => w.endUs - w.startUs === HOUR)).toBe(true);
  });

  it('drain: an optional full window before the ramp, then 10 shrinking segments', () => {
    const ws = drainWindows({ startTimeUs: 1000, rampDurationUs: 100 });
    expect(ws.map(span)).toEqual([
      [0, 1000],
      [1000, 1010],
      [1010, 1019],
      [1020, 1028],
      [1030, 1037],
      [1040, 1046],
      [1050, 1055],
      [1060, 1064],
      [1070, 1073],
      [1080, 1082],
      [1090, 1091],
    ]);
    // No pre-window at 0; tiny ramps still give 1 µs segments of at least 1 µs.
    expect(drainWindows({ startTimeUs: 0, rampDurationUs: 5 }).map(span)).toEqual(Array.from({ length: 10 }, (_, i) => [i, i + 1]));
  });

  it('spike: one window carrying the cohort trace rate, split across members on expansion', () => {
    expect(spikeWindow({ startTimeUs: 5, durationUs: 10, traceRate: 30 })).toMatchObject({ startUs: 5, endUs: 15, traceRate: 30 });
    const spec = parseWorkloadSpec(
      `aggregate_rate: 0
cohorts:
  - id: burst
    population: 3
    rate_fraction: 0.9
    prefix_group: ctx
    prefix_sharing: per_member
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 5}}
    output_distribution: {type: constant, params: {value: 5}}
    spike: {start_time_us: 5, duration_us: 10, trace_rate: 30}
`,
      'w.yaml',
    );
    const members = expandCohorts(spec.cohorts);
    expect(members.map((m) => [m.id, m.prefixGroup, m.rateFraction, m.lifecycle?.windows[0]?.traceRate])).toEqual([
      ['burst-0', 'ctx-0', 0.3, 10],
      ['burst-1', 'ctx-1', 0.3, 10],
      ['burst-2', 'ctx-2', 0.3, 10],
    ]);
  });
});

describe('rate normalisation and window predicates', () => {
  const client = (rateFraction: number, windows: [number, number][] | null) => ({
    rateFraction,
    lifecycle: windows === null ? null : { windows: windows.map(([startUs, endUs]) => ({ startUs, endUs, traceRate: null, arrival: null, inputDist: null, outputDist: null })) },
  });

  it('splits the aggregate rate globally without windows and per phase with them', () => {
    const base = { id: '', tenantId: '', sloClass: '', model: '', adapter: '', concurrency: 0, thinkTimeUs: 0 };
    const mk = (f: number, w: [number, number][] | null) => ({ ...base, ...client(f, w) }) as Parameters<typeof normalizeRateFractions>[0][number];
    expect(normalizeRateFractions([mk(1, null), mk(3, null)], 40)).toEqual([10 / 1e6, 30 / 1e6]);
    // Phase 1 (0-50 s): A 0.7 + B 0.3; phase 2 (50-100 s): C alone. Every phase runs at 40 req/s.
    const rates = normalizeRateFractions([mk(0.7, [[0, 50e6]]), mk(0.3, [[0, 50e6]]), mk(1, [[50e6, 100e6]])], 40);
    expect(rates.map((r) => Math.round(r * 1e6 * 1e9) / 1e9)).toEqual([28, 12, 40]);
  });

  it('windows are half-open and overlap only when they share time', () => {
    const l = client(1, [[10, 20], [30, 40]]).lifecycle!;
    expect([9, 10, 19, 20, 35].map((t) => isInActiveWindow(t, l))).toEqual([false, true, true, false, true]);
    expect(lastWindowEndUs(l)).toBe(40);
    expect(windowsOverlap(l, client(1, [[20, 30]]).lifecycle)).toBe(false);
    expect(windowsOverlap(l, client(1, [[19, 21]]).lifecycle)).toBe(true);
    expect(windowsOverlap(l, null)).toBe(true);
  });
});
