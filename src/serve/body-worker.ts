/**
 * The worker thread of {@link BodyParser}: one exported function per API kind (piscina picks it by name), the
 * server's limits as worker data.
 */
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { parseOutcome, type ParseOutcome } from './body.js';
import type { ServeLimits } from './openai.js';

const limits = workerData as ServeLimits;

// The lowest priority for this thread only (on Linux setpriority(0) names the calling thread): parsing a
// huge body must yield the CPU to the event loop that paces the streams, not compete with it.
try {
  setPriority(0, 19);
} catch {
  // not supported here: parse at the process's priority
}

export function completions(bytes: Uint8Array): ParseOutcome {
  return parseOutcome('completions', bytes, limits);
}

export function chat(bytes: Uint8Array): ParseOutcome {
  return parseOutcome('chat', bytes, limits);
}
