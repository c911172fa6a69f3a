/**
 * The storage KV tier (docs/kv-tiers.md) by its effects, with numbers that can fail:
 * - a working set larger than GPU+CPU but within storage: the storage tier raises the prefix hit rate and,
 *   with a channel fast enough to beat recomputing, lowers TTFT; a slow channel makes TTFT worse than
 *   recomputing (its transfer time is charged to the request's prefill step);
 * - the same workload with a GPU large enough for the working set reloads nothing and raises no cross-tier
 *   `cache_thrashing`; with the small GPU it does;
 * - the `kv_tiers` section and the trace's transfer records agree with each other;
 * - bad storage flags give one clear error each, exit 2, empty stdout.
 * Every run passes every invariant checker, the three-tier conservation included.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { RoutingSnapshot } from '../../src/routing/types.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const MODEL = ['--model', 'meta-llama/llama-3.1-70b-instruct', '--hardware', 'H100', '--tp', '4', '--max-num-batched-tokens', '8192'];
let spec = '';

/** 20 clients with their own 6000-token prefix: a working set of 20 x 375 blocks, revisited at random. */
function writeSpec(): string {
  const lines = ['version: "2"', 'seed: 7', 'aggregate_rate: 4', 'num_requests: 300', 'clients:'];
  for (let i = 0; i < 20; i++) {
    lines.push(`  - id: c${i}`, '    rate_fraction: 1', '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 64}}',
      '    output_distribution: {type: constant, params: {value: 8}}', `    prefix_group: g${i}`, '    prefix_length: 6000');
  }
  const dir = mkdtempSync(join(tmpdir(), 'blis-kv-tiers-'));
  const file = join(dir, 'spec.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

interface Run {
  readonly cs: ClusterSimulator;
  readonly doc: Record<string, unknown>;
  readonly ttftMs: number;
  readonly hitRate: number;
}

async function run(extra: readonly string[]): Promise<Run> {
  const r = await runCli(['run', ...MODEL, '--workload-spec', spec, '--output-format', 'json', '--trace-level', 'decisions', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  const doc = JSON.parse(r.stdout) as Record<string, unknown>;
  const m = doc['simulation_metrics'] as Record<string, number>;
  const kv = doc['kv_cache_metrics'] as Record<string, number>;
  return { cs: sim.cs, doc, ttftMs: m['ttft_mean_ms'] as number, hitRate: kv['cache_hit_rate'] as number };
}

function tierThrashing(doc: Record<string, unknown>): number {
  const events = (doc['policy_anomalies'] as { events: { type: string; description: string }[] }).events;
  return events.filter((e) => e.type === 'cache_thrashing' && e.description.includes('reloaded into the GPU again')).length;
}

const SMALL = ['--total-kv-blocks', '2000', '--kv-cpu-blocks', '2000'];
const STORAGE = ['--kv-storage-blocks', '20000'];

describe('storage KV tier scenarios', () => {
  beforeAll(() => {
    spec = writeSpec();
  });

  it('a working set beyond GPU+CPU that fits storage: higher hit rate; lower TTFT on a fast channel, higher on a slow one', async () => {
    const none = await run(SMALL);
    const fast = await run([...SMALL, ...STORAGE, '--kv-storage-bandwidth', '25']);
    const slow = await run([...SMALL, ...STORAGE, '--kv-storage-bandwidth', '2']);
    expect(none.doc['kv_tiers']).toBeUndefined();
    // GPU+CPU hold ~10 of the 20 prefixes (inclusive mirror: ~5); storage holds them all.
    expect(none.hitRate).toBeLessThan(0.35);
    expect(fast.hitRate).toBeGreaterThan(0.85);
    expect(slow.hitRate).toBeGreaterThan(0.85);
    // 375 blocks x 1.25 MiB (70B, TP 4: 80 KiB/token per GPU) at 25 GB/s is ~20 ms against ~35 ms of prefill.
    expect(fast.ttftMs).toBeLessThan(none.ttftMs * 0.9);
    expect(slow.ttftMs).toBeGreaterThan(none.ttftMs * 1.5);
    const cluster = (fast.doc['kv_tiers'] as { cluster: Record<string, Record<string, number>> }).cluster;
    expect(cluster['storage']?.['hit_rate']).toBeGreaterThan(0.95);
    // The working set (20 x 375 prefix blocks + each request's own blocks) is in storage, and nothing was evicted.
    expect(cluster['storage']?.['used_blocks']).toBeGreaterThan(7500);
    expect(cluster['storage']?.['utilization']).toBeLessThan(0.5);
    // The trace's records add up to the section's totals.
    const records = (fast.doc['trace'] as { kv_tier_transfers: { from: string; to: string; blocks: number; bytes: number; start_us: number; end_us: number }[] }).kv_tier_transfers;
    const sum = (from: string, to: string, k: 'blocks' | 'bytes'): number => records.filter((t) => t.from === from && t.to === to).reduce((s, t) => s + t[k], 0);
    const moved = cluster['transfers'] as Record<string, number>;
    expect(sum('storage', 'gpu', 'blocks')).toBe(moved['storage_to_gpu_blocks']);
    expect(sum('cpu', 'storage', 'blocks')).toBe(moved['cpu_to_storage_blocks']);
    expect(sum('storage', 'gpu', 'bytes')).toBe(moved['storage_to_gpu_bytes']);
    expect(moved['storage_to_gpu_bytes']).toBe((moved['storage_to_gpu_blocks'] as number) * 16 * 81920);
    expect(records.every((t) => t.end_us >= t.start_us)).toBe(true);
    // What a routing policy sees (ObservedKV) agrees with the instance's storage figures.
    const sig = fast.cs.signals;
    if (sig === null) throw new Error('traced runs keep the router state');
    sig.beginDecision(fast.cs.clock, [{ kvUtilization: 0, freeKVBlocks: 0, cacheHitRate: 0 } as unknown as RoutingSnapshot], [0]);
    const observed = sig.observedKv(0);
    const inst0 = (fast.doc['kv_tiers'] as { instances: Record<string, Record<string, number>>[] }).instances[0]?.['storage'] as Record<string, number>;
    expect(observed.storageFreeBlocks).toBe(20000 - (inst0['used_blocks'] as number));
    expect(observed.storageUtilization).toBeCloseTo(inst0['utilization'] as number, 12);
    expect(observed.storageUtilization).toBeGreaterThan(0.3);
  }, 120_000);

  it('cross-tier cache_thrashing: raised when prefixes keep cycling through the GPU, absent when the GPU holds the working set', async () => {
    const small = await run([...SMALL, ...STORAGE, '--kv-storage-bandwidth', '25']);
    const roomy = await run(['--total-kv-blocks', '12000', '--kv-cpu-blocks', '2000', ...STORAGE, '--kv-storage-bandwidth', '25']);
    expect(tierThrashing(small.doc)).toBeGreaterThan(3);
    expect(tierThrashing(roomy.doc)).toBe(0);
    const roomyMoved = (roomy.doc['kv_tiers'] as { cluster: { transfers: Record<string, number> } }).cluster.transfers;
    expect(roomyMoved['storage_to_gpu_blocks']).toBe(0);
    // A narrower cycle window sees fewer cycles.
    const narrow = await run([...SMALL, ...STORAGE, '--kv-storage-bandwidth', '25', '--kv-thrash-window-us', '1000']);
    const cycles = (d: Record<string, unknown>): number => (d['kv_tiers'] as { cluster: { transfers: Record<string, number> } }).cluster.transfers['reload_cycles'] as number;
    expect(cycles(narrow.doc)).toBeLessThan(cycles(small.doc));
  }, 120_000);
});

describe('storage KV tier flags', () => {
  const bad: [string, readonly string[], RegExp][] = [
    ['no CPU tier', ['--kv-storage-blocks', '10'], /--kv-storage-blocks needs a CPU tier/],
    ['negative capacity', ['--kv-cpu-blocks', '10', '--kv-storage-blocks', '-1'], /--kv-storage-blocks must be >= 0/],
    ['zero bandwidth', ['--kv-cpu-blocks', '10', '--kv-storage-blocks', '10', '--kv-storage-bandwidth', '0'], /--kv-storage-bandwidth must be a finite number > 0/],
    ['negative latency', ['--kv-cpu-blocks', '10', '--kv-storage-blocks', '10', '--kv-storage-latency-us', '-5'], /--kv-storage-latency-us must be a finite number >= 0/],
    ['zero window', ['--kv-cpu-blocks', '10', '--kv-storage-blocks', '10', '--kv-thrash-window-us', '0'], /--kv-thrash-window-us must be > 0/],
    ['storage setting without a storage tier', ['--kv-storage-bandwidth', '3'], /--kv-storage-bandwidth needs a storage tier/],
  ];
  for (const [name, args, msg] of bad) {
    it(`${name}: one error line, exit 2, empty stdout`, async () => {
      const r = await runCli(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '5', ...args]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      // The harness's error sink gets the message; bin/blis.js prefixes it with `error: `.
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(msg);
    });
  }
});
