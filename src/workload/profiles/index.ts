/**
 * Spec v2 extensions (load profiles, misbehaving tenants) and `blis convert`. Guide: docs/workload.md.
 */
export type * from './types.js';
export { SEGMENT_KINDS, MISBEHAVIOR_KINDS, MISBEHAVIOR_DEFAULTS } from './types.js';
export { RateProfile } from './profile.js';
export { TimeWarp, ConstantFactor, toTick } from './warp.js';
export type { FactorPiece, FactorSource } from './warp.js';
export { OnOffSchedule, BurstStream, AbusiveLengths, paretoWithMean, burstInstant } from './misbehavior.js';
export { shapeClient, profileFor } from './shaping.js';
export type { ClientShaping } from './shaping.js';
export { specToYaml } from './emit.js';
export { convertPreset, convertInferencePerf, presetSpec, inferencePerfSpec, composeSpecs, composeSpecsYaml, ConvertError } from './convert.js';
export type { ComposeSource } from './convert.js';
export type { PresetConvertOptions } from './convert.js';
