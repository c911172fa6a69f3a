/**
 * --gpus-per-node, --inter-node-bandwidth, --inter-node-latency end to end through simulate() (the library
 * config is the CLI's option table), and each flag's validation: one clear error naming the flag.
 */
import { describe, expect, it } from 'vitest';
import { BlisError } from '../domain/errors.js';
import { main } from '../cli/main.js';
import { simulate } from './simulate.js';

const BASE = { mode: 'run', model: 'meta-llama/llama-2-7b-hf', hardware: 'H100', tp: 16, numRequests: 40, rate: 4, seed: 3 } as const;

async function e2e(extra: Record<string, unknown>): Promise<number> {
  const r = await simulate({ ...BASE, ...extra });
  return r.metrics.e2e_mean_ms;
}

async function rejection(extra: Record<string, unknown>): Promise<BlisError> {
  try {
    await simulate({ ...BASE, ...extra });
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected a rejection');
}

describe('inter-node network flags', () => {
  it('a TP group spanning two nodes costs more than the same TP within one node, more with latency and a slower link', async () => {
    const off = await e2e({});
    const oneNode = await e2e({ gpusPerNode: 16 });
    const twoNodes = await e2e({ gpusPerNode: 8 });
    const slower = await e2e({ gpusPerNode: 8, interNodeBandwidth: 25 });
    const withLatency = await e2e({ gpusPerNode: 8, interNodeLatency: 0.01 });
    expect(oneNode).toBe(off);
    expect(twoNodes).toBeGreaterThan(oneNode);
    expect(slower).toBeGreaterThan(twoNodes);
    expect(withLatency).toBeGreaterThan(twoNodes);
    // The default bandwidth is the GPU's InterNodeBwGBps (H100: 50 GB/s).
    expect(await e2e({ gpusPerNode: 8, interNodeBandwidth: 50 })).toBe(twoNodes);
  });

  it('refuses a TP group larger than a node that is not a multiple of --gpus-per-node, naming both', async () => {
    // The library names its config keys; the CLI its flags.
    const e = await rejection({ gpusPerNode: 6 });
    expect(e.message).toMatch(/^tp 16 spans nodes of gpusPerNode 6 GPUs but is not a multiple of it/);
    let err = '';
    const code = await main(['run', '--model', BASE.model, '--hardware', 'H100', '--tp', '16', '--gpus-per-node', '6', '--num-requests', '5'],
      { stdout: () => undefined, warn: () => undefined, error: (t) => (err += t) });
    expect(code).toBe(2);
    expect(err).toMatch(/^--tp 16 spans nodes of --gpus-per-node 6 GPUs but is not a multiple of it; .*use a --tp that is a multiple of --gpus-per-node/);
  });

  it('refuses bad values and the fabric flags without --gpus-per-node, naming the flag', async () => {
    expect((await rejection({ gpusPerNode: 8, interNodeBandwidth: -1 })).message).toMatch(/^interNodeBandwidth must be a finite number of GB\/s >= 0/);
    expect((await rejection({ gpusPerNode: 8, interNodeLatency: -0.5 })).message).toMatch(/^interNodeLatency must be a finite number of ms >= 0/);
    expect((await rejection({ gpusPerNode: -8 })).message).toMatch(/gpusPerNode|--gpus-per-node/);
    expect((await rejection({ interNodeLatency: 0.01 })).message).toMatch(/have no effect without gpusPerNode/);
    expect((await rejection({ interNodeBandwidth: 100 })).message).toMatch(/have no effect without gpusPerNode/);
  });

  it('needs a bandwidth for a GPU without InterNodeBwGBps, and refuses blackbox', async () => {
    expect((await rejection({ hardware: 'L40S', tp: 1, gpusPerNode: 8 })).message).toMatch(/^gpusPerNode needs an inter-node bandwidth: GPU "?L40S"? has no InterNodeBwGBps; give interNodeBandwidth/);
    expect((await rejection({ latencyModel: 'blackbox', alphaCoeffs: [0, 0, 0], betaCoeffs: [100, 1, 1], gpusPerNode: 8 })).message).toMatch(/^gpusPerNode has no effect with latencyModel blackbox/);
  });

  it('a deployment configuration\'s gpus_per_node overrides the run\'s flag', async () => {
    const dep = (extra: string): string => ['models:', `  - name: ${BASE.model}`, '    configurations:', '      - name: big', '        hardware: H100',
      '        tp: 16', ...(extra === '' ? [] : [`        ${extra}`]), '        replicas: 1', ''].join('\n');
    const run = async (extra: string, flags: Record<string, unknown> = {}): Promise<number> => {
      const r = await simulate({ ...BASE, ...flags, deployment: 'd.yaml', files: { 'd.yaml': dep(extra) } });
      return r.metrics.e2e_mean_ms;
    };
    const plain = await run('');
    expect(await run('gpus_per_node: 16')).toBe(plain);
    expect(await run('gpus_per_node: 8')).toBeGreaterThan(plain);
    expect(await run('gpus_per_node: 16', { gpusPerNode: 8 })).toBe(plain);
    expect(await run('', { gpusPerNode: 8 })).toBe(await run('gpus_per_node: 8'));
  });
});

describe('node pools with --gpus-per-node', () => {
  it('place a TP 16 instance on two whole 8-GPU nodes (without the flag it does not fit on one node)', async () => {
    const files = { 'np.yaml': 'node_pools:\n  - {name: p, gpu_type: H100, gpus_per_node: 8, gpu_memory_gib: 80, initial_nodes: 4, max_nodes: 4}\n' };
    const on = await simulate({ ...BASE, numInstances: 2, policyConfig: 'np.yaml', files, gpusPerNode: 8 });
    expect(on.report.instances).toHaveLength(2);
    expect(on.metrics.completed_requests).toBe(40);
    let placedNone = false;
    try {
      const off = await simulate({ ...BASE, numInstances: 2, policyConfig: 'np.yaml', files });
      placedNone = (off.report.instances?.length ?? 0) === 0 || off.metrics.completed_requests === 0;
    } catch {
      placedNone = true;
    }
    expect(placedNone).toBe(true);
  });
});

describe('a --hardware-config GPU', () => {
  it('gives the default inter-node bandwidth through InterNodeBwGBps', async () => {
    const gpu = '"TFlopsPeak": 989.5, "TFlopsFP8": 1979, "BwPeakTBs": 3.35, "mfuPrefill": 0.45, "mfuDecode": 0.3, "MemoryGiB": 80';
    const files = { 'hw.json': `{ "Mine": { ${gpu}, "IntraNodeBwGBps": 450, "InterNodeBwGBps": 12.5 }, "Bare": { ${gpu} } }` };
    const run = async (hardware: string, extra: Record<string, unknown>): Promise<number> =>
      (await simulate({ ...BASE, hardware, hardwareConfig: 'hw.json', files, gpusPerNode: 8, ...extra })).metrics.e2e_mean_ms;
    expect(await run('Mine', {})).toBe(await run('Bare', { interNodeBandwidth: 12.5 }));
    expect(await run('Mine', {})).toBeGreaterThan(await run('Mine', { interNodeBandwidth: 50 }));
    await expect(simulate({ ...BASE, hardware: 'Bare', hardwareConfig: 'hw.json', files, gpusPerNode: 8 })).rejects.toThrow(/has no InterNodeBwGBps/);
  });
});
