import { describe, expect, it } from 'vitest';
import { stepBatchOf } from './types.js';
import { GPU_CATALOG, type GpuName } from '../config/catalog/hardware.js';
import { MODEL_CATALOG, type CatalogModelName } from '../config/catalog/models.js';
import { TRAINED_PHYSICS_COEFFICIENTS } from '../config/defaults.js';
import type { Request } from '../domain/request.js';
import { parseHFConfig } from './hf-config.js';
import { createRooflineModel } from './roofline.js';
import { req } from './test-fixtures.js';
import { createTrainedPhysicsModel } from './trained-physics.js';

/**
 * End to end over the embedded catalogs: catalog config → parser → latency model. Expected step times were
 * produced by running the reference Go implementation on the bundled config.json files with the reference
 * hardware_config.json values and the defaults.yaml coefficients.
 */

/** Prefill from scratch, a decode, a mid-prompt chunk and a decode (642 new tokens in all). */
const batch = (): Request[] => [req(128, 10, 0, 128), req(256, 10, 256, 1), req(2048, 5, 1024, 512), req(600, 3, 601, 1)];

function trained(name: CatalogModelName, tp: number, dp = 1): number {
  const m = createTrainedPhysicsModel({
    model: parseHFConfig(MODEL_CATALOG[name].config),
    hardware: GPU_CATALOG.H100,
    tp,
    dp,
    alpha: TRAINED_PHYSICS_COEFFICIENTS.alpha,
    beta: TRAINED_PHYSICS_COEFFICIENTS.beta,
  });
  const b = batch();
  return m.stepTime(stepBatchOf(b, b.length));
}

function roofline(name: CatalogModelName, gpu: GpuName, tp: number): number {
  const m = createRooflineModel({ model: parseHFConfig(MODEL_CATALOG[name].config), hardware: GPU_CATALOG[gpu], tp, alpha: [0, 0, 0] });
  const b = batch();
  return m.stepTime(stepBatchOf(b, b.length));
}

describe('catalog models through trained-physics (defaults.yaml coefficients, H100)', () => {
  it.each([
    ['llama-3.1-8b-instruct', 1, 1, 8384],
    ['llama-3.1-8b-instruct', 2, 1, 4852],
    ['mixtral-8x7b-v0.1', 2, 1, 21457],
    ['llama-4-scout-17b-16e-instruct-fp8-dynamic', 2, 1, 25748],
    ['qwen3-30b-a3b', 1, 2, 14129],
    ['deepseek-v2-lite', 1, 1, 14526],
    ['llama-3.1-70b-instruct', 4, 1, 20728],
    ['qwen2.5-7b-instruct', 1, 1, 7737],
  ] as Array<[CatalogModelName, number, number, number]>)('%s TP=%i DP=%i: %i µs', (name, tp, dp, want) => {
    expect(trained(name, tp, dp)).toBe(want);
  });
});

describe('catalog models through roofline', () => {
  it.each([
    ['llama-3.1-8b-instruct', 'H100', 1, 15520],
    ['qwen3-30b-a3b', 'H100', 1, 11883],
    ['deepseek-v2-lite', 'H100', 1, 6407],
    ['llama-3.1-8b-instruct', 'A100-80', 1, 58397],
    ['llama-4-scout-17b-16e-instruct-fp8-dynamic', 'L40S', 2, 23188],
  ] as Array<[CatalogModelName, GpuName, number, number]>)('%s on %s TP=%i: %i µs', (name, gpu, tp, want) => {
    expect(roofline(name, gpu, tp)).toBe(want);
  });
});
