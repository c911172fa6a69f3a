import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import { GoRand } from '../../gocompat/go-rand.js';
import { PartitionedRng } from '../../engine/partitioned-rng.js';
import { randomTokenIds } from '../tokens.js';
import { GOLDEN_WORKLOADS } from '../../../test/fixtures/workload-spec-golden.js';
import { BlisError } from '../../domain/errors.js';
import { WORKLOAD_GEN_SUBSYSTEM, generateSpecWorkload } from './generate.js';
import { parseWorkloadSpec } from './parse.js';
import { WorkloadFlagError, loadSpecWorkloadForRun } from './run.js';
import { rescaleIatsToDuration } from './time-varying.js';
import type { WorkloadSpec } from './types.js';

/** The digest the golden data was recorded with (FNV-1a-style; note its offset basis is 1469598103934665603). */
function fnv(tokens: Int32Array): string {
  let h = 1469598103934665603n;
  for (const t of tokens) h = BigInt.asUintN(64, (h ^ BigInt(t)) * 0x100000001b3n);
  return h.toString();
}

const parse = (text: string): WorkloadSpec => parseWorkloadSpec(text, 'w.yaml');

const ONE_CLIENT = `aggregate_rate: 10
seed: 3
clients:
  - id: a
    rate_fraction: 1
    prefix_group: sys
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 4}}
    output_distribution: {type: constant, params: {value: 2}}
`;

describe('generateSpecWorkload reproduces recorded reference workloads', () => {
  for (const g of GOLDEN_WORKLOADS) {
    it(g.name, () => {
      const spec = parse(g.yaml);
      const reqs = generateSpecWorkload(spec, { numRequests: spec.numRequests, horizon: spec.horizon > 0 ? spec.horizon : MAX_INT64 });
      const rows = reqs.map((r) => [r.arrivalTime, r.clientId, r.inputLen, r.outputLen, r.prefixGroup, r.prefixLength, r.deadline, r.textTokens, r.imageTokens, r.audioTokens]);
      expect(rows).toEqual(g.rows);
      expect(reqs.slice(0, 3).map((r) => fnv(r.inputTokens))).toEqual(g.inputHashes);
      expect(reqs.map((r) => r.id)).toEqual(reqs.map((_, i) => `request_${i}`));
      expect(reqs.every((r) => r.maxOutputLen === r.outputLen)).toBe(true);
    });
  }

  it('applies the v1 upgrade to the generated class names', () => {
    const reqs = generateSpecWorkload(parse(GOLDEN_WORKLOADS[1]!.yaml), { numRequests: 60, horizon: MAX_INT64 });
    expect(new Set(reqs.filter((r) => r.clientId === 'early' || r.clientId === 'late').map((r) => r.sloClass))).toEqual(new Set(['critical', 'standard']));
  });
});

describe('generation order and bounds', () => {
  it('draws prefix tokens first, then each client seed, then per request lengths and ids', () => {
    const reqs = generateSpecWorkload(parse(ONE_CLIENT), { numRequests: 2, horizon: MAX_INT64 });
    const wg = new PartitionedRng(3n).forSubsystem(WORKLOAD_GEN_SUBSYSTEM);
    const prefix = randomTokenIds(wg, 50); // default prefix length
    const client = new GoRand(wg.int63Big());
    // Constant lengths draw nothing; per request: 4 input ids, then 2 output ids.
    const first = [randomTokenIds(client, 4), randomTokenIds(client, 2)];
    const second = [randomTokenIds(client, 4), randomTokenIds(client, 2)];
    expect([...reqs[0]!.inputTokens]).toEqual([...prefix, ...first[0]!]);
    expect([...reqs[0]!.outputTokens]).toEqual([...first[1]!]);
    expect([...reqs[1]!.inputTokens]).toEqual([...prefix, ...second[0]!]);
    // The first arrival is one IAT after 0: 1/(10 req/s) truncates to 99999 µs.
    expect(reqs.map((r) => r.arrivalTime)).toEqual([99999, 199998]);
    expect(reqs[0]).toMatchObject({ prefixGroup: 'sys', prefixLength: 50, clientId: 'a', deadline: 0 });
  });

  it('stops at the horizon and at the request cap; a zero horizon yields nothing', () => {
    const spec = parse(ONE_CLIENT);
    expect(generateSpecWorkload(spec, { numRequests: 0, horizon: 500_000 }).map((r) => r.arrivalTime)).toEqual([99999, 199998, 299997, 399996, 499995]);
    expect(generateSpecWorkload(spec, { numRequests: 3, horizon: 500_000 })).toHaveLength(3);
    expect(generateSpecWorkload(spec, { numRequests: 3, horizon: 0 })).toEqual([]);
    expect(() => generateSpecWorkload(spec, { numRequests: 0, horizon: MAX_INT64 })).toThrow(BlisError);
    expect(() => generateSpecWorkload(spec, { numRequests: -1, horizon: 10 })).toThrow(BlisError);
  });

  it('merges clients by arrival, keeping client order for ties', () => {
    const two = ONE_CLIENT + ONE_CLIENT.split('clients:\n')[1]!.replace('id: a', 'id: b');
    const reqs = generateSpecWorkload(parse(two), { numRequests: 4, horizon: MAX_INT64 });
    // Both clients get 5 req/s: gaps of 199999 µs, identical arrivals, so a precedes b each time.
    expect(reqs.map((r) => [r.arrivalTime, r.clientId])).toEqual([
      [199999, 'a'],
      [199999, 'b'],
      [399998, 'a'],
      [399998, 'b'],
    ]);
  });

  it('an explicit --timeout overrides per-client timeouts; negative disables deadlines', () => {
    const spec = parse(ONE_CLIENT.replace('    rate_fraction: 1\n', '    rate_fraction: 1\n    timeout: 5\n'));
    expect(generateSpecWorkload(spec, { numRequests: 1, horizon: MAX_INT64 })[0]?.deadline).toBe(99999 + 5);
    expect(generateSpecWorkload(spec, { numRequests: 1, horizon: MAX_INT64, timeoutSecs: 2 })[0]?.deadline).toBe(99999 + 2_000_000);
    expect(generateSpecWorkload(spec, { numRequests: 1, horizon: MAX_INT64, timeoutSecs: -1 })[0]?.deadline).toBe(0);
  });

  it('gives every request of a client its LoRA adapter (the registry check is the run\'s)', () => {
    const spec = parse(ONE_CLIENT);
    const adapter: WorkloadSpec = { ...spec, clients: spec.clients.map((c) => ({ ...c, adapter: 'lora-1' })) };
    const reqs = generateSpecWorkload(adapter, { numRequests: 5, horizon: MAX_INT64 });
    expect(reqs).toHaveLength(5);
    expect(reqs.every((r) => r.adapter === 'lora-1')).toBe(true);
    expect(generateSpecWorkload(spec, { numRequests: 5, horizon: MAX_INT64 }).every((r) => r.adapter === '')).toBe(true);
  });

  it('rescales window gaps to the window length, the last gap taking the residue', () => {
    expect(rescaleIatsToDuration([1, 2, 3, 4], 1000)).toEqual([100, 200, 300, 400]);
    expect(rescaleIatsToDuration([3, 3, 3], 10)).toEqual([3, 3, 4]);
    expect(rescaleIatsToDuration([0, 0], 10)).toEqual([0, 0]);
    expect(rescaleIatsToDuration([], 10)).toEqual([]);
  });
});

describe('loadSpecWorkloadForRun resolves flags like the run command', () => {
  const text = ONE_CLIENT.replace('seed: 3', 'seed: 3\nnum_requests: 4\nhorizon: 350000\ngoodput_slo_targets: {critical: {ttft_ms: 100}}');

  it('uses the spec seed, horizon and num_requests unless the flags say otherwise', () => {
    const wl = loadSpecWorkloadForRun(text, 'w.yaml', {});
    expect(wl).toMatchObject({ seed: 3n, horizon: 350_000, maxRequests: 4 });
    expect(wl.requests).toHaveLength(3); // the horizon cuts at 3 arrivals
    expect([...wl.goodputSloTargets]).toEqual([['critical', { ttftMs: 100, itlMs: 0, e2eMs: 0 }]]);
    const over = loadSpecWorkloadForRun(text, 'w.yaml', { seed: 8n, horizon: 10_000_000, numRequests: 6, timeoutSecs: 1 });
    expect(over).toMatchObject({ seed: 8n, horizon: 10_000_000, maxRequests: 6 });
    expect(over.requests).toHaveLength(6);
    expect(over.requests[0]?.deadline).toBe(over.requests[0]!.arrivalTime + 1_000_000);
  });

  it('rejects --timeout 0 and unbounded generation', () => {
    expect(() => loadSpecWorkloadForRun(text, 'w.yaml', { timeoutSecs: 0 })).toThrow(WorkloadFlagError);
    expect(() => loadSpecWorkloadForRun(ONE_CLIENT, 'w.yaml', {})).toThrow(/num_requests or --horizon/);
  });
});
