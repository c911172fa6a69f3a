/**
 * The corrected forms of the autoscaler entries of docs/reference-differences.md: D9 (the HPA's stabilization
 * rule instead of the reference's timers) on scripted decision sequences through both stabilizers, D8
 * (node provisioning; scale-up without node pools) on overloaded runs in both `--semantics` modes, and D12 with
 * M5 (a model is never drained to zero; no scale-down before one interval of observation, so the t = 0 scrape
 * cannot drain an idle cluster) on idle starts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Semantics } from '../../src/domain/semantics.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';
import { HpaStabilizer, TimerStabilizer, type Stabilizer } from '../../src/cluster/autoscaler/stabilize.js';
import { analyzeSaturation, effectiveSaturationConfig, unlimitedEngine, type ScaleDelta } from '../../src/routing/autoscale-saturation.js';
import type { AutoscalerSetup } from '../../src/cluster/autoscaler/autoscaler.js';
import { runEngine } from '../../src/sim/engine-setup.js';
import { engineSetup, req } from './helpers.js';

const V = { gpuType: 'H100', tp: 1 };

/** Runs one target through ticks every 10 s: `deltas[k]` is tick k's decision (0 = none) at replica count `replicas`. */
function drive(s: Stabilizer, deltas: readonly number[], start: number): { tick: number; delta: number }[] {
  let replicas = start;
  const out: { tick: number; delta: number }[] = [];
  deltas.forEach((delta, k) => {
    const decisions: ScaleDelta[] = delta === 0 ? [] : [{ model: 'm', variant: V, delta }];
    for (const p of s.apply(k * 10_000_000, decisions, new Map([['m', replicas]]))) {
      out.push({ tick: k, delta: p.delta });
      replicas += p.delta;
    }
  });
  return out;
}

describe('D9: stabilization windows', () => {
  const windows = { upUs: 0, downUs: 30_000_000 };

  it('a noisy scale-down signal: the timer restarts on every gap, the HPA acts on the highest recent recommendation', () => {
    // Down by 1 on three of every four ticks (a quiet tick in between), starting at 6 replicas.
    const noisy = [-1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0];
    // Reference: a 30 s window needs 4 consecutive down ticks (0, 10, 20, 30 s); there are never more than 3.
    expect(drive(new TimerStabilizer(windows), noisy, 6)).toEqual([]);
    // HPA: the down window holds the last 3 ticks (a tick 30 s old has left it); the starting size and each quiet
    // tick's "stay" hold the count for two more ticks, then three down ticks in a row allow one step.
    expect(drive(new HpaStabilizer(windows), noisy, 6)).toEqual([{ tick: 6, delta: -1 }, { tick: 10, delta: -1 }, { tick: 14, delta: -1 }]);
  });

  it('a sustained scale-down signal: the timer restarts after each step, the HPA steps once per window', () => {
    const sustained = Array<number>(10).fill(-1);
    // Reference: 4 consecutive ticks per step (the timer starts again at the tick after a step).
    expect(drive(new TimerStabilizer(windows), sustained, 8)).toEqual([{ tick: 3, delta: -1 }, { tick: 7, delta: -1 }]);
    // HPA: a step as soon as the last 30 s recommend less than the current count: every 3 ticks.
    expect(drive(new HpaStabilizer(windows), sustained, 8)).toEqual([{ tick: 3, delta: -1 }, { tick: 6, delta: -1 }, { tick: 9, delta: -1 }]);
  });

  it('a scale-up window takes the lowest recommendation of the window, never restarting', () => {
    const up = { upUs: 20_000_000, downUs: 0 };
    // +2, +1, +3 at 4 replicas: recommendations 6, 5, 7.
    expect(drive(new TimerStabilizer(up), [2, 1, 3, 0, 3], 4)).toEqual([{ tick: 2, delta: 3 }]);
    expect(drive(new HpaStabilizer(up), [2, 1, 3, 0, 3], 4)).toEqual([{ tick: 2, delta: 1 }]);
  });
});

describe('D8: node pools provision nodes; without node pools the saturation pipeline places unplaced replicas', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'blis-d8-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
  const LOAD = ['--num-instances', '1', '--rate', '30', '--num-requests', '1500', '--seed', '5', '--prompt-tokens', '2000', '--output-tokens', '300', '--total-kv-blocks', '3000'];

  async function run(argv: readonly string[], mode: Semantics): Promise<{ cs: ClusterSimulator; doc: { simulation_metrics: Record<string, number> } }> {
    const r = await runCli(['run', ...MODEL, ...LOAD, ...argv, '--semantics', mode]);
    expect(r.code, r.stderr).toBe(0);
    const sim = r.sims[0]!;
    checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
    return { cs: sim.cs, doc: JSON.parse(r.stdout) as { simulation_metrics: Record<string, number> } };
  }
  const ups = (cs: ClusterSimulator) => (cs.autoscaler?.records ?? []).filter((x) => x.action === 'up');
  const failed = (cs: ClusterSimulator) => (cs.autoscaler?.records ?? []).filter((x) => x.action === 'failed');

  it('a node pool of 1 initial and 3 max nodes with a 20 s provisioning delay', async () => {
    const bundle = path.join(dir, 'np.yaml');
    writeFileSync(bundle, 'autoscaler:\n  interval_us: 1000000\nnode_pools:\n  - {name: p, gpu_type: H100, gpus_per_node: 1, gpu_memory_gib: 80, initial_nodes: 1, min_nodes: 0, max_nodes: 3, provisioning_delay: {mean: 20, stddev: 0}, cost_per_hour: 4}\n');
    const ref = await run(['--policy-config', bundle], 'reference');
    const cor = await run(['--policy-config', bundle], 'corrected');
    // Reference: only the initial node exists; every scale-up fails and one instance serves the overload.
    expect(ups(ref.cs)).toEqual([]);
    expect(failed(ref.cs).length).toBeGreaterThan(0);
    expect(failed(ref.cs).every((x) => x.reason === 'no Ready node has 1 free H100 GPUs')).toBe(true);
    expect(ref.cs.instances).toHaveLength(1);
    // Corrected: nodes p-1 and p-2 are provisioned (max_nodes 3); each replica serves from 20 s after its scale-up.
    expect(ups(cor.cs).map((x) => x.reason)).toEqual(['placed on p-1', 'placed on p-2']);
    expect(cor.cs.instances).toHaveLength(3);
    for (const u of ups(cor.cs)) {
      const inst = cor.cs.instances.find((i) => i.id === u.instanceId)!;
      const first = Math.min(...inst.metrics.requests.map((q) => q.arrivalTime));
      expect(first).toBeGreaterThanOrEqual(u.clock + 20_000_000);
    }
    expect(cor.doc.simulation_metrics['e2e_mean_ms']).toBeLessThan(ref.doc.simulation_metrics['e2e_mean_ms']! / 2);
  });

  it('the CLI flag alone: the reference cannot scale up, corrected adds unplaced replicas', async () => {
    const flag = ['--model-autoscaler-interval-us', '1000000'];
    const ref = await run(flag, 'reference');
    const cor = await run(flag, 'corrected');
    expect(ups(ref.cs)).toEqual([]);
    expect(failed(ref.cs).every((x) => x.reason === 'no node pools to place on')).toBe(true);
    expect(ups(cor.cs).length).toBeGreaterThan(0);
    expect(ups(cor.cs).every((x) => x.reason === 'unplaced replica')).toBe(true);
    expect(cor.doc.simulation_metrics['e2e_mean_ms']).toBeLessThan(ref.doc.simulation_metrics['e2e_mean_ms']! / 2);
  });
});

describe('D12 and M5: an idle cluster is never drained to zero, and the t = 0 scrape drains nothing', () => {
  const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
  // 3 instances, 500 ms ticks, the first of 20 requests arrives at 2 s: every tick before it sees an idle cluster.
  const IDLE = ['--num-instances', '3', '--model-autoscaler-interval-us', '500000', '--rate', '0.5', '--num-requests', '20', '--seed', '1'];

  it('D12 on the CLI: the reference drains all 3 instances at 0.5 s and serves 0 of 20; corrected keeps one and serves all 20', async () => {
    const out: Record<string, { cs: ClusterSimulator; doc: { simulation_metrics: Record<string, number> } }> = {};
    for (const mode of ['reference', 'corrected'] as const) {
      const r = await runCli(['run', ...MODEL, ...IDLE, '--semantics', mode]);
      expect(r.code, r.stderr).toBe(0);
      const sim = r.sims[0]!;
      checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
      expect(sim.requests[0]!.arrivalTime).toBe(2_000_000);
      out[mode] = { cs: sim.cs, doc: JSON.parse(r.stdout) as { simulation_metrics: Record<string, number> } };
    }
    const actions = (cs: ClusterSimulator) => (cs.autoscaler?.records ?? []).map((x) => [x.clock, x.action, x.instanceId]);
    // Reference: the t = 0 tick sees zero capacity (M5) and decides nothing; the 0.5 s tick sees spare = supply and
    // removes floor(supply / per-replica supply) = 3 replicas. Nothing is left to route to, or to observe.
    expect(actions(out['reference']!.cs)).toEqual([[500_000, 'down', 'instance_0'], [500_000, 'down', 'instance_1'], [500_000, 'down', 'instance_2']]);
    expect(out['reference']!.doc.simulation_metrics['completed_requests']).toBe(0);
    // Corrected: the t = 0 tick sees the scraped capacity but may not scale down yet; at 0.5 s two go, one stays.
    expect(actions(out['corrected']!.cs)).toEqual([[500_000, 'down', 'instance_0'], [500_000, 'down', 'instance_1']]);
    expect(out['corrected']!.doc.simulation_metrics['completed_requests']).toBe(20);
    expect(out['corrected']!.cs.instances[2]!.metrics.completedRequests).toBe(20);
  });

  it('D12 in the saturation engine: an idle 3-replica model loses all 3 (reference) or 2 with a floor of 1 (corrected)', () => {
    const idle = { instanceId: '', variant: { gpuType: 'H100', tp: 1 }, kvUtilization: 0, queueDepth: 0, inFlight: 0, batchSize: 0, maxBatchSize: 256, costPerHour: 0, totalKvCapacityTokens: 16_000, kvTokensInUse: 0 };
    const result = analyzeSaturation({ model: 'm', replicas: ['a', 'b', 'c'].map((id) => ({ ...idle, instanceId: id })), pendingReplicas: 0, pendingCapacityTokens: 0 }, effectiveSaturationConfig({}));
    expect(unlimitedEngine([result]).map((d) => d.delta)).toEqual([-3]);
    expect(unlimitedEngine([result], 1).map((d) => d.delta)).toEqual([-2]);
    // A single replica is never a scale-down candidate (the reference's own rule, unchanged).
    const one = analyzeSaturation({ model: 'm', replicas: [idle], pendingReplicas: 0, pendingCapacityTokens: 0 }, effectiveSaturationConfig({}));
    expect(unlimitedEngine([one], 1)).toEqual([]);
  });

  it('M5 and the first tick: with the t = 0 scrape, only the observation window keeps the autoscaler from draining at t = 0', () => {
    /** 3 instances of model m; ticks every 500 ms with no windows or delays; two requests arrive at 2 s. */
    const run = (corrections: Partial<AutoscalerSetup>): { actions: (string | number)[][]; completed: number } => {
      const autoscaler: AutoscalerSetup = {
        intervalUs: 500_000, scaleUpWindowUs: 0, scaleDownWindowUs: 0, hpaScrapeDelay: { mean: 0, stddev: 0 }, saturation: effectiveSaturationConfig({}), hpaStabilization: true, ...corrections,
      };
      const setup = engineSetup({
        numInstances: 3, model: 'm', gpuType: 'H100', tp: 1, semantics: 'corrected',
        scaling: { autoscaler, nodePools: null, loadingDelay: { mean: 0, stddev: 0 }, warmStartInitialInstances: false, kvForGpu: null },
      });
      const cs = runEngine(setup, [req(0, 64, 4, 2_000_000), req(1, 64, 4, 2_100_000)]);
      const completed = cs.instances.reduce((s, i) => s + i.metrics.completedRequests, 0);
      return { actions: (cs.autoscaler?.records ?? []).map((x) => [x.clock, x.action, x.instanceId]), completed };
    };
    // No floor and no observation window: the t = 0 tick sees three idle instances with capacity and drains all three.
    const bare = run({});
    expect(bare.actions).toEqual([[0, 'down', 'instance_0'], [0, 'down', 'instance_1'], [0, 'down', 'instance_2']]);
    expect(bare.completed).toBe(0);
    // The floor alone keeps one, but still drains two instances at t = 0, before any load was offered.
    expect(run({ saturationMinReplicas: 1 }).actions).toEqual([[0, 'down', 'instance_0'], [0, 'down', 'instance_1']]);
    // Both (what --semantics corrected sets): the first scale-down waits for the 500 ms tick.
    const corrected = run({ saturationMinReplicas: 1, scaleDownAfterUs: 500_000 });
    expect(corrected.actions).toEqual([[500_000, 'down', 'instance_0'], [500_000, 'down', 'instance_1']]);
    expect(corrected.completed).toBe(2);
  });
});
