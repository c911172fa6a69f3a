import { describe, expect, it } from 'vitest';
import type { AdmissionRecord, RoutingRecord } from '../domain/decision-records.js';
import { summarizeTrace, traceSummaryLines } from './trace-summary.js';

const adm = (id: string, admitted: boolean): AdmissionRecord => ({ requestId: id, clock: 0, admitted, reason: admitted ? 'ok' : 'no' });
const route = (id: string, to: string, regret: number): RoutingRecord => ({ requestId: id, clock: 0, chosenInstance: to, reason: '', scores: null, candidates: null, regret });

describe('trace summary', () => {
  it('counts decisions, targets (sorted) and regret', () => {
    const s = summarizeTrace({
      admissions: [adm('a', true), adm('b', false), adm('c', true), adm('d', true)],
      routings: [route('a', 'instance_1', 0.5), route('c', 'instance_0', 0), route('d', 'instance_1', 0.25)],
    });
    expect(traceSummaryLines(s)).toEqual([
      'Total Decisions: 4',
      '  Admitted: 3',
      '  Rejected: 1',
      'Unique Targets: 2',
      'Target Distribution:',
      '  instance_0: 1',
      '  instance_1: 2',
      'Mean Regret: 0.250000',
      'Max Regret: 0.500000',
    ]);
  });
  it('omits the distribution when nothing was routed, and handles no trace', () => {
    const lines = ['Total Decisions: 2', '  Admitted: 0', '  Rejected: 2', 'Unique Targets: 0', 'Mean Regret: 0.000000', 'Max Regret: 0.000000'];
    expect(traceSummaryLines(summarizeTrace({ admissions: [adm('a', false), adm('b', false)], routings: [] }))).toEqual(lines);
    expect(summarizeTrace(null).totalDecisions).toBe(0);
  });
});
