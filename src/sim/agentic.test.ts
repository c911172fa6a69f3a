import { describe, expect, it } from 'vitest';
import { simulate } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

function spec(toolCall: string): string {
  return [
    'version: "2"', 'seed: 8', 'aggregate_rate: 2', 'num_requests: 6', 'clients:', '  - id: agent', '    rate_fraction: 1',
    '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 64}}',
    '    output_distribution: {type: constant, params: {value: 16}}',
    `    reasoning: {multi_turn: {max_rounds: 3, think_time_us: 100000${toolCall}}}`,
  ].join('\n');
}

/** arrival_time_us of every follow-up round (round_index > 0), by session, from the exported trace. */
function followUpArrivals(csv: string): Map<string, number[]> {
  const [head, ...rows] = csv.trim().split('\n');
  const cols = (head ?? '').split(',');
  const sid = cols.indexOf('session_id');
  const round = cols.indexOf('round_index');
  const at = cols.indexOf('arrival_time_us');
  const out = new Map<string, number[]>();
  for (const r of rows.map((l) => l.split(','))) {
    if (Number(r[round]) === 0) continue;
    const k = r[sid] as string;
    out.set(k, [...(out.get(k) ?? []), Number(r[at])]);
  }
  return out;
}

describe('agentic sessions (multi_turn.tool_call)', () => {
  it('delays each follow-up round by the sampled tool latency, and leaves specs without it unchanged', async () => {
    const plain = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'w', files: { w: spec('') }, outputs: { trace: true } });
    const tool = await simulate({
      mode: 'run', model: MODEL, workloadSpec: 'w', outputs: { trace: true },
      files: { w: spec(', tool_call: {latency_distribution: {type: constant, params: {value: 250000}}}') },
    });
    expect(tool.metrics['completed_requests']).toBe(plain.metrics['completed_requests']);
    const a = followUpArrivals(plain.files.traceCsv ?? '');
    const b = followUpArrivals(tool.files.traceCsv ?? '');
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    // Same sessions; every follow-up arrives later, by at least the 250 ms tool call.
    for (const [k, times] of a) {
      const later = b.get(k) ?? [];
      expect(later.length).toBe(times.length);
      expect((later[0] as number) - (times[0] as number)).toBeGreaterThanOrEqual(250000);
    }
  });

  it('rejects unknown keys inside tool_call with the location', async () => {
    await expect(simulate({ mode: 'run', model: MODEL, workloadSpec: 'w', files: { w: spec(', tool_call: {latency: 5}') } })).rejects.toThrow(/tool_call/);
  });
});
