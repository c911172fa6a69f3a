export { parsePolicyBundle, locateBundle } from './bundle.js';
export type {
  AdmissionBundle, AnalyzerBundle, AutoscalerBundle, BundleLocator, DelayBundle, InstanceLifecycleBundle, NodePoolBundle,
  ParsePolicyBundleOptions, PolicyBundle,
} from './bundle.js';
export { PolicyConfigError, formatPolicyPath } from './errors.js';
export type { PolicyConfigErrorCode, PolicyPath, PolicyPosition } from './errors.js';
export { DEFAULT_POLICY_NAMES, DEFAULT_SCORERS } from './names.js';
export type { PolicyNameSets, ScorerSetting } from './names.js';
export { POLICY_FLAG_DEFAULTS, resolvePolicySettings } from './resolve.js';
export type {
  FlagSetting, PolicyFlags, ResolvedAdmission, ResolvedPolicySettings, ResolvePolicyOptions, SettingSource, SourceKey,
} from './resolve.js';
export { composeLoraScorer, parseScorerFlag } from './scorer-flag.js';
export { parseSloTargetsFlag } from './slo-targets-flag.js';
export { SLO_PRIORITY_MAX, SLO_PRIORITY_MIN } from './validate.js';
