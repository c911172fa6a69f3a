/**
 * `--summarize-trace` (reference trace.Summarize and its printout): decision counts, where standard routing
 * sent requests, and the counterfactual regret.
 */
import type { DecisionTrace } from '../domain/decision-records.js';
import { goFixed, goSortedKeys } from '../gocompat/go-format.js';

export interface TraceSummary {
  /** Number of admission records. */
  readonly totalDecisions: number;
  readonly admittedCount: number;
  readonly rejectedCount: number;
  readonly uniqueTargets: number;
  /** Instance id → routed count. */
  readonly targetDistribution: ReadonlyMap<string, number>;
  readonly meanRegret: number;
  readonly maxRegret: number;
}

export function summarizeTrace(t: DecisionTrace | null): TraceSummary {
  let admitted = 0;
  let rejected = 0;
  const dist = new Map<string, number>();
  let meanRegret = 0;
  let maxRegret = 0;
  if (t) {
    for (const a of t.admissions) {
      if (a.admitted) admitted++;
      else rejected++;
    }
    if (t.routings.length > 0) {
      // Summed in record order: the mean's float rounding depends on it.
      let total = 0;
      for (const r of t.routings) {
        dist.set(r.chosenInstance, (dist.get(r.chosenInstance) ?? 0) + 1);
        total += r.regret;
        if (r.regret > maxRegret) maxRegret = r.regret;
      }
      meanRegret = total / t.routings.length;
    }
  }
  return {
    totalDecisions: t ? t.admissions.length : 0,
    admittedCount: admitted,
    rejectedCount: rejected,
    uniqueTargets: dist.size,
    targetDistribution: dist,
    meanRegret,
    maxRegret,
  };
}

/** `=== Trace Summary ===` body lines. */
export function traceSummaryLines(s: TraceSummary): string[] {
  const lines = [
    `Total Decisions: ${s.totalDecisions}`,
    `  Admitted: ${s.admittedCount}`,
    `  Rejected: ${s.rejectedCount}`,
    `Unique Targets: ${s.uniqueTargets}`,
  ];
  if (s.targetDistribution.size > 0) {
    lines.push('Target Distribution:');
    for (const k of goSortedKeys(s.targetDistribution)) lines.push(`  ${k}: ${s.targetDistribution.get(k) as number}`);
  }
  lines.push(`Mean Regret: ${goFixed(s.meanRegret, 6)}`, `Max Regret: ${goFixed(s.maxRegret, 6)}`);
  return lines;
}
