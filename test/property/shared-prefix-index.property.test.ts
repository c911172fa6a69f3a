/**
 * The prefix-affinity scorer's index standing on ShadowKV's (PrefixCacheIndex.follow, linked by the cluster) is an
 * optimisation that must change nothing: random weighted-routing configurations with JSON output (which keeps
 * ShadowKV) run with the link and without it print the same stdout and per-request metrics byte for byte. The
 * configurations reach every way the link ends: ShadowKV smaller than the scorer's 10,000 blocks (small KV caches),
 * the scorer's index filling up first (tiny blocks, long prompts, one or two instances), decision traces that read
 * ShadowKV, corrected semantics, stale signals and flow control; most runs also see it last to the end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulateRun } from '../../src/sim/run.js';
import { parseSimulationConfig } from '../../src/sim/simulate.js';
import type { SimEnv } from '../../src/sim/env.js';

const configArb = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  numInstances: fc.integer({ min: 1, max: 6 }),
  scorers: fc.constantFrom('prefix-affinity:3,queue-depth:2,kv-utilization:2', 'prefix-affinity:1', 'queue-depth:1,prefix-affinity:2', 'prefix-affinity:2,load-balance:1,precise-prefix-cache:1'),
  numRequests: fc.integer({ min: 20, max: 250 }),
  rate: fc.constantFrom(10, 60, 300),
  promptTokens: fc.integer({ min: 8, max: 700 }),
  outputTokens: fc.integer({ min: 1, max: 60 }),
  prefixTokens: fc.constantFrom(0, 64, 256, 512),
  blockSize: fc.constantFrom(16, 16, 4, 2),
  totalKvBlocks: fc.constantFrom(0, 0, 500, 3000),
  traceLevel: fc.constantFrom('none', 'none', 'decisions'),
  semantics: fc.constantFrom('reference', 'reference', 'corrected'),
  snapshotRefreshInterval: fc.constantFrom(0, 0, 50_000),
  flowControl: fc.boolean(),
});

type Config = typeof configArb extends fc.Arbitrary<infer T> ? T : never;

function flags(c: Config): Record<string, unknown> {
  const o: Record<string, unknown> = {
    mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1, seed: c.seed, numInstances: c.numInstances,
    routingPolicy: 'weighted', routingScorers: c.scorers, numRequests: c.numRequests, rate: c.rate,
    promptTokens: c.promptTokens, promptTokensStdev: Math.floor(c.promptTokens / 4), promptTokensMin: 1, promptTokensMax: 5000,
    outputTokens: c.outputTokens, outputTokensStdev: Math.floor(c.outputTokens / 3), outputTokensMin: 1, outputTokensMax: 5000,
    prefixTokens: c.prefixTokens, blockSizeInTokens: c.blockSize, traceLevel: c.traceLevel, semantics: c.semantics,
    snapshotRefreshInterval: c.snapshotRefreshInterval, horizon: 600_000_000, outputFormat: 'json', outputs: { metrics: true },
  };
  if (c.totalKvBlocks > 0) o['totalKvBlocks'] = c.totalKvBlocks;
  if (c.flowControl) o['flowControl'] = true;
  return o;
}

async function render(c: Config, sharePrefixIndex: boolean): Promise<string> {
  const { values } = parseSimulationConfig(flags(c));
  const env: SimEnv = { readText: () => '', warn: () => undefined };
  const out = await simulateRun(values, env, undefined, { sharePrefixIndex });
  return `${out.stdout}\n${out.metricsFile ?? ''}`;
}

describe('shared prefix index', () => {
  it('changes no output: random weighted configurations with and without it print the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(configArb, async (c) => {
        expect(await render(c, true)).toBe(await render(c, false));
      }),
      { seed: 20261201, numRuns: 120 },
    );
  }, 600_000);
});
