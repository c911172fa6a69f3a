/**
 * Rebuilds the breakdown sections, priority inversions, fitness, goodput JSON and trace summary of each
 * reference parity case from that case's own data (metrics.json `requests[]`, trace files) and compares
 * them with the reference stdout, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PARITY_SKIP_NOTE, flagValue, parityCases, readCaseFile, type ParityCase, skipWhenNoFixtures } from '../../test/parity/workload-fixtures.js';
import { parseTraceCsv, parseTraceHeaderYaml } from '../workload/tracev2.js';
import { computePerModelMetrics, computePerSloDistributions, computePerTenantMetrics, computeSessionMetrics } from './breakdowns.js';
import { collectRawMetrics, detectPriorityInversions, type RequestOutcomeView } from './cluster-metrics.js';
import type { AdmissionRecord, RoutingRecord } from '../domain/decision-records.js';
import { computeFitness, fitnessLines, parseFitnessWeights } from './fitness.js';
import { goJsonIndent } from '../gocompat/go-format.js';
import { applyGoodput, computeGoodput } from './goodput.js';
import { perModelLines, perSloLines, perTenantLines, sessionLines } from './sections.js';
import { fromRow, type RequestRow } from '../../test/metrics/outcomes.js';
import { summarizeTrace, traceSummaryLines } from './trace-summary.js';

interface StdoutSection {
  readonly header: string;
  readonly body: string;
}

function stdoutSections(text: string): StdoutSection[] {
  const out: StdoutSection[] = [];
  for (const part of text.split(/^=== (.+) ===\n/m).slice(1).reduce<string[][]>((acc, x, i) => {
    if (i % 2 === 0) acc.push([x]);
    else (acc[acc.length - 1] as string[]).push(x);
    return acc;
  }, [])) out.push({ header: part[0] as string, body: part[1] ?? '' });
  return out;
}

function body(secs: readonly StdoutSection[], header: string): string | null {
  return secs.find((s) => s.header === header)?.body ?? null;
}

const asBody = (lines: readonly string[] | null): string | null => (lines ? `${lines.join('\n')}\n` : null);

interface CaseData {
  readonly secs: StdoutSection[];
  readonly metrics: Record<string, unknown>;
  readonly rows: RequestRow[];
  readonly outcomes: RequestOutcomeView[];
  readonly cluster: Record<string, unknown>;
}

function load(c: ParityCase): CaseData {
  const secs = stdoutSections(readCaseFile(c, 'stdout.txt'));
  const metrics = JSON.parse(readCaseFile(c, 'metrics.json')) as Record<string, unknown>;
  const rows = (metrics['requests'] as RequestRow[] | undefined) ?? [];
  const clusterSec = secs.filter((s) => s.header === 'Simulation Metrics').pop() as StdoutSection;
  return { secs, metrics, rows, outcomes: rows.map(fromRow), cluster: JSON.parse(clusterSec.body) as Record<string, unknown> };
}

function schedulerOf(c: ParityCase): string {
  const flag = flagValue(c.argv, 'scheduler');
  if (flag !== undefined) return flag;
  if (existsSync(path.join(c.dir, 'policy.yaml'))) {
    const m = /^\s*scheduler:\s*"?([\w-]+)"?/m.exec(readCaseFile(c, 'policy.yaml'));
    if (m) return m[1] as string;
  }
  return 'fcfs';
}

describe(`breakdown sections rebuilt from each parity case's metrics.json${PARITY_SKIP_NOTE}`, () => {
  skipWhenNoFixtures();
  for (const c of parityCases()) {
    it(c.name, () => {
      const d = load(c);
      const goodputOn = d.metrics['per_class'] !== undefined;
      expect(asBody(perSloLines(computePerSloDistributions(d.outcomes), goodputOn))).toBe(body(d.secs, 'Per-SLO Metrics'));
      expect(asBody(perTenantLines(computePerTenantMetrics(d.outcomes)))).toBe(body(d.secs, 'Per-Tenant Metrics'));
      expect(asBody(perModelLines(computePerModelMetrics(d.outcomes, Math.round((d.cluster['vllm_estimated_duration_s'] as number) * 1e6))))).toBe(
        body(d.secs, 'Per-Model Metrics'),
      );
      expect(asBody(sessionLines(computeSessionMetrics(d.outcomes)))).toBe(body(d.secs, 'Session Metrics'));
    });
  }
});

describe(`priority inversions per instance and class match the reference${PARITY_SKIP_NOTE}`, () => {
  skipWhenNoFixtures();
  for (const c of parityCases()) {
    it(c.name, () => {
      const d = load(c);
      const byInstance = new Map<string, RequestOutcomeView[]>();
      d.rows.forEach((r, i) => {
        const inst = r.handled_by ?? '';
        byInstance.set(inst, [...(byInstance.get(inst) ?? []), d.outcomes[i] as RequestOutcomeView]);
      });
      const got = detectPriorityInversions([...byInstance.values()].map((requests) => ({ requests })), schedulerOf(c));
      const anomalies = body(d.secs, 'Anomaly Counters');
      const want = anomalies ? Number(/^Priority Inversions: (\d+)$/m.exec(anomalies)?.[1]) : 0;
      expect(got).toBe(want);
    });
  }
});

describe(`fitness, goodput and trace summary rebuilt from parity data${PARITY_SKIP_NOTE}`, () => {
  skipWhenNoFixtures();
  const cases = parityCases();
  const withFitness = cases.filter((c) => flagValue(c.argv, 'fitness-weights') !== undefined);
  for (const c of withFitness) {
    it(`${c.name}: Fitness Evaluation`, () => {
      const d = load(c);
      const raw = collectRawMetrics({
        aggregate: {
          completedRequests: d.cluster['completed_requests'] as number,
          totalOutputTokens: d.cluster['total_output_tokens'] as number,
          simEndedTime: Math.round((d.cluster['vllm_estimated_duration_s'] as number) * 1e6),
          droppedUnservable: 0,
          timedOutRequests: 0,
          lengthCappedRequests: 0,
          requests: d.outcomes,
        },
        perInstance: null,
        scheduler: 'fcfs',
        rejectedRequests: 0,
        routingRejections: 0,
      });
      expect(raw.requestsPerSec).toBe(d.cluster['responses_per_sec']);
      const fit = computeFitness(raw, parseFitnessWeights(flagValue(c.argv, 'fitness-weights') as string));
      expect(asBody(fitnessLines(fit))).toBe(body(d.secs, 'Fitness Evaluation'));
    });
  }
  for (const c of cases.filter((x) => x.argv.includes('--trace-output'))) {
    it(`${c.name}: goodput fields of the cluster JSON`, () => {
      const d = load(c);
      const header = parseTraceHeaderYaml(readCaseFile(c, 'trace.yaml'), 'trace.yaml');
      const injected = new Map<string, number>();
      for (const r of parseTraceCsv(readCaseFile(c, 'trace.csv'), 'trace.csv')) injected.set(r.sloClass, (injected.get(r.sloClass) ?? 0) + 1);
      const targets = header.goodputSloTargets.size > 0 ? header.goodputSloTargets : null;
      const base: Record<string, unknown> = { ...d.cluster };
      for (const k of ['goodput_rps', 'slo_attainment', 'per_class']) delete base[k];
      const g = computeGoodput(d.outcomes, injected, Math.round((d.cluster['vllm_estimated_duration_s'] as number) * 1e6), targets);
      expect(goJsonIndent(applyGoodput(base, g))).toBe(goJsonIndent(d.cluster));
    });
  }
  for (const c of cases.filter((x) => x.argv.includes('--summarize-trace'))) {
    it(`${c.name}: Trace Summary`, () => {
      const d = load(c);
      const records = parseTraceCsv(readCaseFile(c, 'trace.csv'), 'trace.csv');
      const served = new Map(d.rows.map((r) => [r.requestID, r.handled_by ?? '']));
      // Every arrival was decided on; the ones that reached an instance were admitted and routed there.
      const admissions: AdmissionRecord[] = records.map((r) => ({
        requestId: `request_${r.requestId}`,
        clock: r.arrivalTimeUs,
        admitted: served.has(`request_${r.requestId}`),
        reason: '',
      }));
      const routings: RoutingRecord[] = admissions
        .filter((a) => a.admitted)
        .map((a) => ({ requestId: a.requestId, clock: a.clock, chosenInstance: served.get(a.requestId) as string, reason: '', scores: null, candidates: null, regret: 0 }));
      expect(asBody(traceSummaryLines(summarizeTrace({ admissions, routings })))).toBe(body(d.secs, 'Trace Summary'));
    });
  }
});
