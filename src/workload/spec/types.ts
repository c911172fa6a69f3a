/**
 * Workload spec v2: the typed form of a `--workload-spec` YAML file.
 *
 * Field meanings follow the reference's `sim/workload/spec.go`. Where the reference uses a Go pointer to tell
 * "absent" from "zero" (timeouts, cv, shape/scale, trace rates...), the field here is `null` when absent; every
 * other absent field holds its zero value, exactly as yaml.v3 leaves it.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import type { SloDimTargets } from '../tracev2-types.js';
import type { LoadProfileSpec, MisbehaviorSpec } from '../profiles/types.js';

/** An arrival process's sampler (implementations in arrival.ts). */
export interface ArrivalSampler {
  /** The next inter-arrival time in µs (>= 1); 0 only from a pre-drawn sampler that has run out (stop there). */
  sampleIat(rng: GoRand): number;
}

export type { SloDimTargets };

/** A token-length (or count, or ratio) distribution: `type` plus named numeric `params`. */
export interface DistSpec {
  type: string;
  /** Parameter values in YAML order. Empirical distributions use integer-valued keys (`"128": 0.3`). */
  params: Map<string, number>;
  /** Reserved by the reference for file-based empirical distributions (never read). */
  file: string;
}

/** Inter-arrival process: `process` with optional burstiness (`cv`) or explicit fitted `shape`/`scale` (µs). */
export interface ArrivalSpec {
  process: string;
  cv: number | null;
  shape: number | null;
  scale: number | null;
}

export interface NetworkSpec {
  rttMs: number;
  bandwidthMbps: number;
}

/** One activity window `[startUs, endUs)`, optionally overriding the client's rate weight and distributions. */
export interface ActiveWindow {
  startUs: number;
  endUs: number;
  traceRate: number | null;
  arrival: ArrivalSpec | null;
  inputDist: DistSpec | null;
  outputDist: DistSpec | null;
}

export interface LifecycleSpec {
  windows: ActiveWindow[];
}

export interface MultimodalSpec {
  textDist: DistSpec;
  imageDist: DistSpec;
  imageCountDist: DistSpec;
  audioDist: DistSpec;
  audioCountDist: DistSpec;
  videoDist: DistSpec;
  videoCountDist: DistSpec;
}

export interface MultiTurnSpec {
  maxRounds: number;
  thinkTimeUs: number;
  contextGrowth: string;
  singleSession: boolean;
  /** Agentic sessions (blis-ts extension): a tool call of sampled latency (µs) before each follow-up round. */
  toolCall: { latencyDist: DistSpec } | null;
}

export interface ReasoningSpec {
  reasonRatioDist: DistSpec;
  multiTurn: MultiTurnSpec | null;
}

/** Fields a client and a cohort share (the cohort form lacks `id` semantics, `concurrency` and `lifecycle`). */
export interface TrafficSource {
  tenantId: string;
  sloClass: string;
  model: string;
  adapter: string;
  rateFraction: number;
  arrival: ArrivalSpec;
  inputDist: DistSpec;
  outputDist: DistSpec;
  prefixGroup: string;
  /** Shared prefix token count; 0 = the default (50) when the client has a prefix group. */
  prefixLength: number;
  streaming: boolean;
  network: NetworkSpec | null;
  multimodal: MultimodalSpec | null;
  reasoning: ReasoningSpec | null;
  /** Per-request timeout in µs: null = default (300 s for closed-loop clients, none otherwise); 0 = none. */
  timeout: number | null;
  /** Per-request TTFT target in µs; null/0 = none. */
  sloTargetUs: number | null;
  /** null = default (closed loop exactly when the client is multi-turn). */
  closedLoop: boolean | null;
}

export interface ClientSpec extends TrafficSource {
  id: string;
  concurrency: number;
  thinkTimeUs: number;
  lifecycle: LifecycleSpec | null;
  /**
   * Code-built clients only (inference-perf expansion): builds the arrival sampler from a sub-stream drawn off
   * the client's stream, replacing the `arrival` process. Never set by the YAML parser.
   */
  customSamplerFactory?: (rng: GoRand) => ArrivalSampler;
  /** Extension (src/workload/profiles): this client's own load profile, replacing the spec-level one. */
  loadProfile?: LoadProfileSpec;
  /** Extension (src/workload/profiles): a misbehaving tenant (bursty, abusive, adversarial). */
  misbehavior?: MisbehaviorSpec;
}

export interface DiurnalSpec {
  peakHour: number;
  peakToTroughRatio: number;
}

export interface SpikeSpec {
  startTimeUs: number;
  durationUs: number;
  traceRate: number | null;
}

export interface DrainSpec {
  startTimeUs: number;
  rampDurationUs: number;
}

export interface CohortSpec extends TrafficSource {
  id: string;
  population: number;
  /** "shared" (or "") = one prefix for all members; "per_member" = group `<prefix_group>-<j>` per member. */
  prefixSharing: string;
  diurnal: DiurnalSpec | null;
  spike: SpikeSpec | null;
  drain: DrainSpec | null;
}

export interface ServeGenDataSpec {
  path: string;
  timeWindow: string;
  spanStart: number;
  spanEnd: number;
  windowDurationSecs: number;
  drainTimeoutSecs: number;
  /** Whether the spec gave `drain_timeout_secs` (--semantics corrected: unset = 180 s, as `blis convert servegen`). */
  drainTimeoutSet?: boolean;
}

export interface StageSpec {
  rate: number;
  duration: number;
}

export interface SharedPrefixSpec {
  numUniqueSystemPrompts: number;
  numUsersPerSystemPrompt: number;
  systemPromptLen: number;
  questionLen: number;
  outputLen: number;
  enableMultiTurnChat: boolean;
}

export interface InferencePerfSpec {
  stages: StageSpec[];
  sharedPrefix: SharedPrefixSpec | null;
}

export interface WorkloadSpec {
  version: string;
  /** int64 seed, kept as a bigint so every 64-bit value survives. */
  seed: bigint;
  category: string;
  clients: ClientSpec[];
  cohorts: CohortSpec[];
  /** Total requests per second across rate-based clients; 0 = absolute mode (window trace rates). */
  aggregateRate: number;
  /** Generation horizon in µs; 0 = unset. */
  horizon: number;
  /** Request cap; 0 = unlimited. */
  numRequests: number;
  servegenData: ServeGenDataSpec | null;
  inferencePerf: InferencePerfSpec | null;
  /** Per-SLO-class goodput thresholds (ms; 0 = dimension not gated), in YAML order. */
  goodputSloTargets: Map<string, SloDimTargets>;
  /** Extension (src/workload/profiles): rate multipliers over time for every rate-based client. */
  loadProfile?: LoadProfileSpec;
}
