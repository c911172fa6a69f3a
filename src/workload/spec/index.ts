/**
 * Workload spec v2 (`--workload-spec`): parsing with located errors, samplers, and request generation.
 */
export { WorkloadSpecError, formatSpecPath } from './errors.js';
export type { SpecPath, SpecPosition, WorkloadSpecErrorCode } from './errors.js';
export type * from './types.js';
export { parseWorkloadSpec, upgradeV1ToV2, V1_TO_V2_SLO_CLASSES } from './parse.js';
export type { ParseWorkloadSpecOptions } from './parse.js';
export { generateSpecWorkload, WORKLOAD_GEN_SUBSYSTEM } from './generate.js';
export type { SpecGenerateOptions } from './generate.js';
export { loadSpecWorkloadForRun, WorkloadFlagError } from './run.js';
export type { SpecRunFlags, SpecRunWorkload } from './run.js';
export { newArrivalSampler, ARRIVAL_PROCESSES } from './arrival.js';
export type { ArrivalSampler } from './arrival.js';
export { newLengthSampler, DIST_TYPES, DistributionError } from './length.js';
export type { LengthSampler } from './length.js';
export { expandCohorts } from './cohort.js';
export { expandInferencePerf, findInferencePerfProblem, distributeEvenly, NormalizedExponentialSampler } from './inference-perf.js';
export type { ExpandedInferencePerf, InferencePerfProblem } from './inference-perf.js';
