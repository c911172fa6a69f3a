import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import { GoRand } from '../../gocompat/go-rand.js';
import { WorkloadSpecError } from './errors.js';
import { generateSpecWorkload } from './generate.js';
import { NormalizedExponentialSampler, distributeEvenly, expandInferencePerf } from './inference-perf.js';
import { parseWorkloadSpec } from './parse.js';
import type { InferencePerfSpec } from './types.js';

const ip = (stages: [number, number][], multiTurn: boolean, prompts = 3, users = 2): InferencePerfSpec => ({
  stages: stages.map(([rate, duration]) => ({ rate, duration })),
  sharedPrefix: { numUniqueSystemPrompts: prompts, numUsersPerSystemPrompt: users, systemPromptLen: 10, questionLen: 20, outputLen: 7, enableMultiTurnChat: multiTurn },
});

describe('expandInferencePerf', () => {
  it('splits totals evenly, larger shares first', () => {
    expect(distributeEvenly(10, 3)).toEqual([4, 3, 3]);
    expect(distributeEvenly(2, 4)).toEqual([1, 1, 0, 0]);
  });

  it('one multi-turn stage: P×U single-session clients with a share of the rounds each', () => {
    const e = expandInferencePerf(ip([[2.5, 100]], true));
    expect(e.category).toBe('reasoning');
    expect(e.aggregateRate).toBe(2.5);
    expect(e.clients.map((c) => c.id)).toEqual(['prompt-0-user-0', 'prompt-0-user-1', 'prompt-1-user-0', 'prompt-1-user-1', 'prompt-2-user-0', 'prompt-2-user-1']);
    const c = e.clients[2]!;
    expect([c.tenantId, c.prefixGroup, c.prefixLength, c.sloClass, c.rateFraction]).toEqual(['prompt-1', 'prompt-1', 10, 'standard', 1 / 6]);
    expect(e.clients.map((x) => x.reasoning!.multiTurn!.maxRounds)).toEqual([42, 42, 42, 42, 41, 41]);
    expect(c.reasoning!.multiTurn).toEqual({ maxRounds: 42, thinkTimeUs: 2_400_000, contextGrowth: '', singleSession: true, toolCall: null });
    expect(c.lifecycle).toBeNull();
  });

  it('several stages: back-to-back windows, per-stage clients, Poisson at the per-client rate', () => {
    const e = expandInferencePerf(ip([[2, 10], [6, 5]], false, 1, 2));
    expect(e.aggregateRate).toBe(8);
    expect(e.category).toBe('language');
    expect(e.clients.map((c) => [c.id, c.lifecycle!.windows[0]!.startUs, c.lifecycle!.windows[0]!.endUs])).toEqual([
      ['stage-0-prompt-0-user-0', 0, 10_000_000],
      ['stage-0-prompt-0-user-1', 0, 10_000_000],
      ['stage-1-prompt-0-user-0', 10_000_000, 15_000_000],
      ['stage-1-prompt-0-user-1', 10_000_000, 15_000_000],
    ]);
    expect(e.clients.every((c) => c.customSamplerFactory !== undefined && c.rateFraction === 1)).toBe(true);
  });

  it('one single-turn stage emits exactly int(rate × duration) requests inside the stage', () => {
    const spec = parseWorkloadSpec(
      'seed: 4\ninference_perf:\n  stages: [{rate: 3.7, duration: 20}]\n  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 3, system_prompt_len: 10, question_len: 20, output_len: 7}\n',
      'ip.yaml',
    );
    const reqs = generateSpecWorkload(spec, { numRequests: 0, horizon: MAX_INT64 });
    expect(reqs).toHaveLength(74);
    expect(reqs.every((r) => r.arrivalTime <= 20_000_000 && r.inputLen === 30 && r.prefixLength === 10 && r.outputLen === 7)).toBe(true);
    expect(new Set(reqs.map((r) => r.clientId)).size).toBe(6);
  });

  it('normalised exponential gaps span the duration and then run out', () => {
    const s = new NormalizedExponentialSampler(new GoRand(1n), 50, 1_000_000);
    let sum = 0;
    for (let i = 0; i < 50; i++) sum += s.sampleIat();
    expect(sum).toBeLessThanOrEqual(1_000_000);
    expect(sum).toBeGreaterThan(1_000_000 - 50);
    expect(s.sampleIat()).toBe(0);
    expect(() => new NormalizedExponentialSampler(new GoRand(1n), 10, 5)).toThrow(RangeError);
  });
});

describe('inference_perf specs', () => {
  const head = 'inference_perf:\n';
  const prefix = '  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 2, question_len: 5, output_len: 5}\n';
  const fail = (yaml: string): WorkloadSpecError => {
    try {
      parseWorkloadSpec(yaml, 'ip.yaml');
    } catch (e) {
      if (e instanceof WorkloadSpecError) return e;
      throw e;
    }
    throw new Error('expected a WorkloadSpecError');
  };

  it('are accepted without clients', () => {
    expect(parseWorkloadSpec(`${head}  stages: [{rate: 1, duration: 10}]\n${prefix}`, 'ip.yaml').inferencePerf?.stages).toHaveLength(1);
  });

  it('report the offending field', () => {
    expect(fail(`${head}  stages: []\n${prefix}`).message).toMatch(/inference_perf\.stages: at least one stage/);
    expect(fail(`${head}  stages: [{rate: 1, duration: 0}]\n${prefix}`).message).toMatch(/inference_perf\.stages\[0\]\.duration/);
    expect(fail(`${head}  stages: [{rate: -1, duration: 3}]\n${prefix}`).message).toMatch(/inference_perf\.stages\[0\]\.rate/);
    expect(fail(`${head}  stages: [{rate: 1, duration: 3}]\n`).message).toMatch(/shared_prefix is required/);
    expect(fail(`${head}  stages: [{rate: 0.1, duration: 5}]\n${prefix}`).message).toMatch(/gives no request/);
    expect(fail(`${head}  stages: [{rate: 1, duration: 3}]\n${prefix}`).message).toMatch(/cannot give each of the 4 clients one/);
  });
});
