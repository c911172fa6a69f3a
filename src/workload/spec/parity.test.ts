/**
 * Parity with the reference: every parity case run with `--workload-spec` must generate exactly the requests
 * its trace.csv records (same order, arrivals, suffix/output lengths, prefix groups and every tag).
 */
import { describe, expect, it } from 'vitest';
import { parseTraceCsv } from '../tracev2.js';
import { loadSpecWorkloadForRun } from './run.js';
import type { SpecRunFlags } from './run.js';
import { PARITY_SKIP_NOTE, flagValue, parityCases, readCaseFile } from '../../../test/parity/workload-fixtures.js';
import type { ParityCase } from '../../../test/parity/workload-fixtures.js';

function flagsOf(c: ParityCase): SpecRunFlags {
  const seed = flagValue(c.argv, 'seed');
  const num = flagValue(c.argv, 'num-requests');
  const horizon = flagValue(c.argv, 'horizon');
  const timeout = flagValue(c.argv, 'timeout');
  return {
    ...(seed === undefined ? {} : { seed: BigInt(seed) }),
    ...(num === undefined ? {} : { numRequests: Number(num) }),
    ...(horizon === undefined ? {} : { horizon: Number(horizon) }),
    ...(timeout === undefined ? {} : { timeoutSecs: Number(timeout) }),
  };
}

const specCases = parityCases().filter((c) => flagValue(c.argv, 'workload-spec') !== undefined);

describe(`workload spec parity with the reference trace.csv${PARITY_SKIP_NOTE}`, () => {
  it.skipIf(specCases.length === 0)('has workload-spec cases to check', () => {
    expect(specCases.length).toBeGreaterThanOrEqual(6);
  });
  for (const c of specCases) {
    it(c.name, () => {
      const specFile = flagValue(c.argv, 'workload-spec') ?? 'workload.yaml';
      const wl = loadSpecWorkloadForRun(readCaseFile(c, specFile), `${c.name}/${specFile}`, flagsOf(c));
      const rows = parseTraceCsv(readCaseFile(c, 'trace.csv'), `${c.name}/trace.csv`);
      expect(wl.requests).toHaveLength(rows.length);
      const got = wl.requests.map((r, i) => ({
        requestId: i,
        clientId: r.clientId,
        tenantId: r.tenantId,
        sloClass: r.sloClass,
        sessionId: r.sessionId,
        roundIndex: r.roundIndex,
        prefixGroup: r.prefixGroup,
        prefixLength: r.prefixLength,
        streaming: r.streaming,
        inputTokens: r.inputLen - r.prefixLength,
        outputTokens: r.outputLen,
        textTokens: r.textTokens,
        imageTokens: r.imageTokens,
        audioTokens: r.audioTokens,
        videoTokens: r.videoTokens,
        reasonRatio: r.reasonRatio,
        model: r.model,
        deadlineUs: r.deadline,
        sloTargetUs: r.sloTargetUs,
        arrivalTimeUs: r.arrivalTime,
      }));
      const want = rows.map((w) => ({
        requestId: w.requestId,
        clientId: w.clientId,
        tenantId: w.tenantId,
        sloClass: w.sloClass,
        sessionId: w.sessionId,
        roundIndex: w.roundIndex,
        prefixGroup: w.prefixGroup,
        prefixLength: w.prefixLength,
        streaming: w.streaming,
        inputTokens: w.inputTokens,
        outputTokens: w.outputTokens,
        textTokens: w.textTokens,
        imageTokens: w.imageTokens,
        audioTokens: w.audioTokens,
        videoTokens: w.videoTokens,
        reasonRatio: w.reasonRatio,
        model: w.model,
        deadlineUs: w.deadlineUs,
        sloTargetUs: w.sloTargetUs,
        arrivalTimeUs: w.arrivalTimeUs,
      }));
      expect(got).toEqual(want);
    });
  }
});
