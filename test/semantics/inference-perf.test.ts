/**
 * `--semantics`: inference-perf multi-turn chat (docs/reference-differences.md W5). The reference expands it
 * into closed-loop sessions; corrected semantics send it open loop, as inference-perf's `constant` load does,
 * each user resending its prompt.
 */
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../src/domain/units.js';
import { parseWorkloadSpec } from '../../src/workload/spec/parse.js';
import { generateWorkload } from '../../src/workload/sessions/workload.js';
import { simulate } from '../../src/sim/simulate.js';

const SPEC = `version: "2"
seed: 9
inference_perf:
  stages: [{rate: 8, duration: 10}]
  shared_prefix:
    num_unique_system_prompts: 2
    num_users_per_system_prompt: 2
    system_prompt_len: 100
    question_len: 28
    output_len: 200
    enable_multi_turn_chat: true
`;

const wl = (corrected: boolean) => generateWorkload(parseWorkloadSpec(SPEC, 'ip.yaml'), { numRequests: 0, horizon: MAX_INT64, ...(corrected ? { corrected } : {}) });

describe('inference-perf multi-turn chat under --semantics (W5)', () => {
  it('is 4 closed-loop sessions (reference) or 80 open-loop arrivals over the 10 s stage (corrected)', () => {
    const ref = wl(false);
    expect(ref.sessions).toHaveLength(4);
    expect(ref.requests).toHaveLength(4); // round 0 of each session; later rounds wait for the previous one
    expect(ref.sessions.every((s) => s.maxRounds === 20)).toBe(true);
    const cor = wl(true);
    expect(cor.sessions).toHaveLength(0);
    expect(cor.requests).toHaveLength(80);
    const last = Math.max(...cor.requests.map((r) => r.arrivalTime));
    expect(last).toBeGreaterThan(9_000_000);
    expect(last).toBeLessThanOrEqual(10_000_000);
    // 20 requests per user, each resending the user's 128-token prompt: 127 shared tokens and one fresh.
    const byUser = new Map<string, number>();
    for (const r of cor.requests) byUser.set(r.prefixGroup, (byUser.get(r.prefixGroup) ?? 0) + 1);
    expect([...byUser.entries()].sort()).toEqual([['prompt-0-user-0', 20], ['prompt-0-user-1', 20], ['prompt-1-user-0', 20], ['prompt-1-user-1', 20]]);
    expect(cor.requests.every((r) => r.prefixLength === 127 && r.inputLen === 128)).toBe(true);
    const u0 = cor.requests.filter((r) => r.prefixGroup === 'prompt-0-user-0');
    expect(u0[1]!.inputTokens.slice(0, 127)).toEqual(u0[0]!.inputTokens.slice(0, 127));
  });

  it('cannot overload a slow server (reference) but queues behind it (corrected)', async () => {
    const cfg = { mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', maxNumSeqs: 8, numRequests: 80, workloadSpec: 'ip.yaml', files: { 'ip.yaml': SPEC } } as const;
    const ref = (await simulate({ ...cfg })).metrics;
    const cor = (await simulate({ ...cfg, semantics: 'corrected' })).metrics;
    // The reference's 4 users each wait for their previous round: at most 4 requests run, none queues
    // (TTFT ≈ 26 ms) and the 10 s stage stretches to ≈ 38 s. Open loop sends 8/s into 8 seats: TTFT ≈ 1.5 s.
    expect(ref['completed_requests']).toBe(80);
    expect(cor['completed_requests']).toBe(80);
    expect(ref['ttft_mean_ms']).toBeLessThan(50);
    expect(cor['ttft_mean_ms']).toBeGreaterThan(1000);
    expect(ref['vllm_estimated_duration_s']).toBeGreaterThan(30);
    expect(cor['vllm_estimated_duration_s']).toBeLessThan(20);
  });
});
