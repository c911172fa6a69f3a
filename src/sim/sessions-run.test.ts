import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { simulate } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

async function cli(argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (out += `ERR ${t}`) });
  return { code, out };
}

describe('blis run --concurrency', () => {
  it('runs closed-loop users: a cap of --num-requests rounds, session sections in the report', async () => {
    const r = await simulate({ mode: 'run', model: MODEL, concurrency: 4, thinkTimeMs: 200, numRequests: 30, seed: 3 });
    expect(r.metrics['completed_requests']).toBe(30);
    expect(r.metrics['injected_requests']).toBe(30);
    expect(r.referenceText).toContain('=== Session Metrics ===');
    expect(r.referenceText).toMatch(/Sessions: 4\n/);
  });

  it('gives the same bytes through the CLI and the library', async () => {
    const { code, out } = await cli(['run', '--model', MODEL, '--concurrency', '3', '--think-time-ms', '50', '--num-requests', '12', '--output-format', 'reference']);
    expect(code).toBe(0);
    const r = await simulate({ mode: 'run', model: MODEL, concurrency: 3, thinkTimeMs: 50, numRequests: 12 });
    expect(r.referenceText).toBe(out);
  });

  it('is bounded by --horizon when --num-requests is not given', async () => {
    const r = await simulate({ mode: 'run', model: MODEL, concurrency: 2, thinkTimeMs: 0, horizon: 5_000_000, outputTokens: 16, outputTokensStdev: 4 });
    expect(r.metrics['completed_requests']).toBeGreaterThan(20);
  });

  it('rejects bad combinations the way the reference does', async () => {
    await expect(simulate({ mode: 'run', model: MODEL, concurrency: 2, numRequests: 10, rate: 5 })).rejects.toThrow(/mutually exclusive/);
    await expect(simulate({ mode: 'run', model: MODEL, concurrency: 2 })).rejects.toThrow(/num_requests or horizon/);
    await expect(simulate({ mode: 'run', model: MODEL, concurrency: -1 })).rejects.toThrow(/^concurrency must be >= 0/);
    await expect(simulate({ mode: 'run', model: MODEL, concurrency: 2, thinkTimeMs: -5, numRequests: 4 })).rejects.toThrow(/^thinkTimeMs must be >= 0/);
    await expect(simulate({ mode: 'run', model: MODEL, concurrency: 2, workloadSpec: 'w.yaml', files: { 'w.yaml': '' } })).rejects.toThrow(/cannot be used with workloadSpec/);
  });
});

describe('blis run --workload-spec with sessions', () => {
  // num_requests caps the pre-generated rounds (as in the reference), so it decides how many sessions start.
  it('runs multi-turn sessions to completion, follow-ups in the trace export', async () => {
    const spec = [
      'version: "2"', 'seed: 8', 'aggregate_rate: 5', 'num_requests: 10', 'clients:', '  - id: chat', '    rate_fraction: 1',
      '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 64}}',
      '    output_distribution: {type: constant, params: {value: 16}}',
      '    reasoning: {multi_turn: {max_rounds: 3, think_time_us: 100000, context_growth: accumulate}}',
    ].join('\n');
    const r = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'w.yaml', files: { 'w.yaml': spec }, outputs: { trace: true } });
    const done = r.metrics['completed_requests'];
    expect(done % 3).toBe(0);
    expect(done).toBeGreaterThan(10);
    const csv = r.files.traceCsv ?? '';
    // Columns: request_id, client_id, tenant_id, slo_class, session_id, round_index, ..., input_tokens (10th).
    const rows = csv.trim().split('\n').slice(1).map((l) => l.split(','));
    expect(rows).toHaveLength(done);
    expect(rows.filter((c) => c[5] === '2')).toHaveLength(done / 3);
    // Accumulated context: 64 + (16 − 1 produced) + 64 for round 1.
    expect(new Set(rows.filter((c) => c[5] === '1').map((c) => c[9]))).toEqual(new Set(['143']));
  });

  it('runs inference-perf specs', async () => {
    const spec = 'seed: 42\nnum_requests: 40\ninference_perf:\n  stages: [{rate: 2, duration: 20}]\n  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 2, system_prompt_len: 32, question_len: 64, output_len: 8, enable_multi_turn_chat: true}\n';
    const r = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'ip.yaml', files: { 'ip.yaml': spec } });
    expect(r.metrics['completed_requests']).toBe(40);
    expect(r.metrics['total_input_tokens']).toBe(40 * 96);
  });
});
