/**
 * E13 on P/D decode pods (docs/reference-differences.md): a decode half preempted there restarts as in the
 * reference even under corrected semantics. Queued decode halves hold the KV their transfers brought, so a
 * preempted one that needed its whole re-prefill (prompt + outputs) at the queue head waited for blocks they
 * never free: this scenario deadlocked the decode pod (5 queued, none running, forever) before the exception.
 * Every invariant checker runs on both simulations.
 */
import { describe, expect, it } from 'vitest';
import { PdPart } from '../../src/domain/request.js';
import type { Semantics } from '../../src/domain/semantics.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const ARGV = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1',
  '--pd-decider', 'always', '--total-kv-blocks', '200', '--rate', '50', '--num-requests', '40', '--seed', '7',
  '--prompt-tokens', '1024', '--prompt-tokens-stdev', '0', '--output-tokens', '256', '--output-tokens-stdev', '0', '--horizon', '30000000'];

async function run(mode: Semantics) {
  const r = await runCli([...ARGV, '--semantics', mode]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  return sim;
}

describe('E13 on a P/D decode pod', () => {
  it('preempted decode halves restart as in the reference (corrected too), and the pod drains', async () => {
    const cor = await run('corrected');
    const pod = cor.cs.instances[1]!;
    expect(pod.metrics.preemptionCount).toBeGreaterThan(0);
    expect(pod.metrics.requests.filter((r) => r.pdPart === PdPart.Decode && r.replayTokens > 0)).toEqual([]);
    // Nothing left waiting on the decode pod at the horizon (the deadlock left 5 queued and none running).
    expect(pod.waitQ.length + pod.batchSize).toBe(0);
    expect(pod.metrics.completedRequests).toBeGreaterThan(0);
  });
});
