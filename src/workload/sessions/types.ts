/**
 * Closed-loop session shapes (blis-cluster.md §9.5): what the generator hands the SessionManager.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import type { LengthSampler } from '../spec/length.js';

/** Where a session stands. Every session starts `active` and ends in exactly one of the other states (INV-11). */
export type SessionState = 'active' | 'completed' | 'cancelled' | 'horizon_interrupted' | 'budget_exhausted';

/**
 * Optional agentic extension (not in the reference, which models agents as plain multi-turn sessions): after
 * each completed round the agent runs a tool call of sampled latency before the user's think time starts, so
 * the next round arrives at `completion + toolLatency + thinkTime`. Latencies are drawn from the session's own
 * stream, after the think time, only when this is set, so sessions without it draw exactly as the reference's.
 */
export interface ToolCallSpec {
  /** Tool latency in µs (length samplers never return less than 1). */
  readonly latency: LengthSampler;
}

/**
 * What a recorded follow-up row says about its round (closed-loop replay under --semantics corrected): the
 * regenerated request keeps the row's id and attributes instead of the session's generated name and defaults.
 */
export interface RecordedRound {
  /** The request id to use (`request_<request_id>`). */
  readonly id: string;
  /** Deadline relative to the arrival (the row's deadline minus its recorded injection time); 0 = none. */
  readonly timeoutUs: number;
  readonly clientId: string;
  readonly tenantId: string;
  readonly sloClass: string;
  readonly model: string;
  readonly sloTargetUs: number;
  readonly adapter: string;
  readonly streaming: boolean;
  readonly reasonRatio: number;
}

/** One session's fixed shape, built at generation time. */
export interface SessionBlueprint {
  readonly sessionId: string;
  readonly clientId: string;
  /** Rounds including round 0; ignored when {@link unlimitedRounds}. */
  readonly maxRounds: number;
  /** Concurrency users: rounds continue until the budget, the horizon, a timeout or a drop ends them. */
  readonly unlimitedRounds: boolean;
  /** "accumulate" (each round's input is the whole conversation so far) or "" (fresh input each round). */
  readonly contextGrowth: string;
  readonly thinkTimeUs: number;
  /** Per-request timeout in µs (null = the 300 s session default, 0 = none); `--timeout` overrides it. */
  timeout: number | null;
  /** Follow-ups that would arrive after this tick are not generated. */
  readonly horizon: number;
  readonly inputSampler: LengthSampler;
  readonly outputSampler: LengthSampler;
  /** The session's own stream (lengths, token ids, sampled think times). */
  readonly rng: GoRand;
  /** Per-round think time in µs; null = the constant {@link thinkTimeUs}. */
  thinkTimeSampler: LengthSampler | null;
  /** Agentic tool call between rounds; null = none (the reference's behaviour). */
  toolCall: ToolCallSpec | null;
  /** System-prompt tokens every round starts with (null = none). */
  readonly prefix: Int32Array | null;
  readonly tenantId: string;
  readonly sloClass: string;
  readonly model: string;
  /** Per-request TTFT target in µs (0 = none). */
  readonly sloTargetUs: number;
  /** LoRA adapter every round uses ('' = the base model). */
  readonly adapter: string;
  /** Prefix group the {@link prefix} belongs to, recorded on follow-ups when {@link recordedRounds} is set. */
  readonly prefixGroup?: string;
  /**
   * --semantics corrected (spec sessions): follow-ups carry the client's streaming flag, the reason ratio drawn
   * for their round (index = round; round 0's when the round was never drawn) and the prefix group.
   */
  readonly followUpTags?: { readonly streaming: boolean; readonly reasonRatios: readonly number[] };
  /** Rounds 1..N-1 as recorded (closed-loop replay under --semantics corrected); absent = generated names. */
  readonly recordedRounds?: readonly RecordedRound[];
}

/** A generated workload: initial requests plus the sessions that continue some of them. */
export interface SessionWorkload<R> {
  /** Open-loop requests, round 0 of closed-loop sessions and concurrency seeds; sorted by arrival, ids `request_<i>`. */
  readonly requests: R[];
  /** Blueprints of the closed-loop sessions (empty when there are none). */
  readonly sessions: SessionBlueprint[];
  /** Cap on follow-ups (concurrency workloads with a request cap); -1 = none. */
  readonly followUpBudget: number;
}
