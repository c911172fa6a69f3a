/**
 * Routing and admission policies by name (`--routing-policy`, `--admission-policy`, bundle `policy:`). The
 * valid names are the keys of these objects; '' selects the default, as the reference's flags allow.
 */
import type { SloPriorityMap } from '../domain/slo.js';
import { alwaysAdmit, gaieLegacy, GAIE_DEFAULT_KV_THRESHOLD, GAIE_DEFAULT_QD_THRESHOLD, rejectAll, tierShed, tokenBucket } from './admission.js';
import { RoutingConfigError, RoutingErrorCode } from './errors.js';
import { goQuote } from '../gocompat/go-text.js';
import { alwaysBusiest, leastLoaded, roundRobin } from './policies.js';
import type { ScorerConfig } from './scorer-config.js';
import type { AdmissionPolicy, CachedBlocksFn, RoutingPolicy, TieBreakRng } from './types.js';
import { weighted } from './weighted.js';

export interface RoutingPolicyOptions {
  /** Weighted profile; null/empty = default profile. Ignored by the other policies. */
  readonly scorers: readonly ScorerConfig[] | null;
  /** KV block size in tokens (prefix-affinity hashing). */
  readonly blockSize: number;
  /** The "router" partition (or "prefill-router"/"decode-router"); null = positional tie-breaks. */
  readonly rng: TieBreakRng | null;
  /** Per-instance cached-prefix query; null makes precise-prefix-cache and no-hit-lru neutral. */
  readonly cachedBlocks: CachedBlocksFn | null;
  /** Router-side prefix LRU capacity per instance (default 10,000 blocks). */
  readonly prefixLruCapacity?: number;
  /** --semantics corrected (round-robin reasons, NaN scores, scorer clamping, least-loaded regret). */
  readonly corrected?: boolean;
}

export const ROUTING_POLICIES = {
  'round-robin': (o: RoutingPolicyOptions) => roundRobin(o.corrected === true),
  'least-loaded': (o: RoutingPolicyOptions) => leastLoaded(o.rng, o.corrected === true),
  weighted: (o: RoutingPolicyOptions) => weighted(o),
  'always-busiest': (_o: RoutingPolicyOptions) => alwaysBusiest(),
} as const satisfies Record<string, (o: RoutingPolicyOptions) => RoutingPolicy>;

export type RoutingPolicyName = keyof typeof ROUTING_POLICIES;
export const ROUTING_POLICY_NAMES: readonly RoutingPolicyName[] = (Object.keys(ROUTING_POLICIES) as RoutingPolicyName[]).sort();
export const DEFAULT_ROUTING_POLICY: RoutingPolicyName = 'round-robin';

export function isRoutingPolicyName(name: string): name is RoutingPolicyName {
  return Object.hasOwn(ROUTING_POLICIES, name);
}

export function makeRoutingPolicy(name: string, opts: RoutingPolicyOptions): RoutingPolicy {
  const resolved = name === '' ? DEFAULT_ROUTING_POLICY : name;
  if (!isRoutingPolicyName(resolved)) {
    throw new RoutingConfigError(
      RoutingErrorCode.UnknownRoutingPolicy,
      'routing-policy',
      `unknown routing policy ${goQuote(name)}; valid: ${ROUTING_POLICY_NAMES.join(', ')}`,
    );
  }
  return ROUTING_POLICIES[resolved](opts);
}

export interface AdmissionPolicyOptions {
  readonly tokenBucketCapacity: number;
  readonly tokenBucketRefillRate: number;
  /** tier-shed: max effective load before shedding (bundle tier_shed_threshold; default 0). */
  readonly tierShedThreshold: number;
  /** tier-shed: lowest priority admitted under overload (bundle default 3; CLI-only selection leaves 0). */
  readonly tierShedMinPriority: number;
  /** gaie-legacy thresholds; 0 selects the defaults 5 and 0.8. */
  readonly gaieQdThreshold: number;
  readonly gaieKvThreshold: number;
  readonly priorities: SloPriorityMap;
}

export const ADMISSION_POLICIES = {
  'always-admit': (_o: AdmissionPolicyOptions) => alwaysAdmit(),
  'token-bucket': (o: AdmissionPolicyOptions) => tokenBucket(o.tokenBucketCapacity, o.tokenBucketRefillRate),
  'reject-all': (_o: AdmissionPolicyOptions) => rejectAll(),
  'tier-shed': (o: AdmissionPolicyOptions) => tierShed(o.tierShedThreshold, o.tierShedMinPriority, o.priorities),
  'gaie-legacy': (o: AdmissionPolicyOptions) =>
    gaieLegacy(o.gaieQdThreshold === 0 ? GAIE_DEFAULT_QD_THRESHOLD : o.gaieQdThreshold, o.gaieKvThreshold === 0 ? GAIE_DEFAULT_KV_THRESHOLD : o.gaieKvThreshold, o.priorities),
} as const satisfies Record<string, (o: AdmissionPolicyOptions) => AdmissionPolicy>;

export type AdmissionPolicyName = keyof typeof ADMISSION_POLICIES;
export const ADMISSION_POLICY_NAMES: readonly AdmissionPolicyName[] = (Object.keys(ADMISSION_POLICIES) as AdmissionPolicyName[]).sort();
export const DEFAULT_ADMISSION_POLICY: AdmissionPolicyName = 'always-admit';

export function isAdmissionPolicyName(name: string): name is AdmissionPolicyName {
  return Object.hasOwn(ADMISSION_POLICIES, name);
}

/**
 * Builds the named admission policy. Flow control and tenant budgets are not names: the cluster replaces the
 * policy with its gateway admission, then wraps the result in `tenantBudget` when budgets are configured.
 */
export function makeAdmissionPolicy(name: string, opts: AdmissionPolicyOptions): AdmissionPolicy {
  const resolved = name === '' ? DEFAULT_ADMISSION_POLICY : name;
  if (!isAdmissionPolicyName(resolved)) {
    throw new RoutingConfigError(
      RoutingErrorCode.UnknownAdmissionPolicy,
      'admission-policy',
      `unknown admission policy ${goQuote(name)}; valid: ${ADMISSION_POLICY_NAMES.join(', ')}`,
    );
  }
  return ADMISSION_POLICIES[resolved](opts);
}
