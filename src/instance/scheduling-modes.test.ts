import { describe, expect, it } from 'vitest';
import { simulate } from '../sim/simulate.js';
import type { SchedulingMode } from './batch-formation.js';

/**
 * Step formation modes on a hand-traceable replay: every step takes exactly 1000 µs (blackbox β0), no
 * queueing or per-token overhead. Request 0 (64-token prompt, 6 tokens out) arrives at t = 0; request 1
 * (32 tokens, 3 out) at t = 1500, in the middle of step 2 ([1000, 2000)).
 */
const CSV = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
0,c,,,,0,,0,false,64,6,0,0,0,0,0,,0,0,0,0,0,0,0,ok,,
1,c,,,,0,,0,false,32,3,0,0,0,0,0,,0,0,1500,1500,0,0,0,ok,,
`;
const HEADER = 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n';

async function replay(mode: SchedulingMode): Promise<Map<number, { ttft_us: number; e2e_us: number; itl_mean_us?: number }>> {
  const r = await simulate({
    mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 0, 0],
    totalKvBlocks: 1000, horizon: 1_000_000, schedulingMode: mode, traceHeader: 'h.yaml', traceData: 'd.csv', files: { 'h.yaml': HEADER, 'd.csv': CSV }, outputs: { results: true },
  });
  const rows = JSON.parse(r.files.results!) as { request_id: number; ttft_us: number; e2e_us: number; itl_mean_us?: number }[];
  return new Map(rows.map((x) => [x.request_id, x]));
}

describe('scheduling modes', () => {
  it('sync (the reference): request 1 joins the first step that starts after it arrives', async () => {
    const r = await replay('sync');
    // Step 3 [2000, 3000) prefills request 1: TTFT = 3000 − 1500.
    expect(r.get(1)!.ttft_us).toBe(1500);
    expect(r.get(0)!.ttft_us).toBe(1000);
    expect(r.get(0)!.e2e_us).toBe(6000);
  });

  it('async (vLLM V1): step 3 was planned while step 2 ran, so request 1 first joins step 4', async () => {
    const r = await replay('async');
    expect(r.get(1)!.ttft_us).toBe(2500);
    // An idle engine plans nothing ahead: request 0 starts at once.
    expect(r.get(0)!.ttft_us).toBe(1000);
    expect(r.get(0)!.e2e_us).toBe(6000);
  });

  it('prefill-first (vLLM V0): the step that prefills request 1 stalls request 0, and the stall counts in its ITL', async () => {
    const r = await replay('prefill-first');
    // Step 3 [2000, 3000) is prefill-only for request 1; request 0 waits it out, so one of its five gaps is
    // 2000 µs: E2E 7000 = TTFT 1000 + 4 × 1000 + 2000, mean ITL 6000 / 5.
    expect(r.get(1)!.ttft_us).toBe(1500);
    expect(r.get(0)!.ttft_us).toBe(1000);
    expect(r.get(0)!.e2e_us).toBe(7000);
    expect(r.get(0)!.itl_mean_us).toBe(1200);
    const sync = await replay('sync');
    expect(r.get(1)!.e2e_us).toBeGreaterThanOrEqual(sync.get(1)!.e2e_us);
  });

  it('prefill-first records the stalled gap in the ITL distribution', async () => {
    const out = await simulate({
      mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 0, 0],
      totalKvBlocks: 1000, horizon: 1_000_000, schedulingMode: 'prefill-first', traceHeader: 'h.yaml', traceData: 'd.csv', files: { 'h.yaml': HEADER, 'd.csv': CSV }, outputs: { results: true },
    });
    // Seven gaps of 1 ms and one of 2 ms: p99 lands on the 2 ms one.
    expect(out.metrics['itl_p99_ms']).toBeGreaterThan(1.5);
    const plain = await simulate({
      mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 0, 0],
      totalKvBlocks: 1000, horizon: 1_000_000, traceHeader: 'h.yaml', traceData: 'd.csv', files: { 'h.yaml': HEADER, 'd.csv': CSV }, outputs: { results: true },
    });
    expect(plain.metrics['itl_p99_ms']).toBe(1);
  });

  it('rejects an unknown mode with the valid ones', async () => {
    await expect(replay('eager' as SchedulingMode)).rejects.toThrow(/schedulingMode: unknown scheduling mode "eager"; valid: sync, async, prefill-first/);
  });
});

describe('E14: an arrival during an instance\'s final step waits for it to end', () => {
  // Request 0 (32 tokens, 2 out) prefills in [0, 1000) and decodes its last token in [1000, 2000); request 1
  // arrives at 1500, while that final step runs on the GPU.
  const LAST = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
0,c,,,,0,,0,false,32,2,0,0,0,0,0,,0,0,0,0,0,0,0,ok,,
1,c,,,,0,,0,false,32,2,0,0,0,0,0,,0,0,1500,1500,0,0,0,ok,,
`;
  const ttft1 = async (semantics: 'reference' | 'corrected'): Promise<number> => {
    const r = await simulate({
      mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 0, 0],
      totalKvBlocks: 1000, horizon: 1_000_000, semantics, traceHeader: 'h.yaml', traceData: 'd.csv', files: { 'h.yaml': HEADER, 'd.csv': LAST }, outputs: { results: true },
    });
    return (JSON.parse(r.files.results!) as { request_id: number; ttft_us: number }[]).find((x) => x.request_id === 1)!.ttft_us;
  };

  it('the reference starts request 1\'s step at once, beside the running one: TTFT 1000', async () => {
    expect(await ttft1('reference')).toBe(1000);
  });

  it('corrected (and corrected-physics): its step starts when the GPU is free, at 2000: TTFT 1500', async () => {
    expect(await ttft1('corrected')).toBe(1500);
  });
});
