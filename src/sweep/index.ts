/** Public surface of the sweep layer (docs/sweep.md, docs/distributed.md). */
export type * from './types.js';
export { loadSweep, MAX_POINTS, DEFAULT_OBJECTIVES, type SweepFileEnv } from './file.js';
export { buildRows, rowsCsv, rowsJsonl } from './rows.js';
export { summarize, summaryText, type SweepSummary } from './summary.js';
export { canonicalJson, evaluationFailure, failedEvaluation, evaluationJob, jobId, runJobInProcess, runSimulation, simulationJob } from './jobs.js';
export { LocalRunner, sweepWorkerFile, type LocalOptions } from './local.js';
export { flattenMetrics, isKnownMetric } from './metrics.js';
