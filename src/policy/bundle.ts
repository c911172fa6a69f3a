/**
 * The policy bundle (`--policy-config` YAML): its typed shape (bundle-types.ts, re-exported here) and the
 * strict parser. Field names follow the YAML keys in camelCase; "not set" is null (the reference's nil pointers / nil maps) or "" for names, so the
 * flag resolver can tell an omitted value from a zero one.
 */
import type { Node as YamlNode } from 'yaml';
import { readBundleYaml } from './bundle-yaml.js';
import { PolicyDecoder } from './decoder.js';
import { PolicyConfigError } from './errors.js';
import type { PolicyPath, PolicyPosition } from './errors.js';
import { nameSets } from './names.js';
import type { PolicyNameSets, ScorerSetting } from './names.js';
import { validatePolicyBundle } from './validate.js';
import { extractEvolvable, type SpecReadOptions } from './spec.js';
import { showValue } from '../domain/errors.js';
import type { AdmissionBundle, AnalyzerBundle, AutoscalerBundle, DelayBundle, InstanceLifecycleBundle, NodePoolBundle, PolicyBundle } from './bundle-types.js';

export type { AdmissionBundle, AnalyzerBundle, AutoscalerBundle, DelayBundle, InstanceLifecycleBundle, NodePoolBundle, PolicyBundle } from './bundle-types.js';

export interface ParsePolicyBundleOptions extends SpecReadOptions {
  /** Valid names; defaults to {@link DEFAULT_POLICY_NAMES} for any list not given. */
  readonly names?: Partial<PolicyNameSets>;
  /**
   * --semantics corrected: strict numbers (see PolicyDecoder), `priority.policy` other than constant refused,
   * and `admission.slo_targets` values checked to be > 0 (the reference only warns, and checks nothing).
   */
  readonly corrected?: boolean;
}

/** Where a parsed bundle's values are in its file, for errors raised after parsing (flag merging). */
export interface BundleLocator {
  readonly file: string;
  position(path: PolicyPath): PolicyPosition;
}

const locators = new WeakMap<PolicyBundle, BundleLocator>();

export function locateBundle(bundle: PolicyBundle): BundleLocator | undefined {
  return locators.get(bundle);
}

/**
 * Parses and validates a policy bundle. Throws {@link PolicyConfigError} for the first problem, in the
 * reference's order: YAML syntax, then decoding (unknown keys, duplicates, wrong kinds) in document order,
 * then range and name checks in the reference's validation order.
 */
export function parsePolicyBundle(yamlText: string, fileLabel: string, options: ParsePolicyBundleOptions = {}): PolicyBundle {
  // The reference decodes only the first document of the stream, so later ones are not even looked at.
  const doc = readBundleYaml(yamlText, fileLabel, { schema: 'failsafe', uniqueKeys: false });
  if (doc.documents === 0) {
    const where = { file: fileLabel, pos: { line: 1, col: 1 } };
    throw new PolicyConfigError('POLICY_YAML', where, '', 'the policy config holds no YAML document (the reference fails with EOF)', 'add at least one section such as `admission:` or delete --policy-config');
  }
  // Evolvable sections come out first (typed, validated); the reference decoder reads what is left.
  const evolvable = extractEvolvable(yamlText, fileLabel, doc, options);
  const corrected = options.corrected === true;
  const d = new PolicyDecoder(doc, fileLabel, corrected);
  const bundle = decodeBundle(d, doc.doc.contents);
  validatePolicyBundle(bundle, d, nameSets(options.names));
  const prio = bundle.priority.policy;
  const why = 'request priority is fixed by each request\'s SLO class (set slo_class in the workload spec, or override class priorities with admission.slo_priorities)';
  if (prio !== '' && prio !== 'constant') {
    if (corrected) d.fail('POLICY_UNKNOWN_NAME', ['priority', 'policy'], `unknown priority policy ${showValue(prio)}`, `use constant or remove the key: ${why}`);
    d.warn(['priority', 'policy'], `priority policy ${showValue(prio)} has no effect: ${why}`);
  }
  if (corrected && bundle.admission.sloTargets !== null) {
    for (const [cls, us] of bundle.admission.sloTargets) {
      if (!(us > 0)) d.fail('POLICY_RANGE', ['admission', 'slo_targets', cls], `TTFT target for "${cls}" must be > 0 µs, got ${us}`, 'give the target in whole microseconds, e.g. 100000');
    }
  }
  const result: PolicyBundle = { ...bundle, warnings: d.warnings.slice(), evolvable };
  locators.set(result, { file: fileLabel, position: (path) => d.position(path) });
  return result;
}

/** Shallow: each level of the draft is built from its own mutable object. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function zeroDelay(): Mutable<DelayBundle> {
  return { mean: 0, stddev: 0 };
}

function decodeBundle(d: PolicyDecoder, root: YamlNode | null): Omit<PolicyBundle, 'warnings' | 'evolvable'> {
  const a: Mutable<AdmissionBundle> = {
    policy: '', tokenBucketCapacity: null, tokenBucketRefillRate: null, tierShedThreshold: null, tierShedMinPriority: null,
    gaieQdThreshold: null, gaieKvThreshold: null, sloPriorities: null, sloTargets: null,
  };
  const analyzer: Mutable<AnalyzerBundle> = { kvCacheThreshold: 0, scaleUpThreshold: 0, scaleDownBoundary: 0, avgInputTokens: 0 };
  const hpaScrapeDelay = zeroDelay();
  const as: Mutable<AutoscalerBundle> = {
    intervalUs: 0, scaleUpStabilizationWindowUs: 0, scaleDownStabilizationWindowUs: 0, hpaScrapeDelay, analyzer,
  };
  const loadingDelay = zeroDelay();
  const lifecycle: Mutable<InstanceLifecycleBundle> = { loadingDelay, warmStartInitialInstances: false };
  const routing: Mutable<PolicyBundle['routing']> = { policy: '', scorers: null };
  const b: Mutable<Omit<PolicyBundle, 'warnings' | 'evolvable'>> = {
    admission: a, routing, priority: { policy: '' }, scheduler: '', preemption: { policy: '' }, tenantBudgets: null,
    nodePools: null, autoscaler: as, instanceLifecycle: lifecycle,
  };
  d.note([], root, root);
  // A null scalar leaves a plain (non-pointer) number at what it was, as yaml.v3 does.
  const num = (cur: number, v: number | null): number => v ?? cur;
  const delay = (target: Mutable<DelayBundle>, section: string): ((n: YamlNode | null, p: PolicyPath) => void) => (n, p) =>
    d.struct(n, p, section, {
      mean: (v, q) => { target.mean = num(target.mean, d.float(v, q)); },
      stddev: (v, q) => { target.stddev = num(target.stddev, d.float(v, q)); },
    });
  d.struct(root, [], 'the policy config', {
    admission: (n, p) => d.struct(n, p, 'admission', {
      policy: (v, q) => { a.policy = d.str(v, q); },
      token_bucket_capacity: (v, q) => { a.tokenBucketCapacity = d.float(v, q); },
      token_bucket_refill_rate: (v, q) => { a.tokenBucketRefillRate = d.float(v, q); },
      tier_shed_threshold: (v, q) => { a.tierShedThreshold = d.int(v, q); },
      tier_shed_min_priority: (v, q) => { a.tierShedMinPriority = d.int(v, q); },
      gaie_qd_threshold: (v, q) => { a.gaieQdThreshold = d.float(v, q); },
      gaie_kv_threshold: (v, q) => { a.gaieKvThreshold = d.float(v, q); },
      slo_priorities: (v, q) => { a.sloPriorities = d.map(v, q, 'SLO class priorities', 0, (e, r) => d.int(e, r)); },
      slo_targets: (v, q) => { a.sloTargets = d.map(v, q, 'SLO class TTFT targets (µs)', 0, (e, r) => d.int(e, r)); },
    }),
    routing: (n, p) => d.struct(n, p, 'routing', {
      policy: (v, q) => { routing.policy = d.str(v, q); },
      scorers: (v, q) => { routing.scorers = d.seq(v, q, 'scorers ({name, weight})', (e, r) => decodeScorer(d, e, r)); },
    }),
    priority: (n, p) => d.struct(n, p, 'priority', { policy: (v, q) => { b.priority = { policy: d.str(v, q) }; } }),
    scheduler: (n, p) => { b.scheduler = d.str(n, p); },
    preemption: (n, p) => d.struct(n, p, 'preemption', { policy: (v, q) => { b.preemption = { policy: d.str(v, q) }; } }),
    tenant_budgets: (n, p) => { b.tenantBudgets = d.map(n, p, 'tenant budgets', 0, (e, r) => d.float(e, r)); },
    node_pools: (n, p) => { b.nodePools = d.seq(n, p, 'node pools', (e, r) => decodeNodePool(d, e, r)); },
    autoscaler: (n, p) => d.struct(n, p, 'autoscaler', {
      interval_us: (v, q) => { as.intervalUs = num(as.intervalUs, d.float(v, q)); },
      scale_up_stabilization_window_us: (v, q) => { as.scaleUpStabilizationWindowUs = num(as.scaleUpStabilizationWindowUs, d.float(v, q)); },
      scale_down_stabilization_window_us: (v, q) => { as.scaleDownStabilizationWindowUs = num(as.scaleDownStabilizationWindowUs, d.float(v, q)); },
      hpa_scrape_delay: delay(hpaScrapeDelay, 'autoscaler.hpa_scrape_delay'),
      analyzer: (v, q) => d.struct(v, q, 'autoscaler.analyzer', {
        kv_cache_threshold: (w, r) => { analyzer.kvCacheThreshold = num(analyzer.kvCacheThreshold, d.float(w, r)); },
        scale_up_threshold: (w, r) => { analyzer.scaleUpThreshold = num(analyzer.scaleUpThreshold, d.float(w, r)); },
        scale_down_boundary: (w, r) => { analyzer.scaleDownBoundary = num(analyzer.scaleDownBoundary, d.float(w, r)); },
        avg_input_tokens: (w, r) => { analyzer.avgInputTokens = num(analyzer.avgInputTokens, d.float(w, r)); },
      }),
    }),
    instance_lifecycle: (n, p) => d.struct(n, p, 'instance_lifecycle', {
      loading_delay: delay(loadingDelay, 'instance_lifecycle.loading_delay'),
      warm_start_initial_instances: (v, q) => {
        lifecycle.warmStartInitialInstances = d.bool(v, q) ?? lifecycle.warmStartInitialInstances;
      },
    }),
  });
  return b;
}

function decodeScorer(d: PolicyDecoder, node: YamlNode | null, path: PolicyPath): ScorerSetting {
  const s = { name: '', weight: 0 };
  d.struct(node, path, 'a routing scorer', {
    name: (v, q) => { s.name = d.str(v, q); },
    weight: (v, q) => { s.weight = d.float(v, q) ?? s.weight; },
  });
  return s;
}

function decodeNodePool(d: PolicyDecoder, node: YamlNode | null, path: PolicyPath): NodePoolBundle {
  const np = {
    name: '', gpuType: '', gpusPerNode: 0, gpuMemoryGiB: 0, initialNodes: 0, minNodes: 0, maxNodes: 0,
    provisioningDelay: zeroDelay(), costPerHour: 0,
  };
  d.struct(node, path, 'a node pool', {
    name: (v, q) => { np.name = d.str(v, q); },
    gpu_type: (v, q) => { np.gpuType = d.str(v, q); },
    gpus_per_node: (v, q) => { np.gpusPerNode = d.int(v, q) ?? np.gpusPerNode; },
    gpu_memory_gib: (v, q) => { np.gpuMemoryGiB = d.float(v, q) ?? np.gpuMemoryGiB; },
    initial_nodes: (v, q) => { np.initialNodes = d.int(v, q) ?? np.initialNodes; },
    min_nodes: (v, q) => { np.minNodes = d.int(v, q) ?? np.minNodes; },
    max_nodes: (v, q) => { np.maxNodes = d.int(v, q) ?? np.maxNodes; },
    provisioning_delay: (v, q) => d.struct(v, q, 'a node pool provisioning_delay', {
      mean: (w, r) => { np.provisioningDelay.mean = d.float(w, r) ?? np.provisioningDelay.mean; },
      stddev: (w, r) => { np.provisioningDelay.stddev = d.float(w, r) ?? np.provisioningDelay.stddev; },
    }),
    cost_per_hour: (v, q) => { np.costPerHour = d.float(v, q) ?? np.costPerHour; },
  });
  return np;
}
