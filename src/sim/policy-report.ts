/**
 * The JSON-only report sections of evolvable policies and traces: `policy` (the candidate's metadata and
 * what runs at each control point), `policy_anomalies` (policy-search-design §10: counts always, events with
 * `--trace-level decisions|full`) and `trace` (the decision records; batch formations with `full`). The
 * reference text format (`--output-format reference`) never changes.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { RunRecorder } from '../cluster/recorder.js';
import type { Request } from '../domain/request.js';
import { detectAnomalies, type AnomalyInputs, type AnomalyReport } from '../metrics/anomalies/index.js';
import type { SloDimTargets } from '../metrics/goodput.js';
import type { PreparedPolicies } from '../policy/build.js';
import type { PolicyMetadata } from '../policy/spec.js';
import { printTree } from '../policy/tree/index.js';
import type { TraceLevel } from './resolve-policies.js';
import { scaleEvents, scalingSection } from './scaling-report.js';
import { kvTierTransferTrace, kvTiersSection, tierReports } from './kv-tiers-report.js';
import type { AutoscalerReport } from './scaling-report.js';
import type { AdmissionDelaysSection, ControlPointDescription, KvTiersSection, PolicyAnomaliesSection, PolicySection, TraceSection } from './report-sections.js';

/** The JSON-only sections policyReportSections() adds (each when it applies; policy_anomalies always). */
export type PolicyReportSections = {
  policy?: PolicySection;
  admission_delays?: AdmissionDelaysSection;
  kv_tiers?: KvTiersSection;
  autoscaler?: AutoscalerReport;
  policy_anomalies: PolicyAnomaliesSection;
  trace?: TraceSection;
};

export interface PolicyReportInput {
  readonly cs: ClusterSimulator;
  readonly recorder: RunRecorder;
  /** Every request of the run (follow-ups included). */
  readonly requests: readonly Request[];
  readonly metadata: PolicyMetadata | null;
  readonly evolvable: PreparedPolicies | null;
  readonly traceLevel: TraceLevel;
  readonly goodputTargets: ReadonlyMap<string, SloDimTargets> | null;
  /** Priority-aware scheduling in effect (priority-fcfs, or a priority / scheduler policy). */
  readonly priorityScheduling: boolean;
}

export function anomalyReport(x: PolicyReportInput): AnomalyReport {
  const first = x.recorder.firstScheduled;
  const inputs: AnomalyInputs = {
    requests: x.requests.filter((r) => r.assignedInstance !== '').map((r) => ({
      id: r.id,
      instance: r.assignedInstance,
      sloClass: r.sloClass,
      arrivalUs: r.arrivalTime,
      scheduledUs: first.get(r) ?? null,
      ttftUs: r.hasTTFT ? r.ttft : null,
      itlMeanUs: r.hasE2E && r.outputLen > 1 ? r.itlMean : null,
      e2eUs: r.hasE2E ? r.e2e : null,
      priority: r.priority,
      sloTargetUs: r.sloTargetUs,
    })),
    sloTargets: x.goodputTargets,
    priorityScheduling: x.priorityScheduling,
    preemptions: x.recorder.preemptions,
    routings: x.recorder.routings,
    kvSamples: x.recorder.kvSamples,
    tierCycles: tierReports(x.cs).flatMap(({ id, report }) => report.cycles.map((c) => ({ timeUs: c.timeUs, instance: id, cpu: c.cpu, storage: c.storage }))),
    scaleEvents: scaleEvents(x.cs),
    pdQueueSamples: (x.cs.pd?.beyond?.samples ?? []).map((s) => ({ timeUs: s.timeUs, instance: x.cs.instances[s.instance]?.id ?? '', pending: s.pending, requestIds: s.requestIds })),
  };
  // A configured backpressure threshold is where an episode starts.
  const bp = x.cs.pd?.beyond?.cfg.backpressure ?? 0;
  return detectAnomalies(inputs, bp > 0 ? { pdBackpressureQueue: bp } : {});
}

/** The extra top-level keys of the JSON report. */
export function policyReportSections(x: PolicyReportInput, anomalies: AnomalyReport): PolicyReportSections {
  const out: Omit<PolicyReportSections, 'policy_anomalies'> & { policy_anomalies?: PolicyAnomaliesSection } = {};
  const traced = x.traceLevel === 'decisions' || x.traceLevel === 'full';
  // A bundle's policies are described when it names the candidate or decisions are traced: otherwise a
  // policy written as a bundle prints exactly what the equivalent built-in prints.
  if (x.metadata !== null || (traced && x.evolvable !== null)) {
    const points: Record<string, ControlPointDescription> = {};
    for (const [point, spec] of Object.entries(x.evolvable?.evolvable.specs ?? {})) {
      if (spec.type === 'parameterized') points[point] = { type: spec.type, template: spec.template, parameters: spec.parameters };
      else if (spec.type === 'decision_tree') points[point] = { type: spec.type, nodes: spec.tree.nodeCount, text: printTree(spec.tree) };
      else points[point] = { type: spec.type, engine: spec.engine, entrypoint: spec.entrypoint, source: spec.sourceLabel, limits: { instructions: spec.limits.instructions, memory_bytes: spec.limits.memoryBytes } };
    }
    const m = x.metadata;
    out.policy = {
      ...(m === null ? {} : { id: m.id, generation: m.generation, parent_id: m.parentId, mutations: m.mutations }),
      control_points: points,
    };
  }
  // DELAY is an evolvable-policy decision (the built-ins never delay): reported only when one happened.
  if (x.cs.admissionDelays > 0) {
    out.admission_delays = { delays: x.cs.admissionDelays, delay_limit_rejections: x.cs.delayLimitRejections, still_delayed: x.cs.delayedNow.size };
  }
  const tiers = kvTiersSection(x.cs);
  if (tiers !== null) out.kv_tiers = tiers;
  const scaling = scalingSection(x.cs);
  if (scaling !== null) out.autoscaler = scaling;
  const policyAnomalies: PolicyAnomaliesSection = {
    counts: anomalies.counts,
    shadow_divergences: x.cs.shadowDivergences,
    ...(traced ? { events: anomalies.events.map((e) => ({ type: e.type, timestamp_us: e.timestampUs, description: e.description, requests: e.requests, severity: e.severity })) } : {}),
  };
  if (traced) {
    const tierTrace = kvTierTransferTrace(x.cs);
    out.trace = {
      level: x.traceLevel,
      ...(x.metadata === null ? {} : { policy_id: x.metadata.id }),
      admissions: x.cs.admissionRecords.map((a) => ({ request_id: a.requestId, clock_us: a.clock, admitted: a.admitted, reason: a.reason, ...(a.delayUs === undefined ? {} : { delay_us: a.delayUs }) })),
      ...(x.cs.priorityRecords.length > 0 ? { priorities: x.cs.priorityRecords.map((p) => ({ request_id: p.requestId, clock_us: p.clock, score: p.score, ...(p.hints === null ? {} : { hints: p.hints }) })) } : {}),
      routings: x.cs.routingRecords.map((r) => ({
        request_id: r.requestId,
        clock_us: r.clock,
        chosen_instance: r.chosenInstance,
        reason: r.reason,
        ...(r.scores === null ? {} : { scores: Object.fromEntries(r.scores) }),
        ...(r.candidates === null ? {} : { top_k: r.candidates.map((c) => ({ instance_id: c.instanceId, score: c.score, queue_depth: c.queueDepth, batch_size: c.batchSize, in_flight: c.inFlightRequests, kv_utilization: c.kvUtilization })) }),
        regret: r.regret,
        ...(r.expectedCacheHit === undefined ? {} : { expected_cache_hit: r.expectedCacheHit, cache_hit: r.cacheHit }),
        ...(r.filteredOut === undefined ? {} : { filtered_out: r.filteredOut }),
      })),
      ...(x.cs.autoscaler !== null && x.cs.autoscaler.decisions.length > 0
        ? { scale_decisions: x.cs.autoscaler.decisions.map((d) => ({ clock_us: d.clock, target: d.target, trigger: d.trigger, current: d.current, action: d.decision.action, target_replicas: d.decision.targetReplicas, reason: d.decision.reason })) }
        : {}),
      ...(x.cs.autoscaler !== null && x.cs.autoscaler.records.length > 0
        ? { scales: x.cs.autoscaler.records.map((r) => ({ clock_us: r.clock, target: r.target, action: r.action, instance_id: r.instanceId, replicas: r.replicas, reason: r.reason })) }
        : {}),
      ...(x.cs.pd !== null
        ? {
          disaggregations: x.cs.pd.disaggregationRecords.map((d) => ({ request_id: d.requestId, clock_us: d.clock, disaggregate: d.disaggregate, decode_instance: d.decodeInstance, reason: d.reason })),
          ...(x.cs.pd.encode !== null && x.cs.pd.encode.decisions.length > 0 ? { encode_decisions: x.cs.pd.encode.decisions.map((d) => ({ request_id: d.requestId, clock_us: d.clock, encode: d.encode, decode_instance: d.decodeInstance, reason: d.reason })) } : {}),
          ...(x.cs.pd.encode !== null ? { encode_routings: x.cs.pd.encode.records.map((r) => ({ parent_request_id: r.parentRequestId, clock_us: r.clock, chosen_instance: r.chosenInstance, regret: r.regret })) } : {}),
          prefill_routings: x.cs.pd.prefillRoutingRecords.map((r) => ({ parent_request_id: r.parentRequestId, clock_us: r.clock, chosen_instance: r.chosenInstance, regret: r.regret })),
          kv_transfers: x.cs.pd.kvTransferRecords.map((k) => ({ parent_request_id: k.parentRequestId, start_us: k.transferStartTime, duration_us: k.transferDuration, blocks: k.numKVBlocks, prefill_instance: k.prefillInstanceId, decode_instance: k.decodeInstanceId })),
        }
        : {}),
      ...(tierTrace === null ? {} : { kv_tier_transfers: tierTrace }),
      ...(x.traceLevel === 'full'
        ? {
            batches: x.recorder.batches.map((b) => ({ time_us: b.timeUs, instance: b.instance, step: b.step, scheduled: b.scheduled, newly_scheduled: b.newlyScheduled, preempted: b.preempted, duration_us: b.durationUs, kv_offloads: b.offloads, kv_reloads: b.reloads })),
            preemptions: x.recorder.preemptions.map((p) => ({ time_us: p.timeUs, instance: p.instance, request_id: p.requestId })),
          }
        : {}),
    };
  }
  return { ...out, policy_anomalies: policyAnomalies };
}
