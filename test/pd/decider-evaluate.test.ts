/**
 * A P/D decider candidate under `blis evaluate` (the pd-long-prompts built-in suite, stage 1): a tree
 * decider is scored and changes the objectives against the default (never split); a decider that throws is a
 * scored failure naming the control point; a decider on a suite without P/D pools is a scored failure too.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { rawMetrics } from '../../src/evaluate/fitness.js';
import { runCli } from '../parity/harness.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-decider-eval-'));
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

interface Result {
  combined_score: number;
  objectives: Record<string, number>;
  scenarios: { metrics: Record<string, number> }[];
  error?: { code: string; message: string };
}

async function evaluate(candidate: string, suite = 'pd-long-prompts'): Promise<Result> {
  let out = '';
  let err = '';
  const code = await main(['evaluate', '--candidate', candidate, '--suite', suite, '--stage', '1'], { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (err += t) });
  expect(code, err).toBe(0);
  return JSON.parse(out) as Result;
}

const SPLIT_ALL = `metadata: {id: split-all}
disaggregation: {type: decision_tree, tree: {disaggregate: true, reason: always}}
`;

describe('blis evaluate with a disaggregation candidate', () => {
  it('scores a tree decider against the default, and broken or misplaced deciders as failures', async () => {
    const none = await evaluate(file('none.yaml', 'metadata: {id: default}\n'));
    const all = await evaluate(file('all.yaml', SPLIT_ALL));
    expect(none.error).toBeUndefined();
    expect(all.error).toBeUndefined();
    expect(none.combined_score).toBeGreaterThan(0);
    // Splitting every request queues the documents and the chats alike on the one prefill pod.
    // (The smoke run's metrics, whatever the suite's objectives are.)
    const m = (r: Result): Record<string, number> => (r.scenarios[0] as Result['scenarios'][number]).metrics;
    expect(m(all)['ttft_p99_ms']).toBeGreaterThan((m(none)['ttft_p99_ms'] as number) * 1.5);
    // ... and takes the long prefills off the decode pods.
    expect(m(all)['itl_p99_ms']).toBeLessThan(m(none)['itl_p99_ms'] as number);
    // Split requests count in SLO attainment like any other: their p99 TTFT (~210 ms) is within the chats'
    // 250 ms and their ITL within 10 ms, so nearly all of them meet it.
    expect(all.objectives['slo_attainment']).toBeGreaterThan(0.95);
    expect(all.combined_score).not.toBe(none.combined_score);

    const broken = await evaluate(file('broken.yaml', 'disaggregation:\n  type: code\n  source: |\n    function decide(request, state) { return state.selected.nope.x; }\n'));
    expect(broken.combined_score).toBe(0);
    expect(broken.error?.code).toBe('POLICY_RUNTIME');
    expect(broken.error?.message).toMatch(/^disaggregation policy code/);

    const misplaced = await evaluate(file('all2.yaml', SPLIT_ALL), 'routing-prefix-heavy');
    expect(misplaced.combined_score).toBe(0);
    expect(misplaced.error?.message).toMatch(/needs prefill\/decode pools/);
  });

  it('counts a completed split request as completed in SLO attainment (its parent keeps no outcome of its own)', async () => {
    const r = await runCli(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '3', '--prefill-instances', '1',
      '--decode-instances', '2', '--pd-decider', 'always', '--rate', '10', '--num-requests', '40', '--seed', '4', '--horizon', '8000000']);
    expect(r.code, r.stderr).toBe(0);
    const sim = r.sims[0]!;
    const out = (JSON.parse(r.stdout) as { simulation_metrics: Record<string, number> }).simulation_metrics;
    const completed = out['completed_requests'] as number;
    // The horizon cuts some: attainment must be exactly the completed share, split requests included.
    expect(completed).toBeGreaterThan(10);
    expect(completed).toBeLessThan(sim.cs.arrivals.length);
    expect(sim.cs.pd?.parents.length).toBe(sim.cs.arrivals.length);
    const generous = { ttftMs: 1e9, itlMs: 1e9, e2eMs: 1e9 };
    const m = rawMetrics({ cs: sim.cs, output: out, anomalies: {}, simEndedUs: 8_000_000, usage: { gpuHours: 0, cost: 0, replicasMean: 0 }, slo: { default: generous } });
    expect(m['slo_attainment']).toBe(completed / sim.cs.arrivals.length);
    expect(m['slo_attainment_default']).toBe(completed / sim.cs.arrivals.length);
  });
});

