/**
 * Private prompts (KVStoreConfig.privatePrompts: a prompt block's identity is indexed only if its request is
 * preempted) are an optimisation that must change nothing. The distribution workload without a shared prefix
 * turns them on; random configurations of it, run through the whole run path with them and without, must print
 * the same stdout and per-request metrics byte for byte. The configurations lean on what makes a request look
 * up its own prompt again — KV pressure and preemption (readmission finds its own blocks), chunked prefill,
 * small budgets, several instances and routing policies that read the instances' caches, the stale cache
 * view, corrected semantics — and on block sizes around the threshold below which prompts are not private.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulateRun } from '../../src/sim/run.js';
import { parseSimulationConfig } from '../../src/sim/simulate.js';
import type { SimEnv } from '../../src/sim/env.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

const configArb = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  numInstances: fc.integer({ min: 1, max: 3 }),
  routing: fc.constantFrom('round-robin', 'least-loaded', 'weighted', 'prefix'),
  numRequests: fc.integer({ min: 20, max: 200 }),
  rate: fc.constantFrom(5, 40, 200),
  promptTokens: fc.integer({ min: 8, max: 600 }),
  outputTokens: fc.integer({ min: 1, max: 300 }),
  blockSize: fc.constantFrom(4, 8, 16),
  totalKvBlocks: fc.constantFrom(0, 40, 90, 300),
  maxNumSeqs: fc.constantFrom(2, 8, 64),
  maxNumBatchedTokens: fc.constantFrom(64, 512, 2048),
  longPrefillTokenThreshold: fc.constantFrom(0, 0, 48),
  cacheSignalDelay: fc.constantFrom(0, 50_000),
  semantics: fc.constantFrom('reference', 'reference', 'corrected'),
  outputFormat: fc.constantFrom('reference', 'json'),
});

type Config = typeof configArb extends fc.Arbitrary<infer T> ? T : never;

function flags(c: Config): Record<string, unknown> {
  const o: Record<string, unknown> = {
    mode: 'run', model: MODEL, hardware: 'H100', tp: 1, seed: c.seed, numInstances: c.numInstances, numRequests: c.numRequests, rate: c.rate,
    promptTokens: c.promptTokens, promptTokensStdev: Math.floor(c.promptTokens / 4), promptTokensMin: 1, promptTokensMax: 5000,
    outputTokens: c.outputTokens, outputTokensStdev: Math.floor(c.outputTokens / 3), outputTokensMin: 1, outputTokensMax: 5000,
    blockSizeInTokens: c.blockSize, maxNumSeqs: c.maxNumSeqs, maxNumBatchedTokens: c.maxNumBatchedTokens, longPrefillTokenThreshold: c.longPrefillTokenThreshold,
    cacheSignalDelay: c.cacheSignalDelay, horizon: 600_000_000, semantics: c.semantics, outputFormat: c.outputFormat, outputs: { metrics: true },
  };
  if (c.routing === 'prefix') Object.assign(o, { routingPolicy: 'weighted', routingScorers: 'precise-prefix-cache:3,queue-depth:1' });
  else o['routingPolicy'] = c.routing;
  if (c.totalKvBlocks > 0) o['totalKvBlocks'] = c.totalKvBlocks;
  return o;
}

async function render(c: Config, privatePrompts: boolean): Promise<string> {
  const { values } = parseSimulationConfig(flags(c));
  const env: SimEnv = { readText: () => '', warn: () => undefined };
  const out = await simulateRun(values, env, undefined, { privatePrompts });
  return `${out.stdout}\n${out.metricsFile ?? ''}`;
}

describe('private prompts', () => {
  it('change no output: random distribution workloads with and without them print the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(configArb, async (c) => {
        expect(await render(c, true)).toBe(await render(c, false));
      }),
      { seed: 20261127, numRuns: 200 },
    );
  }, 600_000);
});
