/** Public surface of the evaluation layer (docs/evaluate.md). */
export type * from './types.js';
export { BLIS_VERSION, candidateHash, evaluateCandidate, type EvaluateOptions } from './evaluate.js';
export { BUILTIN_SUITES, describeSuites, findSuite, withSemantics } from './suites.js';
export { parseSuite } from './suite-file.js';
export { candidateFromBundle, candidateFromCode, candidateFromComponents } from './candidate.js';
export { crowdingDistances, jain, normalize, paretoRanks, rawMetrics, RAW_METRIC_NAMES, scoreRun } from './fitness.js';
export { evaluatePopulation, type PopulationResult } from './population.js';
export { ResultCache } from './cache.js';
