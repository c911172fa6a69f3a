/**
 * `blis policies export --format llm-d`: a policy bundle's weighted-scorer routing as the configuration of llm-d's
 * endpoint picker (the gateway-api-inference-extension EPP's `EndpointPickerConfig`): one plugin per scorer, a
 * `max-score-picker` (the weighted policy's argmax, ties broken at random in both), a `single-profile-handler`,
 * and one scheduling profile `default` that references them with their weights.
 *
 * What the EPP cannot express is refused with one error naming it and why (decision trees, code, templates that
 * are not weighted scorers, scorers without an llm-d plugin, every non-routing control point); settings llm-d
 * makes elsewhere (its metrics refresh, its prefix indexes' sizes, the autoscaler, node pools) give warnings.
 * Nothing is dropped silently. Pure: text in, text out, warnings returned.
 */
import { BlisError } from '../domain/errors.js';
import { locateBundle } from './bundle.js';
import type { PolicyBundle } from './bundle-types.js';
import type { PolicyPath } from './errors.js';
import { DEFAULT_SCORERS, type ScorerSetting } from './names.js';
import type { PolicySpec } from './spec.js';
import { CONTROL_POINTS } from './view.js';

/** The EPP config API versions the export can write (the first is the default). */
export const LLMD_API_VERSIONS = [
  'inference.networking.x-k8s.io/v1alpha1',
  'config.apix.gateway-api-inference-extension.sigs.k8s.io/v1alpha1',
  'llm-d.ai/v1',
] as const;

/** blis-ts scorer → llm-d plugin type (null: no counterpart, with the reason). */
export const LLMD_SCORERS: Readonly<Record<string, { readonly type: string | null; readonly note: string }>> = {
  'precise-prefix-cache': { type: 'precise-prefix-cache-scorer', note: 'llm-d reads the pods\' KV-cache events; blis-ts reads the caches directly' },
  'prefix-affinity': { type: 'prefix-cache-scorer', note: 'both keep a router-side LRU of the prompt\'s block hashes per pod' },
  'no-hit-lru': { type: 'no-hit-lru-scorer', note: 'cold requests to the least recently used pods' },
  'queue-depth': { type: 'queue-scorer', note: 'shorter waiting queue scores higher (min-max)' },
  'kv-utilization': { type: 'kv-cache-utilization-scorer', note: '1 - KV-cache utilization' },
  'running-requests': { type: 'running-requests-size-scorer', note: 'fewer running requests scores higher (min-max)' },
  'active-requests': { type: 'active-request-scorer', note: 'router-side in-flight requests, max-normalised' },
  'load-aware': { type: 'load-aware-scorer', note: '0.5 at an empty queue down to 0 at 128 waiting (llm-d\'s default queueThreshold)' },
  'lora-affinity': { type: 'lora-affinity-scorer', note: 'prefers pods with the request\'s adapter loaded' },
  'load-balance': { type: null, note: 'llm-d has no 1/(1 + load) scorer' },
  'vllm-dp': { type: null, note: 'vLLM\'s internal data-parallel balancer is not an EPP plugin' },
};

export class PolicyExportError extends BlisError {
  constructor(message: string, where: { file?: string; line?: number; col?: number; field?: string } = {}) {
    super('POLICY_EXPORT', message, where);
    this.name = 'PolicyExportError';
  }
}

export interface LlmdExportOptions {
  /** The bundle's file name (messages, the header comment). */
  readonly file: string;
  /** Default {@link LLMD_API_VERSIONS}[0]. */
  readonly apiVersion?: string;
  /** --snapshot-refresh-interval / --cache-signal-delay when given (µs): staleness the EPP sets elsewhere. */
  readonly snapshotRefreshIntervalUs?: number;
  readonly cacheSignalDelayUs?: number;
}

export interface LlmdExport {
  readonly yaml: string;
  readonly warnings: readonly string[];
  /** The exported profile, llm-d plugin type → integer weight, in profile order. */
  readonly scorers: readonly { readonly type: string; readonly weight: number }[];
}

const WEIGHTED_SCORERS_ORDER = ['precise-prefix-cache', 'queue-depth', 'kv-utilization'];

/**
 * Exports `bundle`'s routing to an llm-d EndpointPickerConfig.
 * @throws PolicyExportError naming what cannot be exported (at the bundle's file:line:col) and why.
 */
export function exportLlmd(bundle: PolicyBundle, opts: LlmdExportOptions): LlmdExport {
  const file = opts.file;
  const loc = locateBundle(bundle);
  const at = (path: PolicyPath): { where: string; line?: number; col?: number } => {
    if (loc === undefined) return { where: `${file}: ` };
    const p = loc.position(path);
    return { where: `${file}:${p.line}:${p.col}: `, line: p.line, col: p.col };
  };
  const fail = (path: PolicyPath | string, problem: string, fix: string): never => {
    const w = typeof path === 'string' ? { where: `${path}: ` } : at(path);
    const field = typeof path === 'string' ? '' : path.join('.');
    throw new PolicyExportError(`${w.where}${problem}; ${fix}`, { file, ...(w.line === undefined ? {} : { line: w.line, col: w.col }), field });
  };
  const apiVersion = opts.apiVersion ?? LLMD_API_VERSIONS[0];
  if (!(LLMD_API_VERSIONS as readonly string[]).includes(apiVersion)) {
    throw new PolicyExportError(`--api-version ${JSON.stringify(apiVersion)} is not an EndpointPickerConfig version blis-ts writes; use one of ${LLMD_API_VERSIONS.join(', ')}`, { field: '--api-version' });
  }
  const warnings: string[] = [];

  // The routing profile: blis-ts scorer name → weight, in the order the weighted policy applies them.
  const specs = bundle.evolvable.specs;
  const routingSpec = specs.routing;
  let profile: readonly ScorerSetting[];
  let scorerPath: (i: number) => PolicyPath | string;
  if (routingSpec !== undefined) {
    profile = routingSpecProfile(routingSpec, fail);
    scorerPath = () => routingSpec.where;
  } else {
    const r = bundle.routing;
    if (r.policy === '') {
      if (r.scorers !== null) fail(['routing', 'scorers'], 'routing.scorers without routing.policy: weighted (the run\'s --routing-policy decides whether they are used)', 'set routing.policy: weighted to export them');
      fail([], 'the bundle sets no routing policy, so there is nothing to export (a run would route with its --routing-policy flag)', 'give the bundle routing: {policy: weighted, scorers: [...]} or a weighted_scorers / weighted_affinity_routing template');
    }
    if (r.policy !== 'weighted') {
      fail(['routing', 'policy'], `routing policy "${r.policy}" cannot be exported: llm-d's endpoint picker routes by weighted scorers and a picker, and has no ${r.policy} policy`, 'export a weighted routing (routing.policy: weighted with scorers)');
    }
    profile = r.scorers ?? DEFAULT_SCORERS;
    scorerPath = (i) => (r.scorers === null ? ['routing', 'policy'] : ['routing', 'scorers', i, 'name']);
  }
  const mapped: { type: string; weight: number; blis: string }[] = [];
  profile.forEach((s, i) => {
    if (!(s.weight > 0)) return;
    const m = LLMD_SCORERS[s.name];
    if (m === undefined || m.type === null) {
      fail(scorerPath(i), `scorer "${s.name}" (weight ${s.weight}) has no llm-d counterpart: ${m?.note ?? 'unknown scorer'}`, `drop it or give it weight 0; llm-d scorers: ${Object.entries(LLMD_SCORERS).filter(([, v]) => v.type !== null).map(([k]) => k).join(', ')}`);
    }
    mapped.push({ type: (m as { type: string }).type, weight: s.weight, blis: s.name });
  });
  const first = scorerPath(0);
  if (mapped.length === 0) fail(typeof first === 'string' ? first : ['routing'], 'the routing gives every scorer weight 0: nothing to score with', 'give at least one scorer a weight > 0');

  // Everything outside routing: refused (a decision the EPP's scheduling profiles cannot hold) or warned about.
  for (const point of CONTROL_POINTS) {
    const s = specs[point];
    if (s === undefined || point === 'routing') continue;
    fail(s.where, `the ${point} control point (type ${s.type}) cannot be exported: an EndpointPickerConfig holds the routing (scorers and picker) only`, `export a bundle with routing alone (remove ${point}:), and deploy the ${point} decision with the component that owns it`);
  }
  const a = bundle.admission;
  if (a.policy !== '' || a.tokenBucketCapacity !== null || a.tokenBucketRefillRate !== null || a.tierShedThreshold !== null || a.tierShedMinPriority !== null || a.gaieQdThreshold !== null || a.gaieKvThreshold !== null || a.sloPriorities !== null || a.sloTargets !== null) {
    fail(['admission'], 'admission cannot be exported: llm-d admits through its flow-control layer and saturation detector, not the scheduling profile this export writes', 'remove admission: from the bundle to export its routing');
  }
  if (bundle.priority.policy !== '') fail(['priority'], 'priority cannot be exported: llm-d takes a request\'s priority from its InferenceObjective', 'remove priority: from the bundle');
  if (bundle.scheduler !== '') fail(['scheduler'], `the instance scheduler "${bundle.scheduler}" cannot be exported: it is the model server's (vLLM's --scheduling-policy), not the endpoint picker's`, 'remove scheduler: from the bundle');
  if (bundle.preemption.policy !== '') fail(['preemption'], 'preemption cannot be exported: it is the model server\'s, not the endpoint picker\'s', 'remove preemption: from the bundle');
  if (bundle.tenantBudgets !== null) fail(['tenant_budgets'], 'tenant budgets cannot be exported: llm-d has no per-tenant capacity share in its scheduling profiles', 'remove tenant_budgets: from the bundle');
  const as = bundle.autoscaler;
  if (bundle.nodePools !== null) warnings.push(`${at(['node_pools']).where}node_pools are not exported: node pools are your cluster's, not the endpoint picker's`);
  if (as.intervalUs !== 0 || as.scaleUpStabilizationWindowUs !== 0 || as.scaleDownStabilizationWindowUs !== 0 || as.hpaScrapeDelay.mean !== 0 || as.analyzer.kvCacheThreshold !== 0 || as.analyzer.scaleUpThreshold !== 0 || as.analyzer.scaleDownBoundary !== 0 || as.analyzer.avgInputTokens !== 0) {
    warnings.push(`${at(['autoscaler']).where}autoscaler is not exported: llm-d scales with its workload variant autoscaler or an HPA, configured apart from the endpoint picker`);
  }
  const lc = bundle.instanceLifecycle;
  if (lc.loadingDelay.mean !== 0 || lc.loadingDelay.stddev !== 0 || lc.warmStartInitialInstances) warnings.push(`${at(['instance_lifecycle']).where}instance_lifecycle is not exported: it describes the model servers, not the endpoint picker`);
  const types = new Set(mapped.map((m) => m.type));
  if (types.has('precise-prefix-cache-scorer')) warnings.push('precise-prefix-cache-scorer needs llm-d\'s KV-event indexer set for your deployment (its tokenizer and the vLLM pods\' KV-event endpoint: the plugin\'s parameters), which blis-ts cannot know; blis-ts read the caches directly');
  if (types.has('prefix-cache-scorer')) warnings.push('prefix-cache-scorer: blis-ts hashed --block-size-in-tokens blocks into a 10,000-block LRU per instance; llm-d takes its block size and LRU capacity from the plugin\'s parameters (or tunes them from the pods): set them to match your model servers');
  if (opts.snapshotRefreshIntervalUs !== undefined) warnings.push(`--snapshot-refresh-interval ${opts.snapshotRefreshIntervalUs} µs is not in the EndpointPickerConfig: the EPP refreshes pod metrics at its own --refresh-metrics-interval flag (set it to ${opts.snapshotRefreshIntervalUs / 1000}ms to match)`);
  if (opts.cacheSignalDelayUs !== undefined) warnings.push(`--cache-signal-delay ${opts.cacheSignalDelayUs} µs is not in the EndpointPickerConfig: in llm-d the prefix-cache signal lags by the KV-event delivery, which no setting fixes`);

  const { ints, exact } = integerWeights(mapped.map((m) => m.weight));
  if (!exact) warnings.push(`weights ${mapped.map((m) => `${m.blis}:${m.weight}`).join(',')} were rounded to integers in proportion (${ints.join(':')}): some EPP versions take integer weights only`);
  const scorers = mapped.map((m, i) => ({ type: m.type, weight: ints[i] as number }));
  const lines = [
    `# llm-d endpoint picker configuration exported by blis-ts (blis policies export --format llm-d) from ${file}`,
    `# routing: weighted ${mapped.map((m) => `${m.blis}:${m.weight}`).join(',')}`,
    `apiVersion: ${apiVersion}`,
    'kind: EndpointPickerConfig',
    'plugins:',
    ...scorers.map((s) => `- type: ${s.type}`),
    '- type: max-score-picker',
    '- type: single-profile-handler',
    'schedulingProfiles:',
    '- name: default',
    '  plugins:',
    ...scorers.flatMap((s) => [`  - pluginRef: ${s.type}`, `    weight: ${s.weight}`]),
    '  - pluginRef: max-score-picker',
  ];
  return { yaml: `${lines.join('\n')}\n`, warnings, scorers };
}

/** The weighted profile of an evolvable routing section; anything else is refused. */
function routingSpecProfile(spec: PolicySpec, fail: (path: string, problem: string, fix: string) => never): ScorerSetting[] {
  const fix = 'export a weighted routing: a weighted_scorers or weighted_affinity_routing template, or routing: {policy: weighted, scorers: [...]}';
  if (spec.type !== 'parameterized') {
    const what = spec.type === 'code' ? 'a code policy runs in blis-ts\'s sandbox' : 'a decision tree is evaluated by blis-ts';
    return fail(spec.where, `a ${spec.type} routing policy cannot be exported: ${what}, and llm-d's endpoint picker only runs its registered plugins`, fix);
  }
  const p = spec.parameters;
  const w = (k: string): number => p[k] as number;
  switch (spec.template) {
    case 'weighted_scorers': {
      const names = Object.keys(p).map((k) => k.replace(/_/g, '-'));
      const order = [...WEIGHTED_SCORERS_ORDER, ...names.filter((s) => !WEIGHTED_SCORERS_ORDER.includes(s)).sort()];
      return order.map((s) => ({ name: s, weight: w(s.replace(/-/g, '_')) }));
    }
    case 'weighted_affinity_routing': {
      if (w('utilization_threshold') < 1) {
        fail(spec.where, `weighted_affinity_routing's utilization_threshold ${w('utilization_threshold')} filters instances by KV utilization, which llm-d's scheduling profile has no filter for`, 'set utilization_threshold: 1 (no filter) to export it');
      }
      return [
        { name: 'precise-prefix-cache', weight: w('cache_affinity_weight') },
        { name: 'queue-depth', weight: w('queue_depth_weight') },
        { name: 'kv-utilization', weight: w('kv_utilization_weight') },
        { name: 'load-balance', weight: w('load_balance_weight') },
      ];
    }
    default:
      return fail(spec.where, `the ${spec.template} routing template cannot be exported: it is not a weighted sum of scorers`, fix);
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * Positive weights as the smallest proportional integers: scaled by the first power of ten (up to 10^6) that
 * makes every weight whole, then divided by their greatest common divisor. The weighted policy normalises its
 * weights and llm-d takes the argmax of the weighted sum, so proportional weights route alike. `exact` is false
 * when 10^6 did not suffice (the weights were then rounded).
 */
export function integerWeights(weights: readonly number[]): { ints: number[]; exact: boolean } {
  let scale = 1;
  let exact = false;
  for (let k = 0; k <= 6; k++, scale *= 10) {
    if (weights.every((x) => Math.abs(x * scale - Math.round(x * scale)) <= 1e-9 * Math.max(1, x * scale))) {
      exact = true;
      break;
    }
  }
  if (!exact) scale = 1e6;
  const raw = weights.map((x) => Math.max(1, Math.round(x * scale)));
  const g = raw.reduce((acc, x) => gcd(acc, x), 0);
  return { ints: raw.map((x) => x / g), exact };
}
