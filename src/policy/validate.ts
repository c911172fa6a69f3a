/**
 * Range and name checks on a decoded bundle, in the reference's order (its bundle validation, then the
 * slo_priorities range check it makes while merging flags), so the first error reported is the same one.
 * Each check points at the offending value's line:col.
 */
import type { PolicyBundle } from './bundle-types.js';
import type { PolicyDecoder } from './decoder.js';
import { goFloatText } from './errors.js';
import type { PolicyPath } from './errors.js';
import { isKnownName, type PolicyNameSets } from './names.js';
import { showValue } from '../domain/errors.js';
import { LIMITS } from '../domain/limits.js';

/** The SLO priority range the reference's priority map accepts. */
export const SLO_PRIORITY_MIN = -100;
export const SLO_PRIORITY_MAX = 100;

/** Analyzer thresholds the reference substitutes for 0 before cross-checking them. */
const DEFAULT_SCALE_UP_THRESHOLD = 0.8;
const DEFAULT_SCALE_DOWN_BOUNDARY = 0.4;

export function validatePolicyBundle(b: Omit<PolicyBundle, 'warnings' | 'evolvable'>, d: PolicyDecoder, names: PolicyNameSets): void {
  const name = (path: PolicyPath, value: string, list: readonly string[], what: string): void => {
    if (!isKnownName(list, value)) {
      d.fail('POLICY_UNKNOWN_NAME', path, `unknown ${what} ${showValue(value)}`, `use one of: ${list.join(', ')}`);
    }
  };
  const range = (path: PolicyPath, problem: string, fix: string): never => d.fail('POLICY_RANGE', path, problem, fix);
  const finite = (v: number): boolean => Number.isFinite(v);

  const a = b.admission;
  name(['admission', 'policy'], a.policy, names.admission, 'admission policy');
  name(['routing', 'policy'], b.routing.policy, names.routing, 'routing policy');
  name(['scheduler'], b.scheduler, names.schedulers, 'scheduler');
  name(['preemption', 'policy'], b.preemption.policy, names.preemption, 'preemption policy');

  for (const [key, v] of [['token_bucket_capacity', a.tokenBucketCapacity], ['token_bucket_refill_rate', a.tokenBucketRefillRate]] as const) {
    if (v === null) continue;
    if (!finite(v)) range(['admission', key], `must be a finite number, got ${goFloatText(v)}`, 'write a plain non-negative number');
    if (v < 0) range(['admission', key], `must be non-negative, got ${goFloatText(v)}`, 'use 0 or a positive number');
  }
  if (a.tierShedThreshold !== null && a.tierShedThreshold < 0) {
    range(['admission', 'tier_shed_threshold'], `must be >= 0, got ${a.tierShedThreshold}`, 'use 0 (shed under any load) or a positive load level');
  }
  // tier_shed_min_priority has no bounds: any integer priority is meaningful.
  if (a.gaieQdThreshold !== null && !(a.gaieQdThreshold > 0 && finite(a.gaieQdThreshold))) {
    range(['admission', 'gaie_qd_threshold'], `must be a finite value > 0, got ${goFloatText(a.gaieQdThreshold)}`, 'use a positive queue depth such as 5');
  }
  if (a.gaieKvThreshold !== null && !(a.gaieKvThreshold > 0 && a.gaieKvThreshold <= 1)) {
    range(['admission', 'gaie_kv_threshold'], `must be a finite value in (0, 1.0], got ${goFloatText(a.gaieKvThreshold)}`, 'use a utilization fraction such as 0.8');
  }
  for (const [tenant, v] of b.tenantBudgets ?? []) {
    if (!(v >= 0 && v <= 1)) {
      range(['tenant_budgets', tenant], `must be in [0, 1], got ${goFloatText(v)}`, 'give the fraction of cluster capacity, e.g. 0.25');
    }
  }
  const seen = new Set<string>();
  (b.routing.scorers ?? []).forEach((sc, i) => {
    const at: PolicyPath = ['routing', 'scorers', i];
    if (!names.scorers.includes(sc.name)) {
      d.fail('POLICY_UNKNOWN_NAME', [...at, 'name'], `unknown scorer ${showValue(sc.name)}`, `use one of: ${names.scorers.join(', ')}`);
    }
    if (seen.has(sc.name)) {
      d.fail('POLICY_DUPLICATE_SCORER', [...at, 'name'], `scorer ${showValue(sc.name)} is listed twice`, 'each scorer may appear at most once; merge the weights');
    }
    seen.add(sc.name);
    if (!(sc.weight > 0 && finite(sc.weight))) {
      range([...at, 'weight'], `weight of "${sc.name}" must be a finite positive number, got ${goFloatText(sc.weight)}`, 'give a weight such as 1');
    }
  });
  validateAutoscaler(b, range);
  validateNodePools(b, range);
  const ld = b.instanceLifecycle.loadingDelay;
  for (const [key, v] of [['mean', ld.mean], ['stddev', ld.stddev]] as const) {
    const at: PolicyPath = ['instance_lifecycle', 'loading_delay', key];
    if (!finite(v)) range(at, `must be a finite number, got ${goFloatText(v)}`, 'give seconds as a plain number');
    if (v < 0) range(at, `must be >= 0, got ${goFloatText(v)}`, 'give seconds as a non-negative number');
  }
  for (const [cls, v] of a.sloPriorities ?? []) {
    if (v < SLO_PRIORITY_MIN || v > SLO_PRIORITY_MAX) {
      range(['admission', 'slo_priorities', cls], `priority ${v} is out of range [${SLO_PRIORITY_MIN}, ${SLO_PRIORITY_MAX}]`, 'use an integer from -100 to 100 (negative = sheddable)');
    }
  }
}

type RangeFail = (path: PolicyPath, problem: string, fix: string) => never;

function validateAutoscaler(b: Omit<PolicyBundle, 'warnings' | 'evolvable'>, range: RangeFail): void {
  const as = b.autoscaler;
  if (!Number.isFinite(as.intervalUs)) range(['autoscaler', 'interval_us'], 'must be a finite number', 'give microseconds, or 0 to disable');
  if (as.intervalUs < 0) range(['autoscaler', 'interval_us'], `must be >= 0 (0 = disabled), got ${goFloatText(as.intervalUs)}`, 'give microseconds, or 0 to disable');
  if (as.intervalUs > 0 && as.intervalUs < LIMITS.autoscalerMinIntervalUs) {
    range(['autoscaler', 'interval_us'], `must be 0 (disabled) or at least ${LIMITS.autoscalerMinIntervalUs} µs, got ${goFloatText(as.intervalUs)}`, 'tick less often: a shorter interval only burns time (docs/usage.md, Limits)');
  }
  const nonNeg: [PolicyPath, number][] = [
    [['autoscaler', 'scale_up_stabilization_window_us'], as.scaleUpStabilizationWindowUs],
    [['autoscaler', 'scale_down_stabilization_window_us'], as.scaleDownStabilizationWindowUs],
    [['autoscaler', 'hpa_scrape_delay', 'mean'], as.hpaScrapeDelay.mean],
    [['autoscaler', 'hpa_scrape_delay', 'stddev'], as.hpaScrapeDelay.stddev],
  ];
  for (const [at, v] of nonNeg) {
    if (!(Number.isFinite(v) && v >= 0)) range(at, `must be a finite non-negative number, got ${goFloatText(v)}`, 'use 0 or a positive number');
  }
  // Analyzer thresholds: 0 means "use the default", so only non-zero values are checked.
  const an = as.analyzer;
  const at = (k: string): PolicyPath => ['autoscaler', 'analyzer', k];
  const bad = (v: number): boolean => v !== 0 && !(v > 0 && Number.isFinite(v));
  if (an.kvCacheThreshold !== 0 && (bad(an.kvCacheThreshold) || an.kvCacheThreshold > 1)) {
    range(at('kv_cache_threshold'), `must be in (0, 1], got ${goFloatText(an.kvCacheThreshold)}`, 'use a utilization fraction such as 0.8');
  }
  if (bad(an.scaleUpThreshold)) range(at('scale_up_threshold'), `must be > 0, got ${goFloatText(an.scaleUpThreshold)}`, 'use a positive threshold');
  if (bad(an.scaleDownBoundary)) range(at('scale_down_boundary'), `must be > 0, got ${goFloatText(an.scaleDownBoundary)}`, 'use a positive boundary');
  if (bad(an.avgInputTokens)) range(at('avg_input_tokens'), `must be > 0, got ${goFloatText(an.avgInputTokens)}`, 'use a positive token count');
  const up = an.scaleUpThreshold === 0 ? DEFAULT_SCALE_UP_THRESHOLD : an.scaleUpThreshold;
  const down = an.scaleDownBoundary === 0 ? DEFAULT_SCALE_DOWN_BOUNDARY : an.scaleDownBoundary;
  if (down >= up) {
    range(at('scale_down_boundary'), `(${goFloatText(down)}) must be < the effective scale_up_threshold (${goFloatText(up)})`, 'lower scale_down_boundary or raise scale_up_threshold');
  }
}

function validateNodePools(b: Omit<PolicyBundle, 'warnings' | 'evolvable'>, range: RangeFail): void {
  (b.nodePools ?? []).forEach((np, i) => {
    const at = (k: string, sub?: string): PolicyPath => (sub === undefined ? ['node_pools', i, k] : ['node_pools', i, k, sub]);
    const who = `pool "${np.name}"`;
    if (np.name === '') range(at('name'), 'name must not be empty', 'give the pool a name');
    if (np.gpuType === '') range(at('gpu_type'), `${who}: gpu_type must not be empty`, 'name the GPU type, e.g. H100');
    if (np.gpusPerNode < 1) range(at('gpus_per_node'), `${who}: must be >= 1, got ${np.gpusPerNode}`, 'use a positive GPU count');
    if (!Number.isFinite(np.gpuMemoryGiB)) range(at('gpu_memory_gib'), `${who}: must be finite, got ${goFloatText(np.gpuMemoryGiB)}`, 'give GiB as a plain number');
    if (np.gpuMemoryGiB <= 0) range(at('gpu_memory_gib'), `${who}: must be > 0, got ${goFloatText(np.gpuMemoryGiB)}`, 'give a positive GiB size');
    if (np.initialNodes < 0) range(at('initial_nodes'), `${who}: must be >= 0, got ${np.initialNodes}`, 'use 0 or more');
    if (np.minNodes < 0) range(at('min_nodes'), `${who}: must be >= 0, got ${np.minNodes}`, 'use 0 or more');
    if (np.maxNodes < np.initialNodes) range(at('max_nodes'), `${who}: max_nodes (${np.maxNodes}) must be >= initial_nodes (${np.initialNodes})`, 'raise max_nodes');
    if (np.minNodes > np.maxNodes) range(at('min_nodes'), `${who}: min_nodes (${np.minNodes}) must be <= max_nodes (${np.maxNodes})`, 'lower min_nodes');
    for (const k of ['mean', 'stddev'] as const) {
      const v = np.provisioningDelay[k];
      if (!(Number.isFinite(v) && v >= 0)) range(at('provisioning_delay', k), `${who}: must be finite and >= 0, got ${goFloatText(v)}`, 'give seconds as a non-negative number');
    }
    if (!Number.isFinite(np.costPerHour)) range(at('cost_per_hour'), `${who}: must be finite, got ${goFloatText(np.costPerHour)}`, 'give a plain number');
    if (np.costPerHour < 0) range(at('cost_per_hour'), `${who}: must be >= 0, got ${goFloatText(np.costPerHour)}`, 'use 0 or a positive cost');
  });
}
