/**
 * The worker thread of {@link BodyParser}: one exported function per API kind (piscina picks it by name), the
 * server's limits as worker data.
 */
import { workerData } from 'node:worker_threads';
import { parseOutcome, type ParseOutcome } from './body.js';
import type { ServeLimits } from './openai.js';

const limits = workerData as ServeLimits;

export function completions(bytes: Uint8Array): ParseOutcome {
  return parseOutcome('completions', bytes, limits);
}

export function chat(bytes: Uint8Array): ParseOutcome {
  return parseOutcome('chat', bytes, limits);
}
