/**
 * The extensions must not move a single draw of an existing spec. For every reference parity case that runs a
 * workload spec, and every recorded reference workload (test/fixtures/workload-spec-golden.ts):
 *   - generation still matches the reference's record;
 *   - the spec written back to YAML (emit.ts, as `blis convert` writes specs) and parsed again generates the
 *     identical requests;
 *   - adding a neutral load profile (multiplier 1 everywhere) generates the identical requests, or is refused
 *     with a located error where the spec takes the per-window path a profile cannot shape.
 */
import { describe, expect, it } from 'vitest';
import { MAX_INT64 } from '../../domain/units.js';
import type { Request } from '../../domain/request.js';
import { parseTraceCsv } from '../tracev2.js';
import { WorkloadSpecError } from '../spec/errors.js';
import { generateSpecWorkload } from '../spec/generate.js';
import { parseWorkloadSpec } from '../spec/parse.js';
import { loadSpecWorkloadForRun } from '../spec/run.js';
import type { SpecRunFlags } from '../spec/run.js';
import type { WorkloadSpec } from '../spec/types.js';
import { GOLDEN_WORKLOADS } from '../../../test/fixtures/workload-spec-golden.js';
import { requestView, seg } from '../../../test/fixtures/workload-profiles.js';
import { PARITY_SKIP_NOTE, flagValue, parityCases, readCaseFile } from '../../../test/parity/workload-fixtures.js';
import type { ParityCase } from '../../../test/parity/workload-fixtures.js';
import { specToYaml } from './emit.js';

function flagsOf(c: ParityCase): SpecRunFlags {
  const v = (name: string): string | undefined => flagValue(c.argv, name);
  const seed = v('seed');
  const num = v('num-requests');
  const horizon = v('horizon');
  const timeout = v('timeout');
  return {
    ...(seed === undefined ? {} : { seed: BigInt(seed) }),
    ...(num === undefined ? {} : { numRequests: Number(num) }),
    ...(horizon === undefined ? {} : { horizon: Number(horizon) }),
    ...(timeout === undefined ? {} : { timeoutSecs: Number(timeout) }),
  };
}

/** A profile that multiplies by 1 everywhere, but through every code path (segments, gaps, a step, the tail). */
function neutral(spec: WorkloadSpec): WorkloadSpec {
  return {
    ...spec,
    loadProfile: {
      defaultMultiplier: 1,
      segments: [seg(0, 30, 'constant', { multiplier: 1 }), seg(45, 90, 'step', { levels: [1, 1, 1] }), seg(90, 120, 'ramp', { from: 1, to: 1 })],
    },
  };
}

type Generate = (yamlText: string, label: string) => Request[];

/** Round trip and neutral profile against `base`, generated the same way. */
function expectUnchanged(spec: WorkloadSpec, base: Request[], gen: Generate, label: string): void {
  const want = base.map(requestView);
  expect(gen(specToYaml(spec), `${label} (re-emitted)`).map(requestView)).toEqual(want);
  let shaped: Request[];
  try {
    shaped = gen(specToYaml(neutral(spec)), `${label} (neutral profile)`);
  } catch (e) {
    expect(e).toBeInstanceOf(WorkloadSpecError);
    expect((e as WorkloadSpecError).message).toMatch(/:\d+:\d+: load_profile: load_profile cannot be used here: the per-window generation path/);
    return;
  }
  expect(shaped.map(requestView)).toEqual(want);
}

const specCases = parityCases().filter((c) => flagValue(c.argv, 'workload-spec') !== undefined);

describe(`parity specs generate the same requests with the extensions in place${PARITY_SKIP_NOTE}`, () => {
  it.skipIf(specCases.length === 0)('has workload-spec parity cases', () => {
    expect(specCases.length).toBeGreaterThanOrEqual(6);
  });
  for (const c of specCases) {
    it(c.name, () => {
      const file = flagValue(c.argv, 'workload-spec') ?? 'workload.yaml';
      const gen: Generate = (text, label) => loadSpecWorkloadForRun(text, label, flagsOf(c)).requests;
      const original = loadSpecWorkloadForRun(readCaseFile(c, file), `${c.name}/${file}`, flagsOf(c));
      const rows = parseTraceCsv(readCaseFile(c, 'trace.csv'), `${c.name}/trace.csv`);
      expect(original.requests.map((r) => [r.clientId, r.arrivalTime, r.inputLen - r.prefixLength, r.outputLen])).toEqual(
        rows.map((w) => [w.clientId, w.arrivalTimeUs, w.inputTokens, w.outputTokens]),
      );
      expectUnchanged(original.spec, original.requests, gen, c.name);
    });
  }
});

describe('recorded reference workloads generate the same requests with the extensions in place', () => {
  for (const g of GOLDEN_WORKLOADS) {
    it(g.name, () => {
      const gen: Generate = (text, label) => {
        const spec = parseWorkloadSpec(text, label);
        return generateSpecWorkload(spec, { numRequests: spec.numRequests, horizon: spec.horizon > 0 ? spec.horizon : MAX_INT64 });
      };
      const spec = parseWorkloadSpec(g.yaml, 'golden.yaml');
      const base = gen(g.yaml, 'golden.yaml');
      expect(base.map((r) => [r.arrivalTime, r.clientId, r.inputLen, r.outputLen])).toEqual(g.rows.map((row) => [row[0], row[1], row[2], row[3]]));
      expectUnchanged(spec, base, gen, g.name);
    });
  }
});
