import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import { GoRand } from '../../gocompat/go-rand.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import { generateSpecWorkload } from '../spec/generate.js';
import { synthesizeConcurrencySpec } from './synthesize.js';
import { generateWorkload } from './workload.js';

const MULTI_TURN = (extra = '', mt = 'max_rounds: 4, think_time_us: 2000') => `version: "2"
seed: 11
aggregate_rate: 20
num_requests: 200
clients:
  - id: chat
    rate_fraction: 1
    prefix_group: sys
    prefix_length: 8
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 30}}
    output_distribution: {type: gaussian, params: {mean: 20, std_dev: 5, min: 5, max: 40}}
    reasoning:
      reason_ratio_distribution: {type: constant, params: {value: 40}}
      multi_turn: {${mt}}
${extra}`;

const gen = (yaml: string, numRequests = 200) => generateWorkload(parseWorkloadSpec(yaml, 'w.yaml'), { numRequests, horizon: MAX_INT64 });

describe('generateWorkload: closed-loop multi-turn clients', () => {
  it('keeps round 0 only, one blueprint per session in id order, seeded from GoRand(seed + 7919)', () => {
    const wl = gen(MULTI_TURN());
    const all = generateSpecWorkload(parseWorkloadSpec(MULTI_TURN(), 'w.yaml'), { numRequests: 200, horizon: MAX_INT64 });
    const round0 = all.filter((r) => r.roundIndex === 0);
    expect(wl.requests.map((r) => r.arrivalTime)).toEqual(round0.map((r) => r.arrivalTime));
    expect(wl.requests.map((r) => r.id)).toEqual(round0.map((_, i) => `request_${i}`));
    expect(wl.requests.every((r) => /^sess_\d+$/.test(r.sessionId) && r.roundIndex === 0)).toBe(true);
    const ids = wl.sessions.map((s) => s.sessionId);
    expect(ids).toEqual([...new Set(round0.map((r) => r.sessionId))].sort());
    const bpRng = new GoRand(11n + 7919n);
    for (const bp of wl.sessions) {
      const expected = new GoRand(bpRng.int63Big());
      expect(bp.rng.int63()).toBe(expected.int63());
      expect([bp.maxRounds, bp.thinkTimeUs, bp.unlimitedRounds, bp.clientId]).toEqual([4, 2000, false, 'chat']);
      expect(bp.prefix).toHaveLength(8);
    }
    expect(wl.followUpBudget).toBe(-1);
  });

  it('pre-generates rounds think time + previous output apart, with the reason ratio and session deadline', () => {
    const all = generateSpecWorkload(parseWorkloadSpec(MULTI_TURN(), 'w.yaml'), { numRequests: 400, horizon: MAX_INT64 });
    const s = all.filter((r) => r.sessionId === all[0]!.sessionId).sort((a, b) => a.roundIndex - b.roundIndex);
    expect(s.map((r) => r.roundIndex)).toEqual([0, 1, 2, 3]);
    for (let i = 1; i < s.length; i++) expect(s[i]!.arrivalTime - s[i - 1]!.arrivalTime).toBe(2000 + s[i - 1]!.outputLen);
    for (const r of s) {
      expect(r.reasonRatio).toBeCloseTo(0.4, 12);
      expect(r.deadline).toBe(r.arrivalTime + 300_000_000);
      expect([r.prefixLength, r.prefixGroup, r.inputLen]).toEqual([8, '', 38]);
    }
  });

  it('accumulates the conversation when context_growth is accumulate', () => {
    const all = generateSpecWorkload(parseWorkloadSpec(MULTI_TURN('', 'max_rounds: 3, think_time_us: 0, context_growth: accumulate'), 'w.yaml'), { numRequests: 50, horizon: MAX_INT64 });
    const s = all.filter((r) => r.sessionId === all[0]!.sessionId).sort((a, b) => a.roundIndex - b.roundIndex);
    expect(s[1]!.inputLen).toBe(38 + s[0]!.outputLen + 30);
    expect([...s[1]!.inputTokens.subarray(0, 38)]).toEqual([...s[0]!.inputTokens]);
    expect([...s[1]!.inputTokens.subarray(38, 38 + s[0]!.outputLen)]).toEqual([...s[0]!.outputTokens]);
  });

  it('keeps every round of open-loop (closed_loop: false) sessions and builds no blueprint', () => {
    const wl = gen(MULTI_TURN('    closed_loop: false\n'));
    expect(wl.sessions).toEqual([]);
    expect(wl.requests.some((r) => r.roundIndex > 0)).toBe(true);
  });
});

describe('generateWorkload: concurrency users', () => {
  const spec = (users: number, cap: number) =>
    synthesizeConcurrencySpec({
      seed: 3n, concurrency: users, thinkTimeMs: 10, numRequests: cap, prefixTokens: 16,
      prompt: { mean: 100, stdev: 20, min: 10, max: 200 }, output: { mean: 50, stdev: 10, min: 5, max: 100 },
    });

  it('seeds one request per user, staggered over one think time, each its own unlimited session', () => {
    const wl = generateWorkload(spec(4, 20), { numRequests: 20, horizon: MAX_INT64, timeoutSecs: 300 });
    expect(wl.requests.map((r) => r.arrivalTime)).toEqual([0, 2500, 5000, 7500]);
    expect(wl.requests.map((r) => r.sessionId)).toEqual([0, 1, 2, 3].map((u) => `concurrency_distribution_user_${u}`));
    expect(wl.requests.every((r) => r.prefixGroup === 'shared' && r.prefixLength === 16 && r.deadline === r.arrivalTime + 300_000_000)).toBe(true);
    expect(wl.sessions.map((s) => [s.unlimitedRounds, s.thinkTimeUs, s.contextGrowth, s.timeout])).toEqual(Array(4).fill([true, 10_000, '', 300_000_000]));
    expect(wl.followUpBudget).toBe(16);
    // userSeed then bpSeed per user from GoRand(seed + 10007).
    const rng = new GoRand(3n + 10007n);
    for (const bp of wl.sessions) {
      rng.int63Big();
      expect(bp.rng.int63()).toBe(new GoRand(rng.int63Big()).int63());
    }
  });

  it('never seeds more users than the request cap and has no budget without a cap', () => {
    const capped = generateWorkload(spec(10, 3), { numRequests: 3, horizon: MAX_INT64 });
    expect(capped.requests).toHaveLength(3);
    expect(capped.followUpBudget).toBe(0);
    expect(generateWorkload(spec(2, 0), { numRequests: 0, horizon: 1e9 }).followUpBudget).toBe(-1);
  });
});
