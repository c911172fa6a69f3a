import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MODEL_CATALOG } from '../config/catalog/models.js';
import { extractKVCapacityParams, parseHFConfig } from './hf-config.js';

/**
 * The embedded catalog keeps only the config.json keys the parser reads; this checks that nothing it reads
 * was lost, by parsing each reference config.json from the shared parity folder and the catalog entry side
 * by side. The folder lives next to the project checkout and is not shipped, so the suite skips without it.
 */
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const configsDir = path.join(path.resolve(projectRoot, '../shared'), 'parity', 'model_configs');
const haveConfigs = existsSync(configsDir);
const folders = haveConfigs ? readdirSync(configsDir).filter((d) => existsSync(path.join(configsDir, d, 'config.json'))) : [];

const title = haveConfigs
  ? 'catalog vs reference config.json files'
  : `catalog vs reference config.json files (skipped: ${configsDir} not found)`;

describe.skipIf(!haveConfigs)(title, () => {
  it('has a catalog entry for every reference model folder', () => {
    const missing = folders.filter((f) => !Object.hasOwn(MODEL_CATALOG, f));
    expect(missing).toEqual([]);
  });

  it.each(folders)('%s parses identically from the catalog and from its config.json', (name) => {
    const raw = JSON.parse(readFileSync(path.join(configsDir, name, 'config.json'), 'utf8')) as unknown;
    const entry = (MODEL_CATALOG as Record<string, { config: unknown }>)[name];
    expect(entry).toBeDefined();
    expect(parseHFConfig(entry!.config)).toEqual(parseHFConfig(raw));
    expect(extractKVCapacityParams(entry!.config)).toEqual(extractKVCapacityParams(raw));
  });
});
