/** The policy layer's public face: bundles, control points, errors, building and validating policies (re-exports). */
export { parsePolicyBundle, locateBundle } from './bundle.js';
export { bundleControlPoints, optionControlPoint } from './control-points.js';
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
export { preparePolicies, type BuiltPolicies, type PolicyFactory, type PreparedPolicies } from './build.js';
export { PolicyRuntimeError } from './errors.js';
export { DEFAULT_ENTRYPOINTS, NO_EVOLVABLE, type EvolvablePolicies, type PolicyMetadata, type PolicySpec } from './spec.js';
export { FEATURES, type FeatureSpec } from './features.js';
export { TEMPLATES, type ParamSpec, type TemplateSpec } from './templates/index.js';
export { CONTROL_POINTS, type ControlPoint } from './view.js';
export { printTree, treeToPlain } from './tree/index.js';
