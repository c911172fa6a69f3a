/**
 * Field tables for the TraceV2 header: YAML key, TS property, value kind and whether the reference marks the
 * field `omitempty`. The order of each table is the reference's struct field order, which is the order
 * yaml.v3 writes keys in.
 */
import type {
  SloDimTargets,
  TraceKvOffloadConfig,
  TraceKvOffloadTier,
  TraceNetworkConfig,
  TraceObservedKvMetrics,
  TraceServerConfig,
} from './tracev2-types.js';

/** 'bigint' is a nullable int64 (Go *int64), read as a bigint so seeds keep all 64 bits. */
export type ScalarKind = 'int' | 'bigint' | 'float' | 'bool' | 'string';
export type FieldKind =
  | ScalarKind
  | { readonly t: 'struct'; readonly spec: StructSpec }
  | { readonly t: 'list'; readonly spec: StructSpec }
  | { readonly t: 'map'; readonly spec: StructSpec };

export interface FieldSpec {
  readonly key: string;
  readonly prop: string;
  readonly kind: FieldKind;
  readonly omitEmpty: boolean;
}

export interface StructSpec {
  /** Name used in error messages. */
  readonly name: string;
  readonly fields: readonly FieldSpec[];
  /** A fresh value with every field at its zero value. */
  make(): Record<string, unknown>;
}

const f = (key: string, prop: string, kind: FieldKind, omitEmpty = false): FieldSpec => ({ key, prop, kind, omitEmpty });
const asRecord = <T extends object>(v: T): Record<string, unknown> => v as unknown as Record<string, unknown>;

const SLO_TARGETS_SPEC: StructSpec = {
  name: 'goodput SLO targets',
  fields: [f('ttft_ms', 'ttftMs', 'float', true), f('itl_ms', 'itlMs', 'float', true), f('e2e_ms', 'e2eMs', 'float', true)],
  make: () => asRecord<SloDimTargets>({ ttftMs: 0, itlMs: 0, e2eMs: 0 }),
};

const SERVER_SPEC: StructSpec = {
  name: 'server',
  fields: [
    f('type', 'type', 'string', true),
    f('model', 'model', 'string', true),
    f('tensor_parallel', 'tensorParallel', 'int', true),
    f('max_num_seqs', 'maxNumSeqs', 'int', true),
    f('block_size', 'blockSize', 'int', true),
    f('gpu_memory_utilization', 'gpuMemoryUtilization', 'float', true),
    f('max_model_len', 'maxModelLen', 'int', true),
  ],
  make: () =>
    asRecord<TraceServerConfig>({ type: '', model: '', tensorParallel: 0, maxNumSeqs: 0, blockSize: 0, gpuMemoryUtilization: 0, maxModelLen: 0 }),
};

const NETWORK_SPEC: StructSpec = {
  name: 'network',
  fields: [f('measured_rtt_ms', 'measuredRttMs', 'float', true)],
  make: () => asRecord<TraceNetworkConfig>({ measuredRttMs: 0 }),
};

const TIER_SPEC: StructSpec = {
  name: 'kv_offload secondary tier',
  fields: [
    f('type', 'type', 'string'),
    f('root_dir', 'rootDir', 'string'),
    f('n_read_threads', 'nReadThreads', 'int'),
    f('n_write_threads', 'nWriteThreads', 'int'),
    f('locality', 'locality', 'string', true),
    f('enable_kv_events', 'enableKvEvents', 'bool'),
    f('direct_io', 'directIo', 'bool'),
    f('device_class', 'deviceClass', 'string', true),
    f('read_bandwidth', 'readBandwidth', 'float'),
    f('write_bandwidth', 'writeBandwidth', 'float'),
    f('base_latency', 'baseLatency', 'float'),
    f('saturation_queue_depth', 'saturationQueueDepth', 'int'),
    f('single_transfer_fraction', 'singleTransferFraction', 'float'),
    f('latency_jitter_stddev', 'latencyJitterStddev', 'float'),
  ],
  make: () =>
    asRecord<TraceKvOffloadTier>({
      type: '', rootDir: '', nReadThreads: 0, nWriteThreads: 0, locality: '', enableKvEvents: false, directIo: false,
      deviceClass: '', readBandwidth: 0, writeBandwidth: 0, baseLatency: 0, saturationQueueDepth: 0,
      singleTransferFraction: 0, latencyJitterStddev: 0,
    }),
};

const KV_OFFLOAD_SPEC: StructSpec = {
  name: 'kv_offload',
  fields: [
    f('cpu_bytes_to_use', 'cpuBytesToUse', 'int'),
    f('per_block_bytes', 'perBlockBytes', 'int'),
    f('block_size', 'blockSize', 'int'),
    f('blocks_per_chunk', 'blocksPerChunk', 'int'),
    f('tokens_per_hash', 'tokensPerHash', 'int'),
    f('eviction_policy', 'evictionPolicy', 'string'),
    f('offload_prompt_only', 'offloadPromptOnly', 'bool'),
    f('self_describing_kv_events', 'selfDescribingKvEvents', 'bool'),
    f('secondary_tiers', 'secondaryTiers', { t: 'list', spec: TIER_SPEC }, true),
  ],
  make: () =>
    asRecord<TraceKvOffloadConfig>({
      cpuBytesToUse: 0, perBlockBytes: 0, blockSize: 0, blocksPerChunk: 0, tokensPerHash: 0, evictionPolicy: '',
      offloadPromptOnly: false, selfDescribingKvEvents: false, secondaryTiers: [],
    }),
};

const OBSERVED_KV_SPEC: StructSpec = {
  name: 'observed_kv_metrics',
  fields: [
    f('source', 'source', 'string'),
    f('hit_rate', 'hitRate', 'float'),
    f('block_hits', 'blockHits', 'int'),
    f('block_queries', 'blockQueries', 'int'),
    f('read_time_total', 'readTimeTotal', 'float', true),
    f('write_time_total', 'writeTimeTotal', 'float', true),
    f('vllm_commit', 'vllmCommit', 'string', true),
  ],
  make: () =>
    asRecord<TraceObservedKvMetrics>({ source: '', hitRate: 0, blockHits: 0, blockQueries: 0, readTimeTotal: 0, writeTimeTotal: 0, vllmCommit: '' }),
};

export const HEADER_SPEC: StructSpec = {
  name: 'trace header',
  fields: [
    f('trace_version', 'traceVersion', 'int'),
    f('time_unit', 'timeUnit', 'string'),
    f('created_at', 'createdAt', 'string', true),
    f('mode', 'mode', 'string'),
    f('warm_up_requests', 'warmUpRequests', 'int'),
    f('workload_seed', 'workloadSeed', 'bigint', true),
    f('workload_spec', 'workloadSpec', 'string', true),
    f('session_context_growth', 'sessionContextGrowth', 'string', true),
    f('server', 'server', { t: 'struct', spec: SERVER_SPEC }, true),
    f('network', 'network', { t: 'struct', spec: NETWORK_SPEC }, true),
    f('goodput_slo_targets', 'goodputSloTargets', { t: 'map', spec: SLO_TARGETS_SPEC }, true),
    f('kv_offload', 'kvOffload', { t: 'struct', spec: KV_OFFLOAD_SPEC }, true),
    f('observed_kv_metrics', 'observedKvMetrics', { t: 'struct', spec: OBSERVED_KV_SPEC }, true),
  ],
  make: () => ({}),
};
