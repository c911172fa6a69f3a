/**
 * Multi-turn reasoning sessions as the generator pre-generates them (the reference's GenerateReasoningRequests):
 * every round of one session, from the client's stream, in this draw order:
 *
 *   session id `sess_<Int63>` → round-0 input length → round-0 output length →
 *   per round r: [r > 0: input length, output length] → input ids → output ids → [reason-ratio percentage]
 *
 * Round r arrives `think_time_us + output length of round r−1` µs after round r−1 (the reference's placeholder
 * for "the previous answer took one µs per token"). With `context_growth: accumulate` each round's input is the
 * whole conversation so far (prefix, every earlier input and oracle output, then the new input); otherwise it is
 * the prefix plus the new input.
 *
 * For closed-loop clients only round 0 survives (sessions/workload.ts); the later rounds are regenerated at run
 * time by the SessionManager, from their actual completion times.
 */
import type { GoRand } from '../../gocompat/go-rand.js';
import { concatTokens, randomTokenIds, skipTokenIds } from '../tokens.js';
import type { GenerationBudget } from './budget.js';
import type { Draft } from './draft.js';
import { newLengthSampler } from './length.js';
import type { LengthSampler } from './length.js';
import type { ClientSpec, MultiTurnSpec, ReasoningSpec } from './types.js';

/**
 * An append-only token array whose prefixes are handed out as views, so R accumulating rounds share O(R)
 * storage instead of R growing copies. Growth reallocates; views taken earlier keep the old (unchanged) array.
 */
export class TokenBuffer {
  private buf: Int32Array;
  private len = 0;

  constructor(capacity = 0) {
    this.buf = new Int32Array(Math.max(16, capacity));
  }

  get length(): number {
    return this.len;
  }

  /** Appends `tokens`; returns the new length. */
  append(tokens: Int32Array): number {
    const need = this.len + tokens.length;
    if (need > this.buf.length) {
      const grown = new Int32Array(Math.max(need, this.buf.length * 2));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    this.buf.set(tokens, this.len);
    this.len = need;
    return need;
  }

  /** The first `end` tokens (a view: callers must not write to it). */
  head(end: number): Int32Array {
    return this.buf.subarray(0, end);
  }
}

/** Reason ratio from an integer-percentage sampler, clamped to [0, 1]. */
export function reasonRatioOf(sampler: LengthSampler | null, rng: GoRand): number {
  if (sampler === null) return 0;
  return Math.min(1.0, Math.max(0.0, sampler.sample(rng) / 100.0));
}

export interface ReasoningSessionOptions {
  readonly rng: GoRand;
  readonly client: ClientSpec;
  readonly reasoning: ReasoningSpec & { readonly multiTurn: MultiTurnSpec };
  readonly inputSampler: LengthSampler;
  readonly outputSampler: LengthSampler;
  readonly startTime: number;
  /** The client's prefix-group tokens (null or empty = none). */
  readonly prefix: Int32Array | null;
  /** Deadline of a round arriving at `t`. */
  readonly deadline: (t: number) => number;
  /** SLO target the rounds carry (the per-window path sets none). */
  readonly sloTargetUs: number;
  /** --semantics corrected: the rounds carry the client's prefix group (with its prefix) and streaming flag. */
  readonly keepTags?: boolean;
}

/** Which rounds of a session to materialise; by default all of them. */
export interface SessionBounds {
  /** Keep at most this many rounds. */
  readonly take?: number;
  /** Keep no round arriving at or after this tick (rounds arrive in order, so no later one either). */
  readonly until?: number;
  /**
   * Still draw the random numbers of the rounds not kept: needed when the client's stream goes on after the
   * session (its next session's start and rounds come from the same stream, as in the reference).
   */
  readonly drain?: boolean;
  readonly budget?: GenerationBudget;
}

/**
 * The rounds of one session, in round (= arrival) order, within `bounds`. The rounds carry the prefix length
 * but, like the reference's, no prefix group and no streaming flag (unless `keepTags`). The random numbers are drawn exactly as
 * the reference's pre-generation draws them; rounds outside the bounds are never built.
 */
export function generateReasoningSession(o: ReasoningSessionOptions, bounds: SessionBounds = {}): Draft[] {
  const { rng, reasoning, inputSampler, outputSampler } = o;
  const mt = reasoning.multiTurn;
  if (mt.maxRounds <= 0) return [];
  const take = bounds.take ?? Number.POSITIVE_INFINITY;
  const until = bounds.until ?? Number.POSITIVE_INFINITY;
  const ratioSampler = reasoning.reasonRatioDist.type === '' ? null : newLengthSampler(reasoning.reasonRatioDist);
  const sessionId = `sess_${rng.int63Big()}`;
  const prefix = o.prefix ?? new Int32Array(0);
  const firstIn = inputSampler.sample(rng);
  const firstOut = outputSampler.sample(rng);
  const accumulate = mt.contextGrowth === 'accumulate';
  const group = o.keepTags === true && prefix.length > 0 ? o.client.prefixGroup : '';
  const streaming = o.keepTags === true && o.client.streaming;
  let buf: TokenBuffer | null = null;
  if (accumulate) {
    // Sized from round 0 (capped: it is only a hint) so typical sessions never reallocate.
    buf = new TokenBuffer(Math.min(prefix.length + Math.min(mt.maxRounds, take) * (firstIn + firstOut), 1 << 20));
    if (prefix.length > 0) buf.append(prefix);
  }
  const out: Draft[] = [];
  let t = o.startTime;
  let round = 0;
  for (; round < mt.maxRounds; round++) {
    if (out.length >= take || t >= until) break;
    const inLen = round === 0 ? firstIn : inputSampler.sample(rng);
    const outLen = round === 0 ? firstOut : outputSampler.sample(rng);
    const fresh = randomTokenIds(rng, inLen);
    const output = randomTokenIds(rng, outLen);
    const input = buf !== null ? buf.head(buf.append(fresh)) : concatTokens(prefix, fresh);
    const reasonRatio = reasonRatioOf(ratioSampler, rng);
    bounds.budget?.request(input.length + output.length, o.client.id);
    out.push({
      client: o.client,
      arrival: t,
      input,
      output,
      prefixGroup: group,
      prefixLength: prefix.length,
      deadline: o.deadline(t),
      modality: null,
      session: { id: sessionId, round, reasonRatio },
      streaming,
      sloTargetUs: o.sloTargetUs,
    });
    if (buf !== null) buf.append(output);
    t += mt.thinkTimeUs;
    t += outLen;
  }
  if (bounds.drain === true) {
    // The same draws as a kept round (lengths, token ids, reason ratio), stored nowhere.
    for (; round < mt.maxRounds; round++) {
      bounds.budget?.drawnRound(o.client.id);
      const inLen = round === 0 ? firstIn : inputSampler.sample(rng);
      const outLen = round === 0 ? firstOut : outputSampler.sample(rng);
      skipTokenIds(rng, inLen);
      skipTokenIds(rng, outLen);
      reasonRatioOf(ratioSampler, rng);
    }
  }
  return out;
}
