/**
 * The composition root: a fully resolved engine setup in, a finished simulation out. The one place that picks
 * implementations (KV store kind, policies) for the layers below.
 */
import type { Request } from '../domain/request.js';
import { SloPriorityMap } from '../domain/slo.js';
import { ClusterSimulator } from '../cluster/cluster.js';
import { Instance } from '../instance/instance.js';
import type { PreemptionPolicy, SchedulerName } from '../instance/scheduler.js';
import { createKVStore } from '../kv/index.js';
import type { LatencyModel } from '../latency/types.js';
import { alwaysAdmit, roundRobin } from '../routing/basic.js';

export interface KVSetup {
  readonly totalBlocks: number;
  readonly blockSize: number;
  readonly cpuBlocks: number;
  readonly transferBandwidth: number;
  readonly transferBaseLatency: number;
}

export interface EngineSetup {
  readonly numInstances: number;
  readonly horizon: number;
  readonly admissionLatency: number;
  readonly routingLatency: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly longPrefillTokenThreshold: number;
  readonly maxModelLen: number;
  readonly scheduler: SchedulerName;
  readonly preemptionPolicy: PreemptionPolicy;
  readonly kv: KVSetup;
  readonly latency: LatencyModel;
  readonly sloPriorities?: Readonly<Record<string, number>>;
}

export function buildCluster(setup: EngineSetup): ClusterSimulator {
  const slo = new SloPriorityMap(setup.sloPriorities ?? {});
  return new ClusterSimulator(
    { horizon: setup.horizon, admissionLatency: setup.admissionLatency, routingLatency: setup.routingLatency },
    setup.numInstances,
    (i, sink) =>
      new Instance(
        {
          id: `instance_${i}`,
          horizon: setup.horizon,
          scheduler: setup.scheduler,
          maxNumSeqs: setup.maxNumSeqs,
          maxNumBatchedTokens: setup.maxNumBatchedTokens,
          longPrefillTokenThreshold: setup.longPrefillTokenThreshold,
          maxModelLen: setup.maxModelLen,
          preemptionPolicy: setup.preemptionPolicy,
        },
        createKVStore(setup.kv),
        setup.latency,
        slo,
        sink,
      ),
    { admission: alwaysAdmit(), routing: roundRobin() },
  );
}

/** Runs `requests` (sorted by arrival) through a fresh cluster built from `setup`. */
export function runEngine(setup: EngineSetup, requests: readonly Request[]): ClusterSimulator {
  const cs = buildCluster(setup);
  cs.run(requests);
  return cs;
}
