/**
 * `--semantics`: ServeGen conversion (docs/reference-differences.md W12). The same chunk files converted in
 * both modes.
 */
import { describe, expect, it } from 'vitest';
import { convertServeGen } from '../../src/workload/profiles/convert.js';
import { convertServeGenChunks, type ServeGenChunkFiles } from '../../src/workload/servegen/index.js';
import { loadSpecWorkloadForRun } from '../../src/workload/spec/run.js';

const PDF = '{"input_tokens": "{10: 0.5, 1000: 0.5}", "output_tokens": "{100: 1.0}"}';
const STARTS = [0, 600, 1200, 28800, 29400, 30000, 50400, 51000, 51600];

/** A chunk active in all nine candidate windows; `row` gives the columns after start_s. */
function chunk(id: string, row: string): ServeGenChunkFiles {
  return { id, trace: `${STARTS.map((t) => `${t},${row}`).join('\n')}\n`, dataset: `{"0": ${PDF}}` };
}

const opts = { dir: 'sg', seed: 42n, windowDurationSecs: 60, drainTimeoutSecs: 30 };

describe('ServeGen conversion under --semantics (W12)', () => {
  it('Poisson-only windows are refused (reference: its spec would be invalid) or converted as Poisson (corrected)', () => {
    const poisson = [chunk('1', '0.5,0,')];
    expect(() => convertServeGenChunks(poisson, opts)).toThrow(/Poisson-only windows cannot be converted/);
    const { cohorts } = convertServeGenChunks(poisson, { ...opts, corrected: true });
    expect(cohorts.map((c) => [c.id, c.arrival.process, c.spike?.traceRate])).toEqual([
      ['midnight-critical', 'poisson', 0.5], ['morning-critical', 'poisson', 0.5], ['afternoon-critical', 'poisson', 0.5],
    ]);
    const text = convertServeGen(poisson, { dir: 'sg', windowDurationSecs: 60, drainTimeoutSecs: 30, time: '', corrected: true });
    expect(text).toMatch(/process: poisson/);
  });

  it('Gamma rows without shape/scale are refused (reference) or keep their cv (corrected); Poisson windows no longer dilute it', () => {
    const noShape = [chunk('1', '0.5,2,Gamma')];
    expect(() => convertServeGenChunks(noShape, opts)).toThrow(/no positive shape and scale/);
    expect(convertServeGenChunks(noShape, { ...opts, corrected: true }).cohorts[0]!.arrival).toEqual({ process: 'gamma', cv: 2, shape: null, scale: null });
    // One chunk over three days at the same times of day: Gamma cv 2, Gamma cv 4, then Poisson. The reference
    // averages over all three windows (the Poisson one counting 0); corrected over the two Gamma ones.
    const days = [0, 1, 2].map((d) => STARTS.map((t) => `${t + 86400 * d},${['0.5,2,Gamma,0.25,8', '0.5,4,Gamma,0.0625,32', '0.5,0,,0,0'][d]}`).join('\n')).join('\n');
    const mixed: ServeGenChunkFiles[] = [{ id: 'm', trace: `${days}\n`, dataset: `{"0": ${PDF}}` }];
    const ref = convertServeGenChunks(mixed, opts).cohorts[0]!.arrival;
    const cor = convertServeGenChunks(mixed, { ...opts, corrected: true }).cohorts[0]!.arrival;
    expect([ref.process, ref.cv, ref.shape, ref.scale]).toEqual(['gamma', 2, 0.3125 / 3, 40e6 / 3]);
    expect([cor.process, cor.cv, cor.shape, cor.scale]).toEqual(['gamma', 3, 0.15625, 20e6]);
  });

  it('a spec\'s servegen_data separates its periods by 0 s unless drain_timeout_secs is set (reference) or by convert\'s 180 s (corrected)', () => {
    const dir: ServeGenChunkFiles[] = [chunk('1', '0.5,2,Gamma,0.25,8')];
    const spec = 'version: "2"\nseed: 3\nservegen_data: {path: sg, window_duration_secs: 60}\n';
    const starts = (corrected: boolean) => loadSpecWorkloadForRun(spec, 'w.yaml', { numRequests: 0, horizon: 1_000_000_000, ...(corrected ? { corrected } : {}) }, { readServeGen: () => dir }).spec.cohorts.map((c) => c.spike?.startTimeUs);
    expect(starts(false)).toEqual([0, 60e6, 120e6]);
    expect(starts(true)).toEqual([0, 240e6, 480e6]);
    const explicit = spec.replace('window_duration_secs: 60', 'window_duration_secs: 60, drain_timeout_secs: 0');
    expect(loadSpecWorkloadForRun(explicit, 'w.yaml', { numRequests: 0, horizon: 1_000_000_000, corrected: true }, { readServeGen: () => dir }).spec.cohorts.map((c) => c.spike?.startTimeUs)).toEqual([0, 60e6, 120e6]);
  });
});
