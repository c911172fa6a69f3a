/** `blis search` as a library: whole-policy search with racing (search.ts, race.ts, space.ts) and the held-out proof (proof.ts). */
export { DEFAULT_MIN_GAIN, DEFAULT_RUNGS, searchPolicies, templateBundle, withSeedOffset, type SearchOptions, type SearchPoint, type SearchResult, type SearchStep } from './search.js';
export { Racer, type Evaluator, type RaceResult, type RacingStats, type RunRef, type Verdict } from './race.js';
export { describeGenome, genomeBundle, genomeBundleObject, searchSpace, type Gene, type Genome, type SearchSpace } from './space.js';
export { proveOnHoldout, type Comparison, type HeldOutProof, type PairedFigure } from './proof.js';
