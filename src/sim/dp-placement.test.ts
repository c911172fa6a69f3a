/**
 * --dp-placement replicas (upstream #1531/#1555, replay #1556/#1664, EP #1548/#1683): a MoE model's --dp ranks
 * under trained-physics as that many engines at DP 1, each with one rank's KV cache, behind the router. The
 * instance count and KV blocks against a hand calculation, the flag's validation, and end to end through
 * simulate() and the CLI; the default (combined) stays the pinned reference.
 */
import { describe, expect, it } from 'vitest';
import { BlisError } from '../domain/errors.js';
import { main } from '../cli/main.js';
import { parseSimulationConfig, simulate } from './simulate.js';
import { resolveEngineFlags } from './resolve-engine.js';

const MIXTRAL = { mode: 'run', model: 'mistralai/mixtral-8x7b-v0.1', hardware: 'H100', tp: 2 } as const;

async function resolve(options: Record<string, unknown>): Promise<Awaited<ReturnType<typeof resolveEngineFlags>>> {
  const { values } = parseSimulationConfig({ ...MIXTRAL, ...options });
  return resolveEngineFlags(values, { readText: () => '', warn: () => undefined });
}

async function rejection(p: Promise<unknown>): Promise<BlisError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected a rejection');
}

describe('instances and KV blocks of a Mixtral-8x7B --dp 2 --tp 2 placement on H100', () => {
  // One rank's KV blocks, the memory formula written out in src/latency/kv-capacity-ep.test.ts: weights
  // W = 93,405,585,408 bytes (86.99 GiB); 80 GiB · 0.9 · 2 GPUs = 144 GiB less W, 8 GiB MoE activations and
  // 2 · 0.6 GiB non-torch = 47.81 GiB of 1 MiB blocks (16 tokens · 65,536 bytes per token per GPU) = 48,956 blocks.
  const GIB = 2 ** 30;
  const rankBlocks = (weightBytes: number): number => Math.trunc(Math.trunc((144 - (weightBytes / GIB + 8 + 1.2)) * GIB) / 1_048_576);
  const W = 93_405_585_408;
  // Routed experts R = 32 layers · 3 · 4096 · 14336 · 8 experts · 2 bytes.
  const R = 90_194_313_216;

  it('combined (the default, the pinned reference): one engine per instance holding both ranks\' blocks', async () => {
    const r = await resolve({ dp: 2, numInstances: 3 });
    expect(r.setup.numInstances).toBe(3);
    expect(r.setup.kv.totalBlocks).toBe(rankBlocks(W) * 2);
    expect(rankBlocks(W)).toBe(48_956);
    expect(r.latency.dpReplicas).toBeUndefined();
  });

  it('replicas: 3 instances × 2 ranks = 6 engines, each with one rank\'s 48,956 blocks (the combined total / dp)', async () => {
    const r = await resolve({ dp: 2, numInstances: 3, dpPlacement: 'replicas' });
    expect(r.setup.numInstances).toBe(6);
    expect(r.dpRanks).toBe(2);
    expect(r.setup.kv.totalBlocks).toBe(48_956);
    expect(r.latency.info.some((m) => m.includes('runs 2 engines per instance, each at DP 1 with 48956 KV blocks'))).toBe(true);
  });

  it('replicas with EP: a rank\'s 2 GPUs hold 2/4 of the routed experts of the logical tp·dp = 4 group (upstream #1656 on the logical dp)', async () => {
    // Weights charged: W − R·(1 − 2/4) = 48,308,428,800 bytes (44.99 GiB): 144 − 44.99 − 9.2 = 89.81 GiB = 91,964 blocks.
    const onWeights = W - R / 2;
    expect(onWeights).toBe(48_308_428_800);
    const r = await resolve({ dp: 2, numInstances: 1, dpPlacement: 'replicas', enableExpertParallel: true });
    expect(r.setup.numInstances).toBe(2);
    expect(r.setup.kv.totalBlocks).toBe(rankBlocks(onWeights));
    expect(rankBlocks(onWeights)).toBe(91_964);
  });

  it('warns that --moe-comm-backend does nothing to an engine at DP 1 without EP', async () => {
    const off = await resolve({ dp: 2, dpPlacement: 'replicas', moeCommBackend: 'pplx' });
    expect(off.latency.warnings.some((w) => w.startsWith('--moe-comm-backend pplx has no effect under --dp-placement replicas'))).toBe(true);
    const on = await resolve({ dp: 2, dpPlacement: 'replicas', moeCommBackend: 'pplx', enableExpertParallel: true });
    expect(on.latency.warnings.some((w) => w.includes('--moe-comm-backend'))).toBe(false);
  });

  it('an explicit --total-kv-blocks is per engine: each replica keeps it', async () => {
    const r = await resolve({ dp: 2, dpPlacement: 'replicas', totalKvBlocks: 5000 });
    expect(r.setup.numInstances).toBe(2);
    expect(r.setup.kv.totalBlocks).toBe(5000);
  });

  it('--dp 1 and a dense model (refused as before) are not re-placed; corrected-physics (MoE ranks in lockstep) refuses replicas', async () => {
    expect((await resolve({ dp: 1, dpPlacement: 'replicas' })).setup.numInstances).toBe(1);
    const cp = await rejection(resolve({ dp: 2, dpPlacement: 'replicas', latencyModel: 'corrected-physics' }));
    expect(cp.message).toMatch(/--dp-placement replicas \(independent engines\) applies to trained-physics/);
    expect((await resolve({ dp: 2, dpPlacement: 'combined', latencyModel: 'corrected-physics' })).setup.numInstances).toBe(2);
    const dense = await rejection(resolve({ model: 'meta-llama/llama-3.1-8b-instruct', tp: 1, dp: 2, dpPlacement: 'replicas' }));
    expect(dense.message).toMatch(/--dp > 1 is only supported for MoE models/);
  });
});

describe('--dp-placement validation', () => {
  it('an unknown value is one clear error naming the flag and the valid values', async () => {
    const e = await rejection(simulate({ ...MIXTRAL, dp: 2, dpPlacement: 'spread' as never, numRequests: 1 }));
    expect(e.message).toMatch(/dpPlacement/);
    expect(e.message).toMatch(/combined/);
    expect(e.message).toMatch(/replicas/);
    let err = '';
    const code = await main(['run', '--model', MIXTRAL.model, '--dp', '2', '--dp-placement', 'spread'], { stdout: () => undefined, warn: () => undefined, error: (t) => (err += t) });
    expect(code).toBe(2);
    expect(err).toMatch(/--dp-placement.*combined.*replicas/);
    expect(err.trim().split('\n')).toHaveLength(1);
  });

  it('P/D pools are refused with replicas (their sizes count engines), as upstream #1555 does', async () => {
    const e = await rejection(resolve({ dp: 2, dpPlacement: 'replicas', numInstances: 2, prefillInstances: 1, decodeInstances: 1 }));
    expect(e.message).toMatch(/--dp-placement replicas with --dp 2 is not supported with P\/D disaggregation \(--prefill-instances\)/);
  });
});

describe('--dp-placement replicas with node pools and the autoscaler', () => {
  const RUN = { ...MIXTRAL, dp: 2, numRequests: 30, rate: 10, seed: 5, dpPlacement: 'replicas' } as const;

  it('node pools place each rank as an instance of tp GPUs: one 4-GPU node holds both ranks, a 2-GPU node one', async () => {
    const pool = (gpus: number): Record<string, string> => ({ 'np.yaml': `node_pools:\n  - {name: p, gpu_type: H100, gpus_per_node: ${gpus}, gpu_memory_gib: 80, initial_nodes: 1, max_nodes: 1}\n` });
    const both = await simulate({ ...RUN, policyConfig: 'np.yaml', files: pool(4) });
    expect(both.report.instances).toHaveLength(2);
    expect(both.metrics.completed_requests).toBe(30);
    const one = await simulate({ ...RUN, policyConfig: 'np.yaml', files: pool(2) });
    expect((one.report.instances as readonly { completed_requests: number }[]).filter((i) => i.completed_requests > 0)).toHaveLength(1);
  });

  it('the autoscaler is refused (a fixed set of ranks per instance; upstream #1553\'s decision)', async () => {
    const e = await rejection(simulate({ ...RUN, modelAutoscalerIntervalUs: 1_000_000 }));
    expect(e.message).toMatch(/^dpPlacement replicas \(dp 2\) cannot be combined with the autoscaler/);
  });
});

describe('--dp-placement replicas end to end', () => {
  const RUN = { ...MIXTRAL, dp: 2, numInstances: 2, numRequests: 80, rate: 20, seed: 7 } as const;

  it('4 engines appear in the per-instance metrics and the requests are spread over them', async () => {
    const r = await simulate({ ...RUN, dpPlacement: 'replicas' });
    const insts = r.report.instances as readonly { instance_id: string; completed_requests: number }[];
    expect(insts.map((i) => i.instance_id)).toEqual(['instance_0', 'instance_1', 'instance_2', 'instance_3']);
    expect(insts.every((i) => i.completed_requests > 5)).toBe(true);
    expect(insts.reduce((s, i) => s + i.completed_requests, 0)).toBe(80);
    const combined = await simulate(RUN);
    expect(combined.report.instances).toHaveLength(2);
  });

  it('the documented directions: a rank alone loads its whole expert share per step (slower decode); EP spreads the experts again (faster)', async () => {
    const itl = async (o: Record<string, unknown>): Promise<number> => (await simulate({ ...RUN, ...o })).metrics.itl_mean_ms;
    const combined = await itl({});
    const replicas = await itl({ dpPlacement: 'replicas' });
    const replicasEp = await itl({ dpPlacement: 'replicas', enableExpertParallel: true });
    expect(replicas).toBeGreaterThan(combined);
    expect(replicasEp).toBeLessThan(replicas);
    // Under the pinned model --enable-expert-parallel does not touch trained-physics' step time.
    expect(await itl({ enableExpertParallel: true })).toBe(combined);
  });

  it('blis replay places the same engines: replaying the run\'s trace with the same flags reproduces it (upstream #1664)', async () => {
    const opts = { ...RUN, dpPlacement: 'replicas', enableExpertParallel: true } as const;
    const run = await simulate({ ...opts, outputs: { trace: true } });
    const { numRequests: _n, rate: _r, ...flags } = opts;
    const replay = await simulate({ ...flags, mode: 'replay', traceHeader: 't.yaml', traceData: 't.csv', horizon: '9223372036854775807', files: { 't.yaml': run.files.traceYaml!, 't.csv': run.files.traceCsv! } });
    expect(replay.referenceText).toBe(run.referenceText);
    expect(replay.report.instances).toHaveLength(4);
  });

  it('the CLI takes the flag and reports 4 instances', async () => {
    let out = '';
    const code = await main(['run', '--model', MIXTRAL.model, '--hardware', 'H100', '--tp', '2', '--dp', '2', '--num-instances', '2', '--dp-placement', 'replicas', '--num-requests', '20', '--rate', '10'], { stdout: (t) => (out += t), warn: () => undefined, error: () => undefined });
    expect(code).toBe(0);
    expect((JSON.parse(out) as { instances: unknown[] }).instances).toHaveLength(4);
  });
});

describe('deployment files: dp and dp_placement per configuration', () => {
  const dep = (lines: readonly string[], tail: readonly string[] = []): string => ['models:', `  - name: ${MIXTRAL.model}`, '    configurations:', '      - name: moe', '        hardware: H100',
    '        tp: 2', ...lines.map((l) => `        ${l}`), ...tail, ''].join('\n');
  const RUN = { ...MIXTRAL, numRequests: 40, rate: 10, seed: 4 } as const;
  const { tp: _tp, hardware: _hw, ...noEngine } = RUN;
  const run = (text: string, flags: Record<string, unknown> = {}): ReturnType<typeof simulate> =>
    simulate({ ...noEngine, ...flags, deployment: 'd.yaml', files: { 'd.yaml': text } });

  it('a configuration with dp 2, dp_placement replicas and 2 replicas runs 4 engines, as the flags do', async () => {
    const r = await run(dep(['dp: 2', 'dp_placement: replicas', 'replicas: 2']));
    expect(r.report.instances).toHaveLength(4);
    expect(r.metrics.completed_requests).toBe(40);
    const viaFlags = await simulate({ ...RUN, dp: 2, numInstances: 2, dpPlacement: 'replicas' });
    expect(r.metrics.e2e_mean_ms).toBe(viaFlags.metrics.e2e_mean_ms);
    // The run's flags apply to a configuration that names neither.
    expect((await run(dep(['replicas: 2']), { dp: 2, dpPlacement: 'replicas' })).report.instances).toHaveLength(4);
    expect((await run(dep(['dp: 2', 'replicas: 2']))).report.instances).toHaveLength(2);
  });

  it('refuses a bad value, a disaggregated configuration and the deployment\'s autoscaler, naming the configuration', async () => {
    await expect(run(dep(['dp_placement: spread', 'replicas: 1']))).rejects.toThrow(/dp_placement: unknown value "spread".*combined, replicas/);
    await expect(run(dep(['dp: 2', 'dp_placement: replicas', 'prefill: {replicas: 1}', 'decode: {replicas: 1}']))).rejects.toThrow(/configuration moe\/prefill: dp_placement replicas \(dp 2\) is not supported in a disaggregated configuration/);
    await expect(run(dep(['dp: 2', 'dp_placement: replicas', 'replicas: 1'], ['autoscaler:', '  interval_us: 1000000']))).rejects.toThrow(/configuration moe: dp_placement replicas \(dp 2\) cannot be combined with the autoscaler of d\.yaml/);
  });
});
