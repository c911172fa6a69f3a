/**
 * Evolvable policy sections of a bundle (policy-search-design §8; docs/policies.md): each control point
 * `admission`, `priority`, `routing`, `scheduler`, `autoscale`, `disaggregation`, `encode` may hold `{type: parameterized |
 * decision_tree | code, ...}`, and `metadata: {id, generation, parent_id, mutations}` describes the
 * candidate. A section without `type` is the reference's bundle format and is left to the reference
 * decoder, so existing bundles keep working; a section may carry both (e.g. `admission` with `type: code`
 * and the reference's `slo_priorities`), except that `type` and the reference's `policy:` conflict.
 *
 * This module extracts those keys (typed by the YAML core schema, with positions) and removes them from the
 * document before the reference decoder reads it. Validation of templates and trees happens here, at the
 * edge; code is compiled when the policies are built (it needs the sandbox engine).
 */
import { isMap, isPair, isScalar } from 'yaml';
import type { Node as YamlNode, Pair } from 'yaml';
import type { ParsedYaml } from '../format/yaml.js';
import { readBundleYaml } from './bundle-yaml.js';
import { DEFAULT_SANDBOX_LIMITS, SANDBOX_ENGINE_NAMES, type SandboxEngineName, type SandboxLimits } from '../sandbox/types.js';
import { PolicyConfigError, formatPolicyPath, type PolicyPath, type PolicyPosition } from './errors.js';
import { parseDecisionTree, type DecisionTree } from './tree/index.js';
import { validateTemplate, type TemplateParameters } from './templates/index.js';
import type { ControlPoint } from './view.js';
import { CONTROL_POINTS, DEFAULT_ENTRYPOINTS } from './view.js';
import { showValue } from '../domain/errors.js';

export { DEFAULT_ENTRYPOINTS } from './view.js';

export interface PolicyMetadata {
  readonly id: string;
  readonly generation: number;
  readonly parentId: string;
  readonly mutations: readonly string[];
}

interface SpecBase {
  readonly point: ControlPoint;
  /** Where the section is, for runtime errors: `file:line:col`. */
  readonly where: string;
}

export type PolicySpec =
  | (SpecBase & { readonly type: 'parameterized'; readonly template: string; readonly parameters: TemplateParameters })
  | (SpecBase & { readonly type: 'decision_tree'; readonly tree: DecisionTree })
  | (SpecBase & {
      readonly type: 'code';
      readonly engine: SandboxEngineName;
      readonly entrypoint: string;
      readonly source: string;
      /** `file.yaml:12` for inline source (its first line), or the code file's path. */
      readonly sourceLabel: string;
      /** Line of the bundle where inline source starts (0 for a file). */
      readonly sourceLine: number;
      readonly limits: SandboxLimits;
    });

export interface EvolvablePolicies {
  readonly metadata: PolicyMetadata | null;
  readonly specs: Readonly<Partial<Record<ControlPoint, PolicySpec>>>;
}

export const NO_EVOLVABLE: EvolvablePolicies = { metadata: null, specs: {} };

const SPEC_KEYS = new Set(['type', 'template', 'parameters', 'tree', 'language', 'engine', 'entrypoint', 'source', 'file', 'limits', 'description']);

export interface SpecReadOptions {
  /** Reads a code file named by `file:` (resolved against the bundle's folder by the caller). */
  readonly readFile?: (path: string) => string;
  /** Engine for code sections that name none (`--policy-engine`); default `fast`. */
  readonly defaultEngine?: SandboxEngineName;
}

type Where = (path: PolicyPath) => { file: string; pos: PolicyPosition };

/**
 * Pulls the evolvable sections out of `doc` (the failsafe-schema document the reference decoder will read),
 * returning them parsed and validated. `text` is the bundle text (re-read with the core schema for types);
 * only the sections that are evolvable are converted to plain values, through the bounded loader.
 */
export function extractEvolvable(text: string, file: string, doc: ParsedYaml, opts: SpecReadOptions = {}): EvolvablePolicies {
  const root = doc.doc.contents;
  if (!isMap(root)) return NO_EVOLVABLE;
  const parsed = readBundleYaml(text, file, { uniqueKeys: false });
  const typed = parsed.doc;
  const typedRoot = typed.contents;
  // The last occurrence of a top-level key, as a plain value (duplicates are reported by the decoder later).
  const js = (key: string): unknown => {
    if (!isMap(typedRoot)) return undefined;
    let value: unknown;
    for (const p of typedRoot.items) if (isScalar(p.key) && String(p.key.value) === key) value = p.value;
    return value === undefined ? undefined : parsed.toJs(value);
  };
  const where: Where = (path) => {
    for (let n = path.length; n >= 0; n--) {
      const node = typed.getIn(path.slice(0, n), true) as YamlNode | undefined;
      const start = node?.range?.[0];
      if (start !== undefined) return { file, pos: parsed.pos(start) };
      // A key whose value is empty: point at the key.
      if (n > 0) {
        const parent = typed.getIn(path.slice(0, n - 1), true);
        if (isMap(parent)) {
          const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(path[n - 1]));
          const ks = (pair?.key as YamlNode | undefined)?.range?.[0];
          if (ks !== undefined) return { file, pos: parsed.pos(ks) };
        }
      }
    }
    return { file, pos: { line: 1, col: 1 } };
  };
  const fail = (path: PolicyPath, problem: string, fix: string, code: 'POLICY_SPEC' | 'POLICY_TYPE' | 'POLICY_UNKNOWN_KEY' = 'POLICY_SPEC'): never => {
    throw new PolicyConfigError(code, where(path), formatPolicyPath(path), problem, fix);
  };

  let metadata: PolicyMetadata | null = null;
  const specs: Partial<Record<ControlPoint, PolicySpec>> = {};
  const remove: Pair[] = [];
  for (const pair of (root).items) {
    if (!isPair(pair) || !isScalar(pair.key)) continue;
    const key = String(pair.key.value);
    if (key === 'metadata') {
      metadata = readMetadata(js('metadata'), fail);
      remove.push(pair);
      continue;
    }
    if (!(CONTROL_POINTS as readonly string[]).includes(key)) continue;
    const point = key as ControlPoint;
    const raw = js(key);
    const section = pair.value as YamlNode | null;
    // Control points the reference's bundle does not know: only the evolvable form exists.
    if (point === 'autoscale' || point === 'disaggregation' || point === 'encode') {
      if (raw === null || raw === undefined) {
        remove.push(pair);
        continue;
      }
      if (!isPlainObject(raw) || !('type' in raw)) {
        fail([key], `the ${point} control point needs \`type: parameterized | decision_tree | code\``, point === 'autoscale'
          ? 'add a type (see docs/policies.md), or use the reference\'s `autoscaler:` section for the built-in autoscaler settings'
          : point === 'disaggregation' ? 'add a type (see docs/policies.md), or choose a built-in decider with --pd-decider never | always | prefix-threshold'
            : 'add a type (see docs/policies.md), or choose a built-in decider with --encode-decider never | always | multimodal');
      }
    }
    if (!isPlainObject(raw) || !('type' in raw) || !isMap(section)) continue;
    if ('policy' in raw) fail([key, 'policy'], '`policy:` (a built-in name) and `type:` (an evolvable policy) cannot both be set', 'keep one of them');
    const isBlock = (path: PolicyPath): boolean => {
      const n = typed.getIn(path, true);
      return isScalar(n) && (n.type === 'BLOCK_LITERAL' || n.type === 'BLOCK_FOLDED');
    };
    specs[point] = readSpec(point, raw, [key], where, isBlock, fail, file, opts);
    // The reference decoder sees the rest of the section (or nothing, when only spec keys were given).
    const keep = section.items.filter((p) => !(isScalar(p.key) && SPEC_KEYS.has(String(p.key.value))));
    if (keep.length === 0) remove.push(pair);
    else section.items = keep;
  }
  if (remove.length > 0) (root).items = (root).items.filter((p) => !remove.includes(p));
  return { metadata, specs };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function readMetadata(raw: unknown, fail: (path: PolicyPath, problem: string, fix: string, code?: 'POLICY_SPEC' | 'POLICY_TYPE' | 'POLICY_UNKNOWN_KEY') => never): PolicyMetadata | null {
  if (raw === null || raw === undefined) return null;
  if (!isPlainObject(raw)) fail(['metadata'], 'metadata must be a mapping', 'write metadata: {id: ..., generation: ..., parent_id: ..., mutations: [...]}', 'POLICY_TYPE');
  const m = raw;
  for (const k of Object.keys(m)) {
    if (!['id', 'generation', 'parent_id', 'mutations'].includes(k)) fail(['metadata', k], `unknown key ${showValue(k)}`, 'valid keys: id, generation, parent_id, mutations', 'POLICY_UNKNOWN_KEY');
  }
  const str = (k: string): string => {
    const v = m[k];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string' && typeof v !== 'number') fail(['metadata', k], `${k} must be text`, `write ${k}: "..."`, 'POLICY_TYPE');
    return String(v);
  };
  const gen = m['generation'] ?? 0;
  if (typeof gen !== 'number' || !Number.isInteger(gen) || gen < 0) fail(['metadata', 'generation'], `generation must be a non-negative integer, got ${JSON.stringify(gen)}`, 'write e.g. generation: 3', 'POLICY_TYPE');
  const muts = m['mutations'] ?? [];
  if (!Array.isArray(muts) || muts.some((x) => typeof x !== 'string')) fail(['metadata', 'mutations'], 'mutations must be a list of text', 'write e.g. mutations: ["raised cache weight"]', 'POLICY_TYPE');
  return { id: str('id'), generation: gen, parentId: str('parent_id'), mutations: muts as string[] };
}

const TYPE_KEYS: Readonly<Record<string, readonly string[]>> = {
  parameterized: ['type', 'template', 'parameters', 'description'],
  decision_tree: ['type', 'tree', 'description'],
  code: ['type', 'language', 'engine', 'entrypoint', 'source', 'file', 'limits', 'description'],
};

function readSpec(point: ControlPoint, raw: Record<string, unknown>, base: PolicyPath, where: Where, isBlock: (path: PolicyPath) => boolean, fail: (path: PolicyPath, problem: string, fix: string, code?: 'POLICY_SPEC' | 'POLICY_TYPE' | 'POLICY_UNKNOWN_KEY') => never, file: string, opts: SpecReadOptions): PolicySpec {
  const type = raw['type'];
  if (typeof type !== 'string' || !(type in TYPE_KEYS)) {
    fail([...base, 'type'], `unknown policy type ${JSON.stringify(type)}`, 'use parameterized, decision_tree or code');
  }
  const allowed = TYPE_KEYS[type] as readonly string[];
  for (const k of Object.keys(raw)) {
    if (!allowed.includes(k) && SPEC_KEYS.has(k)) fail([...base, k], `${showValue(k)} does not belong to a ${type} policy`, `keys of a ${type} policy: ${allowed.join(', ')}`, 'POLICY_UNKNOWN_KEY');
  }
  const w = where(base);
  const at = `${w.file}:${w.pos.line}:${w.pos.col}`;
  if (type === 'parameterized') {
    const template = raw['template'];
    if (typeof template !== 'string' || template === '') fail([...base, 'template'], 'a parameterized policy needs `template: NAME`', 'name a template (blis policies lists them)');
    const params = raw['parameters'] ?? {};
    if (!isPlainObject(params)) fail([...base, 'parameters'], 'parameters must be a mapping of name: value', 'write e.g. parameters: {cache_affinity_weight: 0.7} (or {} for the defaults)', 'POLICY_TYPE');
    const parameters = validateTemplate(point, template, params, [...base], where);
    return { point, where: at, type: 'parameterized', template: template, parameters };
  }
  if (type === 'decision_tree') {
    if (!('tree' in raw)) fail([...base, 'tree'], 'a decision_tree policy needs `tree:`', 'add the root node: {if: ..., then: ..., else: ...} or a leaf');
    return { point, where: at, type: 'decision_tree', tree: parseDecisionTree(point, raw['tree'], [...base, 'tree'], where) };
  }
  // code
  const lang = raw['language'] ?? 'javascript';
  if (lang !== 'javascript') fail([...base, 'language'], `unsupported language ${JSON.stringify(lang)}`, 'use language: javascript');
  const engine = raw['engine'] ?? opts.defaultEngine ?? 'fast';
  if (typeof engine !== 'string' || !(SANDBOX_ENGINE_NAMES as readonly string[]).includes(engine)) fail([...base, 'engine'], `unknown engine ${JSON.stringify(engine)}`, 'use engine: fast (in-process, gas-metered) or strict (QuickJS in WebAssembly)');
  const entry = raw['entrypoint'] ?? DEFAULT_ENTRYPOINTS[point];
  if (typeof entry !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(entry)) fail([...base, 'entrypoint'], `entrypoint must be a function name, got ${JSON.stringify(entry)}`, `write e.g. entrypoint: ${DEFAULT_ENTRYPOINTS[point]}`);
  const hasSource = 'source' in raw && raw['source'] !== null;
  const hasFile = 'file' in raw && raw['file'] !== null;
  if (hasSource === hasFile) fail(base, hasSource ? 'both `source` and `file` are set' : 'a code policy needs `source: TEXT` or `file: PATH`', 'give exactly one of them');
  let source: string;
  let sourceLabel: string;
  let sourceLine = 0;
  if (hasSource) {
    if (typeof raw['source'] !== 'string') fail([...base, 'source'], 'source must be text', 'use a YAML block scalar: source: |', 'POLICY_TYPE');
    source = raw['source'];
    const s = where([...base, 'source']);
    // A block scalar's content starts on the line after its indicator.
    sourceLine = s.pos.line + (isBlock([...base, 'source']) ? 1 : 0);
    sourceLabel = `${file}:${sourceLine}`;
  } else {
    const p = raw['file'];
    if (typeof p !== 'string' || p === '') fail([...base, 'file'], 'file must be a path', 'write file: policies/route.js (relative to the bundle)', 'POLICY_TYPE');
    if (opts.readFile === undefined) fail([...base, 'file'], 'code files cannot be read here', 'inline the code with source: |');
    try {
      source = (opts.readFile)(p);
    } catch (e) {
      return fail([...base, 'file'], `cannot read ${p}: ${(e as Error).message}`, 'check the path (relative to the bundle file)');
    }
    sourceLabel = p;
  }
  const limits = readLimits(raw['limits'], [...base, 'limits'], fail);
  return { point, where: at, type: 'code', engine: engine as SandboxEngineName, entrypoint: entry, source, sourceLabel, sourceLine, limits };
}

function readLimits(raw: unknown, path: PolicyPath, fail: (path: PolicyPath, problem: string, fix: string, code?: 'POLICY_SPEC' | 'POLICY_TYPE' | 'POLICY_UNKNOWN_KEY') => never): SandboxLimits {
  if (raw === undefined || raw === null) return DEFAULT_SANDBOX_LIMITS;
  if (!isPlainObject(raw)) fail(path, 'limits must be a mapping', 'write limits: {instructions: 1000000, memory_bytes: 67108864}', 'POLICY_TYPE');
  const m = raw;
  for (const k of Object.keys(m)) if (k !== 'instructions' && k !== 'memory_bytes') fail([...path, k], `unknown key ${showValue(k)}`, 'valid keys: instructions, memory_bytes', 'POLICY_UNKNOWN_KEY');
  const num = (k: string, def: number, min: number, max: number): number => {
    const v = m[k];
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail([...path, k], `${k} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`, `the default is ${def}`, 'POLICY_SPEC');
    return v;
  };
  return {
    instructions: num('instructions', DEFAULT_SANDBOX_LIMITS.instructions, 1000, 1_000_000_000),
    memoryBytes: num('memory_bytes', DEFAULT_SANDBOX_LIMITS.memoryBytes, 1 << 20, 1 << 30),
  };
}
