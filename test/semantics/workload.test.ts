/**
 * `--semantics`: workload generation corrections (docs/reference-differences.md E9, S1, S2, S3, S5). The same
 * spec (or flags) generated in both modes.
 */
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../src/domain/units.js';
import { GoRand } from '../../src/gocompat/go-rand.js';
import { newArrivalSampler } from '../../src/workload/spec/arrival.js';
import { generateSpecWorkload } from '../../src/workload/spec/generate.js';
import { parseWorkloadSpec } from '../../src/workload/spec/parse.js';
import { generateWorkload } from '../../src/workload/sessions/workload.js';
import { simulate } from '../../src/sim/simulate.js';

const gen = (yaml: string, corrected: boolean, numRequests = 0, horizon = MAX_INT64) =>
  generateSpecWorkload(parseWorkloadSpec(yaml, 'w.yaml'), { numRequests, horizon, ...(corrected ? { corrected } : {}) });

const GROUP = `version: "2"
seed: 7
aggregate_rate: 10
clients:
  - id: first
    rate_fraction: 1
    prefix_group: sys
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 4}}
    output_distribution: {type: constant, params: {value: 2}}
  - id: second
    rate_fraction: 1
    prefix_group: sys
    prefix_length: 200
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 4}}
    output_distribution: {type: constant, params: {value: 2}}
`;

/** One windowed client with a trace rate (the per-window path) and one without windows. */
const WINDOWS = `version: "2"
seed: 3
aggregate_rate: 15
clients:
  - id: phased
    rate_fraction: 1
    prefix_group: p
    prefix_length: 8
    timeout: 2000000
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 40}}
    output_distribution: {type: constant, params: {value: 8}}
    lifecycle:
      windows:
        - {start_us: 0, end_us: 1000000, trace_rate: 10}
        - {start_us: 2000000, end_us: 3000000, trace_rate: 5}
  - id: steady
    rate_fraction: 5
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 16}}
    output_distribution: {type: constant, params: {value: 4}}
`;

describe('workload generation under --semantics', () => {
  it("S1: a prefix group takes its first client's length (reference: 50 by default) or the first one that sets it (corrected)", () => {
    expect(new Set(gen(GROUP, false, 6).map((r) => r.prefixLength))).toEqual(new Set([50]));
    expect(new Set(gen(GROUP, true, 6).map((r) => r.prefixLength))).toEqual(new Set([200]));
    expect(gen(GROUP, true, 6).every((r) => r.inputLen === 204)).toBe(true);
  });

  it("S2: per-window requests lose the prefix, the timeout and each window's last arrival (reference) but keep them (corrected)", () => {
    const phased = (corrected: boolean) => gen(WINDOWS, corrected, 0, 10_000_000).filter((r) => r.clientId === 'phased');
    const ref = phased(false);
    const cor = phased(true);
    // The rescaled gaps put each window's last arrival exactly on its end: the reference drops it.
    expect(cor.length).toBe(ref.length + 2);
    expect(cor.map((r) => r.arrivalTime)).toEqual(expect.arrayContaining([1_000_000, 3_000_000]));
    expect(ref.every((r) => r.arrivalTime !== 1_000_000 && r.arrivalTime !== 3_000_000)).toBe(true);
    expect(ref.every((r) => r.prefixLength === 0 && r.inputLen === 40 && r.deadline === 0)).toBe(true);
    expect(cor.every((r) => r.prefixLength === 8 && r.inputLen === 48 && r.deadline === r.arrivalTime + 2_000_000)).toBe(true);
  });

  it('S3: a client without windows generates nothing on the per-window path (reference) or at its own rate (corrected)', () => {
    const steady = (corrected: boolean) => gen(WINDOWS, corrected, 0, 10_000_000).filter((r) => r.clientId === 'steady');
    expect(steady(false)).toHaveLength(0);
    expect(steady(true).length).toBeGreaterThan(0);
  });

  it('S5: gamma arrivals with CV > 10 become Poisson (reference) or stay gamma (corrected)', () => {
    const cvOf = (corrected: boolean): number => {
      const s = newArrivalSampler({ process: 'gamma', cv: 20, shape: null, scale: null }, 1e-3, corrected);
      const rng = new GoRand(1n);
      const xs = Array.from({ length: 20_000 }, () => s.sampleIat(rng));
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
      return sd / mean;
    };
    expect(cvOf(false)).toBeGreaterThan(0.9);
    expect(cvOf(false)).toBeLessThan(1.1);
    expect(cvOf(true)).toBeGreaterThan(5);
  });

  it('E9: closed-loop spec clients without a timeout get 300 s (reference) or none (corrected)', () => {
    const yaml = `version: "2"
seed: 1
aggregate_rate: 5
num_requests: 4
clients:
  - id: chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 10}}
    output_distribution: {type: constant, params: {value: 5}}
    reasoning: {reason_ratio_distribution: {type: constant, params: {value: 0}}, multi_turn: {max_rounds: 3, think_time_us: 1000, context_growth: accumulate}}
`;
    const wl = (corrected: boolean) => generateWorkload(parseWorkloadSpec(yaml, 'w.yaml'), { numRequests: 4, horizon: MAX_INT64, ...(corrected ? { corrected } : {}) });
    const ref = wl(false);
    const cor = wl(true);
    expect(ref.requests.length).toBeGreaterThan(0);
    expect(cor.requests).toHaveLength(ref.requests.length);
    expect(ref.requests.every((r) => r.deadline - r.arrivalTime === 300_000_000)).toBe(true);
    expect(cor.requests.every((r) => r.deadline === 0)).toBe(true);
    // The follow-up rounds' deadlines come from the blueprints.
    expect(new Set(ref.sessions.map((s) => s.timeout))).toEqual(new Set([null]));
    expect(new Set(cor.sessions.map((s) => s.timeout))).toEqual(new Set([0]));
  });

  it('S1 (corrected): closed-loop users of a group share the prefix the group\'s other clients got', () => {
    const yaml = `version: "2"
seed: 11
aggregate_rate: 10
clients:
  - id: open
    rate_fraction: 1
    prefix_group: sys
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 4}}
    output_distribution: {type: constant, params: {value: 2}}
  - id: users
    concurrency: 2
    think_time_us: 1000
    prefix_group: sys
    prefix_length: 30
    input_distribution: {type: constant, params: {value: 4}}
    output_distribution: {type: constant, params: {value: 2}}
`;
    const wl = (corrected: boolean) => generateWorkload(parseWorkloadSpec(yaml, 'w.yaml'), { numRequests: 0, horizon: 1_000_000, ...(corrected ? { corrected } : {}) }).requests;
    for (const corrected of [false, true]) {
      const reqs = wl(corrected);
      const want = corrected ? 30 : 50;
      const open = reqs.filter((r) => r.clientId === 'open');
      const users = reqs.filter((r) => r.clientId === 'users');
      expect(open.length).toBeGreaterThan(0);
      expect(users).toHaveLength(2);
      const prefix = open[0]!.inputTokens.slice(0, want);
      for (const r of [...open, ...users]) {
        expect(r.prefixLength).toBe(want);
        expect(r.inputTokens.slice(0, want)).toEqual(prefix);
      }
    }
  });

  it('S3 (corrected): a request cap keeps the first requests of the windowed and windowless clients together, in arrival order', () => {
    const all = gen(WINDOWS, true, 0, 10_000_000);
    const capped = gen(WINDOWS, true, 20, 10_000_000);
    expect(capped).toHaveLength(20);
    expect(capped.map((r) => [r.clientId, r.arrivalTime, r.inputLen])).toEqual(all.slice(0, 20).map((r) => [r.clientId, r.arrivalTime, r.inputLen]));
    expect(new Set(capped.map((r) => r.clientId))).toEqual(new Set(['phased', 'steady']));
    expect(all.every((r, i) => i === 0 || all[i - 1]!.arrivalTime <= r.arrivalTime)).toBe(true);
  });

  it('S5 (corrected): a spec client with gamma CV > 10 generates gamma arrivals (reference: Poisson)', () => {
    const yaml = `version: "2"
seed: 5
aggregate_rate: 100
clients:
  - id: bursty
    rate_fraction: 1
    arrival: {process: gamma, cv: 20}
    input_distribution: {type: constant, params: {value: 4}}
    output_distribution: {type: constant, params: {value: 2}}
`;
    const cv = (corrected: boolean): number => {
      const t = gen(yaml, corrected, 4000).map((r) => r.arrivalTime);
      const gaps = t.slice(1).map((x, i) => x - t[i]!);
      const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
      return Math.sqrt(gaps.reduce((a, b) => a + (b - mean) ** 2, 0) / gaps.length) / mean;
    };
    expect(cv(false)).toBeLessThan(1.2);
    expect(cv(true)).toBeGreaterThan(3);
  });

  it('E9: `blis run` gives every generated request a silent 300 s deadline (reference) or none without --timeout (corrected)', async () => {
    // An overloaded single instance: requests wait far longer than 300 s for a seat.
    const cfg = { mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', rate: 200, numRequests: 400, maxNumSeqs: 1, promptTokens: 2000, promptTokensStdev: 0, outputTokens: 1000, outputTokensStdev: 0 } as const;
    const ref = await simulate({ ...cfg });
    const cor = await simulate({ ...cfg, semantics: 'corrected' });
    expect(ref.metrics['timed_out_requests']).toBeGreaterThan(0);
    expect(cor.metrics['timed_out_requests']).toBe(0);
    const explicit = await simulate({ ...cfg, semantics: 'corrected', timeout: 300 });
    expect(explicit.metrics['timed_out_requests']).toBe(ref.metrics['timed_out_requests']);
  });
});
