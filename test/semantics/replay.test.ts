/**
 * `--semantics`: trace export and replay (docs/reference-differences.md W1, W3, W4, W8, W9, W10). A multi-turn
 * `blis run` is exported as a trace and replayed in both modes.
 */
import { describe, expect, it } from 'vitest';
import { simulate } from '../../src/sim/simulate.js';
import { RequestState } from '../../src/domain/request.js';
import { buildClosedLoopReplay } from '../../src/workload/replay-closed-loop.js';
import { SessionManager } from '../../src/workload/sessions/manager.js';
import { parseTraceCsv } from '../../src/workload/tracev2-csv.js';
import { parseTraceHeaderYaml } from '../../src/workload/tracev2-yaml-parse.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

/** 10 chat sessions of 3 rounds (0.5 s think time), 2 s deadlines, a 64-token system prompt. */
const CHAT = `version: "2"
seed: 5
aggregate_rate: 4
num_requests: 18
clients:
  - id: chat
    rate_fraction: 1
    prefix_group: sys
    prefix_length: 64
    streaming: true
    timeout: 2000000
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 40}}
    reasoning: {reason_ratio_distribution: {type: constant, params: {value: 0}}, multi_turn: {max_rounds: 3, think_time_us: 500000}}
`;

async function chatTrace(semantics: 'reference' | 'corrected' = 'reference'): Promise<{ yaml: string; csv: string }> {
  const r = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'c.yaml', files: { 'c.yaml': CHAT }, semantics, outputs: { trace: true } });
  return { yaml: r.files.traceYaml!, csv: r.files.traceCsv! };
}

function rows(csv: string): Record<string, string>[] {
  const [head, ...lines] = csv.trim().split('\n');
  const cols = head!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i]!, v])));
}

async function replay(trace: { yaml: string; csv: string }, semantics: 'reference' | 'corrected', extra: Record<string, unknown> = {}) {
  return simulate({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files: { 't.yaml': trace.yaml, 't.csv': trace.csv }, sessionMode: 'closed-loop', semantics, outputs: { results: true, metrics: true }, ...extra });
}

describe('closed-loop replay under --semantics', () => {
  it('W10: follow-ups are renamed, get 300 s deadlines and lose their tags, so results.json omits them (reference); they keep their rows (corrected)', async () => {
    const trace = await chatTrace();
    const recorded = rows(trace.csv);
    expect(recorded).toHaveLength(30);
    expect(recorded.filter((r) => r['round_index'] !== '0')).toHaveLength(20);
    const horizon = '9223372036854775807';
    const ref = await replay(trace, 'reference', { horizon });
    const cor = await replay(trace, 'corrected', { horizon });
    const ids = (r: typeof ref) => (JSON.parse(r.files.results!) as { request_id: number }[]).map((x) => x.request_id);
    expect(ref.metrics['completed_requests']).toBe(30);
    expect(cor.metrics['completed_requests']).toBe(30);
    expect(ids(ref)).toHaveLength(10);
    expect(ids(cor)).toEqual(recorded.map((r) => Number(r['request_id'])).sort((a, b) => a - b));
    const perRequest = (r: typeof ref) => (JSON.parse(r.files.metrics!) as { requests: { requestID: string }[] }).requests.map((q) => q.requestID);
    expect(perRequest(ref).filter((id) => id.startsWith('session_'))).toHaveLength(20);
    expect(perRequest(cor).filter((id) => id.startsWith('session_'))).toHaveLength(0);
  });

  it('W10: a follow-up gets the 300 s session deadline and round 0\'s tags (reference) or its row\'s deadline offset, id and tags (corrected)', () => {
    const csv = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
7,c,t0,batch,s1,0,g,16,false,10,4,0,0,0,0,0,,1500000,0,1000000,1000000,0,0,0,ok,,
9,c2,t1,interactive,s1,1,,0,true,12,5,0,0,0,0,0.25,,3750000,0,3000000,3000000,0,0,0,ok,,
`;
    const trace = { header: parseTraceHeaderYaml('trace_version: 3\n', 't.yaml'), records: parseTraceCsv(csv, 't.csv') };
    const followUp = (corrected: boolean) => {
      const built = buildClosedLoopReplay(trace, 1n, null, 0, 't.csv', corrected);
      const r0 = built.requests[0]!;
      r0.state = RequestState.Completed;
      return new SessionManager(built.sessions).onComplete(r0, 1_200_000)[0]!;
    };
    const ref = followUp(false);
    const cor = followUp(true);
    // Arrival: round 0 ends at 1.2 s, plus the recorded gap (3.0 s − 1.0 s).
    expect(ref.arrivalTime).toBe(3_200_000);
    expect(cor.arrivalTime).toBe(3_200_000);
    expect([ref.id, ref.deadline - ref.arrivalTime, ref.tenantId, ref.sloClass, ref.streaming, ref.reasonRatio, ref.prefixGroup, ref.prefixLength]).toEqual(['session_s1_round_1_1', 300_000_000, 't0', 'batch', false, 0, '', 0]);
    expect([cor.id, cor.deadline - cor.arrivalTime, cor.tenantId, cor.sloClass, cor.streaming, cor.reasonRatio, cor.prefixGroup, cor.prefixLength]).toEqual(['request_9', 750_000, 't1', 'interactive', true, 0.25, 'g', 16]);
    expect(cor.inputLen).toBe(28);
  });

  it('W9: the default horizon is twice the latest round-0 arrival, cutting late sessions (reference), or covers every row (corrected)', async () => {
    const trace = await chatTrace();
    const ref = await replay(trace, 'reference');
    const cor = await replay(trace, 'corrected');
    // Round 0 ends by 2.43 s: the reference stops at 4.85 s with the last session's last round unfinished.
    expect([ref.metrics['injected_requests'], ref.metrics['completed_requests']]).toEqual([30, 29]);
    expect([cor.metrics['injected_requests'], cor.metrics['completed_requests']]).toEqual([30, 30]);
  });

  it('W4: the follow-up horizon comes from arrival_time_us although rows are injected at send_time_us (reference) or from the injection times (corrected)', async () => {
    // An observed trace whose send times are 0.9 s after the recorded arrivals.
    const csv = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
0,c,,,s1,0,,0,true,50,10,0,0,0,0,0,,0,0,100000,1000000,0,0,0,ok,,
1,c,,,s1,1,,0,true,50,10,0,0,0,0,0,,0,0,400000,1300000,0,0,0,ok,,
`;
    const trace = { yaml: 'trace_version: 3\nmode: real\n', csv };
    const ref = await replay(trace, 'reference');
    const cor = await replay(trace, 'corrected');
    // The reference bounds follow-ups at 2 × 0.1 s: round 1 (due ≈ 1.3 s) is never generated.
    expect(ref.metrics['completed_requests']).toBe(1);
    expect(cor.metrics['completed_requests']).toBe(2);
  });

  it('W7: multi-turn rows lose their prefix group and streaming flag, follow-ups their prefix and reason ratio (reference); corrected keeps them', async () => {
    const ref = rows((await chatTrace('reference')).csv);
    const cor = rows((await chatTrace('corrected')).csv);
    const pick = (rs: Record<string, string>[], round0: boolean) => new Set(rs.filter((r) => (r['round_index'] === '0') === round0).map((r) => [r['prefix_group'], r['prefix_length'], r['streaming'], r['input_tokens'], r['reason_ratio']].join('|')));
    // reason_ratio: a constant 0 percentage is drawn as 1 (a length sampler's floor), 0.01.
    expect(pick(ref, true)).toEqual(new Set(['|64|false|100|0.01']));
    expect(pick(ref, false)).toEqual(new Set(['|0|false|164|0']));
    expect(pick(cor, true)).toEqual(new Set(['sys|64|true|100|0.01']));
    expect(pick(cor, false)).toEqual(new Set(['sys|64|true|100|0.01']));
    // A fixed-mode replay of the reference trace builds round 0 from the 100-token suffix: no shared prefix.
    const fixed = async (trace: { yaml: string; csv: string }) => (await simulate({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files: { 't.yaml': trace.yaml, 't.csv': trace.csv }, outputs: { metrics: true } })).files.metrics!;
    const inputs = (m: string) => (JSON.parse(m) as { requests: { num_prefill_tokens: number }[] }).requests.reduce((a, r) => a + r.num_prefill_tokens, 0);
    expect(inputs(await fixed(await chatTrace('reference')))).toBe(10 * 100 + 20 * 164);
    expect(inputs(await fixed(await chatTrace('corrected')))).toBe(30 * 164);
  });

  it('W8: a run trace records no think times or context growth, so a closed-loop replay stretches sessions and resends whole prompts (reference); it records both (corrected)', async () => {
    const spec = CHAT.replace('multi_turn: {max_rounds: 3, think_time_us: 500000}', 'multi_turn: {max_rounds: 3, think_time_us: 500000, context_growth: accumulate}');
    const run = async (semantics: 'reference' | 'corrected') => {
      const r = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'c.yaml', files: { 'c.yaml': spec }, semantics, outputs: { trace: true, metrics: true } });
      return { trace: { yaml: r.files.traceYaml!, csv: r.files.traceCsv! }, metrics: r.files.metrics! };
    };
    type Row = { requestID: string; arrived_at: number; num_prefill_tokens: number };
    const perRequest = (m: string) => (JSON.parse(m) as { requests: Row[] }).requests;
    const ref = await run('reference');
    const cor = await run('corrected');
    expect(ref.trace.yaml).not.toContain('session_context_growth');
    expect(ref.trace.csv.split('\n')[0]).not.toContain('think_time_us');
    expect(cor.trace.yaml).toContain('session_context_growth: accumulate');
    const corRows = rows(cor.trace.csv);
    expect(corRows.filter((r) => r['round_index'] !== '0').every((r) => r['think_time_us'] === '500000')).toBe(true);
    expect(corRows.filter((r) => r['round_index'] === '0').every((r) => r['think_time_us'] === '0')).toBe(true);
    // The run itself is the same in both modes (nothing here is a run-side correction).
    const ran = perRequest(ref.metrics);
    expect(perRequest(cor.metrics).map((r) => [r.arrived_at, r.num_prefill_tokens])).toEqual(ran.map((r) => [r.arrived_at, r.num_prefill_tokens]));
    const span = (rs: Row[]) => Math.max(...rs.map((r) => r.arrived_at));
    const prompts = (rs: Row[]) => rs.reduce((a, r) => a + r.num_prefill_tokens, 0);
    const refReplay = perRequest((await replay(ref.trace, 'reference', { horizon: '9223372036854775807' })).files.metrics!);
    const corReplay = perRequest((await replay(cor.trace, 'corrected', { horizon: '9223372036854775807' })).files.metrics!);
    expect(refReplay).toHaveLength(30);
    expect(corReplay).toHaveLength(30);
    // The reference replay waits the recorded arrival gap (service time included) on top of each round's end.
    expect(span(refReplay) - span(ran)).toBeGreaterThan(0.4);
    expect(Math.abs(span(corReplay) - span(ran))).toBeLessThan(0.05);
    // The corrected replay regrows the conversation from the recorded whole prompts: 164, 303, 442 tokens, as
    // the run sent them. The reference replay resends each recorded length, round 0 without its prefix (W7).
    expect(corReplay.map((r) => r.num_prefill_tokens)).toEqual(ran.map((r) => r.num_prefill_tokens));
    expect(new Set(ran.map((r) => r.num_prefill_tokens))).toEqual(new Set([164, 303, 442]));
    expect(prompts(refReplay)).toBe(prompts(ran) - 10 * 64);
  });

  it('W3: replay --trace-output writes every built request, injected or not (reference), or the injected ones with their follow-ups (corrected)', async () => {
    const trace = await chatTrace();
    const reexport = async (semantics: 'reference' | 'corrected', sessionMode: 'fixed' | 'closed-loop') => {
      const r = await simulate({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files: { 't.yaml': trace.yaml, 't.csv': trace.csv }, sessionMode, semantics, horizon: '2000000', outputs: { trace: true } });
      return rows(r.files.traceCsv!);
    };
    const late = rows(trace.csv).filter((r) => Number(r['arrival_time_us']) >= 2_000_000).length;
    expect(late).toBe(20);
    // Fixed: the reference writes the 20 rows after the 2 s horizon too, as incomplete requests that never arrived.
    const refFixed = await reexport('reference', 'fixed');
    expect(refFixed).toHaveLength(30);
    expect(refFixed.filter((r) => Number(r['arrival_time_us']) >= 2_000_000).every((r) => r['status'] === 'incomplete' && r['first_chunk_time_us'] === '0')).toBe(true);
    const corFixed = await reexport('corrected', 'fixed');
    expect(corFixed).toHaveLength(10);
    expect(corFixed.every((r) => Number(r['arrival_time_us']) < 2_000_000)).toBe(true);
    // Closed loop: the reference writes round 0 of all 10 sessions (5 start after the horizon) and no follow-up.
    const refClosed = await reexport('reference', 'closed-loop');
    expect(refClosed).toHaveLength(10);
    expect(refClosed.filter((r) => Number(r['arrival_time_us']) >= 2_000_000)).toHaveLength(5);
    expect(refClosed.every((r) => r['round_index'] === '0')).toBe(true);
    const corClosed = await reexport('corrected', 'closed-loop');
    expect(corClosed.every((r) => Number(r['arrival_time_us']) < 2_000_000)).toBe(true);
    expect(corClosed.filter((r) => r['round_index'] !== '0').length).toBeGreaterThan(0);
    expect(corClosed.filter((r) => r['round_index'] === '0')).toHaveLength(refClosed.filter((r) => Number(r['arrival_time_us']) < 2_000_000).length);
  });

  it('W1: a replayed request keeps its row\'s prefix_length whatever prefix it got, inflating re-exports (reference), or records the prefix it got (corrected)', async () => {
    // Group g's prefix is drawn with the first row's 32 tokens; the others say 16 and 0 but get those 32 too.
    const csv = `request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason
0,c,,,,0,g,32,false,10,4,0,0,0,0,0,,0,0,1000,1000,0,0,0,ok,,
1,c,,,,0,g,16,false,10,4,0,0,0,0,0,,0,0,2000,2000,0,0,0,ok,,
2,c,,,,0,g,0,false,10,4,0,0,0,0,0,,0,0,3000,3000,0,0,0,ok,,
`;
    const reexport = async (semantics: 'reference' | 'corrected') => {
      const r = await simulate({ mode: 'replay', model: MODEL, traceHeader: 't.yaml', traceData: 't.csv', files: { 't.yaml': 'trace_version: 3\n', 't.csv': csv }, semantics, outputs: { trace: true } });
      return rows(r.files.traceCsv!).map((x) => [x['prefix_length'], x['input_tokens']]);
    };
    // Every request sends 42 tokens; the reference re-export says 32+10, 16+26 and 0+42.
    expect(await reexport('reference')).toEqual([['32', '10'], ['16', '26'], ['0', '42']]);
    expect(await reexport('corrected')).toEqual([['32', '10'], ['32', '10'], ['32', '10']]);
  });
});
