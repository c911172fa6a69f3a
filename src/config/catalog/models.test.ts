import { describe, expect, it } from 'vitest';
import { CATALOG_HF_IDS, MODEL_CATALOG, catalogKeyFor, findCatalogModel } from './models.js';

describe('model catalog lookup', () => {
  it('lowercases and drops the org prefix, as the reference does for model_configs/', () => {
    expect(catalogKeyFor('meta-llama/Llama-3.1-8B-Instruct')).toBe('llama-3.1-8b-instruct');
    expect(catalogKeyFor('Qwen3-14B')).toBe('qwen3-14b');
    expect(catalogKeyFor('a/b/c')).toBe('b/c');
  });

  it.each([
    ['meta-llama/llama-3.1-8b-instruct', 'llama-3.1-8b-instruct'],
    ['mistralai/mixtral-8x7b-v0.1', 'mixtral-8x7b-v0.1'],
    ['mistralai/mistral-nemo-instruct-2407', 'mistral-nemo-instruct-2407'],
    ['codellama/codellama-34b-instruct-hf', 'codellama-34b-instruct-hf'],
    ['qwen/qwen2.5-7b-instruct', 'qwen2.5-7b-instruct'],
    ['RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic', 'llama-4-scout-17b-16e-instruct-fp8-dynamic'],
    ['any-org/yi-34b', 'yi-34b'],
    ['glm-5.2-fp8', 'glm-5.2-fp8'],
  ])('%s → %s', (name, key) => {
    expect(findCatalogModel(name)).toBe(MODEL_CATALOG[key as keyof typeof MODEL_CATALOG]);
  });

  it('returns undefined for unknown names, including prototype keys', () => {
    expect(findCatalogModel('meta-llama/llama-3.3-70b-instruct')).toBeUndefined();
    expect(findCatalogModel('constructor')).toBeUndefined();
    expect(findCatalogModel('x/__proto__')).toBeUndefined();
  });

  it('registers the full HuggingFace ids', () => {
    expect(CATALOG_HF_IDS.get('meta-llama/llama-3.1-8b-instruct')).toBe('llama-3.1-8b-instruct');
    expect(CATALOG_HF_IDS.get('mistralai/mixtral-8x7b-v0.1')).toBe('mixtral-8x7b-v0.1');
    expect(CATALOG_HF_IDS.get('codellama/codellama-34b-instruct-hf')).toBe('codellama-34b-instruct-hf');
    for (const [id, key] of CATALOG_HF_IDS) expect(findCatalogModel(id)).toBe(MODEL_CATALOG[key]);
  });
});
