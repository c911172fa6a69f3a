/**
 * The admission state is built only when the policy reads it (src/cluster/deferred-state.ts); everything else a
 * build does happens at once, so whether a policy reads the snapshots must change nothing else in the run. Two
 * admission policies that admit everything — one never looks at the state, the other reads every snapshot and
 * the signals — must give byte-identical metrics under periodic snapshot refresh (whose refresh times a read
 * moves), stale cache views, routing latency and decision traces.
 */
import { describe, expect, it } from 'vitest';
import { simulate } from '../../src/sim/simulate.js';

const BLIND = `admission:
  type: parameterized
  template: prompt_size_admission
  parameters: {max_input_tokens: 100000000}
`;

// Every check off, and no class is protected (priorities are below 99): the policy reads the state, then admits.
const READER = `admission:
  type: parameterized
  template: load_shedding_admission
  parameters: {max_queue_depth_per_instance: 0, max_kv_utilization: 1, max_in_flight_per_instance: 0, protected_priority: 99}
`;

const base = {
  mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1, numRequests: 150, rate: 80, numInstances: 3,
  routingPolicy: 'weighted', routingScorers: 'prefix-affinity:3,queue-depth:2,kv-utilization:2', prefixTokens: 256, outputs: { metrics: true },
} as const;

async function run(bundle: string, extra: Record<string, unknown>): Promise<string> {
  const r = await simulate({ ...base, ...extra, policyConfig: 'bundle.yaml', files: { 'bundle.yaml': bundle } });
  return `${r.referenceText}\n${r.files.metrics ?? ''}`;
}

describe('deferred admission state', () => {
  it.each([
    { seed: 1 },
    { seed: 2, snapshotRefreshInterval: 7000, cacheSignalDelay: 20000 },
    { seed: 3, snapshotRefreshInterval: 30000, routingLatency: 1500, admissionLatency: 200 },
    { seed: 4, snapshotRefreshInterval: 0, cacheSignalDelay: 0, routingScorers: 'precise-prefix-cache:2,queue-depth:1,running-requests:1' },
    { seed: 5, traceLevel: 'decisions', routingScorers: 'no-hit-lru:1,load-balance:1', cacheSignalDelay: 10000 },
  ])('a policy that reads the state and one that does not give the same run (%o)', async (extra) => {
    const blind = await run(BLIND, extra);
    expect(blind).toContain('"completed_requests": 150');
    expect(await run(READER, extra)).toBe(blind);
  });
});
