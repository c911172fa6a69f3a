/**
 * Shared set-up of a fit: resolve the engine options as `replay` does (forcing corrected-physics, the model whose
 * coefficients are fitted) and read traces. Used by `blis calibrate --fit` and by the library's aggregate fit.
 */
import { BlisError } from '../domain/errors.js';
import type { CorrectedPhysicsCoefficient } from '../latency/corrected-physics.js';
import { CORRECTED_PHYSICS_COEFFICIENTS } from '../latency/corrected-physics.js';
import { ConfigError } from '../sim/config-error.js';
import type { SimEnv } from '../sim/env.js';
import { FlagValues } from '../sim/options.js';
import { resolveEngineFlags, type EngineResolution } from '../sim/resolve-engine.js';
import { parseTraceCsv } from '../workload/tracev2-csv.js';
import type { FitTrace } from './trace-fit.js';

/** The options with the latency model forced to corrected-physics (explicitly chosen other models are refused). */
export async function resolveFitEngine(f: FlagValues, env: SimEnv): Promise<EngineResolution> {
  if (f.changed('latency-model') && f.str('latency-model') !== 'corrected-physics') {
    throw new ConfigError('bad-flag', `calibrate --fit fits corrected-physics coefficients; drop --latency-model ${f.str('latency-model')} (or set it to corrected-physics)`);
  }
  return resolveEngineFlags(f.with('latency-model', 'corrected-physics'), env);
}

/** Reads one TraceV2 pair (header YAML + data CSV). */
export async function readFitTrace(env: SimEnv, headerPath: string, dataPath: string): Promise<FitTrace> {
  const { parseTraceHeaderYaml } = await import('../workload/tracev2-yaml-parse.js');
  const header = parseTraceHeaderYaml(env.readText(headerPath, '--trace-header'), headerPath);
  const records = parseTraceCsv(env.readText(dataPath, '--trace-data'), dataPath);
  return { label: dataPath, header, records };
}

/** `--fit-params a,b,c` → coefficient names (validated); '' = null (the default set). */
export function parseFitParams(text: string): CorrectedPhysicsCoefficient[] | null {
  if (text.trim() === '') return null;
  const out: CorrectedPhysicsCoefficient[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (!(CORRECTED_PHYSICS_COEFFICIENTS as readonly string[]).includes(name)) {
      throw new BlisError('bad-flag', `--fit-params: unknown coefficient "${name}"; valid: ${CORRECTED_PHYSICS_COEFFICIENTS.join(', ')}`, { field: '--fit-params' });
    }
    if (out.includes(name as CorrectedPhysicsCoefficient)) throw new BlisError('bad-flag', `--fit-params: "${name}" is listed twice`, { field: '--fit-params' });
    out.push(name as CorrectedPhysicsCoefficient);
  }
  if (out.length === 0) throw new BlisError('bad-flag', '--fit-params lists no coefficient', { field: '--fit-params' });
  return out;
}
