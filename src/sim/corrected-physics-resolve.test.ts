import { describe, expect, it } from 'vitest';
import { parseSimulationConfig } from './simulate.js';
import { checkLockstepScaling, resolveEngineFlags } from './resolve-engine.js';
import { buildCluster } from './engine-setup.js';
import type { LockstepGroup } from '../instance/lockstep.js';

const PROFILE = `kind: latency-profile
version: 1
latency_model: corrected-physics
model: meta-llama/llama-3.1-70b-instruct
tp: 2
coefficients: {step_us: 400, frontend_us: 5000}
`;

async function resolve(options: Record<string, unknown>, files: Record<string, string> = {}): Promise<{ r: Awaited<ReturnType<typeof resolveEngineFlags>>; warnings: string[] }> {
  const { values } = parseSimulationConfig({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1, ...options });
  const warnings: string[] = [];
  const r = await resolveEngineFlags(values, {
    readText: (p) => {
      const t = files[p];
      if (t === undefined) throw new Error(`no file ${p}`);
      return t;
    },
    warn: (m) => warnings.push(m),
  });
  return { r, warnings };
}

describe('resolving corrected-physics', () => {
  it('a latency profile selects corrected-physics with its coefficients and warns where it was fitted elsewhere', async () => {
    const { r } = await resolve({ latencyProfile: 'p.yaml' }, { 'p.yaml': PROFILE });
    expect(r.latency.backend).toBe('corrected-physics');
    // The profile's coefficients; request_us, which it does not name, keeps the default.
    expect(r.latency.latency.linear?.coefficients).toEqual([1, 1, 1, 1, 400, 8, 5000]);
    expect(r.latency.latency.queueingTime({} as never)).toBe(5000);
    expect(r.latency.warnings.some((w) => w.includes('fitted on model meta-llama/llama-3.1-70b-instruct'))).toBe(true);
    expect(r.latency.warnings.some((w) => w.includes('fitted at tp=2, not tp=1'))).toBe(true);
  });

  it('refuses a profile with another latency model, and coefficients flags with corrected-physics', async () => {
    await expect(resolve({ latencyProfile: 'p.yaml', latencyModel: 'trained-physics' }, { 'p.yaml': PROFILE })).rejects.toThrow(/cannot be combined with --latency-model trained-physics/);
    await expect(resolve({ latencyModel: 'corrected-physics', alphaCoeffs: [1, 2, 3], betaCoeffs: [1, 2, 3] })).rejects.toThrow(/takes no --alpha-coeffs\/--beta-coeffs/);
    await expect(resolve({ latencyProfile: 'p.yaml' }, { 'p.yaml': PROFILE.replace('step_us: 400', 'step_us: -4') })).rejects.toThrow(/p\.yaml:6:\d+: coefficients\.step_us: must be a finite number >= 0/);
  });

  it('the mixed-step decode tile comes with vLLM V1\'s single attention call, not with V0\'s separate decode kernel', async () => {
    const compute = async (engineProfile: string, prefill: boolean): Promise<number> => {
      const { r } = await resolve({ latencyModel: 'corrected-physics', hardware: 'A100-80', engineProfile });
      const n = prefill ? 3 : 2;
      const b = { count: n, progress: new Int32Array([500, 800, 0].slice(0, n)), newTokens: new Int32Array([1, 1, 256].slice(0, n)), inputLen: new Int32Array([100, 100, 1000].slice(0, n)), outputLen: new Int32Array(n).fill(10) };
      const g = new Float64Array(7);
      r.latency.latency.linear!.stepGradient(b, g);
      return g[0]! + g[2]!;
    };
    expect(await compute('vllm-v1', true)).toBeGreaterThan(await compute('vllm-v0', true));
    expect(await compute('vllm-v1', false)).toBe(await compute('vllm-v0', false));
  });

  it('--moe-comm-backend: read by corrected-physics, a typo refused naming the field, refused with roofline', async () => {
    const moe = { latencyModel: 'corrected-physics', model: 'qwen/qwen3-30b-a3b', hardware: 'H100', tp: 1, dp: 2, enableExpertParallel: true };
    await expect(resolve({ ...moe, moeCommBackend: 'deepep_low_latency' })).resolves.toBeDefined();
    // The library's config schema refuses a typo at the edge (the CLI's flag check: test/cli/moe-comm-backend.test.ts).
    await expect(resolve({ ...moe, moeCommBackend: 'deepep_lowlatency' })).rejects.toThrow(/moeCommBackend: unknown moe comm backend "deepep_lowlatency"; valid: naive, allgather_reducescatter/);
    await expect(resolve({ ...moe, latencyModel: 'roofline', dp: 1, enableExpertParallel: false, moeCommBackend: 'pplx' })).rejects.toThrow(/--moe-comm-backend requires --latency-model trained-physics or corrected-physics \(got roofline\)/);
  });

  it('schedules asynchronously by default (vLLM V1) and keeps the reference models synchronous', async () => {
    expect((await resolve({ latencyModel: 'corrected-physics' })).r.setup.schedulingMode).toBe('async');
    expect((await resolve({})).r.setup.schedulingMode).toBe('sync');
    expect((await resolve({ latencyModel: 'corrected-physics', schedulingMode: 'prefill-first' })).r.setup.schedulingMode).toBe('prefill-first');
  });

  it('runs each data-parallel rank as its own engine with its own KV cache, dense models included', async () => {
    const one = (await resolve({ latencyModel: 'corrected-physics', numInstances: 2 })).r;
    const dp = (await resolve({ latencyModel: 'corrected-physics', numInstances: 2, dp: 4 })).r;
    expect(dp.dpRanks).toBe(4);
    expect(dp.setup.numInstances).toBe(8);
    expect(dp.setup.kv.totalBlocks).toBe(one.setup.kv.totalBlocks);
    await expect(resolve({ dp: 2 })).rejects.toThrow(/only supported for MoE models.*corrected-physics/);
  });

  it('groups a MoE model\'s --dp ranks in lockstep (vLLM couples them); a dense model\'s stay independent engines', async () => {
    const moe = { latencyModel: 'corrected-physics', model: 'mistralai/mixtral-8x7b-v0.1', tp: 2, numInstances: 3 };
    const grouped = (await resolve({ ...moe, dp: 2 })).r;
    expect(grouped.setup.numInstances).toBe(6);
    expect(grouped.setup.lockstepRanks).toBe(2);
    expect(grouped.setup.latency.lockstep).toBeDefined();
    // One group per logical instance: ranks 2g and 2g + 1.
    const cs = buildCluster({ ...grouped.setup, horizon: 1e9 });
    expect(cs.instances.map((i) => (i.lockstep as LockstepGroup).ranks.map((r) => r.id).join('+'))).toEqual(['instance_0+instance_1', 'instance_0+instance_1', 'instance_2+instance_3', 'instance_2+instance_3', 'instance_4+instance_5', 'instance_4+instance_5']);
    // DP 1, a dense model at DP 2, and the reference's latency models: no group.
    expect((await resolve({ ...moe, dp: 1 })).r.setup.lockstepRanks).toBeUndefined();
    const dense = (await resolve({ latencyModel: 'corrected-physics', dp: 2 })).r;
    expect(dense.setup.numInstances).toBe(2);
    expect(dense.setup.lockstepRanks).toBeUndefined();
    expect(dense.setup.latency.lockstep).toBeUndefined();
    expect((await resolve({ model: 'mistralai/mixtral-8x7b-v0.1', tp: 2, dp: 2 })).r.setup.lockstepRanks).toBeUndefined();
  });

  it('refuses what lockstep ranks do not model, naming the flags', async () => {
    const moe = { latencyModel: 'corrected-physics', model: 'mistralai/mixtral-8x7b-v0.1', tp: 2, dp: 2 };
    await expect(resolve({ ...moe, numInstances: 2, prefillInstances: 1, decodeInstances: 1 })).rejects.toThrow(/--dp 2 cannot be combined with P\/D disaggregation \(--prefill-instances\)/);
    await expect(resolve({ ...moe, dpPlacement: 'replicas' })).rejects.toThrow(/--dp-placement replicas \(independent engines\) applies to trained-physics; .* step in lockstep/);
    expect((await resolve({ ...moe, dpPlacement: 'combined' })).r.setup.lockstepRanks).toBe(2);
    await expect(resolve({ ...moe, loraConfig: 'l.yaml' }, { 'l.yaml': 'lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: sql, rank: 8}\n' })).rejects.toThrow(/--dp 2 cannot be combined with --lora-config/);
    expect(() => checkLockstepScaling(2, { autoscaler: {} })).toThrow(/--dp 2 cannot be combined with node pools or the autoscaler/);
    expect(() => checkLockstepScaling(2, null)).not.toThrow();
    expect(() => checkLockstepScaling(undefined, { autoscaler: {} })).not.toThrow();
  });

  it('sizes KV per GPU: at TP 4 corrected-physics holds about a quarter of the reference\'s tp²-grown count', async () => {
    const ref = (await resolve({ model: 'meta-llama/llama-3.1-70b-instruct', tp: 4 })).r.setup.kv.totalBlocks;
    const fixed = (await resolve({ model: 'meta-llama/llama-3.1-70b-instruct', tp: 4, latencyModel: 'corrected-physics' })).r.setup.kv.totalBlocks;
    expect(Math.abs(fixed * 4 - ref)).toBeLessThanOrEqual(4);
  });

  it('reads interconnect and efficiency from a --hardware-config entry, and names a bad field', async () => {
    const hw = JSON.stringify({
      MyGPU: {
        TFlopsPeak: 400, BwPeakTBs: 2, MemoryGiB: 48,
        interconnect: { intraNode: { kind: 'pcie4', small: { latencyUs: 20, busBandwidthGBs: 10 }, large: { latencyUs: 30, busBandwidthGBs: 20 } }, interNode: { small: { latencyUs: 40, busBandwidthGBs: 5 }, large: { latencyUs: 60, busBandwidthGBs: 10 } } },
        efficiency: { gemm: 0.6, attention: 0.5, weightRead: 0.8, kvRead: 0.7 },
      },
    });
    const { r } = await resolve({ latencyModel: 'corrected-physics', hardware: 'MyGPU', hardwareConfig: 'hw.json' }, { 'hw.json': hw });
    expect(r.latency.hardwareConfig?.physics?.efficiency.gemm).toBe(0.6);
    expect(r.latency.hardwareConfig?.physics?.interconnect.gpusPerNode).toBe(8);
    await expect(resolve({ latencyModel: 'corrected-physics', hardware: 'MyGPU', hardwareConfig: 'hw.json' }, { 'hw.json': hw.replace('"gemm":0.6', '"gemm":1.6') })).rejects.toThrow(/MyGPU\.efficiency\.gemm/);
    // A user GPU without physics is refused, naming what to add (never another GPU's physics).
    const plainHw = { 'hw.json': JSON.stringify({ Plain: { TFlopsPeak: 400, BwPeakTBs: 2, MemoryGiB: 48 } }) };
    await expect(resolve({ latencyModel: 'corrected-physics', hardware: 'Plain', hardwareConfig: 'hw.json' }, plainHw)).rejects.toThrow(/hw\.json: GPU "Plain" is not a catalog GPU.*"class" \(ampere, ada, hopper, blackwell, blackwell-gddr\) or "efficiency"/);
    // Reference-mode backends never read the physics: the same entry runs there unchanged.
    const ref = await resolve({ hardware: 'Plain', hardwareConfig: 'hw.json' }, plainHw);
    expect(ref.r.latency.backend).toBe('trained-physics');
  });
});

describe('GPU physics of --hardware-config entries (never another GPU\'s)', () => {
  const datasheet = { TFlopsPeak: 503.8, TFlopsFP8: 1007.6, BwPeakTBs: 1.792, MemoryGiB: 96 };
  const run = async (gpu: string, entry: Record<string, unknown>, tp = 1, model = 'meta-llama/llama-3.1-8b-instruct'): ReturnType<typeof resolve> =>
    resolve({ latencyModel: 'corrected-physics', hardware: gpu, tp, model, hardwareConfig: 'hw.json' }, { 'hw.json': JSON.stringify({ [gpu]: { ...datasheet, ...entry } }) });

  it('a catalog GPU under another spelling gets that GPU\'s physics (the issue\'s RTXPRO6000 case)', async () => {
    const { r } = await run('RTXPRO6000', {}, 2);
    const phys = r.latency.hardwareConfig?.physics;
    // The catalog prices the card's collectives without P2P (gpu-physics.ts: NCCL's P2P path needs host changes).
    expect(phys?.interconnect.intraNode.kind).toBe('pcie5-no-p2p');
    expect(phys?.efficiency).toEqual({ gemm: 0.73, attention: 0.41, weightRead: 0.8, kvRead: 0.8 });
    expect(r.latency.info.join('\n')).toMatch(/corrected-physics GPU RTXPRO6000: the catalog's RTX-PRO-6000: efficiency gemm 0.73,.*intra-node pcie5-no-p2p \(small messages 40 µs \+ 10 GB\/s, large 40 µs \+ 17.5 GB\/s\)/);
  });

  it('a host with working P2P says so in its entry: the catalog card keeps its efficiencies and gets the P2P link', async () => {
    const { r } = await run('RTX-PRO-6000', { PCIeGen: 5, PCIeP2P: true }, 2);
    const phys = r.latency.hardwareConfig?.physics;
    expect(phys?.interconnect.intraNode).toEqual({ kind: 'pcie5', small: { latencyUs: 12, busBandwidthGBs: 20 }, large: { latencyUs: 20, busBandwidthGBs: 35 }, customAllReduceMaxGpus: 2 });
    expect(phys?.efficiency).toEqual({ gemm: 0.73, attention: 0.41, weightRead: 0.8, kvRead: 0.8 });
    expect(r.latency.info.join('\n')).toMatch(/the catalog's RTX-PRO-6000 with PCIe 5:/);
  });

  it('derives efficiencies from the class and the link from PCIeGen / NVLinkGBs, and prints them at --log info', async () => {
    const { r } = await run('MyCard', { class: 'ada', PCIeGen: 4 }, 2);
    expect(r.latency.hardwareConfig?.physics?.efficiency).toEqual({ gemm: 0.7, attention: 0.5, weightRead: 0.8, kvRead: 0.75 });
    expect(r.latency.hardwareConfig?.physics?.interconnect.intraNode).toEqual({ kind: 'pcie4', small: { latencyUs: 15, busBandwidthGBs: 10 }, large: { latencyUs: 25, busBandwidthGBs: 18 }, customAllReduceMaxGpus: 2 });
    expect(r.latency.info.join('\n')).toMatch(/corrected-physics GPU MyCard: derived from class ada and PCIe 4: efficiency gemm 0.7, attention 0.5, weightRead 0.8, kvRead 0.75, a decode in a mixed step fills 64 query rows; intra-node pcie4 \(small messages 15 µs \+ 10 GB\/s, large 25 µs \+ 18 GB\/s\), 8 GPUs per node, inter-node roce-200g/);
    const nv = await run('MySXM', { class: 'hopper', NVLinkGBs: 900 }, 2);
    // NVLink 4 (900 GB/s bidirectional) reproduces the catalog H100 NVSwitch figures.
    expect(nv.r.latency.hardwareConfig?.physics?.interconnect.intraNode.large).toEqual({ latencyUs: 13.5, busBandwidthGBs: 360 });
    expect(nv.r.latency.hardwareConfig?.physics?.interconnect.intraNode.small).toEqual({ latencyUs: 8.5, busBandwidthGBs: 57 });
    const noP2P = await run('MyCard', { class: 'ada', PCIeGen: 4, PCIeP2P: false }, 2);
    expect(noP2P.r.latency.hardwareConfig?.physics?.interconnect.intraNode).toEqual({ kind: 'pcie4-no-p2p', small: { latencyUs: 40, busBandwidthGBs: 5 }, large: { latencyUs: 50, busBandwidthGBs: 9 } });
  });

  it('PCIe P2P defaults: the class\'s (workstation Blackwell off), else the catalog card\'s, else on; "PCIeP2P" wins', async () => {
    const kind = async (gpu: string, entry: Record<string, unknown>): Promise<string | undefined> => (await run(gpu, entry, 2)).r.latency.hardwareConfig?.physics?.interconnect.intraNode.kind;
    expect(await kind('MyCard', { class: 'blackwell-gddr', PCIeGen: 5 })).toBe('pcie5-no-p2p');
    expect(await kind('MyCard', { class: 'blackwell-gddr', PCIeGen: 5, PCIeP2P: true })).toBe('pcie5');
    expect(await kind('MyCard', { class: 'ada', PCIeGen: 4 })).toBe('pcie4');
    expect(await kind('RTX-PRO-6000', { PCIeGen: 4 })).toBe('pcie4-no-p2p');
    expect(await kind('RTX-4090', { PCIeGen: 5 })).toBe('pcie5-no-p2p');
    expect(await kind('L40S', { PCIeGen: 5 })).toBe('pcie5');
    expect((await run('MyCard', { class: 'blackwell-gddr', PCIeGen: 5 }, 2)).r.latency.info.join('\n')).toMatch(/derived from class blackwell-gddr and PCIe 5 without P2P/);
  });

  it('the mixed-step decode tile follows the class (FlashAttention-2 classes 64 rows, Hopper none) and an entry can set it', async () => {
    const tile = async (entry: Record<string, unknown>): Promise<number | undefined> => (await run('MyCard', entry, 1)).r.latency.hardwareConfig?.physics?.mixedDecodeTileRows;
    expect(await tile({ class: 'ada' })).toBe(64);
    expect(await tile({ class: 'blackwell-gddr' })).toBe(64);
    expect(await tile({ class: 'hopper' })).toBeUndefined();
    expect(await tile({ class: 'hopper', mixedDecodeTileRows: 128 })).toBe(128);
    expect(await tile({ class: 'ada', mixedDecodeTileRows: 0 })).toBeUndefined();
    // A catalog card keeps its own; the H100 (FlashAttention-3) has none.
    expect((await run('RTXPRO6000', {}, 1)).r.latency.hardwareConfig?.physics?.mixedDecodeTileRows).toBe(64);
    expect((await resolve({ latencyModel: 'corrected-physics' })).r.latency.hardwareConfig?.physics?.mixedDecodeTileRows).toBeUndefined();
    await expect(run('MyCard', { class: 'ada', mixedDecodeTileRows: 1.5 })).rejects.toThrow(/MyCard\.mixedDecodeTileRows/);
    await expect(run('MyCard', { class: 'ada', mixedDecodeTileRows: -64 })).rejects.toThrow(/MyCard\.mixedDecodeTileRows/);
  });

  it('a single-GPU run needs only the class; a multi-GPU run also how the GPUs talk', async () => {
    const one = await run('MyCard', { class: 'blackwell-gddr' }, 1);
    expect(one.r.latency.hardwareConfig?.physics?.interconnect.intraNode.kind).toBe('none (single GPU)');
    await expect(run('MyCard', { class: 'blackwell-gddr' }, 2)).rejects.toThrow(/GPU "MyCard" is not a catalog GPU.*add to its entry \(1\) "NVLinkGBs" or "PCIeGen"/);
    await expect(run('MyCard', { PCIeGen: 5 }, 2)).rejects.toThrow(/add to its entry \(1\) "class" \(ampere, ada, hopper, blackwell, blackwell-gddr\) or "efficiency"/);
    await expect(run('MyCard', { class: 'volta' })).rejects.toThrow(/MyCard\.class/);
  });

  it('an unknown name is refused, a catalog spelling runs under the catalog name', async () => {
    await expect(resolve({ latencyModel: 'corrected-physics', hardware: 'H800' })).rejects.toThrow(/--hardware "?H800"? is not a known GPU/);
    const { r } = await resolve({ latencyModel: 'corrected-physics', hardware: 'h100_sxm5' });
    expect(r.latency.hardware).toBe('H100');
    expect(r.latency.info[0]).toBe('--hardware h100_sxm5 is the catalog GPU H100');
  });
});

describe('config.json families under corrected-physics (issue 28, item 3)', () => {
  const OPT = { activation_function: 'relu', enable_bias: true, ffn_dim: 16384, hidden_size: 4096, max_position_embeddings: 2048, model_type: 'opt', num_attention_heads: 32, num_hidden_layers: 32, torch_dtype: 'float16', vocab_size: 50272, word_embed_proj_dim: 4096 };
  it('an OPT config.json runs with corrected-physics (KV sized for its ReLU MLP); the reference backends still refuse it', async () => {
    const files = { 'opt/config.json': JSON.stringify(OPT) };
    const { r } = await resolve({ model: 'facebook/opt-6.7b', latencyModel: 'corrected-physics', hardware: 'H100', tp: 1, modelConfigFolder: 'opt' }, files);
    expect(r.latency.modelConfig).toMatchObject({ intermediateDim: 16384, hiddenAct: 'relu', linearBias: true });
    expect(r.setup.kv.totalBlocks).toBeGreaterThan(6800);
    // The reference's parser has no ffn_dim: trained-physics refuses the config as before (unchanged).
    await expect(resolve({ model: 'facebook/opt-6.7b', hardware: 'H100', tp: 1, modelConfigFolder: 'opt', totalKvBlocks: 1000 }, files)).rejects.toThrow(/trained-physics: intermediate_size must be > 0/);
  });
});
