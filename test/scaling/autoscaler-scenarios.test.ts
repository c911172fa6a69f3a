/**
 * The autoscaler beyond the reference, each behaviour shown by numbers that can fail: drain `wait` loses no
 * request while drain `immediate` counts the ones it kills (and conservation holds with that bucket); drain
 * `redirect` moves queued work without losing it; a warming replica's step times are raised and fall on the
 * configured curve; provisioning and model-load delays keep a new replica out of routing for exactly their
 * sum; a diurnal load makes the replica count follow it within the bounds, without oscillation under a
 * stabilization window; an event trigger reacts before the next periodic tick. Every run passes every
 * invariant checker, scale bounds included.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import { InstanceState } from '../../src/cluster/autoscaler/lifecycle.js';
import { warmupFactor } from '../../src/latency/warmup.js';
import { runCli } from '../parity/harness.js';
import { assertInvariants } from '../invariants/checkers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-scaling-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

function deployment(o: { replicas: number; min: number; max: number; autoscaler: string; kv?: number }): string {
  return `models:
  - name: ${MODEL}
    configurations:
      - name: llama
        hardware: H100
        tp: 1
        total_kv_blocks: ${o.kv ?? 4000}
        cost_per_gpu_hour: 4
        replicas: ${o.replicas}
        min_replicas: ${o.min}
        max_replicas: ${o.max}
autoscaler:
${o.autoscaler}`;
}

interface Run {
  cs: ClusterSimulator;
  doc: Record<string, unknown>;
  requests: number;
}

async function run(dep: string, args: readonly string[]): Promise<Run> {
  const r = await runCli(['run', '--deployment', file(`d${Math.abs(hash(dep + args.join()))}.yaml`, dep), ...args]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  const bounds = new Map((sim.setup.deployment?.pools ?? []).map((p) => [p.target, [p.minReplicas, p.maxReplicas] as [number, number]]));
  assertInvariants({ cs: sim.cs, requests: sim.requests, setup: sim.setup, scalingBounds: { bounds } });
  return { cs: sim.cs, doc: JSON.parse(r.stdout) as Record<string, unknown>, requests: sim.requests.length };
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

const completed = (r: Run): number => (r.doc['simulation_metrics'] as Record<string, number>)['completed_requests'] as number;

describe('autoscaler beyond the reference', () => {
  // 4 replicas for a load 1-2 can carry: the saturation policy (KV demand vs supply) drains replicas that are
  // still serving, and, with few seats per replica, still queueing.
  const burst = ['--rate', '12', '--num-requests', '400', '--seed', '7', '--prompt-tokens', '1500', '--output-tokens', '300', '--max-num-seqs', '4'];
  const drainDep = (mode: string): string => deployment({ replicas: 4, min: 1, max: 4, autoscaler: `  policy: saturation\n  interval_us: 2000000\n  drain: {mode: ${mode}}\n` });

  it('drain wait loses no request; drain immediate kills what is on the drained replica and counts it', async () => {
    const wait = await run(drainDep('wait'), burst);
    expect(completed(wait)).toBe(400);
    expect(wait.cs.drainKilled).toBe(0);
    expect(wait.cs.autoscaler?.records.some((r) => r.action === 'down')).toBe(true);
    const imm = await run(drainDep('immediate'), burst);
    expect(imm.cs.drainKilled).toBeGreaterThan(0);
    expect(completed(imm) + imm.cs.drainKilled).toBe(400);
    expect((imm.doc['autoscaler'] as Record<string, number>)['drain_killed']).toBe(imm.cs.drainKilled);
  });

  it('drain redirect moves the queued requests of a drained replica to others and loses none', async () => {
    const red = await run(drainDep('redirect'), burst);
    expect(red.cs.drainRedirected).toBeGreaterThan(0);
    expect(red.cs.drainKilled).toBe(0);
    expect(completed(red)).toBe(400);
  });

  it('drain redirect of a prefill pod routes its queued prefill halves to the other prefill pods', async () => {
    const dep = `models:
  - name: ${MODEL}
    configurations:
      - name: pd
        hardware: H100
        tp: 1
        total_kv_blocks: 20000
        prefill: {replicas: 4, min_replicas: 1, max_replicas: 4}
        decode: {replicas: 4, min_replicas: 4, max_replicas: 4}
autoscaler:
  policy: threshold
  policy_params: {scale_down_queue_depth: 100, scale_down_utilization: 1, cooldown_us: 0}
  interval_us: 1000000
  drain: {mode: redirect}
`;
    const r = await run(dep, ['--pd-decider', 'always', '--routing-policy', 'weighted', '--routing-scorers', 'queue-depth:1', '--rate', '30', '--num-requests', '300',
      '--seed', '7', '--prompt-tokens', '6000', '--output-tokens', '50', '--max-num-seqs', '2', '--max-num-batched-tokens', '256']);
    expect(r.cs.drainRedirected).toBeGreaterThan(0);
    // Every parent is split once, and each ends completed or dropped at the decode pod.
    const m = r.doc['simulation_metrics'] as Record<string, number>;
    expect((m['completed_requests'] ?? 0) + (m['dropped_unservable'] ?? 0)).toBe(300);
    expect(r.cs.pd?.parents.length).toBe(300);
  });

  it('a warming replica runs slower, the penalty falling on the configured curve; without warm-up it does not', async () => {
    const load = ['--rate', '30', '--num-requests', '600', '--seed', '3', '--prompt-tokens', '800', '--output-tokens', '200'];
    const mk = (warm: string): string => deployment({ replicas: 1, min: 1, max: 2, autoscaler: `  policy: target-utilization\n  interval_us: 1000000\n${warm}` });
    const profile = { curve: 'linear' as const, durationUs: 4_000_000, initialFactor: 3 };
    const warm = await run(mk(`  warmup: {curve: linear, duration_us: ${profile.durationUs}, initial_penalty: ${profile.initialFactor}}\n`), load);
    const cold = await run(mk(''), load);
    const newReplica = (r: Run): number => r.cs.instances.findIndex((i) => i.id.startsWith('autoscale-'));
    const iw = newReplica(warm);
    const ic = newReplica(cold);
    expect(iw).toBeGreaterThan(0);
    expect(ic).toBeGreaterThan(0);
    // It went Loading -> WarmingUp -> Active, and its warm-up lasted the configured duration.
    const changes = warm.cs.lifecycle?.changes.filter((c) => c.index === iw) ?? [];
    const warming = changes.find((c) => c.to === InstanceState.WarmingUp);
    const active = changes.find((c) => c.to === InstanceState.Active);
    expect(warming).toBeDefined();
    expect((active?.clock ?? 0) - (warming?.clock ?? 0)).toBe(profile.durationUs);
    expect(cold.cs.lifecycle?.changes.some((c) => c.index === ic && c.to === InstanceState.WarmingUp)).toBe(false);
    // Mean decode ITL per window relative to the cold replica: ~the curve's factor at that window.
    const itlIn = (r: Run, idx: number, from: number, to: number): number => {
      const reqs = r.cs.instances[idx]?.metrics.requests.filter((q) => q.hasE2E && q.arrivalTime + q.ttft >= from && q.arrivalTime + q.ttft < to && q.itlCount > 0) ?? [];
      return reqs.reduce((s, q) => s + q.itlSum / q.itlCount, 0) / Math.max(reqs.length, 1);
    };
    const t0 = warming?.clock ?? 0;
    const early = itlIn(warm, iw, t0, t0 + 1_000_000);
    const late = itlIn(warm, iw, t0 + 2_000_000, t0 + 3_000_000);
    const after = itlIn(warm, iw, t0 + 5_000_000, t0 + 8_000_000);
    const coldRef = itlIn(cold, ic, t0 + 5_000_000, t0 + 8_000_000);
    expect(early).toBeGreaterThan(late);
    expect(late).toBeGreaterThan(after);
    expect(early / coldRef).toBeGreaterThan(1.5);
    expect(Math.abs(after / coldRef - 1)).toBeLessThan(0.15);
    expect(warmupFactor(profile, 500_000)).toBeGreaterThan(warmupFactor(profile, 2_500_000));
  });

  it('provisioning and model-load delays keep a new replica out of routing for their sum', async () => {
    const dep = deployment({ replicas: 1, min: 1, max: 3, autoscaler: '  policy: target-utilization\n  interval_us: 1000000\n  provisioning_delay: {distribution: constant, value: 2}\n  model_load_time: {distribution: constant, value: 3}\n' });
    const r = await run(dep, ['--rate', '30', '--num-requests', '500', '--seed', '5', '--prompt-tokens', '800', '--output-tokens', '200']);
    const ups = r.cs.autoscaler?.records.filter((x) => x.action === 'up') ?? [];
    expect(ups.length).toBeGreaterThan(0);
    for (const u of ups) {
      const i = r.cs.instances.findIndex((x) => x.id === u.instanceId);
      const became = r.cs.lifecycle?.changes.find((c) => c.index === i && c.to === InstanceState.Active);
      expect((became?.clock ?? 0) - u.clock).toBe(5_000_000);
      // Routing happens at arrival here (no admission or routing latency, no gateway queue).
      const firstRouted = Math.min(...(r.cs.instances[i]?.metrics.requests.map((q) => q.arrivalTime) ?? [Infinity]));
      expect(firstRouted).toBeGreaterThanOrEqual(became?.clock ?? Infinity);
    }
  });

  it('a diurnal load: the replica count follows it within the bounds, without oscillating under stabilization', async () => {
    const wl = file('diurnal.yaml', `version: "2"
seed: 9
aggregate_rate: 20
load_profile:
  segments:
    - {start_s: 0, end_s: 600, kind: diurnal, period_s: 300, peak_at_s: 150, peak: 2.0, trough: 0.1}
clients:
  - id: a
    rate_fraction: 1.0
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 600, std_dev: 100, min: 16, max: 2000}}
    output_distribution: {type: gaussian, params: {mean: 200, std_dev: 30, min: 1, max: 400}}
horizon: 600000000
`);
    const dep = deployment({ replicas: 1, min: 1, max: 5, autoscaler: '  policy: target-utilization\n  interval_us: 5000000\n  scale_down_stabilization_window_us: 30000000\n  model_load_time: {distribution: uniform, min: 5, max: 10}\n' });
    const r = await run(dep, ['--workload-spec', wl]);
    const timeline = (r.doc['autoscaler'] as { replica_timeline: { time_us: number; replicas: number }[] }).replica_timeline;
    const at = (t: number): number => timeline.filter((e) => e.time_us <= t).at(-1)?.replicas ?? 0;
    // Peaks at 150 s and 450 s, troughs at 0, 300 and 600 s.
    expect(at(170e6)).toBeGreaterThan(at(20e6));
    expect(at(170e6)).toBeGreaterThan(at(330e6));
    expect(at(470e6)).toBeGreaterThan(at(330e6));
    expect(Math.max(...timeline.map((e) => e.replicas))).toBeLessThanOrEqual(5);
    expect(Math.min(...timeline.map((e) => e.replicas))).toBeGreaterThanOrEqual(1);
    const counts = (r.doc['policy_anomalies'] as { counts: Record<string, number> }).counts;
    expect(counts['scale_oscillation']).toBe(0);
    const section = r.doc['autoscaler'] as Record<string, number>;
    expect(section['gpu_hours']).toBeGreaterThan(600 / 3600);
    expect(section['cost']).toBeCloseTo((section['gpu_hours'] as number) * 4, 6);
  });

  it('an event trigger scales up before the next periodic tick would', async () => {
    const load = ['--rate', '40', '--num-requests', '300', '--seed', '11', '--prompt-tokens', '1200', '--output-tokens', '200', '--max-num-seqs', '16'];
    const periodic = await run(deployment({ replicas: 1, min: 1, max: 3, autoscaler: '  policy: target-utilization\n  interval_us: 60000000\n' }), load);
    const triggered = await run(deployment({ replicas: 1, min: 1, max: 3, autoscaler: '  policy: target-utilization\n  interval_us: 60000000\n  triggers: {queue_depth: 4, min_gap_us: 1000000}\n' }), load);
    const firstUp = (r: Run): number => r.cs.autoscaler?.records.find((x) => x.action === 'up' && x.clock > 0)?.clock ?? Infinity;
    expect(triggered.cs.autoscaler?.triggersFired).toBeGreaterThan(0);
    expect(firstUp(triggered)).toBeLessThan(Math.min(firstUp(periodic), 60_000_000));
  });
});
