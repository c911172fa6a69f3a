import { describe, expect, it } from 'vitest';
import { convertServeGen } from '../profiles/convert.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import { convertServeGenChunks, type ServeGenChunkFiles } from './index.js';
import { fitLognormal, parseServeGenPdf, parseServeGenRatioPdf, parseServeGenTrace } from './parse.js';

const PDF = '{"input_tokens": "{10: 0.5, 1000: 0.5}", "output_tokens": "{100: 1.0}"}';
/** One chunk active (rate 0.5, Gamma cv 2, shape 0.25, scale 8 s) in all nine candidate windows of day one. */
function chunk(id: string, rate = 0.5, cols = 6): ServeGenChunkFiles {
  const starts = [0, 600, 1200, 28800, 29400, 30000, 50400, 51000, 51600];
  const row = (t: number): string => [t, rate, 2, 'Gamma', 0.25, 8].slice(0, cols).join(',');
  return { id, trace: `${starts.map(row).join('\n')}\n`, dataset: `{"0": ${PDF}}` };
}

describe('ServeGen parsing', () => {
  it('reads Python-dict PDFs: float keys truncated, trailing commas, scientific notation', () => {
    expect([...parseServeGenPdf('{363.0: 0.6, 513: 5e-2, }')]).toEqual([[363, 0.6], [513, 0.05]]);
    expect([...parseServeGenRatioPdf('{"0.0": 0.25, "1.0": 0.75}')]).toEqual([[0, 0.25], [1, 0.75]]);
    expect(() => parseServeGenPdf('{}')).toThrow(/empty PDF/);
    expect(() => parseServeGenPdf('{10 0.5}')).toThrow(/invalid key:value pair/);
    expect(() => parseServeGenRatioPdf('{"1.5": 1}')).toThrow(/outside \[0.0, 1.0\]/);
  });

  it('fits lognormal mu/sigma of log(tokens), ignoring non-positive tokens and zero weights', () => {
    const f = fitLognormal(new Map([[10, 0.5], [1000, 0.5], [0, 0.3], [7, 0]]));
    expect(f.mu).toBeCloseTo(2 * Math.log(10), 12);
    expect(f.sigma).toBeCloseTo(Math.log(10), 12);
    expect(() => fitLognormal(new Map([[5, -1]]))).toThrow(/negative probability/);
    expect(() => fitLognormal(new Map([[0, 1]]))).toThrow(/sum to zero/);
  });

  it('reads trace rows; short rows are skipped, a row with another column count is an error', () => {
    const t = parseServeGenTrace('0,1,2,Gamma,0.5,3\n600,x,2,Gamma,0.5,3\n', 'c.csv');
    expect(t.rows).toEqual([{ startSec: 0, rate: 1, cv: 2, pattern: 'Gamma', shape: 0.5, scale: 3 }]);
    expect(t.skipped).toBe(1);
    expect(parseServeGenTrace('0,1,2\n', 'c.csv')).toEqual({ rows: [], skipped: 1 });
    expect(() => parseServeGenTrace('0,1,2,Gamma,0.5,3\n600,1,2,Gamma\n', 'c.csv')).toThrow(/c\.csv:2: this row has 4 columns but the first row has 6/);
  });
});

describe('ServeGen conversion', () => {
  const opts = { dir: 'sg', seed: 42n, windowDurationSecs: 60, drainTimeoutSecs: 30 };

  it('one chunk active everywhere: one cohort per period, back to back with the drain gap, fitted lengths', () => {
    const { category, cohorts } = convertServeGenChunks([chunk('7')], opts);
    expect(category).toBe('');
    expect(cohorts.map((c) => [c.id, c.population, c.sloClass, c.spike])).toEqual([
      ['midnight-critical', 1, 'critical', { startTimeUs: 0, durationUs: 60e6, traceRate: 0.5 }],
      ['morning-critical', 1, 'critical', { startTimeUs: 90e6, durationUs: 60e6, traceRate: 0.5 }],
      ['afternoon-critical', 1, 'critical', { startTimeUs: 180e6, durationUs: 60e6, traceRate: 0.5 }],
    ]);
    expect(cohorts[0]!.arrival).toEqual({ process: 'gamma', cv: 2, shape: 0.25, scale: 8e6 });
    expect(cohorts[0]!.inputDist.params.get('mu')).toBeCloseTo(2 * Math.log(10), 12);
    expect(cohorts[0]!.outputDist.params.get('sigma')).toBe(0);
  });

  it('deals five chunks to the five SLO classes and sums nothing across classes', () => {
    const { cohorts } = convertServeGenChunks(['a', 'b', 'c', 'd', 'e'].map((id) => chunk(id)), opts);
    expect(cohorts.filter((c) => c.id.startsWith('midnight-')).map((c) => c.sloClass)).toEqual(['background', 'batch', 'critical', 'sheddable', 'standard']);
    expect(cohorts.every((c) => c.population === 1 && c.spike?.traceRate === 0.5)).toBe(true);
  });

  it('prints a valid spec with --time filtering, seed 42 and absolute rates', () => {
    const text = convertServeGen([chunk('1'), chunk('2', 0.25)], { dir: 'sg', windowDurationSecs: 600, drainTimeoutSecs: 180, time: 'morning' });
    const spec = parseWorkloadSpec(text, 'out.yaml');
    expect(spec.seed).toBe(42n);
    expect(spec.aggregateRate).toBe(0);
    expect(spec.cohorts.map((c) => c.id)).toEqual(['morning-critical', 'morning-standard']);
  });

  it.each([
    [[chunk('1', 0.5, 4)], /cohort midnight-critical: the trace rows at \d+ s of sg\/chunk-1-trace\.csv have no positive shape and scale \(columns 5 and 6\)/],
    [[{ ...chunk('1'), trace: chunk('1').trace.replaceAll(',2,Gamma,', ',0,,') }], /no trace row at \d+ s of sg\/chunk-1-trace\.csv has a Gamma or Weibull pattern with a positive cv/],
    [[{ ...chunk('1'), dataset: null }], /sg\/chunk-1-dataset\.json is missing/],
    [[{ ...chunk('1'), trace: '0,1\n600,2\n' }], /no valid chunks found in sg/],
    [[], /no chunk-\*-trace\.csv files found in sg/],
    [[{ ...chunk('1'), dataset: '{"0": {"input_tokens": "{10: -1}", "output_tokens": "{5: 1}"}}' }], /cannot fit the input distribution of window 0: negative probability/],
  ])('refuses a bad directory with one clear error (%#)', (files, msg) => {
    expect(() => convertServeGen(files, { dir: 'sg', windowDurationSecs: 600, drainTimeoutSecs: 180, time: '' })).toThrow(msg);
  });

  it('refuses bad flags', () => {
    const base = { dir: 'sg', windowDurationSecs: 600, drainTimeoutSecs: 180, time: '' };
    expect(() => convertServeGen([chunk('1')], { ...base, windowDurationSecs: 0 })).toThrow(/--window-duration-seconds must be > 0/);
    expect(() => convertServeGen([chunk('1')], { ...base, drainTimeoutSecs: -1 })).toThrow(/--drain-timeout-seconds must be >= 0/);
    expect(() => convertServeGen([chunk('1')], { ...base, time: 'noon' })).toThrow(/--time must be one of: midnight, morning, afternoon/);
  });
});
