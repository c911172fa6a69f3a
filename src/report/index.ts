/**
 * Reports: one self-contained HTML file per run, replay, evaluation or comparison, with charts declared in
 * Vega-Lite and rendered to SVG at build time (render.ts). Library entry points; the CLI writes the files.
 */
import type { FlagValues } from '../sim/options.js';
import { renderJson } from '../sim/report.js';
import { buildReportData, reportDataOptions } from '../sim/report-data.js';
import type { SimulationOutputs } from '../sim/run.js';
import { runView, type RunView } from './model.js';
import { renderRunReport } from './run-report.js';

export { loadResult, runView, evaluationView, ReportInputError, type ResultView, type RunView, type EvaluationView, type ScenarioView } from './model.js';
export { renderRunReport, renderEvaluationReport, renderResultReport } from './run-report.js';
export { compareResults, formatComparisonJson, formatComparisonText, renderComparisonReport, type Comparison, type CompareRow } from './compare.js';
export { renderSvg, inlineSafe } from './render.js';

/**
 * The view of a finished simulation as its JSON output would give it, with report data added when the output
 * has none (so a live report and one of the saved `--report-data` output draw the same things).
 */
export function simulationView(out: SimulationOutputs, f: FlagValues, source: 'run' | 'replay', label: string = source): RunView {
  const doc = JSON.parse(renderJson(out.report)) as Record<string, unknown>;
  if (doc['report_data'] === undefined) {
    doc['report_data'] = JSON.parse(JSON.stringify(buildReportData({ cluster: out.cluster, requests: out.requests, timeseries: out.timeseries, goodputTargets: out.goodputTargets ?? null }, reportDataOptions(f), source))) as unknown;
  }
  return runView(doc, label);
}

/** The HTML report of a finished run or replay (`--report FILE.html`). */
export function simulationReportHtml(out: SimulationOutputs, f: FlagValues, source: 'run' | 'replay'): Promise<string> {
  return renderRunReport(simulationView(out, f, source));
}
