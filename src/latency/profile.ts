/**
 * Latency profiles: the coefficients `blis calibrate --fit` measured on a user's server, in a small YAML file
 * that `run`, `replay`, `serve` and `evaluate` take with `--latency-profile FILE`. Parsed through the bounded
 * loader (format/yaml.ts); every error names `file:line:col`, the key and the fix.
 *
 * ```yaml
 * kind: latency-profile
 * version: 1
 * latency_model: corrected-physics
 * model: meta-llama/llama-3.1-8b-instruct   # what it was fitted on (informational)
 * hardware: H100
 * tp: 1
 * coefficients: {compute: 1.04, weight_read: 0.97, kv_read: 1.2, comm: 1, step_us: 310, request_us: 6, frontend_us: 4200}
 * fitted_range: {request_rate: [2, 6.5], batch_size: [4, 31]}   # what it was fitted on; outside it warns
 * fit: {...}                                 # provenance written by the fit; not read back
 * ```
 */
import { isMap, isScalar, type Node as YamlNode } from 'yaml';
import { BlisError } from '../domain/errors.js';
import { parseYaml } from '../format/yaml.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, type CorrectedPhysicsCoefficient } from './corrected-physics.js';
import type { ProfileRange } from './profile-range.js';

export type { ProfileRange } from './profile-range.js';

export const PROFILE_KIND = 'latency-profile';
export const PROFILE_VERSION = 1;
export const BAD_PROFILE = 'BAD_LATENCY_PROFILE';

export interface LatencyProfile {
  readonly latencyModel: 'corrected-physics';
  /** Every coefficient the file names (the rest take the model's defaults). */
  readonly coefficients: Partial<Record<CorrectedPhysicsCoefficient, number>>;
  /** What the profile was fitted on ('' / 0 when the file does not say). */
  readonly model: string;
  readonly hardware: string;
  readonly tp: number;
  /** Load and batch sizes the fit saw (`fitted_range`); absent in hand-written profiles. */
  readonly range?: ProfileRange;
}


const TOP_KEYS = ['kind', 'version', 'latency_model', 'model', 'hardware', 'tp', 'coefficients', 'fitted_range', 'fit'] as const;

/** Parses a profile file. Throws a located {@link BlisError} (code BAD_LATENCY_PROFILE) on any problem. */
export function parseLatencyProfile(text: string, file: string): LatencyProfile {
  const parsed = parseYaml(text, file, { code: BAD_PROFILE });
  const fail = (node: YamlNode | null | undefined, problem: string, fix: string, field?: string): never => {
    const p = parsed.pos(node?.range?.[0] ?? 0);
    throw new BlisError(BAD_PROFILE, `${file}:${p.line}:${p.col}: ${field === undefined ? '' : `${field}: `}${problem}; ${fix}`, { file, line: p.line, col: p.col, field });
  };
  const root = parsed.deref(parsed.doc.contents);
  if (root === null || !isMap(root)) {
    return fail(root, 'a latency profile is a YAML mapping', 'write the file `blis calibrate --fit --profile-out` produces (kind: latency-profile, coefficients: {...})');
  }
  const entries = new Map<string, { key: YamlNode; value: YamlNode | null }>();
  for (const item of root.items) {
    const key = parsed.deref(item.key);
    const name = key !== null && isScalar(key) ? String(key.value) : '';
    if (!(TOP_KEYS as readonly string[]).includes(name)) {
      fail(key, `unknown key "${name}"`, `valid keys: ${TOP_KEYS.join(', ')}`, name);
    }
    if (entries.has(name)) fail(key, `"${name}" is given twice`, 'keep one', name);
    entries.set(name, { key: key as YamlNode, value: parsed.deref(item.value) });
  }
  const scalar = (name: string): { node: YamlNode | null; value: unknown } | null => {
    const e = entries.get(name);
    if (e === undefined) return null;
    if (e.value === null || !isScalar(e.value)) return fail(e.value ?? e.key, 'must be a single value', `give ${name} a value`, name);
    return { node: e.value, value: e.value.value };
  };
  const kind = scalar('kind');
  if (kind === null) fail(root, 'missing "kind"', `add kind: ${PROFILE_KIND}`, 'kind');
  if (kind!.value !== PROFILE_KIND) fail(kind!.node, `kind is ${JSON.stringify(kind!.value)}, not a latency profile`, `set kind: ${PROFILE_KIND}`, 'kind');
  const version = scalar('version');
  if (version !== null && version.value !== PROFILE_VERSION) fail(version.node, `version ${JSON.stringify(version.value)} is not supported`, `this blis-ts reads version ${PROFILE_VERSION}`, 'version');
  const lm = scalar('latency_model');
  if (lm === null) fail(root, 'missing "latency_model"', 'add latency_model: corrected-physics', 'latency_model');
  if (lm!.value !== 'corrected-physics') {
    fail(lm!.node, `latency_model ${JSON.stringify(lm!.value)} has no fittable coefficients`, 'profiles hold corrected-physics coefficients: latency_model: corrected-physics', 'latency_model');
  }
  const str = (name: string): string => {
    const s = scalar(name);
    if (s === null) return '';
    if (typeof s.value !== 'string') fail(s.node, `must be a string, got ${JSON.stringify(s.value)}`, `quote it, e.g. ${name}: "..."`, name);
    return s.value as string;
  };
  const tpEntry = scalar('tp');
  let tp = 0;
  if (tpEntry !== null) {
    if (typeof tpEntry.value !== 'number' || !Number.isInteger(tpEntry.value) || tpEntry.value < 1) {
      fail(tpEntry.node, `must be a positive integer, got ${JSON.stringify(tpEntry.value)}`, 'write the tensor parallelism the profile was fitted at', 'tp');
    }
    tp = tpEntry.value as number;
  }
  const coeffEntry = entries.get('coefficients');
  if (coeffEntry === undefined) fail(root, 'missing "coefficients"', `add coefficients: {${CORRECTED_PHYSICS_COEFFICIENTS.join(': ..., ')}: ...}`, 'coefficients');
  const map = coeffEntry!.value;
  if (map === null || !isMap(map)) return fail(map ?? coeffEntry!.key, 'must be a mapping of coefficient names to numbers', `e.g. coefficients: {compute: 1, step_us: 300}`, 'coefficients');
  const coefficients: Partial<Record<CorrectedPhysicsCoefficient, number>> = {};
  for (const item of map.items) {
    const key = parsed.deref(item.key);
    const name = key !== null && isScalar(key) ? String(key.value) : '';
    const field = `coefficients.${name}`;
    if (!(CORRECTED_PHYSICS_COEFFICIENTS as readonly string[]).includes(name)) {
      fail(key, `unknown coefficient "${name}"`, `valid: ${CORRECTED_PHYSICS_COEFFICIENTS.join(', ')}`, field);
    }
    if (Object.hasOwn(coefficients, name)) fail(key, `"${name}" is given twice`, 'keep one', field);
    const v = parsed.deref(item.value);
    const num = v !== null && isScalar(v) ? v.value : undefined;
    if (typeof num !== 'number' || !Number.isFinite(num) || num < 0) {
      fail(v ?? key, `must be a finite number >= 0, got ${JSON.stringify(num ?? null)}`, 'write a plain number', field);
    }
    if ((name === 'compute' || name === 'weight_read') && num === 0) fail(v, 'must be > 0 (a zero multiplier would make steps free)', 'write a positive number', field);
    coefficients[name as CorrectedPhysicsCoefficient] = num as number;
  }
  const rangeEntry = entries.get('fitted_range');
  let range: ProfileRange | undefined;
  if (rangeEntry !== undefined) {
    const rmap = rangeEntry.value;
    const shape = 'write fitted_range: {request_rate: [low, high], batch_size: [low, high]} (or drop it)';
    if (rmap === null || !isMap(rmap)) return fail(rmap ?? rangeEntry.key, 'must be a mapping', shape, 'fitted_range');
    const pairs: Record<string, [number, number]> = {};
    for (const item of rmap.items) {
      const key = parsed.deref(item.key);
      const name = key !== null && isScalar(key) ? String(key.value) : '';
      const field = `fitted_range.${name}`;
      if (name !== 'request_rate' && name !== 'batch_size') fail(key, `unknown key "${name}"`, shape, field);
      const v = parsed.deref(item.value);
      const json: unknown = v === null ? null : v.toJSON();
      if (!Array.isArray(json) || json.length !== 2 || !json.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0) || (json[0] as number) > (json[1] as number)) {
        fail(v ?? key, `must be [low, high] with 0 <= low <= high, got ${JSON.stringify(json)}`, shape, field);
      }
      pairs[name] = [(json as number[])[0]!, (json as number[])[1]!];
    }
    if (pairs['request_rate'] === undefined || pairs['batch_size'] === undefined) fail(rmap, 'needs both request_rate and batch_size', shape, 'fitted_range');
    range = { requestRate: pairs['request_rate']!, batchSize: pairs['batch_size']! };
  }
  return { latencyModel: 'corrected-physics', coefficients, model: str('model'), hardware: str('hardware'), tp, ...(range !== undefined ? { range } : {}) };
}

/**
 * The profile as YAML text. `provenance` (a plain object) is written under `fit:` for people; it is not read
 * back. Keys are written in a fixed order so the same fit gives the same bytes.
 */
export function formatLatencyProfile(p: LatencyProfile, provenance: Readonly<Record<string, unknown>> | null, comment: readonly string[] = []): string {
  const lines = comment.map((c) => `# ${c}`);
  lines.push(`kind: ${PROFILE_KIND}`, `version: ${PROFILE_VERSION}`, `latency_model: ${p.latencyModel}`);
  if (p.model !== '') lines.push(`model: ${JSON.stringify(p.model)}`);
  if (p.hardware !== '') lines.push(`hardware: ${JSON.stringify(p.hardware)}`);
  if (p.tp > 0) lines.push(`tp: ${p.tp}`);
  lines.push('coefficients:');
  for (const name of CORRECTED_PHYSICS_COEFFICIENTS) {
    const v = p.coefficients[name];
    // String(number) is the shortest decimal that reads back to the same double.
    if (v !== undefined) lines.push(`  ${name}: ${String(v)}`);
  }
  if (p.range !== undefined) {
    lines.push('fitted_range:', `  request_rate: [${p.range.requestRate.map(String).join(', ')}]`, `  batch_size: [${p.range.batchSize.map(String).join(', ')}]`);
  }
  if (provenance !== null) {
    lines.push('fit:');
    lines.push(...yamlBlock(provenance, '  '));
  }
  return `${lines.join('\n')}\n`;
}

/** A small deterministic YAML writer for the provenance block (objects, arrays of scalars, scalars). */
function yamlBlock(o: Readonly<Record<string, unknown>>, indent: string): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out.push(`${indent}${k}:`);
      out.push(...yamlBlock(v as Record<string, unknown>, `${indent}  `));
    } else if (Array.isArray(v)) {
      out.push(`${indent}${k}: [${v.map((x) => JSON.stringify(x)).join(', ')}]`);
    } else {
      out.push(`${indent}${k}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
    }
  }
  return out;
}


