/**
 * Seeded property test over random E/P/D deployments and random multimodal workloads: pool sizes (prefill,
 * decode, shared and encode pods, spare pods), the P/D and encode deciders, the routing policy, node pools too
 * small to place every pod (so encode pods, or decode pods, can be missing: encode and routing rejections), and
 * multimodal clients (image, audio, video or text only). Every run goes through the CLI, must keep every
 * invariant — INV-1 with its encode_routing_rejections term and the encode-pool checks — and print the same
 * bytes when run twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const MODEL = ['--model', 'qwen/qwen2.5-7b-instruct', '--hardware', 'H100', '--tp', '1'];
const dir = mkdtempSync(path.join(tmpdir(), 'blis-epd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ClientGen { image: boolean; audio: boolean; video: boolean; weight: number; out: number }
interface Gen {
  prefill: number; decode: number; shared: number; encode: number; spare: number;
  pdDecider: string; encodeDecider: string; routing: string; gpus: number | null; trace: boolean;
  clients: ClientGen[]; requests: number; rate: number; seed: number;
}

const genArb: fc.Arbitrary<Gen> = fc.record({
  prefill: fc.integer({ min: 0, max: 2 }),
  decode: fc.integer({ min: 0, max: 2 }),
  shared: fc.integer({ min: 0, max: 2 }),
  encode: fc.integer({ min: 1, max: 3 }),
  spare: fc.integer({ min: 0, max: 1 }),
  pdDecider: fc.constantFrom('never', 'always', 'prefix-threshold'),
  encodeDecider: fc.constantFrom('multimodal', 'multimodal', 'always', 'never'),
  routing: fc.constantFrom('round-robin', 'least-loaded', 'weighted'),
  gpus: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null, freq: 2 }),
  trace: fc.boolean(),
  clients: fc.array(fc.record({ image: fc.boolean(), audio: fc.boolean(), video: fc.boolean(), weight: fc.integer({ min: 1, max: 5 }), out: fc.integer({ min: 4, max: 150 }) }), { minLength: 1, maxLength: 3 }),
  requests: fc.integer({ min: 5, max: 60 }),
  rate: fc.constantFrom(5, 20, 80),
  seed: fc.integer({ min: 1, max: 10_000 }),
}).filter((g) => g.shared > 0 || (g.prefill > 0 && g.decode > 0));

function workloadYaml(g: Gen): string {
  const total = g.clients.reduce((s, c) => s + c.weight, 0);
  const lines = ['version: "2"', `seed: ${g.seed}`, 'category: multimodal', `aggregate_rate: ${g.rate}`, `num_requests: ${g.requests}`, 'clients:'];
  g.clients.forEach((c, i) => {
    lines.push(`  - id: "c${i}"`, `    tenant_id: "t${i}"`, `    rate_fraction: ${c.weight / total}`, '    arrival: {process: poisson}',
      '    input_distribution: {type: gaussian, params: {mean: 200, std_dev: 80, min: 8, max: 900}}',
      `    output_distribution: {type: exponential, params: {mean: ${c.out}}}`);
    if (!c.image && !c.audio && !c.video) return;
    lines.push('    multimodal:', '      text_distribution: {type: constant, params: {value: 60}}');
    if (c.image) lines.push('      image_distribution: {type: gaussian, params: {mean: 500, std_dev: 100, min: 100, max: 900}}', '      image_count_distribution: {type: empirical, params: {"1": 0.6, "2": 0.4}}');
    if (c.audio) lines.push('      audio_distribution: {type: exponential, params: {mean: 300}}', '      audio_count_distribution: {type: constant, params: {value: 1}}');
    if (c.video) lines.push('      video_distribution: {type: constant, params: {value: 400}}', '      video_count_distribution: {type: constant, params: {value: 1}}');
  });
  return `${lines.join('\n')}\n`;
}

let n = 0;
function argvFor(g: Gen): string[] {
  const k = n++;
  const spec = path.join(dir, `w${k}.yaml`);
  writeFileSync(spec, workloadYaml(g));
  const total = g.prefill + g.decode + g.shared + g.encode + g.spare;
  const argv = ['run', ...MODEL, '--num-instances', String(total), '--prefill-instances', String(g.prefill), '--decode-instances', String(g.decode),
    '--prefill-decode-instances', String(g.shared), '--encode-instances', String(g.encode), '--pd-decider', g.pdDecider,
    '--encode-decider', g.encodeDecider, '--routing-policy', g.routing, '--workload-spec', spec, '--seed', String(g.seed), '--total-kv-blocks', '3000'];
  if (g.trace) argv.push('--trace-level', 'decisions', '--counterfactual-k', '2');
  if (g.gpus !== null) {
    // One node with too few GPUs for every pod: the pods past them (the encode pool first) are never placed.
    const bundle = path.join(dir, `b${k}.yaml`);
    writeFileSync(bundle, `node_pools:\n  - {name: p, gpu_type: H100, gpus_per_node: ${g.gpus}, gpu_memory_gib: 80, initial_nodes: 1, min_nodes: 0, max_nodes: 1, provisioning_delay: {mean: 0, stddev: 0}, cost_per_hour: 1}\n`);
    argv.push('--policy-config', bundle);
  }
  return argv;
}

describe('random E/P/D deployments on random multimodal workloads', () => {
  it('keep INV-1 with the encode term and the encode-pool invariants, deterministically', async () => {
    const seen = { encoded: 0, encodeRejected: 0, split: 0, multimodalSkipped: 0 };
    await fc.assert(
      fc.asyncProperty(genArb, async (g) => {
        const argv = argvFor(g);
        const a = await runCli(argv);
        expect(a.code, a.stderr).toBe(0);
        const sim = a.sims[0];
        if (sim === undefined) throw new Error('no simulation');
        checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
        const b = await runCli(argv);
        expect(b.stdout).toBe(a.stdout);
        const cs = sim.cs;
        seen.encoded += cs.pd?.encode?.routed ?? 0;
        seen.encodeRejected += cs.encodeRoutingRejections;
        seen.split += cs.pd?.parents.length ?? 0;
        if (g.encodeDecider === 'multimodal') seen.multimodalSkipped += sim.requests.filter((r) => r.imageTokens + r.audioTokens + r.videoTokens === 0).length;
        // The JSON output carries the counter too.
        const doc = JSON.parse(a.stdout) as Record<string, unknown>;
        const anomalies = (doc['anomaly_counters'] ?? {}) as Record<string, unknown>;
        expect(anomalies['encode_routing_rejections'] ?? 0).toBe(cs.encodeRoutingRejections);
      }),
      { numRuns: 80, seed: 20261126, endOnFailure: true },
    );
    // The generator reaches what it is for: requests through the encode pool, requests lost there, P/D splits,
    // and text-only requests the multimodal decider leaves alone.
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(0);
  }, 600_000);
});
