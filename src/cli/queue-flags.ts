/**
 * The flags every command that talks to the job queue takes (`blis sweep --queue`, `blis worker`, `blis queue
 * status|clean`), as Commander hands them over. Types only: sweep-command.ts declares them, queue-run.ts and
 * sweep-run.ts read them, and neither imports the other's command file.
 */
/** Flags every command that talks to the queue takes. */
export interface QueueFlags {
  queue?: string;
  queueName: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsInsecure?: boolean;
  redisTimeoutS: string;
}
