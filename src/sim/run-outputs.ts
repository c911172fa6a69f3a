/**
 * What a run makes of an executed plan: the recorder and time-series sampler attached before it runs, the
 * report with its JSON-only sections, the TraceV2 export (run and replay), the replay's per-request results,
 * and the outputs object whose texts are rendered only when read. Nothing here checks a configuration: the
 * plan (plan.ts) holds every value already checked.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { Request } from '../domain/request.js';
import { goJsonArrayChunks, goJsonIndent } from '../gocompat/go-format.js';
import type { SloDimTargets } from '../metrics/goodput.js';
import type { SessionLog } from '../workload/sessions/manager.js';
import type { TraceHeader, TraceRecord } from '../workload/tracev2-types.js';
import type { SessionBlueprint } from '../workload/sessions/types.js';
import { buildReplayTraceHeader, buildRunTraceHeader, buildRunTraceRecords, outcomeFromRequest } from '../workload/trace-export.js';
import { parentTraceOutcome } from '../cluster/pd/project.js';
import { formatTraceCsv, formatTraceCsvChunks } from '../workload/tracev2-csv.js';
import { formatTraceHeaderYaml } from '../workload/tracev2-yaml.js';
import { WallClock, WallClockExceeded } from '../sandbox/watchdog.js';
import { WallClockError } from '../policy/errors.js';
import type { TimeSeriesData, TimeSeriesSampler } from '../cluster/timeseries.js';
import { RunRecorder } from '../cluster/recorder.js';
import type { EngineSetup, SyncGuard } from './engine-setup.js';
import { attachSampler, formatTimeSeries, type TimeSeriesRequest } from './timeseries.js';
import { buildReportData } from './report-data.js';
import type { SimEnv } from './env.js';
import { idlePoolWarnings } from './idle-pools.js';
import { buildReport, metricsFileText, renderJson, renderMetricsFile, renderReferenceText, type Report } from './report.js';
import { anomalyReport, policyReportSections } from './policy-report.js';
import type { SimulationPlan } from './plan.js';
import type { ResolvedPolicies } from './resolve-policies.js';

/** The TraceV2 export of a run. */
export interface TraceOutput {
  readonly yaml: string;
  readonly csv: string;
  csvChunks(): Iterable<string>;
}


export interface SimulationOutputs {
  readonly report: Report;
  readonly cluster: ClusterSimulator;
  /** stdout in the requested `--output-format`. */
  readonly stdout: string;
  /**
   * `--metrics-path` contents, rendered when read and only when the option names a file (null otherwise): its
   * per-request rows are large for large runs, and past a couple of million requests longer than a string can
   * be — write {@link metricsFileChunks} instead.
   */
  readonly metricsFile: string | null;
  /** The same bytes as {@link metricsFile}, one request row at a time. */
  metricsFileChunks(): Iterable<string>;
  /** run `--trace-output`: `<prefix>.yaml` and `<prefix>.csv` contents (the CSV rendered when read). */
  readonly trace: TraceOutput | null;
  /** replay `--results-path` contents, rendered when read and only when the option names a file (else null). */
  readonly results: string | null;
  /** The same bytes as {@link results}, one row at a time (null when there are none). */
  resultsChunks(): Iterable<string> | null;
  /** What the run recorded (preemptions, routings with cache outcomes, KV samples, batches with `full`). */
  readonly recorder: RunRecorder;
  /** Every request of the run, follow-ups included. */
  readonly requests: readonly Request[];
  /** The sampled time series (when `--timeseries-*` or RunOptions.timeseries asked for them). */
  readonly timeseries: TimeSeriesData | null;
  /** The merged goodput targets per SLO class (null: none); reports draw attainment against them. */
  readonly goodputTargets?: ReadonlyMap<string, SloDimTargets> | null;
  /** `--timeseries-path` contents (null when no path was given). */
  readonly timeseriesFile: string | null;
}

/** `report_data` (with `--report-data`): what blis report and blis compare draw. */
function reportDataSection(plan: SimulationPlan, cluster: ClusterSimulator, requests: readonly Request[], timeseries: TimeSeriesData | null, goodputTargets: ReadonlyMap<string, SloDimTargets> | null): Record<string, unknown> {
  const o = plan.output.reportData;
  return o !== null ? { report_data: buildReportData({ cluster, requests, timeseries, goodputTargets }, o, plan.mode) } : {};
}

/** Attaches the sampler the options ask for, after `prepare` (the recorder). */
function withSampler(ts: TimeSeriesRequest | null, setup: EngineSetup, prepare: ((cs: ClusterSimulator) => void) | null, holder: { sampler: TimeSeriesSampler | null }): ((cs: ClusterSimulator) => void) | null {
  if (ts === null) return prepare;
  return (cs) => {
    prepare?.(cs);
    holder.sampler = attachSampler(cs, ts, setup.latency.outputTokenProcessingTime());
  };
}

/** The finished series and their file text; warns when a fixed interval had to be coarsened. */
function seriesOutputs(ts: TimeSeriesRequest | null, sampler: TimeSeriesSampler | null, env: SimEnv): { timeseries: TimeSeriesData | null; timeseriesFile: string | null } {
  if (ts === null || sampler === null) return { timeseries: null, timeseriesFile: null };
  const data = sampler.data();
  if (ts.fixed && data.intervalUs !== ts.intervalUs) {
    env.warn(`--timeseries-interval-us ${ts.intervalUs} would give more than ${ts.maxRows} rows; sampled every ${data.intervalUs} µs instead`);
  }
  return { timeseries: data, timeseriesFile: ts.path === '' ? null : formatTimeSeries(data, ts.format) };
}

function recorderFor(plan: SimulationPlan): RunRecorder {
  return new RunRecorder({ batches: plan.policies.traceLevel === 'full', kvSampleIntervalUs: 10_000, prefixAudit: plan.prefixAudit });
}

/** The JSON-only policy, anomaly and trace sections of a finished run. */
function extras(cs: ClusterSimulator, recorder: RunRecorder, requests: readonly Request[], pol: ResolvedPolicies, goodput: ReadonlyMap<string, SloDimTargets> | null): Record<string, unknown> {
  const input = {
    cs,
    recorder,
    requests,
    metadata: pol.metadata,
    evolvable: pol.policy.evolvable ?? null,
    traceLevel: pol.traceLevel,
    goodputTargets: goodput,
    priorityScheduling: pol.scheduler === 'priority-fcfs' || pol.policy.evolvable?.evolvable.specs.priority !== undefined || pol.policy.evolvable?.evolvable.specs.scheduler !== undefined,
  };
  return policyReportSections(input, anomalyReport(input));
}

/**
 * --semantics corrected: what a closed-loop replay needs to regenerate the sessions as they ran — each
 * follow-up's think time (the delay the session manager put before it) and, when every session accumulates its
 * context, `session_context_growth: accumulate` (a mix cannot be written in the one header field: warned).
 */
export function recordSessions(records: TraceRecord[], header: TraceHeader, arrivals: readonly Request[], log: SessionLog, blueprints: readonly SessionBlueprint[], env: SimEnv): void {
  arrivals.forEach((req, i) => {
    const delay = log.delays.get(req);
    if (delay !== undefined) records[i]!.thinkTimeUs = delay;
  });
  const growth = new Set(blueprints.map((b) => b.contextGrowth));
  if (growth.size === 1 && growth.has('accumulate')) {
    header.sessionContextGrowth = 'accumulate';
    writeRoundDeltas(records, arrivals);
  } else if (growth.has('accumulate')) env.warn('--trace-output: some sessions accumulate their context and some do not; the trace header can say only one, so it says neither (a closed-loop replay resends each round\'s recorded input)');
}

/**
 * Rows of an accumulating session in the format's convention (upstream's TraceV2, the converters, every replay
 * mode): round 0 holds its prompt, a later round only its new input — its prompt less the previous round's
 * prompt and output, which the replay appends to the conversation itself. The run's requests hold whole prompts.
 */
function writeRoundDeltas(records: TraceRecord[], arrivals: readonly Request[]): void {
  const bySession = new Map<string, number[]>();
  arrivals.forEach((req, i) => {
    if (req.sessionId === '') return;
    let idx = bySession.get(req.sessionId);
    if (idx === undefined) bySession.set(req.sessionId, (idx = []));
    idx.push(i);
  });
  for (const idx of bySession.values()) {
    idx.sort((a, b) => (arrivals[a] as Request).roundIndex - (arrivals[b] as Request).roundIndex);
    for (let k = idx.length - 1; k > 0; k--) {
      const cur = arrivals[idx[k] as number] as Request;
      const prev = arrivals[idx[k - 1] as number] as Request;
      const rec = records[idx[k] as number] as TraceRecord;
      // The output the session appended: what the previous round produced (a capped round, less than planned).
      const produced = prev.outputLen > 0 ? Math.min(Math.max(0, prev.progressIndex - prev.inputLen), prev.outputLen) : 0;
      rec.inputTokens = Math.max(0, cur.inputLen - prev.inputLen - produced);
      rec.prefixLength = 0;
    }
  }
}

/**
 * replay `--trace-output`: as the reference, one row per request built from the trace (every row in fixed mode;
 * round 0 and the rows outside sessions in closed loop), whether or not it was injected before the horizon, with
 * its state when the replay stopped; header mode "replayed", the input trace's observed KV metrics carried over.
 * Under --semantics corrected the caller passes the injected requests instead.
 */
export function replayTrace(requests: readonly Request[], goodput: ReadonlyMap<string, SloDimTargets> | null, observed: TraceHeader['observedKvMetrics']): TraceOutput {
  const records = buildRunTraceRecords(requests.map((request) => ({ request, outcome: outcomeFromRequest(request) })));
  const header = buildReplayTraceHeader({ ...(goodput ? { goodputSloTargets: goodput } : {}), observedKvMetrics: observed });
  return traceOutput(header, records);
}

export function traceOutput(header: TraceHeader, records: readonly TraceRecord[]): TraceOutput {
  return {
    yaml: formatTraceHeaderYaml(header),
    get csv() {
      return formatTraceCsv(records, header.mode);
    },
    csvChunks: () => formatTraceCsvChunks(records, header.mode),
  };
}

/**
 * Outputs whose stdout and per-request files are rendered only when read: a caller that only wants the report
 * (the evaluator) never pays for rendering them.
 */
export function outputs(plan: SimulationPlan, o: Omit<SimulationOutputs, 'stdout' | 'metricsFile' | 'metricsFileChunks' | 'results' | 'resultsChunks'>, results: (() => Record<string, unknown>[]) | null): SimulationOutputs {
  let stdout: string | null = null;
  return {
    ...o,
    get stdout() {
      return (stdout ??= plan.format === 'reference' ? renderReferenceText(o.report) : renderJson(o.report));
    },
    get metricsFile() {
      return plan.output.metricsFile ? renderMetricsFile(o.report) : null;
    },
    metricsFileChunks: () => metricsFileText(o.report),
    get results() {
      return results === null || !plan.output.resultsFile ? null : goJsonIndent(results());
    },
    resultsChunks: () => {
      if (results === null) return null;
      const rows = results();
      return goJsonArrayChunks(rows, rows.length, 0);
    },
  };
}

/** Pools whose members received no requests, with the option that changes it (issue 29: no silent surprises). */
function warnIdlePools(cs: ClusterSimulator, plan: SimulationPlan, env: SimEnv): void {
  const setup = plan.setup;
  const warnings = idlePoolWarnings(cs, {
    routingPolicy: plan.output.routingPolicyName,
    corrected: plan.corrected,
    poolScorers: { prefill: setup.pd?.prefillScorers != null, decode: setup.pd?.decodeScorers != null },
    deployment: setup.deployment != null,
    decider: plan.output.deciderName,
  });
  for (const w of warnings) env.warn(w);
}

/** The replay's per-request results: requests with both TTFT and E2E and a numeric `request_<n>` id. */
export function simResults(report: Report): Record<string, unknown>[] {
  const rows: { id: number; row: Record<string, unknown> }[] = [];
  for (const r of report.aggregate.requests) {
    if (!r.hasTTFT || !r.hasE2E || !r.registered) continue;
    const m = /^request_(-?\d+)$/.exec(r.id);
    if (!m) continue;
    const id = Number(m[1]);
    const row: Record<string, unknown> = { request_id: id, ttft_us: r.ttft, e2e_us: r.e2e, input_tokens: r.inputLen, output_tokens: r.outputLen };
    if (r.sloClass !== '') row['slo_class'] = r.sloClass;
    if (r.model !== '') row['model'] = r.model;
    if (r.itlMean !== 0) row['itl_mean_us'] = r.itlMean;
    rows.push({ id, row });
  }
  rows.sort((a, b) => a.id - b.id);
  return rows.map((x) => x.row);
}

/** The wall-clock backstop of a run with fast-engine code (null: none), started now. */
export function wallClockGuard(plan: SimulationPlan): SyncGuard | null {
  const w = plan.wallClock;
  if (w === null) return null;
  const clock = new WallClock(w.runMs, w.callMs, w.sliceMs);
  return {
    sliced: clock.sliced,
    sliceOver: () => clock.sliceOver(),
    run: (fn, cs = null) => {
      try {
        return clock.run(fn, cs === null ? null : () => cs.requestPause());
      } catch (e) {
        if (e instanceof WallClockExceeded) throw new WallClockError(e.detail, e.perCall);
        throw e;
      }
    },
  };
}

/** The recorder and the time-series sampler a plan asks for, and the hook that attaches them to the built cluster. */
export function instruments(plan: SimulationPlan): { recorder: RunRecorder; holder: { sampler: TimeSeriesSampler | null }; prepare: ((cs: ClusterSimulator) => void) | null } {
  const recorder = recorderFor(plan);
  const holder: { sampler: TimeSeriesSampler | null } = { sampler: null };
  const prepare = withSampler(plan.timeseries, plan.setup, plan.record ? (c) => recorder.attach(c) : null, holder);
  return { recorder, holder, prepare };
}

/** The report of a finished run (idle pools warned about, the series finished), pausing between the phases. */
export async function finishReport(plan: SimulationPlan, env: SimEnv, cs: ClusterSimulator, all: readonly Request[], recorder: RunRecorder, sampler: TimeSeriesSampler | null): Promise<{ report: Report; series: { timeseries: TimeSeriesData | null; timeseriesFile: string | null } }> {
  const goodputTargets = plan.goodputTargets;
  warnIdlePools(cs, plan, env);
  await env.pause?.();
  const series = seriesOutputs(plan.timeseries, sampler, env);
  const json = plan.format === 'json' ? () => ({ ...extras(cs, recorder, all, plan.policies, goodputTargets), ...reportDataSection(plan, cs, all, series.timeseries, goodputTargets) }) : {};
  await env.pause?.();
  const level = plan.policies.traceLevel;
  const report = buildReport(cs, {
    scheduler: plan.policies.scheduler,
    fitnessWeights: plan.mode === 'run' ? plan.fitnessWeights : null,
    goodputTargets,
    trace: level === 'decisions' || level === 'full' ? { admissions: cs.admissionRecords, routings: cs.routingRecords } : null,
    summarizeTrace: plan.output.summarizeTrace,
    jsonExtras: json,
    corrected: plan.corrected,
  });
  await env.pause?.();
  return { report, series };
}

/**
 * run `--trace-output`: every arrival with its outcome. Corrected semantics (D4): a split request's row carries
 * its parent's outcome, not the untouched parent state; closed-loop sessions record their think times.
 */
export function runTrace(plan: SimulationPlan, cs: ClusterSimulator, sessions: SessionLog | null, blueprints: readonly SessionBlueprint[], seed: bigint, env: SimEnv): TraceOutput {
  const pd = plan.corrected ? cs.pd : null;
  const records = buildRunTraceRecords(cs.arrivals.map((request) => {
    const parent = pd?.parentOf(request);
    return {
      request,
      outcome: parent !== undefined && parent.req === request
        ? parentTraceOutcome(parent)
        : { state: request.state, ttftSet: request.ttftSet, firstTokenTime: request.firstTokenTime, itlSum: request.itlSum },
    };
  }));
  const goodputTargets = plan.goodputTargets;
  const header = buildRunTraceHeader(goodputTargets ? { workloadSeed: seed, goodputSloTargets: goodputTargets } : { workloadSeed: seed });
  if (plan.corrected && sessions !== null) recordSessions(records, header, cs.arrivals, sessions, blueprints, env);
  return traceOutput(header, records);
}
