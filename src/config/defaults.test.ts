import { describe, expect, it } from 'vitest';
import { GPU_CATALOG } from './catalog/hardware.js';
import { findCatalogModel } from './catalog/models.js';
import { MODEL_DEFAULTS, TRAINED_PHYSICS_COEFFICIENTS, findModelDefaults } from './defaults.js';

describe('defaults.yaml facts', () => {
  it('looks models up by lowercased full id', () => {
    expect(findModelDefaults('meta-llama/Llama-3.1-8B-Instruct')).toEqual({
      gpu: 'H100',
      tensorParallelism: 1,
      hfRepo: 'meta-llama/Llama-3.1-8B-Instruct',
    });
    expect(findModelDefaults('codellama/codellama-34b-instruct-hf')?.tensorParallelism).toBe(2);
    expect(findModelDefaults('openai/gpt-oss-120b')).toEqual({ gpu: 'H100', tensorParallelism: 4 });
    expect(findModelDefaults('hasOwnProperty')).toBeUndefined();
  });

  it('finds a name without its org/ prefix when exactly one model has it (docs/usage.md: `org/` optional)', () => {
    expect(findModelDefaults('Llama-3.1-8B-Instruct')).toBe(findModelDefaults('meta-llama/llama-3.1-8b-instruct'));
    expect(findModelDefaults('gpt-oss-120b')).toBe(findModelDefaults('openai/gpt-oss-120b'));
    expect(findModelDefaults('other-org/llama-3.1-8b-instruct')).toBeUndefined();
    expect(findModelDefaults('no-such-model')).toBeUndefined();
    expect(findModelDefaults('')).toBeUndefined();
    // Every bare name of the table is unique, so each one finds its model.
    for (const k of Object.keys(MODEL_DEFAULTS)) expect(findModelDefaults(k.slice(k.indexOf('/') + 1)), k).toBe(MODEL_DEFAULTS[k]);
  });

  it('has all 30 reference entries, each on a catalog GPU with TP in {1, 2, 4, 8}', () => {
    expect(Object.keys(MODEL_DEFAULTS)).toHaveLength(30);
    for (const [name, d] of Object.entries(MODEL_DEFAULTS)) {
      expect(Object.hasOwn(GPU_CATALOG, d.gpu), name).toBe(true);
      expect([1, 2, 4, 8], name).toContain(d.tensorParallelism);
    }
  });

  it('resolves the defaulted models that have bundled configs', () => {
    for (const name of ['meta-llama/llama-3.1-8b-instruct', 'qwen/qwen3-14b', 'qwen/qwen2.5-7b-instruct', 'codellama/codellama-34b-instruct-hf', 'redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic']) {
      expect(findCatalogModel(name), name).toBeDefined();
    }
  });

  it('has the iter29 trained-physics coefficients with β_EP = β3', () => {
    const { alpha, beta } = TRAINED_PHYSICS_COEFFICIENTS;
    expect(alpha).toEqual([15563.199579, 777.3455, 45.907545]);
    expect(beta).toHaveLength(11);
    expect(beta[10]).toBe(beta[3]);
    expect(beta[0]).toBe(0.152128);
    expect(beta[9]).toBe(1.94710771);
  });
});
