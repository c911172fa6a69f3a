/**
 * TraceV2 data model (the reference's `sim/workload/tracev2.go`): a YAML header plus one CSV row per request.
 *
 * Field names are camelCase versions of the on-disk keys/columns. Go `nil` pointers are `null` here, and the
 * Go zero value ("" / 0 / false) keeps its "not set" meaning wherever the reference uses `omitempty`.
 */
import { BlisError } from '../domain/errors.js';

/** Per-SLO-class goodput thresholds in ms; 0 = dimension not set (omitted from YAML). */
export interface SloDimTargets {
  ttftMs: number;
  itlMs: number;
  e2eMs: number;
}

export interface TraceServerConfig {
  type: string;
  model: string;
  tensorParallel: number;
  maxNumSeqs: number;
  blockSize: number;
  gpuMemoryUtilization: number;
  maxModelLen: number;
}

export interface TraceNetworkConfig {
  measuredRttMs: number;
}

export interface TraceKvOffloadTier {
  type: string;
  rootDir: string;
  nReadThreads: number;
  nWriteThreads: number;
  locality: string;
  enableKvEvents: boolean;
  directIo: boolean;
  deviceClass: string;
  readBandwidth: number;
  writeBandwidth: number;
  baseLatency: number;
  saturationQueueDepth: number;
  singleTransferFraction: number;
  latencyJitterStddev: number;
}

export interface TraceKvOffloadConfig {
  cpuBytesToUse: number;
  perBlockBytes: number;
  blockSize: number;
  blocksPerChunk: number;
  tokensPerHash: number;
  evictionPolicy: string;
  offloadPromptOnly: boolean;
  selfDescribingKvEvents: boolean;
  secondaryTiers: TraceKvOffloadTier[];
}

export interface TraceObservedKvMetrics {
  source: string;
  hitRate: number;
  blockHits: number;
  blockQueries: number;
  readTimeTotal: number;
  writeTimeTotal: number;
  vllmCommit: string;
}

export interface TraceHeader {
  traceVersion: number;
  /** "microseconds" for run/replay traces, "us" for observe traces. */
  timeUnit: string;
  createdAt: string;
  /** "generated" (run), "replayed" (replay) or "real" (observe). */
  mode: string;
  warmUpRequests: number;
  workloadSeed: bigint | null;
  workloadSpec: string;
  /** "accumulate" or "" (closed-loop replay input assembly). */
  sessionContextGrowth: string;
  server: TraceServerConfig | null;
  network: TraceNetworkConfig | null;
  /** Empty map = omitted. Written in yaml.v3's natural key order, whatever the insertion order. */
  goodputSloTargets: Map<string, SloDimTargets>;
  kvOffload: TraceKvOffloadConfig | null;
  observedKvMetrics: TraceObservedKvMetrics | null;
}

/** One CSV row. Times are µs ticks; counts are tokens. */
export interface TraceRecord {
  /** Arrival-order index for run/replay traces, dispatch index for observe traces. */
  requestId: number;
  clientId: string;
  tenantId: string;
  sloClass: string;
  /** vLLM priority sent to a real server; 0 = not set. */
  vllmPriority: number;
  sessionId: string;
  roundIndex: number;
  prefixGroup: string;
  prefixLength: number;
  streaming: boolean;
  /** Suffix length: total input − prefixLength. */
  inputTokens: number;
  /** Planned output length. */
  outputTokens: number;
  textTokens: number;
  imageTokens: number;
  audioTokens: number;
  videoTokens: number;
  reasonRatio: number;
  model: string;
  /** Absolute deadline; 0 = none. */
  deadlineUs: number;
  /** Per-request SLO target; 0 = none. */
  sloTargetUs: number;
  /** Server-reported prompt tokens; 0 = not recorded. */
  serverInputTokens: number;
  arrivalTimeUs: number;
  sendTimeUs: number;
  firstChunkTimeUs: number;
  lastChunkTimeUs: number;
  numChunks: number;
  /** "ok", "error", "timeout" or "incomplete". */
  status: string;
  errorMessage: string;
  finishReason: string;
  xRequestId: string;
  adapter: string;
  /** Recorded think time before this round; 0 = not recorded. */
  thinkTimeUs: number;
}

export interface TraceV2 {
  header: TraceHeader;
  records: TraceRecord[];
}

export type TraceErrorCode =
  | 'TRACE_HEADER_SYNTAX'
  | 'TRACE_HEADER_EMPTY'
  | 'TRACE_HEADER_UNKNOWN_KEY'
  | 'TRACE_HEADER_TYPE'
  | 'TRACE_CSV_SYNTAX'
  | 'TRACE_CSV_EMPTY'
  | 'TRACE_CSV_HEADER'
  | 'TRACE_CSV_COLUMNS'
  | 'TRACE_CSV_VALUE'
  /** The file as a whole: too large, or binary. */
  | 'TRACE_INPUT'
  /** A header value of the right type that makes no sense (unknown time_unit or trace_version). */
  | 'TRACE_HEADER_VALUE';

/** A malformed trace file. The message names the file, the 1-based line, the key or column, and a fix. */
export class TraceFormatError extends BlisError {
  declare readonly code: TraceErrorCode;
  declare readonly file: string;
  /** 1-based line of the offending record or key; 0 when not tied to a line. */
  declare readonly line: number;
  /** Offending YAML key path or CSV column name; '' when not tied to one. */
  declare readonly field: string;

  constructor(code: TraceErrorCode, file: string, line: number, field: string, message: string) {
    super(code, message, { file, line, field });
    this.name = 'TraceFormatError';
  }
}

/** A record with every field at its zero value, for builders that fill in only what they know. */
export function emptyTraceRecord(): TraceRecord {
  return {
    requestId: 0,
    clientId: '',
    tenantId: '',
    sloClass: '',
    vllmPriority: 0,
    sessionId: '',
    roundIndex: 0,
    prefixGroup: '',
    prefixLength: 0,
    streaming: false,
    inputTokens: 0,
    outputTokens: 0,
    textTokens: 0,
    imageTokens: 0,
    audioTokens: 0,
    videoTokens: 0,
    reasonRatio: 0,
    model: '',
    deadlineUs: 0,
    sloTargetUs: 0,
    serverInputTokens: 0,
    arrivalTimeUs: 0,
    sendTimeUs: 0,
    firstChunkTimeUs: 0,
    lastChunkTimeUs: 0,
    numChunks: 0,
    status: '',
    errorMessage: '',
    finishReason: '',
    xRequestId: '',
    adapter: '',
    thinkTimeUs: 0,
  };
}

/** A header with every field at its zero value. */
export function emptyTraceHeader(): TraceHeader {
  return {
    traceVersion: 0,
    timeUnit: '',
    createdAt: '',
    mode: '',
    warmUpRequests: 0,
    workloadSeed: null,
    workloadSpec: '',
    sessionContextGrowth: '',
    server: null,
    network: null,
    goodputSloTargets: new Map(),
    kvOffload: null,
    observedKvMetrics: null,
  };
}
