/** Latency-model fitting (`blis calibrate --fit`, the fidelity report's fitted model). */
export { fitCoefficients, checkIdentifiable, predictTargets, evaluateTarget, FIT_UNIDENTIFIABLE, FIT_NO_DATA, type FitTarget, type FitDataset, type FitOptions, type FitResult } from './fit.js';
export { fitTraces, FIT_BAD_TRACE, FIT_NEEDS, type FitTrace, type TraceFitInput, type TraceFitResult, type SplitErrors } from './trace-fit.js';
export { fitAggregateRuns, type AggregateRun, type AggregateMeasurements, type AggregateFitOptions, type AggregateFitResult } from './aggregate-fit.js';
export { resolveFitEngine, readFitTrace, parseFitParams } from './prepare.js';
export { simulateLinearized, type Linearization, type RequestLine } from './record.js';
export { solveRobust, huberLoss, robustScale, HUBER_DELTA } from './solve.js';
