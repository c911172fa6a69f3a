/**
 * Generated-but-not-yet-numbered requests, shared by the generation paths (and by session post-processing,
 * which drops later rounds before numbering), and their final assembly: stable sort by arrival, truncation to
 * the request cap, ids `request_<i>`.
 */
import { Request } from '../../domain/request.js';
import type { GoRand } from '../../gocompat/go-rand.js';
import { randomTokenIds } from '../tokens.js';
import type { ClientSpec } from './types.js';

/** The reference's default request timeout (300 s), applied to closed-loop clients without one. */
export const DEFAULT_TIMEOUT_US = 300_000_000;
/** Prefix length of a prefix group whose clients leave prefix_length unset. */
export const DEFAULT_PREFIX_LENGTH = 50;

export interface Draft {
  readonly client: ClientSpec;
  readonly arrival: number;
  readonly input: Int32Array;
  readonly output: Int32Array;
  readonly prefixGroup: string;
  readonly prefixLength: number;
  readonly deadline: number;
  readonly modality: Modality | null;
  /** Set on the rounds of a multi-turn session. */
  readonly session?: SessionTag;
  /** Overrides the client's value (session rounds carry neither the client's streaming flag nor, on the per-window path, its SLO target). */
  readonly streaming?: boolean;
  readonly sloTargetUs?: number;
}

/** Which session and round a request belongs to. */
export interface SessionTag {
  readonly id: string;
  readonly round: number;
  /** Fraction of the output that is reasoning, in [0, 1]. */
  readonly reasonRatio: number;
}

/** Per-modality token counts of a multimodal request. */
export interface Modality {
  readonly text: number;
  readonly image: number;
  readonly audio: number;
  readonly video: number;
}

/** Closed loop unless the client says otherwise exactly when it is a multi-turn client. */
export function isClosedLoop(c: ClientSpec): boolean {
  if (c.closedLoop !== null) return c.closedLoop;
  return c.reasoning !== null && c.reasoning.multiTurn !== null;
}

/** Absolute deadline: explicit timeout (0 = none), else 300 s for closed-loop clients and none otherwise. */
export function computeDeadline(arrival: number, timeout: number | null, sessionClient: boolean): number {
  if (timeout === null) return sessionClient ? arrival + DEFAULT_TIMEOUT_US : 0;
  return timeout === 0 ? 0 : arrival + timeout;
}

/**
 * One shared prefix per prefix group, drawn from the workload stream in client order before any client seed.
 * The reference lets the group's first client alone fix the length (its prefix_length, or 50 when unset): later
 * members share that prefix whatever their own prefix_length says. `firstThatSets` (--semantics corrected)
 * follows the documented rule instead: the first client of the group that sets prefix_length, else 50.
 */
export function generatePrefixTokens(clients: readonly ClientSpec[], rng: GoRand, firstThatSets = false): Map<string, Int32Array> {
  const prefixes = new Map<string, Int32Array>();
  for (const c of clients) {
    if (c.prefixGroup === '' || prefixes.has(c.prefixGroup)) continue;
    let length = c.prefixLength > 0 ? c.prefixLength : DEFAULT_PREFIX_LENGTH;
    if (firstThatSets && !(c.prefixLength > 0)) {
      const setter = clients.find((o) => o.prefixGroup === c.prefixGroup && o.prefixLength > 0);
      if (setter !== undefined) length = setter.prefixLength;
    }
    prefixes.set(c.prefixGroup, randomTokenIds(rng, length));
  }
  return prefixes;
}

/** Stable sort by arrival (ties keep generation order) in place; the first `maxRequests` (0 = all). */
export function sortAndCap(drafts: Draft[], maxRequests: number): Draft[] {
  drafts.sort((a, b) => a.arrival - b.arrival);
  if (maxRequests > 0 && drafts.length > maxRequests) drafts.length = maxRequests;
  return drafts;
}

/** Requests `request_<i>` for drafts in their final order. */
export function toRequests(drafts: readonly Draft[]): Request[] {
  return drafts.map((d, i) => toRequest(d, `request_${i}`));
}

function toRequest(d: Draft, id: string): Request {
  const c = d.client;
  const r = new Request(id, d.input, d.output, d.arrival, d.output.length, d.deadline);
  r.tenantId = c.tenantId;
  r.sloClass = c.sloClass;
  r.model = c.model;
  r.adapter = c.adapter;
  r.clientId = c.id;
  r.prefixGroup = d.prefixGroup;
  r.prefixLength = d.prefixLength;
  r.streaming = d.streaming ?? c.streaming;
  r.sloTargetUs = d.sloTargetUs ?? c.sloTargetUs ?? 0;
  if (d.session !== undefined) {
    r.sessionId = d.session.id;
    r.roundIndex = d.session.round;
    r.reasonRatio = d.session.reasonRatio;
  }
  if (d.modality !== null) {
    r.textTokens = d.modality.text;
    r.imageTokens = d.modality.image;
    r.audioTokens = d.modality.audio;
    r.videoTokens = d.modality.video;
  }
  return r;
}
