/**
 * LoRA adapters (the reference's `LoRAConfig`, `--lora-config`): the adapter registry (id, rank, optional base
 * model), the per-instance resident slots (`adapter_capacity`) and the cost coefficients of a cold load and of
 * the per-step overhead. A file holds one top-level `lora:` block, read strictly through the bounded YAML loader
 * with located errors; coefficients it leaves out come from the reference's defaults.yaml `lora:` block, and
 * the scalar `--lora-*` flags override both.
 *
 * Without adapters, or without `adapter_capacity`, the subsystem is inert (every run is unchanged); under
 * --semantics corrected adapters without `adapter_capacity` get vLLM's default of one slot instead.
 */
import { isMap, isScalar, isSeq, type Node as YamlNode, type Pair } from 'yaml';
import { BlisError } from '../domain/errors.js';
import { parseYaml, type ParsedYaml } from '../format/yaml.js';

export interface AdapterSpec {
  readonly id: string;
  readonly rank: number;
  /** '' = attaches to any model (no base-model check). */
  readonly baseModel: string;
}

export interface StepOverheadTier {
  /** Overhead per distinct adapter in the batch (>= 0); null = 0. */
  readonly k6: number | null;
  /** Normalisation denominator (> 0). */
  readonly k7: number | null;
}

/** The file's `lora:` block; null = not set (a default or flag may fill it). */
export interface LoraConfig {
  readonly adapterCapacity: number | null;
  readonly loadBaseLatencyUs: number | null;
  readonly loadBandwidthBytesUs: number | null;
  readonly footprintBytesPerRank: number | null;
  /** rank → coefficients; empty = none given. */
  readonly stepOverheadTiers: ReadonlyMap<number, StepOverheadTier>;
  readonly adapters: readonly AdapterSpec[];
}

export const EMPTY_LORA_CONFIG: LoraConfig = {
  adapterCapacity: null,
  loadBaseLatencyUs: null,
  loadBandwidthBytesUs: null,
  footprintBytesPerRank: null,
  stepOverheadTiers: new Map(),
  adapters: [],
};

/** The reference's defaults.yaml `lora:` block (cold-load cost and per-rank step overhead). */
export const LORA_DEFAULTS = {
  loadBaseLatencyUs: 1500,
  loadBandwidthBytesUs: 2e6,
  footprintBytesPerRank: 2e6,
  stepOverheadTiers: new Map<number, StepOverheadTier>([
    [8, { k6: 0.02, k7: 1.0 }],
    [16, { k6: 0.035, k7: 1.0 }],
    [32, { k6: 0.06, k7: 1.0 }],
  ]),
} as const;

/**
 * Adapter slots per instance when `adapter_capacity` is not set, under --semantics corrected: vLLM's
 * `--max-loras` default (the number of adapters resident on the GPU at once).
 */
export const DEFAULT_ADAPTER_CAPACITY = 1;

/** The active subsystem: every coefficient resolved. */
export interface ResolvedLora {
  readonly capacity: number;
  readonly loadBaseLatencyUs: number;
  readonly loadBandwidthBytesUs: number;
  readonly footprintBytesPerRank: number;
  readonly stepOverheadTiers: ReadonlyMap<number, { readonly k6: number; readonly k7: number }>;
  readonly adapters: readonly AdapterSpec[];
}

export class LoraConfigError extends BlisError {
  constructor(message: string, where: { file?: string; line?: number; col?: number; field?: string } = {}) {
    super('LORA_CONFIG', message, where);
    this.name = 'LoraConfigError';
  }
}

const LORA_KEYS = ['adapter_capacity', 'load_base_latency_us', 'load_bandwidth_bytes_us', 'step_overhead_tiers', 'footprint_bytes_per_rank', 'adapters'];
const ADAPTER_KEYS = ['id', 'rank', 'base_model'];
const TIER_KEYS = ['k6', 'k7'];

class Reader {
  constructor(private readonly y: ParsedYaml) {}

  fail(node: YamlNode | null | undefined, path: string, problem: string, fix: string): never {
    const p = this.y.pos(node?.range?.[0] ?? 0);
    throw new LoraConfigError(`${this.y.file}:${p.line}:${p.col}: ${path}: ${problem}; ${fix}`, { file: this.y.file, line: p.line, col: p.col, field: path });
  }

  /** The pairs of a mapping, unknown keys refused. */
  pairs(node: YamlNode | null, path: string, known: readonly string[]): [string, YamlNode | null, Pair][] {
    if (!isMap(node)) this.fail(node, path, 'must be a mapping', `write ${path}: as key: value lines`);
    return node.items.map((pair) => {
      const k = this.y.deref(pair.key);
      const key = isScalar(k) ? String(k.value) : '';
      if (!known.includes(key)) this.fail(k, `${path}.${key}`, 'unknown key', `use one of ${known.join(', ')}`);
      return [key, this.y.deref(pair.value), pair];
    });
  }

  number(node: YamlNode | null, path: string): number {
    if (!isScalar(node) || typeof node.value !== 'number' || !Number.isFinite(node.value)) this.fail(node, path, 'must be a finite number', `set ${path} to a number`);
    return node.value;
  }

  int(node: YamlNode | null, path: string): number {
    const v = this.number(node, path);
    if (!Number.isSafeInteger(v)) this.fail(node, path, `must be a whole number, got ${v}`, `set ${path} to an integer`);
    return v;
  }

  string(node: YamlNode | null, path: string): string {
    if (!isScalar(node) || (typeof node.value !== 'string' && typeof node.value !== 'number')) this.fail(node, path, 'must be a string', `set ${path} to a name`);
    return String(node.value);
  }
}

/**
 * Reads a `--lora-config` file (YAML or JSON). An empty file is an empty (inert) configuration.
 * @throws LoraConfigError or a located YAML error for anything malformed, at `file:line:col`.
 */
export function parseLoraConfig(text: string, file: string): LoraConfig {
  const y = parseYaml(text, file, { code: 'LORA_CONFIG' });
  const r: Reader = new Reader(y);
  const root = y.deref(y.doc.contents);
  if (root === null || (isScalar(root) && root.value === null)) return EMPTY_LORA_CONFIG;
  let block: YamlNode | null = null;
  for (const [key, value] of r.pairs(root, '(top level)', ['lora'])) if (key === 'lora') block = value;
  if (block === null || (isScalar(block) && block.value === null)) return EMPTY_LORA_CONFIG;
  const out: { -readonly [K in keyof LoraConfig]: LoraConfig[K] } = { ...EMPTY_LORA_CONFIG, stepOverheadTiers: new Map(), adapters: [] };
  for (const [key, value] of r.pairs(block, 'lora', LORA_KEYS)) {
    const path = `lora.${key}`;
    switch (key) {
      case 'adapter_capacity':
        out.adapterCapacity = r.int(value, path);
        break;
      case 'load_base_latency_us':
        out.loadBaseLatencyUs = r.number(value, path);
        break;
      case 'load_bandwidth_bytes_us':
        out.loadBandwidthBytesUs = r.number(value, path);
        break;
      case 'footprint_bytes_per_rank':
        out.footprintBytesPerRank = r.number(value, path);
        break;
      case 'step_overhead_tiers': {
        const tiers = new Map<number, StepOverheadTier>();
        if (!isMap(value)) r.fail(value, path, 'must be a mapping of rank: {k6, k7}', 'write e.g. step_overhead_tiers: {8: {k6: 0.02, k7: 1.0}}');
        for (const pair of value.items) {
          const kNode = y.deref(pair.key);
          const rank = r.int(kNode, `${path} key`);
          const tierPath = `${path}.${rank}`;
          let k6: number | null = null;
          let k7: number | null = null;
          for (const [tk, tv] of r.pairs(y.deref(pair.value), tierPath, TIER_KEYS)) {
            if (tk === 'k6') k6 = r.number(tv, `${tierPath}.k6`);
            else k7 = r.number(tv, `${tierPath}.k7`);
          }
          tiers.set(rank, { k6, k7 });
        }
        out.stepOverheadTiers = tiers;
        break;
      }
      case 'adapters': {
        if (!isSeq(value)) r.fail(value, path, 'must be a list of {id, rank[, base_model]}', 'write adapters: [{id: my-adapter, rank: 16}]');
        out.adapters = value.items.map((item, i) => {
          const ap = `${path}[${i}]`;
          let id = '';
          let rank = 0;
          let baseModel = '';
          for (const [ak, av] of r.pairs(y.deref(item), ap, ADAPTER_KEYS)) {
            if (ak === 'id') id = r.string(av, `${ap}.id`);
            else if (ak === 'rank') rank = r.int(av, `${ap}.rank`);
            else baseModel = r.string(av, `${ap}.base_model`);
          }
          return { id, rank, baseModel };
        });
        break;
      }
    }
  }
  return out;
}

/** The `--lora-*` scalar flags, each only when given. */
export interface LoraFlagOverrides {
  readonly adapterCapacity?: number;
  readonly loadBaseLatencyUs?: number;
  readonly loadBandwidthBytesUs?: number;
  readonly footprintBytesPerRank?: number;
}

const finite = (v: number): boolean => Number.isFinite(v);

/**
 * File ⊕ defaults ⊕ flags (flags win, then the file, then defaults.yaml), validated as the reference validates
 * (`LoRAConfig.Validate`, then the cost model's checks). Returns null when the subsystem is inert: no adapters,
 * or adapters without a capacity (the reference warns and runs without adapter tracking). `corrected`
 * (--semantics corrected) gives adapters without a capacity {@link DEFAULT_ADAPTER_CAPACITY} slot(s) instead.
 * @throws LoraConfigError naming the field and the fix; `source` names where the config came from.
 */
export function resolveLora(file: LoraConfig, flags: LoraFlagOverrides, source: string, warn: (m: string) => void = () => undefined, corrected = false): ResolvedLora | null {
  const given = flags.adapterCapacity ?? file.adapterCapacity;
  const capacity = given === null && corrected && file.adapters.length > 0 ? DEFAULT_ADAPTER_CAPACITY : given;
  if (capacity !== given) warn(`${source}: adapter_capacity is not set; each instance gets ${capacity} adapter slot, vLLM's --max-loras default (set adapter_capacity or --lora-adapter-capacity to change it)`);
  const base = flags.loadBaseLatencyUs ?? file.loadBaseLatencyUs ?? LORA_DEFAULTS.loadBaseLatencyUs;
  const bandwidth = flags.loadBandwidthBytesUs ?? file.loadBandwidthBytesUs ?? LORA_DEFAULTS.loadBandwidthBytesUs;
  const footprint = flags.footprintBytesPerRank ?? file.footprintBytesPerRank ?? LORA_DEFAULTS.footprintBytesPerRank;
  const tiers = file.stepOverheadTiers.size > 0 ? file.stepOverheadTiers : LORA_DEFAULTS.stepOverheadTiers;
  const bad = (field: string, problem: string, fix: string): never => {
    throw new LoraConfigError(`${source}: ${field}: ${problem}; ${fix}`, { field });
  };
  const hasAdapters = file.adapters.length > 0;
  if (hasAdapters && capacity !== null && capacity <= 0) {
    bad('adapter_capacity', `must be > 0 when adapters are declared, got ${capacity}`, 'give each instance at least one adapter slot (adapter_capacity: 1 or more, or --lora-adapter-capacity)');
  }
  const seen = new Set<string>();
  file.adapters.forEach((a, i) => {
    if (a.id === '') bad(`adapters[${i}].id`, 'is empty', 'name every adapter (the id requests use)');
    if (!(a.rank > 0)) bad(`adapters[${i}].rank`, `must be > 0, got ${a.rank} (adapter "${a.id}")`, 'set the adapter\'s LoRA rank, e.g. 8, 16 or 32');
    if (seen.has(a.id)) bad(`adapters[${i}].id`, `duplicate adapter id "${a.id}"`, 'give each adapter a unique id');
    seen.add(a.id);
  });
  if (!(finite(base) && base >= 0)) bad('load_base_latency_us', `must be finite and >= 0, got ${base}`, 'set the fixed cold-load latency in µs');
  if (!(finite(bandwidth) && bandwidth > 0)) bad('load_bandwidth_bytes_us', `must be finite and > 0, got ${bandwidth}`, 'set the adapter load bandwidth in bytes/µs');
  if (!(finite(footprint) && footprint > 0)) bad('footprint_bytes_per_rank', `must be finite and > 0, got ${footprint}`, 'set the adapter HBM bytes per rank unit');
  const resolvedTiers = new Map<number, { k6: number; k7: number }>();
  for (const rank of [...tiers.keys()].sort((a, b) => a - b)) {
    const t = tiers.get(rank)!;
    if (!(rank > 0)) bad('step_overhead_tiers', `rank key must be > 0, got ${rank}`, 'key tiers by LoRA rank');
    if (t.k6 !== null && !(finite(t.k6) && t.k6 >= 0)) bad(`step_overhead_tiers.${rank}.k6`, `must be finite and >= 0, got ${t.k6}`, 'set k6 >= 0');
    if (t.k7 === null || !(finite(t.k7) && t.k7 > 0)) bad(`step_overhead_tiers.${rank}.k7`, 'must be set, finite and > 0 (it divides k6)', 'set k7 > 0');
    resolvedTiers.set(rank, { k6: t.k6 ?? 0, k7: t.k7 as number });
  }
  if (!hasAdapters) return null;
  if (capacity === null) {
    warn(`${source}: adapters are declared but adapter_capacity is not set; resident-adapter tracking is off and adapter metrics will be zero (set adapter_capacity or --lora-adapter-capacity)`);
    return null;
  }
  const resolved: ResolvedLora = { capacity, loadBaseLatencyUs: base, loadBandwidthBytesUs: bandwidth, footprintBytesPerRank: footprint, stepOverheadTiers: resolvedTiers, adapters: file.adapters };
  const maxRank = Math.max(...file.adapters.map((a) => a.rank));
  for (const a of file.adapters) {
    const load = loadLatencyUs(resolved, a.rank);
    if (!finite(load) || load > 1e15) bad(`adapters.${a.id}.rank`, `rank ${a.rank} gives an unusable load latency (${load} µs)`, 'reduce the rank or footprint_bytes_per_rank');
  }
  const reserved = capacity * footprint * maxRank;
  if (!finite(reserved) || reserved > 1e18) bad('adapter_capacity', `the static HBM reservation (${capacity} x ${footprint} x rank ${maxRank} = ${reserved} bytes) is unusable`, 'reduce adapter_capacity, footprint_bytes_per_rank or the largest rank');
  return resolved;
}

/** Cold-load latency of a rank (µs): base + ceil(footprint x rank / bandwidth). */
export function loadLatencyUs(l: Pick<ResolvedLora, 'loadBaseLatencyUs' | 'footprintBytesPerRank' | 'loadBandwidthBytesUs'>, rank: number): number {
  return l.loadBaseLatencyUs + Math.ceil((l.footprintBytesPerRank * rank) / l.loadBandwidthBytesUs);
}

/** HBM reserved per instance for the resident slots (bytes): capacity x footprint of the largest rank. */
export function adapterReservedBytes(l: ResolvedLora | null): number {
  if (l === null) return 0;
  const maxRank = Math.max(...l.adapters.map((a) => a.rank));
  return l.capacity * l.footprintBytesPerRank * maxRank;
}
