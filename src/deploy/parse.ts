/**
 * Reading a deployment file (YAML or JSON) through the bounded loader: strict keys, typed values, one error at
 * `file:line:col` naming the key and the fix. Semantic checks that need no other input happen here too
 * (bounds, unique names, a pool with no instances, negative delays); checks against the model catalog and the
 * workload happen where those are known (sim/resolve-deployment.ts).
 */
import { isMap, isScalar, isSeq } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { BlisError } from '../domain/errors.js';
import { LIMITS } from '../domain/limits.js';
import { KV_CACHE_DTYPES, SPECULATIVE_METHODS } from '../domain/engine-features.js';
import { parseYaml, type ParsedYaml } from '../format/yaml.js';
import type { AutoscalerSpec, ConfigSpec, DelayDistributionSpec, DeploymentSpec, ModelSpec, PoolKind, PoolSpec } from './spec.js';

export const DEPLOYMENT_ERROR = 'DEPLOYMENT_INVALID';

class Reader {
  constructor(private readonly p: ParsedYaml) {}

  fail(node: unknown, path: string, problem: string, fix: string): never {
    const n = this.p.deref(node);
    const off = (n as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
    const { line, col } = this.p.pos(off);
    throw new BlisError(DEPLOYMENT_ERROR, `${this.p.file}:${line}:${col}: ${path === '' ? 'the deployment file' : path}: ${problem}; ${fix}`, { file: this.p.file, line, col, field: path });
  }

  /** The map's entries by key, refusing keys outside `known` and duplicates. */
  map(node: unknown, path: string, known: readonly string[]): Map<string, { key: YamlNode; value: YamlNode | null }> {
    const n = this.p.deref(node);
    if (!isMap(n)) this.fail(node, path, 'must be a mapping', `write ${path || 'the file'} as key: value lines`);
    const out = new Map<string, { key: YamlNode; value: YamlNode | null }>();
    for (const item of (n).items) {
      const k = this.p.deref(item.key);
      const name = isScalar(k) ? String(k.value) : '';
      const at = path === '' ? name : `${path}.${name}`;
      if (!known.includes(name)) this.fail(item.key, at, `unknown key "${name}"`, `use one of: ${known.join(', ')}`);
      if (out.has(name)) this.fail(item.key, at, 'duplicate key', 'give each key once');
      out.set(name, { key: k as YamlNode, value: this.p.deref(item.value) });
    }
    return out;
  }

  seq(node: unknown, path: string): YamlNode[] {
    const n = this.p.deref(node);
    if (!isSeq(n)) this.fail(node, path, 'must be a list', `write ${path} as "- item" lines`);
    return n.items.map((i) => this.p.deref(i) as YamlNode);
  }

  str(node: unknown, path: string): string {
    const n = this.p.deref(node);
    if (!isScalar(n) || typeof n.value !== 'string' || n.value === '') this.fail(node, path, 'must be a non-empty string', 'give a name');
    return n.value;
  }

  num(node: unknown, path: string, opts: { int?: boolean; min?: number; minExclusive?: boolean; max?: number } = {}): number {
    const n = this.p.deref(node);
    if (!isScalar(n) || typeof n.value !== 'number' || !Number.isFinite(n.value)) this.fail(node, path, 'must be a number', 'give a plain number');
    const v = n.value;
    if (opts.int === true && !Number.isInteger(v)) this.fail(node, path, `must be a whole number, got ${v}`, 'drop the fraction');
    if (opts.min !== undefined && (opts.minExclusive === true ? v <= opts.min : v < opts.min)) {
      this.fail(node, path, `must be ${opts.minExclusive === true ? '>' : '>='} ${opts.min}, got ${v}`, `use a value ${opts.minExclusive === true ? 'above' : 'of at least'} ${opts.min}`);
    }
    if (opts.max !== undefined && v > opts.max) this.fail(node, path, `must be <= ${opts.max}, got ${v}`, `use a value of at most ${opts.max} (docs/usage.md, Limits)`);
    return v;
  }

  oneOf<T extends string>(node: unknown, path: string, values: readonly T[]): T {
    const s = this.str(node, path);
    if (!(values as readonly string[]).includes(s)) this.fail(node, path, `unknown value "${s}"`, `use one of: ${values.join(', ')}`);
    return s as T;
  }
}

const POOL_KEYS = ['replicas', 'min_replicas', 'max_replicas', 'hardware', 'tp', 'latency_model', 'total_kv_blocks', 'max_model_len'];
const CONFIG_KEYS = [
  'name', 'hardware', 'tp', 'latency_model', 'total_kv_blocks', 'max_model_len', 'cost_per_gpu_hour', 'replicas', 'min_replicas', 'max_replicas', 'prefill', 'decode',
  'gpus_per_node', 'inter_node_bandwidth', 'inter_node_latency', 'dp', 'dp_placement',
  'kv_cache_dtype', 'num_speculative_tokens', 'speculative_acceptance_rate', 'speculative_method',
];

function readPool(r: Reader, node: YamlNode, path: string, kind: PoolKind): PoolSpec {
  const m = r.map(node, path, POOL_KEYS);
  return poolFrom(r, m, path, kind, node);
}

function poolFrom(r: Reader, m: Map<string, { key: YamlNode; value: YamlNode | null }>, path: string, kind: PoolKind, node: YamlNode): PoolSpec {
  const get = (k: string): YamlNode | null | undefined => m.get(k)?.value;
  const rep = get('replicas');
  if (rep === undefined) r.fail(node, path, 'needs replicas', 'add replicas: N (at least 1)');
  // Bounded here, before anything is sized by it (a billion replicas used to crash V8 before the instance limit).
  const max = LIMITS.instances;
  const replicas = r.num(rep, `${path}.replicas`, { int: true, min: 0, max });
  if (replicas === 0) r.fail(rep, `${path}.replicas`, 'the pool has no instances', 'give it at least one replica (min_replicas may still be lower)');
  const minReplicas = get('min_replicas') == null ? replicas : r.num(get('min_replicas'), `${path}.min_replicas`, { int: true, min: 0, max });
  const maxReplicas = get('max_replicas') == null ? replicas : r.num(get('max_replicas'), `${path}.max_replicas`, { int: true, min: 1, max });
  if (minReplicas > maxReplicas) r.fail(get('min_replicas') ?? node, `${path}.min_replicas`, `min_replicas (${minReplicas}) is greater than max_replicas (${maxReplicas})`, 'lower min_replicas or raise max_replicas');
  if (replicas < minReplicas || replicas > maxReplicas) r.fail(rep, `${path}.replicas`, `${replicas} is outside [min_replicas, max_replicas] = [${minReplicas}, ${maxReplicas}]`, 'start within the bounds');
  const opt = <T>(k: string, read: (n: YamlNode | null, p: string) => T): T | undefined => (get(k) == null ? undefined : read(get(k) as YamlNode, `${path}.${k}`));
  const hardware = opt('hardware', (n, p) => r.str(n, p));
  const tp = opt('tp', (n, p) => r.num(n, p, { int: true, min: 1 }));
  const latencyModel = opt('latency_model', (n, p) => r.oneOf(n, p, ['trained-physics', 'roofline', 'blackbox']));
  const totalKvBlocks = opt('total_kv_blocks', (n, p) => r.num(n, p, { int: true, min: 1 }));
  const maxModelLen = opt('max_model_len', (n, p) => r.num(n, p, { int: true, min: 1 }));
  return {
    kind, replicas, minReplicas, maxReplicas,
    ...(hardware === undefined ? {} : { hardware }),
    ...(tp === undefined ? {} : { tp }),
    ...(latencyModel === undefined ? {} : { latencyModel }),
    ...(totalKvBlocks === undefined ? {} : { totalKvBlocks }),
    ...(maxModelLen === undefined ? {} : { maxModelLen }),
  };
}

function readConfig(r: Reader, node: YamlNode, path: string): ConfigSpec {
  const m = r.map(node, path, CONFIG_KEYS);
  const get = (k: string): YamlNode | null | undefined => m.get(k)?.value;
  if (get('name') == null) r.fail(node, path, 'needs a name', 'add name: <configuration id>');
  const name = r.str(get('name'), `${path}.name`);
  if (name.includes('/')) r.fail(get('name'), `${path}.name`, `"${name}" contains "/"`, 'use letters, digits, "-" or "_"');
  if (get('hardware') == null) r.fail(node, path, 'needs hardware', 'add hardware: <GPU>, e.g. H100');
  const disagg = get('prefill') != null || get('decode') != null;
  let pools: PoolSpec[];
  if (disagg) {
    if (get('prefill') == null || get('decode') == null) r.fail(node, path, 'a disaggregated configuration needs both prefill and decode pools', 'add the missing pool');
    for (const k of ['replicas', 'min_replicas', 'max_replicas']) if (get(k) != null) r.fail(get(k), `${path}.${k}`, 'replicas of a disaggregated configuration belong to its pools', `move ${k} into prefill: and decode:`);
    pools = [readPool(r, get('prefill') as YamlNode, `${path}.prefill`, 'prefill'), readPool(r, get('decode') as YamlNode, `${path}.decode`, 'decode')];
  } else {
    const sub = new Map([...m].filter(([k]) => POOL_KEYS.includes(k) && ['replicas', 'min_replicas', 'max_replicas'].includes(k)));
    pools = [poolFrom(r, sub, path, 'monolithic', node)];
  }
  const optNum = (k: string, o: Parameters<Reader['num']>[2]): number => (get(k) == null ? 0 : r.num(get(k), `${path}.${k}`, o));
  // The inter-node fabric of this configuration's nodes (absent = the run's --gpus-per-node and friends).
  const gpusPerNode = get('gpus_per_node') == null ? undefined : r.num(get('gpus_per_node'), `${path}.gpus_per_node`, { int: true, min: 1, max: 1024 });
  const interNodeBandwidth = get('inter_node_bandwidth') == null ? undefined : r.num(get('inter_node_bandwidth'), `${path}.inter_node_bandwidth`, { min: 0 });
  const interNodeLatency = get('inter_node_latency') == null ? undefined : r.num(get('inter_node_latency'), `${path}.inter_node_latency`, { min: 0 });
  const kvCacheDtype = get('kv_cache_dtype') == null ? undefined : r.oneOf(get('kv_cache_dtype'), `${path}.kv_cache_dtype`, KV_CACHE_DTYPES);
  const speculative = readSpeculative(r, node, path, get);
  // Data parallelism and its placement (absent = the run's --dp and --dp-placement).
  const dp = get('dp') == null ? undefined : r.num(get('dp'), `${path}.dp`, { int: true, min: 1, max: 1024 });
  const dpPlacement = get('dp_placement') == null ? undefined : r.oneOf(get('dp_placement'), `${path}.dp_placement`, ['combined', 'replicas'] as const);
  return {
    ...(kvCacheDtype === undefined ? {} : { kvCacheDtype }),
    ...(speculative === undefined ? {} : { speculative }),
    name,
    hardware: r.str(get('hardware'), `${path}.hardware`),
    tp: get('tp') == null ? 1 : r.num(get('tp'), `${path}.tp`, { int: true, min: 1 }),
    latencyModel: get('latency_model') == null ? '' : r.oneOf(get('latency_model'), `${path}.latency_model`, ['trained-physics', 'roofline', 'blackbox']),
    totalKvBlocks: optNum('total_kv_blocks', { int: true, min: 1 }),
    maxModelLen: optNum('max_model_len', { int: true, min: 1 }),
    costPerGpuHour: optNum('cost_per_gpu_hour', { min: 0 }),
    ...(gpusPerNode === undefined ? {} : { gpusPerNode }),
    ...(interNodeBandwidth === undefined ? {} : { interNodeBandwidth }),
    ...(interNodeLatency === undefined ? {} : { interNodeLatency }),
    ...(dp === undefined ? {} : { dp }),
    ...(dpPlacement === undefined ? {} : { dpPlacement }),
    pools,
  };
}

/** A configuration's speculative-decoding fields, checked as the flags are (docs/usage.md, Speculative decoding). */
function readSpeculative(r: Reader, node: YamlNode, path: string, get: (k: string) => YamlNode | null | undefined): ConfigSpec['speculative'] {
  const tokensNode = get('num_speculative_tokens');
  const rateNode = get('speculative_acceptance_rate');
  const methodNode = get('speculative_method');
  if (tokensNode == null) {
    if (rateNode != null) r.fail(rateNode, `${path}.speculative_acceptance_rate`, 'needs num_speculative_tokens', 'add num_speculative_tokens: K (draft tokens per step)');
    if (methodNode != null) r.fail(methodNode, `${path}.speculative_method`, 'needs num_speculative_tokens', 'add num_speculative_tokens: K (draft tokens per step)');
    return undefined;
  }
  const tokens = r.num(tokensNode, `${path}.num_speculative_tokens`, { int: true, min: 0, max: 64 });
  const method = methodNode == null ? '' : r.oneOf(methodNode, `${path}.speculative_method`, SPECULATIVE_METHODS);
  if (tokens === 0) {
    if (rateNode != null || methodNode != null) r.fail(rateNode ?? methodNode, `${path}.${rateNode != null ? 'speculative_acceptance_rate' : 'speculative_method'}`, 'needs num_speculative_tokens > 0 (0 = off)', 'remove it or draft at least one token');
    return { tokens: 0, acceptanceRate: 0, method: '' };
  }
  if (rateNode == null) r.fail(node, path, `num_speculative_tokens ${tokens} needs speculative_acceptance_rate`, 'add speculative_acceptance_rate: α in [0, 1] (blis runs no draft model)');
  const acceptanceRate = r.num(rateNode, `${path}.speculative_acceptance_rate`, { min: 0, max: 1 });
  return { tokens, acceptanceRate, method };
}

function readDelay(r: Reader, node: YamlNode, path: string): DelayDistributionSpec {
  const kinds = ['constant', 'normal', 'uniform', 'exponential', 'lognormal'] as const;
  const m = r.map(node, path, ['distribution', 'value', 'mean', 'stddev', 'min', 'max', 'sigma']);
  const get = (k: string): YamlNode | null | undefined => m.get(k)?.value;
  if (get('distribution') == null) r.fail(node, path, 'needs a distribution', `add distribution: ${kinds.join(' | ')}`);
  const kind = r.oneOf(get('distribution'), `${path}.distribution`, kinds);
  const need = (k: string): number => {
    if (get(k) == null) r.fail(node, path, `a ${kind} delay needs ${k}`, `add ${k}: <seconds>`);
    return r.num(get(k), `${path}.${k}`, { min: 0 });
  };
  switch (kind) {
    case 'constant':
      return { kind, valueS: need('value') };
    case 'normal':
      return { kind, meanS: need('mean'), stddevS: need('stddev') };
    case 'uniform': {
      const minS = need('min');
      const maxS = need('max');
      if (minS > maxS) r.fail(get('min'), `${path}.min`, `min (${minS}) is greater than max (${maxS})`, 'swap them');
      return { kind, minS, maxS };
    }
    case 'exponential':
      return { kind, meanS: need('mean') };
    case 'lognormal':
      return { kind, meanS: need('mean'), sigma: need('sigma') };
  }
}

/** The tunable parameters of each built-in policy: snake_case key -> [camelCase, min, max, whole number]. */
const POLICY_PARAMS: Record<string, Record<string, [string, number, number, boolean]>> = {
  threshold: {
    scale_up_queue_depth: ['scaleUpQueueDepth', 0, Infinity, false],
    scale_down_queue_depth: ['scaleDownQueueDepth', 0, Infinity, false],
    scale_up_utilization: ['scaleUpUtilization', 0, 1, false],
    scale_down_utilization: ['scaleDownUtilization', 0, 1, false],
    cooldown_us: ['cooldownUs', 0, Infinity, false],
    step: ['step', 1, Infinity, true],
  },
  'target-utilization': {
    target: ['target', 0, 1, false],
    tolerance: ['tolerance', 0, Infinity, false],
    queue_weight: ['queueWeight', 0, Infinity, false],
    max_scale_down_fraction: ['maxScaleDownFraction', 0, 1, false],
    cooldown_us: ['cooldownUs', 0, Infinity, false],
  },
};

function readPolicyParams(r: Reader, node: YamlNode, path: string, policy: string): Record<string, number> {
  const table = POLICY_PARAMS[policy];
  if (table === undefined) r.fail(node, path, policy === '' ? 'parameters need a built-in policy' : `policy ${policy} takes no parameters here`, policy === '' ? 'add policy: threshold or target-utilization' : 'tune the saturation analyzer in the policy bundle\'s autoscaler.analyzer, or remove policy_params');
  const m = r.map(node, path, Object.keys(table));
  const out: Record<string, number> = {};
  for (const [k, { value }] of m) {
    const [name, min, max, int] = table[k] as [string, number, number, boolean];
    const positive = name === 'target' || name === 'maxScaleDownFraction';
    out[name] = r.num(value, `${path}.${k}`, { int, min, minExclusive: positive, ...(Number.isFinite(max) ? { max } : {}) });
  }
  const pair = (lo: string, hi: string): void => {
    const a = out[table[lo]?.[0] ?? lo] ?? null;
    const b = out[table[hi]?.[0] ?? hi] ?? null;
    if (a !== null && b !== null && a > b) r.fail(node, path, `${lo} (${a}) is above ${hi} (${b})`, 'keep the scale-down mark below the scale-up mark');
  };
  if (policy === 'threshold') {
    pair('scale_down_queue_depth', 'scale_up_queue_depth');
    pair('scale_down_utilization', 'scale_up_utilization');
  }
  return out;
}

function readAutoscaler(r: Reader, node: YamlNode, path: string): AutoscalerSpec {
  const m = r.map(node, path, ['policy', 'policy_params', 'interval_us', 'scale_up_stabilization_window_us', 'scale_down_stabilization_window_us', 'triggers', 'provisioning_delay', 'model_load_time', 'warmup', 'drain']);
  const get = (k: string): YamlNode | null | undefined => m.get(k)?.value;
  const nonNeg = (n: YamlNode | null | undefined, p: string): number => (n == null ? 0 : r.num(n, p, { min: 0 }));
  let triggers: AutoscalerSpec['triggers'] = null;
  if (get('triggers') != null) {
    const t = r.map(get('triggers'), `${path}.triggers`, ['queue_depth', 'slo_attainment', 'utilization', 'sustained_us', 'rate_change', 'min_gap_us', 'check_every_us']);
    const tv = (k: string, o: Parameters<Reader['num']>[2] = { min: 0 }): number => (t.get(k)?.value == null ? 0 : r.num(t.get(k)?.value, `${path}.triggers.${k}`, o));
    triggers = {
      queueDepth: tv('queue_depth'), sloAttainment: tv('slo_attainment', { min: 0, max: 1 }), utilization: tv('utilization', { min: 0, max: 1 }),
      sustainedUs: tv('sustained_us'), rateChange: tv('rate_change'), minGapUs: tv('min_gap_us'),
      checkEveryUs: t.get('check_every_us')?.value == null ? 100_000 : tv('check_every_us'),
    };
  }
  let warmup: AutoscalerSpec['warmup'] = null;
  if (get('warmup') != null) {
    const w = r.map(get('warmup'), `${path}.warmup`, ['curve', 'duration_us', 'initial_penalty']);
    warmup = {
      curve: w.get('curve')?.value == null ? 'linear' : r.oneOf(w.get('curve')?.value, `${path}.warmup.curve`, ['linear', 'exponential', 'step']),
      durationUs: nonNeg(w.get('duration_us')?.value, `${path}.warmup.duration_us`),
      initialPenalty: w.get('initial_penalty')?.value == null ? 1.5 : r.num(w.get('initial_penalty')?.value, `${path}.warmup.initial_penalty`, { min: 1 }),
    };
  }
  let drain: AutoscalerSpec['drain'] = { mode: 'wait', timeoutUs: 0 };
  if (get('drain') != null) {
    const d = r.map(get('drain'), `${path}.drain`, ['mode', 'timeout_us']);
    const mode = d.get('mode')?.value == null ? 'wait' : r.oneOf(d.get('mode')?.value, `${path}.drain.mode`, ['wait', 'immediate', 'redirect']);
    const timeoutUs = nonNeg(d.get('timeout_us')?.value, `${path}.drain.timeout_us`);
    if (timeoutUs > 0 && mode !== 'wait') r.fail(d.get('timeout_us')?.value, `${path}.drain.timeout_us`, `a timeout only applies to mode wait (mode is ${mode})`, 'remove timeout_us or use mode: wait');
    drain = { mode, timeoutUs };
  }
  const intervalUs = get('interval_us') == null ? 30_000_000 : r.num(get('interval_us'), `${path}.interval_us`, { min: 0 });
  if (intervalUs > 0 && intervalUs < LIMITS.autoscalerMinIntervalUs) {
    r.fail(get('interval_us'), `${path}.interval_us`, `must be 0 or at least ${LIMITS.autoscalerMinIntervalUs} µs, got ${intervalUs}`, 'tick less often: a shorter interval only burns time (docs/usage.md, Limits)');
  }
  if (intervalUs === 0 && triggers === null) r.fail(get('interval_us'), `${path}.interval_us`, 'with interval_us 0 and no triggers the autoscaler never runs', 'give an interval or triggers');
  const policy = get('policy') == null ? '' : r.oneOf(get('policy'), `${path}.policy`, ['saturation', 'threshold', 'target-utilization']);
  return {
    policy,
    policyParams: get('policy_params') == null ? {} : readPolicyParams(r, get('policy_params') as YamlNode, `${path}.policy_params`, policy),
    intervalUs,
    scaleUpStabilizationWindowUs: nonNeg(get('scale_up_stabilization_window_us'), `${path}.scale_up_stabilization_window_us`),
    scaleDownStabilizationWindowUs: nonNeg(get('scale_down_stabilization_window_us'), `${path}.scale_down_stabilization_window_us`),
    triggers,
    provisioningDelay: get('provisioning_delay') == null ? null : readDelay(r, get('provisioning_delay') as YamlNode, `${path}.provisioning_delay`),
    modelLoadTime: get('model_load_time') == null ? null : readDelay(r, get('model_load_time') as YamlNode, `${path}.model_load_time`),
    warmup,
    drain,
  };
}

/** Parses and checks a deployment file; throws one located BlisError at the first problem. */
export function parseDeployment(text: string, file: string): DeploymentSpec {
  const p = parseYaml(text, file, { code: DEPLOYMENT_ERROR });
  const r = new Reader(p);
  const top = r.map(p.doc.contents, '', ['models', 'default_model', 'autoscaler']);
  const modelsNode = top.get('models')?.value;
  if (modelsNode == null) r.fail(p.doc.contents, 'models', 'is missing', 'list the models: models: [{name: ..., configurations: [...]}]');
  const models: ModelSpec[] = [];
  const configNames = new Set<string>();
  let replicasInAll = 0;
  r.seq(modelsNode, 'models').forEach((mn, i) => {
    const path = `models[${i}]`;
    const m = r.map(mn, path, ['name', 'model_config_folder', 'configurations']);
    if (m.get('name')?.value == null) r.fail(mn, path, 'needs a name', 'add name: <model id>, e.g. meta-llama/llama-3.1-8b-instruct');
    const name = r.str(m.get('name')?.value, `${path}.name`).toLowerCase();
    if (models.some((x) => x.name === name)) r.fail(m.get('name')?.value, `${path}.name`, `model "${name}" is listed twice`, 'list each model once with all its configurations');
    const cn = m.get('configurations')?.value;
    if (cn == null) r.fail(mn, path, 'needs configurations', 'add configurations: [{name: ..., hardware: ..., replicas: ...}]');
    const list = r.seq(cn, `${path}.configurations`);
    if (list.length === 0) r.fail(cn, `${path}.configurations`, 'is empty', 'give at least one configuration');
    const configs = list.map((c, k) => {
      const spec = readConfig(r, c, `${path}.configurations[${k}]`);
      if (configNames.has(spec.name)) r.fail(c, `${path}.configurations[${k}].name`, `configuration "${spec.name}" is defined twice`, 'give each configuration a unique name');
      configNames.add(spec.name);
      for (const pool of spec.pools) {
        replicasInAll += pool.replicas;
        if (replicasInAll > LIMITS.instances) {
          r.fail(c, `${path}.configurations[${k}]`, `the configurations so far start ${replicasInAll} replicas in all, more than the ${LIMITS.instances} instances one cluster may hold (docs/usage.md, Limits)`, 'give the configurations fewer replicas');
        }
      }
      return spec;
    });
    models.push({ name, modelConfigFolder: m.get('model_config_folder')?.value == null ? '' : r.str(m.get('model_config_folder')?.value, `${path}.model_config_folder`), configs });
  });
  if (models.length === 0) r.fail(modelsNode, 'models', 'is empty', 'list at least one model');
  const dm = top.get('default_model')?.value;
  const defaultModel = dm == null ? (models[0] as ModelSpec).name : r.str(dm, 'default_model').toLowerCase();
  if (!models.some((m) => m.name === defaultModel)) r.fail(dm, 'default_model', `"${defaultModel}" is not one of the models`, `use one of: ${models.map((m) => m.name).join(', ')}`);
  const an = top.get('autoscaler')?.value;
  return { file, models, defaultModel, autoscaler: an == null ? null : readAutoscaler(r, an, 'autoscaler') };
}
