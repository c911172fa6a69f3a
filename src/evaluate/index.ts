/** Public surface of the evaluation layer (docs/evaluate.md). */
export type * from './types.js';
export { BLIS_VERSION, candidateHash, evaluateCandidate, fixedControlPoints, knownPolicyCandidate, type EvaluateHooks, type EvaluateOptions } from './evaluate.js';
export { checkSuite, seedSetSuite, type PolicyFigures, type SuiteCheck } from './suite-check.js';
export { estimate, t975 } from './noise.js';
export { BUILTIN_SUITES, describeSuites, findSuite, holdoutSeedSet, seedsFor, withSemantics } from './suites.js';
export { parseSuite } from './suite-file.js';
export { candidateFromBundle, candidateFromCode, candidateFromComponents } from './candidate.js';
export { checkConstraints, crowdingDistances, jain, metricInfo, normalize, paretoRanks, rawMetrics, RAW_METRIC_NAMES, scoreRun } from './fitness.js';
export { evaluatePopulation, type PopulationResult } from './population.js';
export { ResultCache } from './cache.js';
export { DEFAULT_MIN_GAIN, DEFAULT_RUNGS, proveOnHoldout, Racer, searchPolicies, searchSpace, type HeldOutProof, type RacingStats, type SearchOptions, type SearchResult } from './search/index.js';
