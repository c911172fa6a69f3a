/**
 * Lazy decode slots (src/instance/running-batch.ts) are an optimisation that must change nothing: random
 * configurations run twice through the whole run path, with lazy slots and without, must print the same stdout
 * and the same per-request metrics file byte for byte. The configurations lean on what can end a steady decode
 * early or make a step treat slots differently — KV pressure and preemption, small token budgets and batch
 * sizes, chunked prefill, max-model-len caps, async scheduling, deadlines, prefix sharing, corrected semantics,
 * P/D pools, and a JSON output whose recorder observes every step — with outputs long enough (up to 400 tokens)
 * that slots stay lazy for many steps. (The engine property suite covers the same ground at the event level: its
 * checked runs sync the batch before every event, so they run without lazy slots, and are compared with an
 * unobserved run that has them.)
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
  routingPolicy: fc.constantFrom('round-robin', 'least-loaded', 'weighted'),
  numRequests: fc.integer({ min: 20, max: 160 }),
  rate: fc.constantFrom(2, 10, 40, 200),
  promptTokens: fc.integer({ min: 8, max: 600 }),
  outputTokens: fc.integer({ min: 1, max: 400 }),
  prefixTokens: fc.constantFrom(0, 0, 64, 300),
  totalKvBlocks: fc.constantFrom(0, 40, 90, 300, 2000),
  maxNumSeqs: fc.constantFrom(2, 8, 64, 256),
  maxNumBatchedTokens: fc.constantFrom(16, 100, 512, 2048),
  longPrefillTokenThreshold: fc.constantFrom(0, 0, 48),
  maxModelLen: fc.constantFrom(0, 0, 700),
  schedulingMode: fc.constantFrom('sync', 'sync', 'async'),
  timeout: fc.constantFrom(0, 0, 20),
  semantics: fc.constantFrom('reference', 'reference', 'corrected'),
  latencyModel: fc.constantFrom('trained-physics', 'trained-physics', 'roofline'),
  pd: fc.boolean(),
  outputFormat: fc.constantFrom('reference', 'json'),
});

type Config = typeof configArb extends fc.Arbitrary<infer T> ? T : never;

function flags(c: Config): Record<string, unknown> {
  const o: Record<string, unknown> = {
    mode: 'run', model: MODEL, hardware: 'H100', tp: 1, seed: c.seed, numInstances: c.pd ? Math.max(2, c.numInstances) : c.numInstances,
    routingPolicy: c.routingPolicy, numRequests: c.numRequests, rate: c.rate, promptTokens: c.promptTokens, outputTokens: c.outputTokens,
    promptTokensStdev: Math.floor(c.promptTokens / 4), promptTokensMin: 1, promptTokensMax: 5000,
    outputTokensStdev: Math.floor(c.outputTokens / 3), outputTokensMin: 1, outputTokensMax: 5000, prefixTokens: c.prefixTokens, maxNumSeqs: c.maxNumSeqs, maxNumBatchedTokens: c.maxNumBatchedTokens, longPrefillTokenThreshold: c.longPrefillTokenThreshold,
    // A bounded horizon: a request larger than the whole cache preempts itself forever in reference mode (the
    // reference's livelock); such runs still compare, up to the horizon.
    horizon: 600_000_000, schedulingMode: c.schedulingMode, semantics: c.semantics, latencyModel: c.latencyModel, outputFormat: c.outputFormat, outputs: { metrics: true },
  };
  if (c.totalKvBlocks > 0) o['totalKvBlocks'] = c.totalKvBlocks;
  if (c.maxModelLen > 0) o['maxModelLen'] = c.maxModelLen;
  if (c.timeout > 0) o['timeout'] = c.timeout;
  if (c.pd) Object.assign(o, { prefillInstances: 1, decodeInstances: Math.max(2, c.numInstances) - 1, pdDecider: 'always' });
  return o;
}

async function render(c: Config, lazyDecode: boolean): Promise<string> {
  const { values } = parseSimulationConfig(flags(c));
  const env: SimEnv = { readText: () => '', warn: () => undefined };
  const out = await simulateRun(values, env, undefined, { lazyDecode });
  return `${out.stdout}\n${out.metricsFile ?? ''}`;
}

describe('lazy decode slots', () => {
  it('change no output: random configurations with and without them print the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(configArb, async (c) => {
        expect(await render(c, true)).toBe(await render(c, false));
      }),
      { seed: 20261126, numRuns: 250 },
    );
  }, 600_000);
});
