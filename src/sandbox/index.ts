/** Public surface of the sandbox layer: the contract and the two engines, each loaded on first use. */
export {
  DEFAULT_SANDBOX_LIMITS,
  MAX_RESULT_CHARS,
  MAX_RESULT_DEPTH,
  SANDBOX_ENGINE_NAMES,
  SandboxError,
  kindText,
  type HostFunction,
  type SandboxCompiler,
  type SandboxEngine,
  type SandboxEngineName,
  type SandboxErrorKind,
  type SandboxLimits,
  type SandboxOptions,
  type SandboxProgram,
  type SandboxStats,
} from './types.js';
import type { SandboxEngine, SandboxEngineName } from './types.js';

const loaded = new Map<SandboxEngineName, Promise<SandboxEngine>>();

/** The named engine, loaded once per process (later calls share it). */
export function loadSandboxEngine(name: SandboxEngineName): Promise<SandboxEngine> {
  let p = loaded.get(name);
  if (p === undefined) {
    p = name === 'fast' ? import('./fast.js').then((m) => m.fastEngine()) : import('./strict.js').then((m) => m.strictEngine());
    loaded.set(name, p);
  }
  return p;
}
