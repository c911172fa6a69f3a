/**
 * A run digest: what the reflection summary reads from one finished scenario run, as plain data. It is built
 * where the run happened (in process, or in a pool worker, which returns it instead of the simulator), so a
 * run's simulator, requests and recorder can be dropped as soon as it ends, and a worker's reply is a few tens
 * of kilobytes however the run was traced. The summary is computed from digests only, in scenario/seed
 * order, so it is the same whichever thread ran which run.
 *
 * The per-request, per-routing and per-audit rows are columns (one array per field; strings interned in
 * `strings`): a structured clone copies a typed array as one block instead of walking thousands of small
 * objects, and the digest of a 500-request, 4-instance run is ~140 KB and clones in ~0.2 ms.
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import type { RunRecorder } from '../cluster/recorder.js';
import type { Request } from '../domain/request.js';
import type { AnomalyEvent, AnomalyReport } from '../metrics/anomalies/index.js';
import type { SloTargets } from './types.js';

/** The anomaly types whose events the summary describes (the others only count). */
export const DIGEST_EVENT_TYPES: readonly string[] = ['preemption_storm', 'cache_thrashing', 'priority_inversion'];

/** Arrived requests, in the simulator's request order. Times in µs; -1 = no first token / not completed. */
export interface RequestColumns {
  readonly id: Int32Array;
  readonly tenant: Int32Array;
  readonly sloClass: Int32Array;
  /** '' = never routed. */
  readonly instance: Int32Array;
  readonly outcome: Int32Array;
  readonly arrivalUs: Float64Array;
  readonly inputLen: Float64Array;
  readonly outputLen: Float64Array;
  readonly ttftUs: Float64Array;
  readonly e2eUs: Float64Array;
  readonly itlMeanUs: Float64Array;
}

/** The cluster's routing records; `cand*` hold `candN[i]` top-k candidates per record from `candStart[i]`. */
export interface RoutingColumns {
  readonly requestId: Int32Array;
  readonly clockUs: Float64Array;
  readonly chosen: Int32Array;
  readonly regret: Float64Array;
  /** 1 when the policy gave scores. */
  readonly scored: Uint8Array;
  /** -1 = no candidate list. */
  readonly candN: Int32Array;
  readonly candStart: Int32Array;
  readonly candInstance: Int32Array;
  readonly candQueueDepth: Float64Array;
  readonly candBatchSize: Float64Array;
  readonly candInFlight: Float64Array;
  readonly candKvUtilization: Float64Array;
}

/** The recorder's prefix audits (PrefixAuditRecord as columns). */
export interface AuditColumns {
  readonly requestId: Int32Array;
  readonly timeUs: Float64Array;
  readonly chosen: Int32Array;
  readonly chosenBlocks: Float64Array;
  readonly best: Int32Array;
  readonly bestBlocks: Float64Array;
  readonly promptBlocks: Float64Array;
  readonly chosenLoad: Float64Array;
  readonly bestLoad: Float64Array;
}

export interface RunDigest {
  readonly scenario: string;
  readonly seed: number;
  /** Per SLO class ('' / 'default' = requests without a class). */
  readonly slo: Readonly<Record<string, SloTargets>>;
  /** Raw objective values of this run. */
  readonly objectives: Readonly<Record<string, number>>;
  /** Normalised scores in [0, 1]. */
  readonly scores: Readonly<Record<string, number>>;
  /** Interned strings the columns index. */
  readonly strings: readonly string[];
  readonly requests: RequestColumns;
  readonly routings: RoutingColumns;
  readonly audits: AuditColumns;
  /** The simulator's clock at the end (µs). */
  readonly endUs: number;
  /** Instance ids at the end of the run, in the simulator's order. */
  readonly instances: readonly string[];
  readonly blockSize: number;
  readonly admissionDelays: number;
  readonly delayLimitRejections: number;
  /** Preemptions in order: (instance, request) string indexes, interleaved. */
  readonly preemptions: Int32Array;
  /** GPU→CPU offloads and CPU→GPU reloads over the instances (their last KV samples). */
  readonly kvOffloads: number;
  readonly kvReloads: number;
  /** ShadowKV routings, those whose prediction differed from the cache, and those predicted hits that missed. */
  readonly shadowRoutings: number;
  readonly shadowWrong: number;
  readonly shadowFalseHits: number;
  readonly anomalyCounts: Readonly<Record<string, number>>;
  /** Events of DIGEST_EVENT_TYPES, in the report's order (without their request lists). */
  readonly anomalyEvents: readonly Omit<AnomalyEvent, 'requests'>[];
}

/** A finished run as the evaluator holds it before digesting. */
export interface LiveRun {
  readonly scenario: string;
  readonly seed: number;
  /** Finished; decisions traced (admission/routing records present, counterfactual-k 3). */
  readonly cs: ClusterSimulator;
  /** prefixAudit on. */
  readonly recorder: RunRecorder;
  readonly requests: readonly Request[];
  readonly anomalies: AnomalyReport;
  readonly slo: Readonly<Record<string, SloTargets>>;
  readonly objectives: Readonly<Record<string, number>>;
  readonly scores: Readonly<Record<string, number>>;
}

class Interner {
  readonly strings: string[] = [];
  private readonly index = new Map<string, number>();

  id(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.index.set(s, i);
    }
    return i;
  }
}

function requestColumns(reqs: readonly Request[], str: Interner): RequestColumns {
  const n = reqs.length;
  const c = {
    id: new Int32Array(n), tenant: new Int32Array(n), sloClass: new Int32Array(n), instance: new Int32Array(n), outcome: new Int32Array(n),
    arrivalUs: new Float64Array(n), inputLen: new Float64Array(n), outputLen: new Float64Array(n), ttftUs: new Float64Array(n), e2eUs: new Float64Array(n), itlMeanUs: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    const r = reqs[i] as Request;
    c.id[i] = str.id(r.id);
    c.tenant[i] = str.id(r.tenantId);
    c.sloClass[i] = str.id(r.sloClass);
    c.instance[i] = str.id(r.assignedInstance);
    c.outcome[i] = str.id(r.outcome);
    c.arrivalUs[i] = r.arrivalTime;
    c.inputLen[i] = r.inputLen;
    c.outputLen[i] = r.outputLen;
    c.ttftUs[i] = r.hasTTFT ? r.ttft : -1;
    c.e2eUs[i] = r.hasE2E ? r.e2e : -1;
    c.itlMeanUs[i] = r.itlMean;
  }
  return c;
}

function routingColumns(cs: ClusterSimulator, str: Interner): RoutingColumns {
  const recs = cs.routingRecords;
  const n = recs.length;
  let nc = 0;
  for (const r of recs) nc += r.candidates?.length ?? 0;
  const c = {
    requestId: new Int32Array(n), clockUs: new Float64Array(n), chosen: new Int32Array(n), regret: new Float64Array(n), scored: new Uint8Array(n),
    candN: new Int32Array(n), candStart: new Int32Array(n),
    candInstance: new Int32Array(nc), candQueueDepth: new Float64Array(nc), candBatchSize: new Float64Array(nc), candInFlight: new Float64Array(nc), candKvUtilization: new Float64Array(nc),
  };
  let k = 0;
  for (let i = 0; i < n; i++) {
    const r = recs[i] as (typeof recs)[number];
    c.requestId[i] = str.id(r.requestId);
    c.clockUs[i] = r.clock;
    c.chosen[i] = str.id(r.chosenInstance);
    c.regret[i] = r.regret;
    c.scored[i] = r.scores !== null ? 1 : 0;
    c.candStart[i] = k;
    c.candN[i] = r.candidates === null ? -1 : r.candidates.length;
    for (const x of r.candidates ?? []) {
      c.candInstance[k] = str.id(x.instanceId);
      c.candQueueDepth[k] = x.queueDepth;
      c.candBatchSize[k] = x.batchSize;
      c.candInFlight[k] = x.inFlightRequests;
      c.candKvUtilization[k] = x.kvUtilization;
      k++;
    }
  }
  return c;
}

function auditColumns(rec: RunRecorder, str: Interner): AuditColumns {
  const as = rec.prefixAudits;
  const n = as.length;
  const c = {
    requestId: new Int32Array(n), timeUs: new Float64Array(n), chosen: new Int32Array(n), chosenBlocks: new Float64Array(n), best: new Int32Array(n),
    bestBlocks: new Float64Array(n), promptBlocks: new Float64Array(n), chosenLoad: new Float64Array(n), bestLoad: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    const a = as[i] as (typeof as)[number];
    c.requestId[i] = str.id(a.requestId);
    c.timeUs[i] = a.timeUs;
    c.chosen[i] = str.id(a.chosen);
    c.chosenBlocks[i] = a.chosenBlocks;
    c.best[i] = str.id(a.best);
    c.bestBlocks[i] = a.bestBlocks;
    c.promptBlocks[i] = a.promptBlocks;
    c.chosenLoad[i] = a.chosenLoad;
    c.bestLoad[i] = a.bestLoad;
  }
  return c;
}

/** The digest of a finished run (see the module comment). */
export function digestRun(run: LiveRun): RunDigest {
  const { cs, recorder } = run;
  const str = new Interner();
  str.id('');
  const arrived = new Set<Request>(cs.arrivals);
  const reqs = arrived.size > 0 ? run.requests.filter((r) => arrived.has(r)) : run.requests;
  // Each instance's last KV sample that did not go backwards (the counters only grow within an instance's life).
  const last = new Map<string, { offloads: number; reloads: number }>();
  for (const s of recorder.kvSamples) {
    const p = last.get(s.instance);
    if (p === undefined || s.offloads >= p.offloads) last.set(s.instance, { offloads: s.offloads, reloads: s.reloads });
  }
  let kvOffloads = 0;
  let kvReloads = 0;
  for (const v of last.values()) {
    kvOffloads += v.offloads;
    kvReloads += v.reloads;
  }
  let shadowWrong = 0;
  let shadowFalseHits = 0;
  for (const r of recorder.routings) {
    if (r.expectedHit === r.actualHit) continue;
    shadowWrong++;
    if (r.expectedHit) shadowFalseHits++;
  }
  const preemptions = new Int32Array(recorder.preemptions.length * 2);
  recorder.preemptions.forEach((p, i) => {
    preemptions[2 * i] = str.id(p.instance);
    preemptions[2 * i + 1] = str.id(p.requestId);
  });
  const requests = requestColumns(reqs, str);
  const routings = routingColumns(cs, str);
  const audits = auditColumns(recorder, str);
  return {
    scenario: run.scenario,
    seed: run.seed,
    slo: run.slo,
    objectives: run.objectives,
    scores: run.scores,
    strings: str.strings,
    requests,
    routings,
    audits,
    endUs: cs.clock,
    instances: cs.instances.map((i) => i.id),
    blockSize: cs.instances[0]?.kv.blockSize ?? 16,
    admissionDelays: cs.admissionDelays,
    delayLimitRejections: cs.delayLimitRejections,
    preemptions,
    kvOffloads,
    kvReloads,
    shadowRoutings: recorder.routings.length,
    shadowWrong,
    shadowFalseHits,
    anomalyCounts: { ...run.anomalies.counts },
    anomalyEvents: run.anomalies.events.filter((e) => DIGEST_EVENT_TYPES.includes(e.type)).map((e) => ({ type: e.type, timestampUs: e.timestampUs, description: e.description, severity: e.severity })),
  };
}
