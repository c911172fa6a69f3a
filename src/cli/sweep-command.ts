/**
 * The flags of `blis sweep`, `blis worker` and `blis queue status|clean` (docs/sweep.md, docs/distributed.md).
 * The work — and the queue client, which costs start-up time — is loaded only when one of them runs.
 */
import { Option, type Command } from 'commander';
import type { Io } from './io.js';
import type { QueueFlags } from './queue-flags.js';

/** Adds the queue flags; `timeoutDefault` is how long an unreachable Redis is retried (s). */
export function addQueueOptions(c: Command, timeoutDefault: string, timeoutHelp: string): Command {
  return c
    .addOption(new Option('--queue-name <name>', 'queue name (several sweeps and workers can share one)').default('blis'))
    .option('--tls-ca <file>', 'PEM file of the CA that signed the Redis server\'s certificate (rediss://)')
    .option('--tls-cert <file>', 'PEM client certificate for Redis (rediss://)')
    .option('--tls-key <file>', 'PEM key of --tls-cert')
    .addOption(new Option('--tls-insecure', 'do not verify the Redis server\'s certificate (testing only)').hideHelp())
    .addOption(new Option('--redis-timeout-s <s>', timeoutHelp).default(timeoutDefault));
}

export function registerSweepCommands(root: Command, io: Io): void {
  const sweep = root
    .command('sweep')
    .description('run every point of a sweep file (a base configuration crossed with axes or random samples, and seeds): one row per point, JSON lines or CSV, plus a summary (best points, Pareto front); locally or on a Redis job queue')
    .argument('<file>', 'sweep file (YAML or JSON; docs/sweep.md)')
    .option('--output <file>', 'write the rows here (.jsonl or .csv); stdout then gets the summary (JSON)')
    .option('--summary <file>', 'also write the summary (JSON) to this file')
    .addOption(new Option('--workers <n>', 'points in parallel worker threads (without --queue)').default('1'))
    .addOption(new Option('--timeout-s <s>', 'wall-clock budget per point in a local worker thread (0 = none)').default('0'))
    .option('--queue <url>', 'send the points to the job queue at redis://HOST:PORT (rediss:// for TLS; password from BLIS_REDIS_PASSWORD) and collect the rows; run blis worker on any number of machines')
    .addOption(new Option('--worker-wait-s <s>', 'with --queue: fail when no worker has been connected for this long while points wait (0 = wait for ever)').default('300'));
  addQueueOptions(sweep, '60', 'with --queue: fail once Redis has been unreachable this long (retrying with backoff until then)');
  sweep.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  sweep.action(async (file: string, o: import('./sweep-run.js').SweepFlags) => (await import('./sweep-run.js')).sweepCommand(file, o, io));

  const worker = root
    .command('worker')
    .description('process sweep points and evaluations from a Redis job queue until Ctrl-C (run one per machine; each runs --concurrency jobs at a time)')
    .requiredOption('--queue <url>', 'the job queue: redis://HOST:PORT (rediss:// for TLS; password from BLIS_REDIS_PASSWORD)')
    .addOption(new Option('--concurrency <n>', 'jobs at a time, one worker thread each (about one per core)').default('1'))
    .addOption(new Option('--timeout-s <s>', 'wall-clock budget per job (0 = none); a job over it fails with EVAL_TIMEOUT').default('0'))
    .addOption(new Option('--job-heap-mb <mb>', 'heap limit of each job\'s thread; a job over it fails with EVAL_WORKER_DIED and the worker goes on').default('2048'))
    .addOption(new Option('--lock-duration-ms <ms>', 'a dead worker\'s job is noticed about this long after it stopped renewing its lock').default('30000'))
    .addOption(new Option('--stalled-interval-ms <ms>', 'how often to look for jobs whose worker died').default('30000'))
    .addOption(new Option('--max-stalls <n>', 'times a job may be put back after its worker died; once more and it fails with JOB_POISON (1: a job that kills two workers is not run again)').default('1'));
  addQueueOptions(worker, '0', 'exit once Redis has been unreachable this long (0 = keep retrying with backoff)');
  worker.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  worker.action(async (o: import('./queue-run.js').WorkerFlags) => (await import('./queue-run.js')).workerCommand(o, io));

  const queue = root.command('queue').description('show or clear the work on a Redis job queue');
  queue.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  const status = queue
    .command('status')
    .description('job counts by state and the connected workers (JSON)')
    .requiredOption('--queue <url>', 'the job queue: redis://HOST:PORT');
  addQueueOptions(status, '10', 'fail when Redis does not answer within this long');
  status.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  status.action(async (o: QueueFlags) => (await import('./queue-run.js')).queueStatusCommand(o, io));
  const clean = queue
    .command('clean')
    .description('remove jobs (and so their cached results) by state; active jobs finish on their workers')
    .requiredOption('--queue <url>', 'the job queue: redis://HOST:PORT')
    .addOption(new Option('--state <states>', 'comma-separated: waiting, delayed, completed, failed').default('waiting,delayed,completed,failed'));
  addQueueOptions(clean, '10', 'fail when Redis does not answer within this long');
  clean.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  clean.action(async (o: QueueFlags & { state: string }) => (await import('./queue-run.js')).queueCleanCommand(o, io));
}
