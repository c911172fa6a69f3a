/**
 * The time series follow the dynamic cluster: live and routable replicas as the autoscaler drains, P/D pool
 * membership, and KV transfer counters that add up to the run's own totals.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InstanceState } from '../../src/cluster/autoscaler/lifecycle.js';
import { runCli } from '../parity/harness.js';
import { assertInvariants } from '../invariants/checkers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blis-scaling-ts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

type Row = Record<string, number | string>;

describe('time series of P/D pools and the autoscaler', () => {
  it('replicas, pool.prefill/decode and pd.* follow a prefill pool drained from 4 replicas', async () => {
    const dep = path.join(dir, 'pd.yaml');
    writeFileSync(dep, `models:
  - name: ${MODEL}
    configurations:
      - name: pd
        hardware: H100
        tp: 1
        total_kv_blocks: 20000
        prefill: {replicas: 4, min_replicas: 1, max_replicas: 4}
        decode: {replicas: 3, min_replicas: 3, max_replicas: 3}
autoscaler:
  policy: threshold
  policy_params: {scale_down_queue_depth: 100, scale_down_utilization: 1, cooldown_us: 0}
  interval_us: 1000000
  drain: {mode: wait}
`);
    const out = path.join(dir, 'ts.jsonl');
    const r = await runCli(['run', '--deployment', dep, '--pd-decider', 'always', '--rate', '30', '--num-requests', '200', '--seed', '7',
      '--prompt-tokens', '3000', '--output-tokens', '50', '--timeseries-path', out, '--timeseries-interval-us', '500000']);
    expect(r.code, r.stderr).toBe(0);
    const sim = r.sims[0];
    if (sim === undefined) throw new Error('no simulation');
    assertInvariants({ cs: sim.cs, requests: sim.requests, setup: sim.setup });
    const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row).filter((x) => x['scope'] === 'cluster');
    expect(rows.length).toBeGreaterThan(4);
    const col = (name: string): number[] => rows.map((x) => x[name] as number);
    const prefill = col('pool.prefill');
    const decode = col('pool.decode');
    const replicas = col('replicas');
    const routable = col('replicas_routable');
    expect(prefill[0]).toBe(4);
    expect(Math.min(...prefill)).toBeLessThan(4);
    expect(Math.min(...prefill)).toBeGreaterThanOrEqual(1);
    expect(decode.every((v) => v === 3)).toBe(true);
    rows.forEach((_, i) => {
      expect(replicas[i]).toBe((prefill[i] as number) + (decode[i] as number));
      expect(routable[i]).toBeLessThanOrEqual(replicas[i] as number);
    });
    // Counters are written per interval: they add up to the coordinator's totals.
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    expect(sum(col('pd.transfers_started'))).toBe(sim.cs.pd?.transfersInitiated);
    expect(sum(col('pd.transfers_completed'))).toBe(sim.cs.pd?.transfersCompleted);
    expect(sim.cs.pd?.transfersCompleted).toBe(200);
    expect(Math.max(...col('pd.decode_pending'))).toBeGreaterThan(0);
    // The final live count matches the lifecycle.
    const lc = sim.cs.lifecycle;
    const live = lc === null ? sim.cs.instances.length : lc.states.filter((s) => s !== InstanceState.Terminated).length;
    expect(replicas.at(-1)).toBe(live);
  }, 120_000);

  it('a run without pools or an autoscaler keeps the single replicas column', async () => {
    const out = path.join(dir, 'plain.jsonl');
    const r = await runCli(['run', '--model', MODEL, '--num-instances', '3', '--rate', '20', '--num-requests', '60', '--timeseries-path', out]);
    expect(r.code, r.stderr).toBe(0);
    const cluster = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row).filter((x) => x['scope'] === 'cluster');
    expect(cluster.every((x) => x['replicas'] === 3)).toBe(true);
    expect(Object.keys(cluster[0] as Row).filter((k) => k.startsWith('pool.') || k.startsWith('pd.') || k === 'replicas_routable')).toEqual([]);
  }, 60_000);
});
