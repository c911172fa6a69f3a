/**
 * The corrected forms of the P/D, encode-pool and autoscaler entries of docs/reference-differences.md (D1-D13,
 * A5): each test runs both `--semantics` modes on one scenario and asserts the reference's behaviour and the
 * corrected one with numbers (every invariant checker runs on both simulations).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Semantics } from '../../src/domain/semantics.js';
import { runCli } from '../parity/harness.js';
import { checkRun } from '../parity/invariant-hook.js';

const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
const LOAD = ['--rate', '20', '--num-requests', '120', '--seed', '101', '--prompt-tokens', '1024', '--prompt-tokens-stdev', '0', '--output-tokens', '64', '--output-tokens-stdev', '0'];

interface Ran { cs: ClusterSimulator; stdout: string; stderr: string }

async function run(argv: readonly string[], mode: Semantics): Promise<Ran> {
  const r = await runCli(['run', ...MODEL, ...argv, '--semantics', mode]);
  expect(r.code, r.stderr).toBe(0);
  const sim = r.sims[0];
  if (sim === undefined) throw new Error('no simulation');
  checkRun(sim.cs, sim.requests, sim.setup, sim.sessions);
  return { cs: sim.cs, stdout: r.stdout, stderr: r.stderr };
}

async function both(argv: readonly string[]): Promise<Record<Semantics, Ran>> {
  return { reference: await run(argv, 'reference'), corrected: await run(argv, 'corrected') };
}

/** Requests served per instance id (P/D halves count on the pod that ran them). */
function servedBy(cs: ClusterSimulator): Record<string, number> {
  return Object.fromEntries(cs.instances.map((i) => [i.id, i.metrics.completedRequests]));
}

describe('corrected P/D semantics', () => {
  it('D5: round-robin gets one policy object per pool, so every pod of each pool serves', async () => {
    const argv = ['--num-instances', '4', '--prefill-instances', '2', '--decode-instances', '2', '--pd-decider', 'always', '--routing-policy', 'round-robin', ...LOAD];
    const m = await both(argv);
    // instance_0/1 prefill, instance_2/3 decode: the shared counter alternates parity, one pod of each pool works.
    expect(servedBy(m.reference.cs)).toEqual({ instance_0: 0, instance_1: 120, instance_2: 120, instance_3: 0 });
    expect(servedBy(m.corrected.cs)).toEqual({ instance_0: 60, instance_1: 60, instance_2: 60, instance_3: 60 });
  });

  it('D10: the encode pool routes with its own policy object; decode choices no longer depend on it', async () => {
    const base = ['--routing-policy', 'round-robin', '--pd-decider', 'always', ...LOAD];
    const withEncode = ['--num-instances', '5', '--prefill-instances', '1', '--decode-instances', '2', '--encode-instances', '2', '--encode-decider', 'always', ...base];
    const m = await both(withEncode);
    const decodes = (cs: ClusterSimulator) => (cs.pd?.parents ?? []).map((p) => p.decodeIndex);
    const encodes = (cs: ClusterSimulator) => (cs.pd?.parents ?? []).map((p) => p.encodeIndex);
    // Reference: decode, prefill and encode calls share one counter: decode pods alternate only thanks to the encode call.
    expect(servedBy(m.reference.cs)).toMatchObject({ instance_0: 120, instance_1: 60, instance_2: 60, instance_3: 0, instance_4: 0 });
    // Corrected: each pool cycles on its own: decode pods 1,2,1,2,...; encode pods 3,4,3,4,...
    expect(decodes(m.corrected.cs).slice(0, 4)).toEqual([1, 2, 1, 2]);
    expect(encodes(m.corrected.cs).slice(0, 4)).toEqual([3, 4, 3, 4]);
    // Without the encode pool the corrected decode choices are the same (the encode call no longer shifts them).
    const noEncode = await run(['--num-instances', '3', '--prefill-instances', '1', '--decode-instances', '2', ...base], 'corrected');
    expect(decodes(noEncode.cs)).toEqual(decodes(m.corrected.cs));
    const refNoEncode = await run(['--num-instances', '3', '--prefill-instances', '1', '--decode-instances', '2', ...base], 'reference');
    expect(servedBy(refNoEncode.cs)).toEqual({ instance_0: 120, instance_1: 120, instance_2: 0 });
  });

  it('D3: decode-side KV drops are counted on the PD line, and dropped requests get no latencies', async () => {
    const argv = ['--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-decider', 'always', '--total-kv-blocks', '150',
      '--rate', '50', '--num-requests', '40', '--seed', '101', '--prompt-tokens', '1024', '--prompt-tokens-stdev', '0', '--output-tokens', '256', '--output-tokens-stdev', '0'];
    const m = await both(argv);
    const doc = (r: Ran) => JSON.parse(r.stdout) as { simulation_metrics: Record<string, number>; pd_metrics: Record<string, number> };
    const ref = doc(m.reference);
    const cor = doc(m.corrected);
    // 150 blocks hold one 64-block prompt being decoded plus one more: 38 of 40 decode halves find no room.
    expect(m.reference.cs.pd?.droppedAtDecodeKV).toBe(38);
    expect(ref.simulation_metrics['dropped_unservable']).toBe(38);
    expect(cor.simulation_metrics['dropped_unservable']).toBe(38);
    expect(ref.pd_metrics['dropped_at_decode_kv']).toBe(0);
    expect(cor.pd_metrics['dropped_at_decode_kv']).toBe(38);
    // The reference averages the drops' time-to-drop into E2E; corrected averages the 2 served requests only.
    expect(ref.simulation_metrics['e2e_mean_ms']).toBeLessThan(200);
    expect(cor.simulation_metrics['e2e_mean_ms']).toBeGreaterThan(2000);
    const served = (m.corrected.cs.pd?.parents ?? []).filter((p) => !p.dropped).map((p) => p.req.e2e / 1000);
    expect(served).toHaveLength(2);
    expect(cor.simulation_metrics['e2e_mean_ms']).toBeCloseTo((served[0]! + served[1]!) / 2, 3);
  });

  it('D4: the trace export records a split request\'s outcome, a routing record names its decode pod, and replay loads it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-d4-'));
    try {
      const argv = ['--num-instances', '4', '--prefill-instances', '2', '--decode-instances', '2', '--pd-decider', 'always', '--rate', '20', '--num-requests', '30',
        '--seed', '101', '--prompt-tokens', '1024', '--output-tokens', '64', '--trace-level', 'decisions', '--summarize-trace', '--output-format', 'reference'];
      const rows = (mode: string) => {
        const lines = readFileSync(path.join(dir, `${mode}.csv`), 'utf8').trim().split('\n');
        const head = (lines[0] as string).split(',');
        return lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [head[i], v])) as Record<string, string>);
      };
      const ref = await run([...argv, '--trace-output', path.join(dir, 'reference')], 'reference');
      const cor = await run([...argv, '--trace-output', path.join(dir, 'corrected')], 'corrected');
      expect(rows('reference').map((r) => r['status'])).toEqual(Array(30).fill('incomplete'));
      expect(rows('reference').every((r) => r['first_chunk_time_us'] === '0' && r['last_chunk_time_us'] === '0')).toBe(true);
      expect(ref.stdout).toContain('Unique Targets: 0\n');
      const c = rows('corrected');
      expect(c.map((r) => r['status'])).toEqual(Array(30).fill('ok'));
      // First chunk at arrival + the projected TTFT; last at arrival + E2E without the 777 µs output-token overhead.
      const parents = cor.cs.pd!.parents;
      c.forEach((r, i) => {
        const p = parents[i]!.req;
        expect(Number(r['first_chunk_time_us'])).toBe(p.arrivalTime + p.ttft);
        expect(Number(r['last_chunk_time_us'])).toBe(p.arrivalTime + p.e2e - 777);
      });
      expect(cor.stdout).toContain('Unique Targets: 2\nTarget Distribution:\n  instance_2: 15\n  instance_3: 15\n');
      const replay = await runCli(['replay', ...MODEL, '--num-instances', '4', '--prefill-instances', '2', '--decode-instances', '2', '--pd-decider', 'always',
        '--trace-header', path.join(dir, 'corrected.yaml'), '--trace-data', path.join(dir, 'corrected.csv'), '--semantics', 'corrected']);
      expect(replay.code, replay.stderr).toBe(0);
      expect((JSON.parse(replay.stdout) as { simulation_metrics: Record<string, number> }).simulation_metrics['injected_requests']).toBe(30);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('D1: a pool on another GPU runs at that GPU\'s speed', async () => {
    const argv = (gpu: string) => ['--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--prefill-hardware', gpu, '--pd-decider', 'always',
      '--rate', '2', '--num-requests', '10', '--seed', '101', '--prompt-tokens', '2048', '--prompt-tokens-stdev', '0', '--output-tokens', '64', '--output-tokens-stdev', '0'];
    const prefillTtft = (r: Ran) => r.cs.pd!.parents.map((p) => p.prefill.ttft);
    const h100 = await run(argv('H100'), 'reference');
    const l4 = await both(argv('L4'));
    // The reference times the L4 prefill pool with the H100's figures: identical prefill times.
    expect(prefillTtft(l4.reference)).toEqual(prefillTtft(h100));
    // Corrected: the L4 (121 TFLOPS, 0.3 TB/s) takes several times as long for each 2,048-token prefill.
    const ratio = prefillTtft(l4.corrected)[0]! / prefillTtft(h100)[0]!;
    expect(ratio).toBeGreaterThan(3);
    expect(prefillTtft(l4.corrected).every((t, i) => t > prefillTtft(h100)[i]! * 3)).toBe(true);
    // The decode pool stays on the H100.
    expect(l4.corrected.cs.pd!.parents.map((p) => p.decode?.itlSum)).toEqual(h100.cs.pd!.parents.map((p) => p.decode?.itlSum));
  });

  it('D2: an explicit --total-kv-blocks sizes a pool with another TP too', async () => {
    const argv = ['--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--prefill-tp', '2', '--total-kv-blocks', '5000', '--pd-decider', 'always',
      '--rate', '2', '--num-requests', '10', '--seed', '101'];
    const m = await both(argv);
    const blocks = (r: Ran) => r.cs.instances.map((i) => i.kv.totalBlocks);
    // The reference recomputes the TP-2 prefill pool's capacity from GPU memory and ignores the 5,000 given.
    const [refPrefill, refDecode] = blocks(m.reference);
    expect(refDecode).toBe(5000);
    expect(refPrefill).toBe(125_278);
    expect(blocks(m.corrected)).toEqual([5000, 5000]);
  });

  it('D7: a decode half whose deadline passed during its transfer times out at the transfer\'s end, before any step', async () => {
    // 1,024 tokens of KV at 0.1 GB/s take ~1.3 s; every deadline (arrival + 1 s) passes during the transfer.
    const argv = ['--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-decider', 'always', '--pd-transfer-bandwidth', '0.1', '--timeout', '1',
      '--rate', '2', '--num-requests', '6', '--seed', '101', '--prompt-tokens', '1024', '--prompt-tokens-stdev', '0', '--output-tokens', '64', '--output-tokens-stdev', '0'];
    const m = await both(argv);
    for (const r of [m.reference, m.corrected]) {
      const ps = r.cs.pd!.parents;
      expect(ps.every((p) => p.req.deadline < p.transferCompleteTime && p.completionTime === p.transferCompleteTime)).toBe(true);
      expect(r.cs.instances[1]!.metrics.timedOutRequests).toBe(6);
    }
    // The reference's decode pod runs a step for each expired half first: it decodes one token, then times out.
    const decoded = (r: Ran) => r.cs.pd!.parents.map((p) => p.decode!.progressIndex - 1024);
    expect(decoded(m.reference)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(decoded(m.corrected)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(m.reference.cs.instances[1]!.metrics.stepItl.length).toBeGreaterThan(0);
    expect(m.corrected.cs.instances[1]!.metrics.stepItl.length).toBe(0);
  });

  it('D6: the transferred blocks are owned once: the prefill pod keeps no cached copy (unless --pd-kv-ownership duplicate)', async () => {
    const argv = ['--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-decider', 'always', '--rate', '5', '--num-requests', '40', '--seed', '101',
      '--prefix-tokens', '512', '--prompt-tokens', '512', '--prompt-tokens-stdev', '0', '--output-tokens', '32', '--output-tokens-stdev', '0'];
    const m = await both(argv);
    // Reference: every prompt after the first hits the shared 512-token prefix on the prefill pod (39 of 40 half the blocks).
    expect(m.reference.cs.instances[0]!.metrics.cacheHitRate).toBe(0.4875);
    expect(m.reference.cs.pd!.parents.map((p) => p.prefill.ttft).slice(0, 3)).toEqual([24767, 23594, 23594]);
    // Corrected: the blocks moved to the decode pod; the prefill pod recomputes every prompt.
    expect(m.corrected.cs.instances[0]!.metrics.cacheHitRate).toBe(0);
    expect(m.corrected.cs.pd!.parents.every((p) => p.prefill.ttft === 24767)).toBe(true);
    // The option still chooses: duplicate in corrected mode gives the reference's prefill hits back.
    const dup = await run([...argv, '--pd-kv-ownership', 'duplicate'], 'corrected');
    expect(dup.cs.instances[0]!.metrics.cacheHitRate).toBe(0.4875);
  });

  it('A5: both halves of a split request carry its LoRA adapter (cold loads on both pods)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-a5-'));
    try {
      writeFileSync(path.join(dir, 'lora.yaml'), 'lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: a1, rank: 16}\n    - {id: a2, rank: 16}\n');
      const client = (id: string, adapter: string) => `  - {id: ${id}, adapter: ${adapter}, rate_fraction: 0.5, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 512}}, output_distribution: {type: constant, params: {value: 32}}}\n`;
      writeFileSync(path.join(dir, 'w.yaml'), `version: "2"\nseed: 5\naggregate_rate: 10\nnum_requests: 60\nclients:\n${client('c1', 'a1')}${client('c2', 'a2')}`);
      const argv = ['--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--pd-decider', 'always',
        '--lora-config', path.join(dir, 'lora.yaml'), '--workload-spec', path.join(dir, 'w.yaml')];
      const m = await both(argv);
      type Doc = { simulation_metrics: Record<string, unknown>; instances: { adapters?: Record<string, { load_count: number }> }[] };
      const doc = (r: Ran) => JSON.parse(r.stdout) as Doc;
      const loads = (r: Ran) => doc(r).instances.map((i) => (i.adapters === undefined ? null : [i.adapters['a1']?.load_count, i.adapters['a2']?.load_count]));
      // Reference: the halves have no adapter: no pod loads one, and TTFT is that of an adapter-free run.
      expect(loads(m.reference)).toEqual([null, null]);
      // Corrected: one slot per pod and two alternating adapters: 15 cold loads of each on each pod.
      expect(loads(m.corrected)).toEqual([[15, 15], [15, 15]]);
      const ttft = (r: Ran) => doc(r).simulation_metrics['ttft_mean_ms'] as number;
      expect(ttft(m.reference)).toBeLessThan(30);
      expect(ttft(m.corrected)).toBeGreaterThan(10 * ttft(m.reference));
      expect(m.corrected.cs.pd!.parents.every((p) => p.prefill.adapter === p.req.adapter && p.decode!.adapter === p.req.adapter)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('D10: encode work runs on the encode pod before the prefill, taking a lone prefill of the media tokens', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-d10-'));
    try {
      writeFileSync(path.join(dir, 'w.yaml'), `version: "2"
seed: 31
aggregate_rate: 8
num_requests: 80
clients:
  - id: vision
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 50}}
    multimodal:
      text_distribution: {type: constant, params: {value: 100}}
      image_distribution: {type: constant, params: {value: 2000}}
      image_count_distribution: {type: constant, params: {value: 1}}
  - id: text
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 50}}
`);
      const argv = ['--num-instances', '4', '--prefill-instances', '1', '--decode-instances', '2', '--encode-instances', '1', '--pd-decider', 'always', '--encode-decider', 'multimodal',
        '--workload-spec', path.join(dir, 'w.yaml'), '--horizon', '60000000'];
      const m = await both(argv);
      const media = (r: Ran) => r.cs.pd!.parents.filter((p) => p.req.imageTokens > 0);
      const text = (r: Ran) => r.cs.pd!.parents.filter((p) => p.req.imageTokens === 0);
      expect(media(m.reference).length).toBeGreaterThan(20);
      // Reference: the prefill is routed the moment the request arrives; the encode pod does nothing.
      expect(media(m.reference).every((p) => p.prefillEnqueueTime === p.req.arrivalTime)).toBe(true);
      expect(m.reference.cs.pd!.encode!.jobs).toBe(0);
      // Corrected: each image request waits for its encode job (a lone 2,000-token prefill on the encode pod,
      // queued first come first served there); text requests skip it.
      const ttft = (ps: readonly { req: { ttft: number } }[]) => ps.reduce((n, p) => n + p.req.ttft, 0) / ps.length;
      const enc = m.corrected.cs.pd!.encode!;
      expect(enc.jobs).toBe(media(m.corrected).length);
      const job = enc.busyUs / enc.jobs;
      expect(job).toBeGreaterThan(10_000);
      expect(media(m.corrected).every((p) => p.prefillEnqueueTime - p.req.arrivalTime >= job)).toBe(true);
      expect(text(m.corrected).every((p) => p.prefillEnqueueTime === p.req.arrivalTime)).toBe(true);
      expect(ttft(media(m.corrected)) - ttft(media(m.reference))).toBeGreaterThanOrEqual(job);
      // Requests served whole (decider never) wait for their encode job too, then join their decode pod's queue.
      const whole = await both(argv.map((a) => (a === 'always' ? 'never' : a)));
      const waits = (r: Ran) => new Map(r.cs.instances.flatMap((i) => i.metrics.requests).filter((q) => q.imageTokens > 0).map((q) => [q.id, q.enqueueTime - q.arrivalTime]));
      expect(whole.corrected.cs.pd!.encode!.jobs).toBe(enc.jobs);
      const ref = waits(whole.reference);
      const cor = waits(whole.corrected);
      expect(cor.size).toBe(ref.size);
      for (const [id, w] of cor) expect(w - (ref.get(id) as number)).toBeGreaterThanOrEqual(job);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('D11: --encode-hardware / --encode-tp configure the encode pods: corrected encode jobs run at that GPU\'s speed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-d11-'));
    try {
      writeFileSync(path.join(dir, 'w.yaml'), `version: "2"
seed: 31
aggregate_rate: 4
num_requests: 20
clients:
  - id: vision
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 100}}
    output_distribution: {type: constant, params: {value: 50}}
    multimodal:
      text_distribution: {type: constant, params: {value: 100}}
      image_distribution: {type: constant, params: {value: 2000}}
      image_count_distribution: {type: constant, params: {value: 1}}
`);
      const argv = ['--num-instances', '3', '--prefill-instances', '1', '--decode-instances', '1', '--encode-instances', '1', '--pd-decider', 'always', '--encode-decider', 'multimodal',
        '--workload-spec', path.join(dir, 'w.yaml')];
      const h100 = await both(argv);
      const l4 = await both([...argv, '--encode-hardware', 'L4', '--encode-tp', '2']);
      const times = (r: Ran) => r.cs.pd!.parents.map((p) => [p.prefillEnqueueTime, p.completionTime]);
      // Reference: encode pods do no work, so their configuration changes no result.
      expect(times(l4.reference)).toEqual(times(h100.reference));
      // The encode pod runs at TP 2 on the L4 in both modes (what node-pool placement reads).
      expect(l4.reference.cs.instances[2]!.kv.totalBlocks).not.toBe(h100.reference.cs.instances[2]!.kv.totalBlocks);
      // Corrected: each encode job is priced on the encode pod's own GPU and TP.
      const job = (r: Ran) => r.cs.pd!.encode!.busyUs / r.cs.pd!.encode!.jobs;
      expect(h100.corrected.cs.pd!.encode!.jobs).toBe(20);
      expect(job(l4.corrected)).toBeGreaterThan(1.5 * job(h100.corrected));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('D11: --encode-tp / --encode-hardware without an encode pool are refused', async () => {
    const r = await runCli(['run', ...MODEL, '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1', '--encode-tp', '2', ...LOAD]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--encode-tp needs an encode pool: set --encode-instances');
  });

  it('D13: the transfer starts when the prefill step ends, not when it starts', async () => {
    // Blackbox steps of at least 5 ms and no output-token overhead: a prefill half's TTFT ends exactly at the end
    // of the step that computed its prompt.
    const argv = ['--latency-model', 'blackbox', '--alpha-coeffs', '0,0,0', '--beta-coeffs', '5000,0.5,1', '--num-instances', '2', '--prefill-instances', '1', '--decode-instances', '1',
      '--pd-decider', 'always', ...LOAD];
    const { reference: ref, corrected: cor } = await both(argv);
    const gaps = (cs: ClusterSimulator): number[] => (cs.pd?.parents ?? []).filter((p) => p.transferStartTime > 0).map((p) => p.req.arrivalTime + p.prefill.ttft - p.transferStartTime);
    const refGaps = gaps(ref.cs);
    expect(refGaps).toHaveLength(120);
    // Reference: stamped at the step's start, a whole step (>= 5 ms) before the prompt's computation ends.
    expect(refGaps.every((g) => g >= 5000)).toBe(true);
    expect(gaps(cor.cs)).toEqual(new Array(120).fill(0));
    const ttftP99 = (r: Ran): number => (JSON.parse(r.stdout) as { simulation_metrics: Record<string, number> }).simulation_metrics['ttft_p99_ms'] as number;
    expect(ttftP99(cor)).toBeGreaterThan(ttftP99(ref) + 5);
  });
});
