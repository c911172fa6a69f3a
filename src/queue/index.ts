/** The distributed job queue (BullMQ on Redis): an I/O edge (docs/distributed.md). */
export { exposureWarning, isLoopback, parseQueueUrl, QUEUE_AUTH, QUEUE_UNAVAILABLE, QUEUE_URL_ERROR, type QueueTarget, type TlsFiles } from './connection.js';
export { JOB_OPTIONS, JOB_POISON, parseFailure, QUEUE_NO_WORKERS, QueueRunner, type QueueRunnerOptions } from './submit.js';
export { runQueueWorker, type QueueWorkerOptions, type WorkerTally } from './worker.js';
export { CLEANABLE, queueClean, queueStatus, type CleanableState, type QueueStatus } from './admin.js';
