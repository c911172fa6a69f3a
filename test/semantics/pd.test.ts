/**
 * `--semantics` on the P/D and autoscaler paths: both modes run (every invariant checker passes) and the
 * engine-wide corrections (here E9: no implicit 300 s deadline) reach these paths too. The P/D and autoscaler
 * corrections themselves (D1-D11, A5) are tested one by one in pd-corrected.test.ts and autoscale-corrected.test.ts.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';
import { PARITY_DIR } from '../parity/workload-fixtures.js';

/** The reference's calibration files (the autoscaler case drains only with the reference's step times). */
const CONFIGS = ['--model-config-folder', path.join(PARITY_DIR, 'model_configs/llama-3.1-8b-instruct'), '--hardware-config', path.join(PARITY_DIR, 'hardware_config.json')];
const HAS_CONFIGS = existsSync(CONFIGS[1]!) && existsSync(CONFIGS[3]!);

const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
const LOAD = ['--rate', '20', '--num-requests', '120', '--seed', '101', '--prompt-tokens', '1024', '--prompt-tokens-stdev', '0', '--output-tokens', '64', '--output-tokens-stdev', '0'];

/** Completed requests of a run's JSON output (a number in both modes, so the comparisons below can fail). */
function completed(doc: Record<string, unknown>): number {
  const n = (doc['simulation_metrics'] as Record<string, unknown> | undefined)?.['completed_requests'];
  if (typeof n !== 'number') throw new Error('no simulation_metrics.completed_requests in the output');
  return n;
}

async function run(argv: readonly string[]): Promise<{ cs: ClusterSimulator; doc: Record<string, unknown> }> {
  const r = await runCli(['run', ...MODEL, ...argv]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  return { cs: sim.cs, doc: JSON.parse(r.stdout) as Record<string, unknown> };
}

describe('--semantics with P/D disaggregation and the autoscaler', () => {
  it('P/D by flags: corrected drops the implicit deadline and routes each pool with its own round-robin', async () => {
    const pd = ['--num-instances', '4', '--prefill-instances', '2', '--decode-instances', '2', '--pd-decider', 'always', ...LOAD];
    const ref = await run(pd);
    const cor = await run([...pd, '--semantics', 'corrected']);
    const parents = (cs: ClusterSimulator) => (cs.pd?.parents ?? []).map((p) => [p.id, p.prefillIndex, p.transferStartTime, p.transferCompleteTime, p.completionTime]);
    expect(parents(ref.cs)).toHaveLength(120);
    expect(parents(cor.cs)).toHaveLength(120);
    // One round-robin counter per pool (D5): the prefill pods alternate instead of the shared counter's one pod.
    expect(new Set(ref.cs.pd!.parents.map((p) => p.prefillIndex))).toEqual(new Set([1]));
    expect(cor.cs.pd!.parents.slice(0, 4).map((p) => p.prefillIndex)).toEqual([0, 1, 0, 1]);
    expect(ref.cs.pd!.parents.every((p) => p.req.deadline === p.req.arrivalTime + 300_000_000)).toBe(true);
    expect(cor.cs.pd!.parents.every((p) => p.req.deadline === 0)).toBe(true);
    expect(completed(cor.doc)).toBe(completed(ref.doc));
  });

  it.skipIf(!HAS_CONFIGS)(`the CLI autoscaler drains the same instances in both modes; corrected can also scale up without node pools${HAS_CONFIGS ? '' : ` (skipped: no calibration files under ${PARITY_DIR})`}`, async () => {
    const scaled = [...CONFIGS, '--num-instances', '3', '--model-autoscaler-interval-us', '500000', '--routing-policy', 'least-loaded', '--total-kv-blocks', '3000', '--rate', '8', '--num-requests', '300', '--seed', '203'];
    const ref = await run(scaled);
    const cor = await run([...scaled, '--semantics', 'corrected']);
    const served = (cs: ClusterSimulator) => cs.instances.map((inst, i) => [inst.id, inst.metrics.completedRequests, cs.lifecycle?.state(i)]);
    // The reference drains instance_0 then instance_1 under this light load: instance_2 serves most requests.
    const counts = served(ref.cs);
    expect(counts[2]![1] as number).toBeGreaterThan((counts[0]![1] as number) + (counts[1]![1] as number));
    // Corrected (D8): the same two drains, and one unplaced replica when instance_2 alone runs hot.
    const cor3 = served(cor.cs);
    expect(cor3.slice(0, 2)).toEqual(counts.slice(0, 2));
    expect(cor3).toHaveLength(4);
    expect(String(cor3[3]![0])).toMatch(/^autoscale-/);
    expect((cor3[2]![1] as number) + (cor3[3]![1] as number)).toBe(counts[2]![1]);
    // M5: corrected snapshots start from a scrape at t = 0; the autoscaler's first tick sees the idle cluster's
    // capacity but scales nothing down before one interval of observation, so all 300 are served (D12).
    expect(completed(cor.doc)).toBe(completed(ref.doc));
    expect(completed(cor.doc)).toBe(300);
  });

  it('refuses an unknown --semantics value with P/D flags too', async () => {
    const r = await runCli(['run', ...MODEL, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--semantics', 'fixed', ...LOAD]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--semantics must be reference or corrected, got "fixed"');
  });
});
