import { describe, expect, it } from 'vitest';
import { simulate } from '../sim/simulate.js';

/**
 * Recompute preemption, reference vs vLLM (docs/reference-differences.md E13), on hand-traceable replays.
 * Blackbox latency with β = [1000, 10, 0]: a step takes 1000 µs + 10 µs per prefill token (decode tokens are
 * free), no queueing or per-token overhead. KV blocks of 16 tokens. Requests A (id 0) and B (id 1) arrive at
 * t = 0 with 20-token prompts; B wants 30 output tokens.
 *
 * Step 1 prefills both (40 tokens: 1400 µs; TTFT 1400 each) and fills four blocks (16 + 4 per request). Step k
 * (k >= 2) decodes position 18 + k and ends at 1400 + (k - 1)·1000, so B's token k comes out then. Positions
 * 20..31 fit the requests' second blocks (steps 2..13). In step 14 both need a new block for position 32.
 */
const CSV_HEADER = 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason';
const HEADER = 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\n';
const row = (id: number, input: number, output: number): string => `${id},c,,,,0,,0,false,${input},${output},0,0,0,0,0,,0,0,0,0,0,0,0,ok,,`;

interface Row { readonly request_id: number; readonly ttft_us: number; readonly e2e_us: number; readonly itl_mean_us: number; readonly output_tokens: number }

const BLACKBOX = { latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [1000, 10, 0] };

async function replay(blocks: number, aOutput: number, extra: Record<string, unknown>, latency: Record<string, unknown> = BLACKBOX): Promise<{ rows: Map<number, Row>; metrics: Readonly<Record<string, unknown>> }> {
  const r = await simulate({
    mode: 'replay', model: 'meta-llama/llama-3.1-8b-instruct', ...latency,
    totalKvBlocks: blocks, horizon: 10_000_000, traceHeader: 'h.yaml', traceData: 'd.csv',
    files: { 'h.yaml': HEADER, 'd.csv': `${CSV_HEADER}\n${row(0, 20, aOutput)}\n${row(1, 20, 30)}\n` }, outputs: { results: true, metrics: true }, ...extra,
  });
  const rows = JSON.parse(r.files.results as string) as Row[];
  return { rows: new Map(rows.map((x) => [x.request_id, x])), metrics: { ...r.metrics } };
}

describe('recompute preemption (E13)', () => {
  // Five blocks, A wants 14 tokens. Step 14: A takes the fifth block for position 32 (its last decode), B finds
  // none and preempts itself, having produced 13 tokens (progress 32). A completes at 14 400; B's blocks (prompt
  // 0..15, outputs 16..31) were released with their identities and nobody reused them.
  it('reference: B restarts from scratch, gets a new TTFT, and regenerates its 13 tokens one decode step each', async () => {
    const { rows, metrics } = await replay(5, 14, {});
    expect(metrics['preemption_count']).toBe(1);
    expect(rows.get(0)?.e2e_us).toBe(14_400);
    // Step 15 [14 400, 15 440): the prompt again, its first block a prefix hit: 4 tokens, 1040 µs; TTFT anew.
    expect(rows.get(1)?.ttft_us).toBe(15_440);
    // Then 29 decode steps of 1000 µs (13 of them regenerate tokens the client already had).
    expect(rows.get(1)?.e2e_us).toBe(15_440 + 29 * 1000);
  });

  it('corrected: B re-prefills prompt + 13 outputs (33 positions, 32 of them prefix hits) as one prefill', async () => {
    const ref = await replay(5, 14, {});
    const { rows, metrics } = await replay(5, 14, { semantics: 'corrected' });
    expect(metrics['preemption_count']).toBe(1);
    const b = rows.get(1) as Row;
    // The client's TTFT stands.
    expect(b.ttft_us).toBe(1400);
    // Step 15 [14 400, 15 410): both full blocks are hits on B's own surviving blocks (prompt, and outputs 1..12
    // filled in decode), so the re-prefill computes 1 token (position 32): 1010 µs, and emits token 14. Its ITL
    // is the whole stall since token 13 (end of step 13, 13 400): 2010 µs. Tokens 15..30: 16 more steps.
    expect(b.e2e_us).toBe(15_410 + 16 * 1000);
    expect(b.output_tokens).toBe(30);
    // 29 gaps: 28 of 1000 µs (before tokens 2..13 and 15..30) and the stall of 2010 µs; ΣITL = E2E − TTFT.
    expect(b.itl_mean_us).toBeCloseTo((b.e2e_us - 1400) / 29, 9);
    expect(b.itl_mean_us).toBeCloseTo((28 * 1000 + 2010) / 29, 9);
    expect(b.e2e_us).toBeLessThan(ref.rows.get(1)?.e2e_us as number);
    // The stall is one gap in the ITL distribution: p99 well above a step.
    expect(metrics['itl_p99_ms']).toBeGreaterThan(1.5);
  });

  // Four blocks, A wants 30 tokens: in step 14 A (first in the batch) preempts B for position 32 and takes B's
  // output block (released last, so first on the free list); in step 30 A's last decode (position 48) takes B's
  // prompt block. B cannot fit before A completes at 30 400, and then nothing of its own is cached.
  it('corrected, nothing cached: the re-prefill is 33 tokens, priced as one prefill; reference regenerates', async () => {
    const ref = await replay(4, 30, {});
    expect(ref.rows.get(1)?.ttft_us).toBe(31_600); // step 31: 20-token prompt, 1200 µs
    expect(ref.rows.get(1)?.e2e_us).toBe(31_600 + 29 * 1000);
    const { rows } = await replay(4, 30, { semantics: 'corrected' });
    const b = rows.get(1) as Row;
    expect(rows.get(0)?.e2e_us).toBe(30_400);
    expect(b.ttft_us).toBe(1400);
    // Step 31 [30 400, 31 730): 20 + 13 = 33 prefill tokens, 1330 µs; token 14's gap 31 730 − 13 400 = 18 330.
    expect(b.e2e_us).toBe(31_730 + 16 * 1000);
    expect(b.itl_mean_us).toBeCloseTo((28 * 1000 + 18_330) / 29, 9);
  });

  it('corrected-physics preempts as vLLM under the reference semantics too (TTFT kept)', async () => {
    const { rows, metrics } = await replay(4, 30, {}, { latencyModel: 'corrected-physics', hardware: 'H100', tp: 1 });
    expect(metrics['preemption_count']).toBe(1);
    const a = rows.get(0) as Row;
    const b = rows.get(1) as Row;
    // Both prefilled in the first step, so they share a TTFT; B's is not re-stamped at its re-prefill.
    expect(b.ttft_us).toBe(a.ttft_us);
    expect(b.output_tokens).toBe(30);
  });
});
