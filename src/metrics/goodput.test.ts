import { describe, expect, it } from 'vitest';
import { goJsonIndent } from '../gocompat/go-format.js';
import {
  GoodputFlagError,
  applyGoodput,
  computeGoodput,
  mergeGoodputTargets,
  parseSloDurationFlag,
  resolveGoodputCliFlags,
  sloAttainment,
  type SloDimTargets,
} from './goodput.js';
import { done, outcome } from '../../test/metrics/outcomes.js';

const T = (ttftMs: number, itlMs: number, e2eMs: number): SloDimTargets => ({ ttftMs, itlMs, e2eMs });

describe('--slo-* flags', () => {
  it('parses class=GoDuration pairs to nanoseconds; empty means no signal', () => {
    expect(parseSloDurationFlag(' critical=100ms, standard = 1.5s ')).toEqual(new Map([['critical', 100_000_000n], ['standard', 1_500_000_000n]]));
    expect(parseSloDurationFlag('  ')).toBeNull();
  });
  it('rejects malformed input with the reference messages, prefixed by the flag name', () => {
    const cases: [string, string][] = [
      ['a=1s,,b=2s', 'empty pair in "a=1s,,b=2s" (expected key=duration)'],
      ['a', 'invalid pair "a" (expected key=duration)'],
      ['=1s', 'empty class key in pair "=1s"'],
      ['a=10', 'unparseable duration in pair "a=10": time: missing unit in duration "10"'],
      ['a=0s', 'non-positive duration in pair "a=0s"'],
      ['a=-1ms', 'non-positive duration in pair "a=-1ms"'],
    ];
    for (const [s, msg] of cases) expect(() => parseSloDurationFlag(s)).toThrow(msg);
    expect(() => resolveGoodputCliFlags('', 'x=1', '')).toThrow(GoodputFlagError);
    expect(() => resolveGoodputCliFlags('', 'x=1', '')).toThrow('--slo-itl: unparseable duration in pair "x=1"');
  });
});

describe('mergeGoodputTargets', () => {
  it('is null when no source names a class', () => {
    expect(mergeGoodputTargets(null, null, null)).toBeNull();
    expect(mergeGoodputTargets({ ttft: null, itl: null, e2e: null }, new Map(), new Map())).toBeNull();
  });
  it('merges per dimension: CLI > header (positive values only) > spec; union of classes', () => {
    const spec = new Map([['critical', T(200, 0, 8000)], ['batch', T(0, 0, 60000)]]);
    const header = new Map([['critical', T(0, 30, 5000)], ['gold', T(1, 0, 0)]]);
    const cli = { ttft: new Map([['critical', 150_000_000n]]), itl: null, e2e: new Map([['silver', 2_500_000_000n]]) };
    expect(mergeGoodputTargets(cli, header, spec)).toEqual(
      new Map([
        ['batch', T(0, 0, 60000)],
        ['critical', T(150, 30, 5000)],
        ['gold', T(1, 0, 0)],
        ['silver', T(0, 0, 2500)],
      ]),
    );
  });
  it('drops classes whose dimensions are all zero', () => {
    expect(mergeGoodputTargets(null, null, new Map([['x', T(0, 0, 0)]]))).toBeNull();
  });
});

describe('goodput attainment', () => {
  const reqs = [
    done('request_1', 100_000, 900_000, { sloClass: 'critical', itlMean: 9000 }), // good
    done('request_2', 300_000, 900_000, { sloClass: 'critical', itlMean: 11000 }), // TTFT and ITL miss
    done('request_10', 50_000, 100_000, { itlMean: 5000 }), // "" → default: good
    done('request_3', 1, 1, { sloClass: 'batch' }), // no batch target: ignored
    outcome({ id: 'request_4', sloClass: 'critical', hasTTFT: true, ttft: 1000 }), // not completed
  ];
  const targets = new Map([['critical', T(200, 10, 1000)], ['default', T(0, 0, 200)]]);
  const injected = new Map([['critical', 4], ['', 1], ['default', 1], ['batch', 7]]);
  it('counts good completions per class over all arrivals of the class ("" folded into default)', () => {
    const { overall, perClass } = sloAttainment(reqs, injected, targets);
    expect(perClass.get('critical')).toEqual({ good: 1, injected: 4, completed: 2, byDim: new Map([['e2e', 1], ['itl', 0.5], ['ttft', 0.5]]) });
    expect(perClass.get('default')).toEqual({ good: 1, injected: 2, completed: 1, byDim: new Map([['e2e', 1]]) });
    expect(overall).toBe(2 / 6);
  });
  it('builds the JSON fields with Go key order and omitempty', () => {
    const g = computeGoodput(reqs, injected, 4_000_000, targets);
    const out = applyGoodput({ instance_id: 'cluster', timed_out_requests: 0 }, g);
    expect(goJsonIndent(out)).toBe(
      goJsonIndent({
        instance_id: 'cluster',
        timed_out_requests: 0,
        goodput_rps: 0.5,
        slo_attainment: 2 / 6,
        per_class: {
          critical: {
            count: 4,
            e2e_p99_ms: 900,
            goodput_rps: 0.25,
            itl_mean_ms: 10,
            slo_attainment: 0.25,
            slo_attainment_by_dim: { e2e: 1, itl: 0.5, ttft: 0.5 },
            ttft_p99_ms: 298,
          },
          default: { count: 2, e2e_p99_ms: 100, goodput_rps: 0.25, itl_mean_ms: 5, slo_attainment: 0.5, slo_attainment_by_dim: { e2e: 1 }, ttft_p99_ms: 50 },
        },
      }),
    );
  });
  it('leaves out zero goodput_rps / slo_attainment and zero latency stats, keeps per_class', () => {
    const g = computeGoodput([], new Map(), 0, new Map([['critical', T(100, 0, 0)]]));
    expect(applyGoodput({}, g)).toEqual({ per_class: { critical: { count: 0, goodput_rps: 0, slo_attainment: 0, slo_attainment_by_dim: { ttft: 0 } } } });
  });
  it('is a no-op without targets', () => {
    expect(computeGoodput(reqs, injected, 1e6, null)).toBeNull();
    expect(applyGoodput({ a: 1 }, null)).toEqual({ a: 1 });
  });
});
