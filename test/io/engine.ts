/** Engine setups for the serve/observe tests, resolved like the CLI resolves its flags. */
import { parseSimulationConfig } from '../../src/sim/simulate.js';
import { resolveEngineFlags } from '../../src/sim/resolve-engine.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';

export const TEST_MODEL = 'meta-llama/llama-3.1-8b-instruct';

export async function testSetup(options: Record<string, unknown> = {}): Promise<Omit<EngineSetup, 'horizon'>> {
  const { values } = parseSimulationConfig({ mode: 'run', model: TEST_MODEL, hardware: 'H100', tp: 1, ...options });
  const r = await resolveEngineFlags(values, { readText: () => '', warn: () => undefined });
  return r.setup;
}
