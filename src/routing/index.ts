/** Public surface of the routing layer: admission, routing, scorers, tenant budgets, counterfactual regret. */
export type {
  AdmissionDecision,
  AdmissionPolicy,
  CachedBlocksFn,
  RouterState,
  RoutingDecision,
  RoutingPolicy,
  RoutingSnapshot,
  Scorer,
  ScorerContribution,
  TieBreakRng,
} from './types.js';
export { effectiveLoad, routingSnapshot } from './types.js';
export { RoutingConfigError, RoutingErrorCode } from './errors.js';
export {
  alwaysAdmit,
  GAIE_DEFAULT_KV_THRESHOLD,
  GAIE_DEFAULT_QD_THRESHOLD,
  gaieLegacy,
  rejectAll,
  tenantBudget,
  tierShed,
  tokenBucket,
  type TenantBudgetView,
} from './admission.js';
export { TenantTracker } from './tenant.js';
export { alwaysBusiest, leastLoaded, roundRobin } from './policies.js';
export { weighted, type WeightedOptions } from './weighted.js';
export {
  composeLoraScorer,
  defaultScorerConfigs,
  normalizeScorerWeights,
  parseScorerConfigs,
  validateScorerConfigs,
  type ScorerConfig,
} from './scorer-config.js';
export { isScorerName, makeScorer, SCORER_NAMES, SCORERS, type ScorerContext, type ScorerName } from './scorer-registry.js';
export { DEFAULT_PREFIX_LRU_CAPACITY, PrefixCacheIndex } from './prefix-index.js';
export {
  ADMISSION_POLICIES,
  ADMISSION_POLICY_NAMES,
  DEFAULT_ADMISSION_POLICY,
  DEFAULT_ROUTING_POLICY,
  isAdmissionPolicyName,
  isRoutingPolicyName,
  makeAdmissionPolicy,
  makeRoutingPolicy,
  ROUTING_POLICIES,
  ROUTING_POLICY_NAMES,
  type AdmissionPolicyName,
  type AdmissionPolicyOptions,
  type RoutingPolicyName,
  type RoutingPolicyOptions,
} from './registry.js';
export { computeCounterfactual, type CandidateScore, type Counterfactual } from './counterfactual.js';
