/**
 * `blis replay` request construction, fixed session mode (the reference's `LoadTraceV2Requests` and the
 * horizon rule of `cmd/replay.go`).
 *
 * Token ids are not in the trace, so they are regenerated from a plain `rand.New(rand.NewSource(seed))` (not a
 * partitioned subsystem stream): first one prefix per prefix group, in record order, then per record its input
 * ids followed by its output ids. Only prefix groups share tokens, so caching differs from the original run.
 */
import { GoRand } from '../gocompat/go-rand.js';
import { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { BlisError } from '../domain/errors.js';
import { LIMITS, LimitError, checkLimit, grouped } from '../domain/limits.js';
import { concatTokens, randomTokenIds } from './tokens.js';
import type { TraceRecord } from './tracev2-types.js';
import { traceRecordLine } from './tracev2-csv.js';

/** Default replay horizon when every injection time is <= 0 (10 minutes). */
export const REPLAY_DEFAULT_HORIZON_US = 600_000_000;

/**
 * The suffix length to synthesise. A server-reported prompt count wins for ungrouped records (it includes chat
 * template overhead), but not for grouped ones, where it would count the separately prepended prefix twice.
 */
export function effectiveInputTokenCount(rec: Pick<TraceRecord, 'inputTokens' | 'serverInputTokens' | 'prefixGroup'>): number {
  return rec.serverInputTokens > 0 && rec.prefixGroup === '' ? rec.serverInputTokens : rec.inputTokens;
}

/** When the record enters the simulation: the send time when recorded (observe traces), else the arrival. */
export function injectionTime(rec: Pick<TraceRecord, 'sendTimeUs' | 'arrivalTimeUs'>): number {
  return rec.sendTimeUs > 0 ? rec.sendTimeUs : rec.arrivalTimeUs;
}

/**
 * Refuses, before any token is generated, a trace with no records (the reference refuses to replay one) and one
 * whose token counts could not be held (docs/usage.md, Limits). `file` names the trace data in messages.
 */
export function checkReplayRecords(records: readonly TraceRecord[], file: string): void {
  if (records.length === 0) {
    throw new BlisError('TRACE_EMPTY', `${file}: the trace has no records (a header row only), so there is nothing to replay; record one with blis observe or blis run --trace-output`, { file });
  }
  checkLimit(records.length, LIMITS.requests, `${file}: the number of records`, 'replay a part of the trace', { file });
  const prefixes = new Map<string, number>();
  let total = 0;
  records.forEach((rec, i) => {
    if (rec.prefixGroup !== '' && rec.prefixLength > 0 && !prefixes.has(rec.prefixGroup)) prefixes.set(rec.prefixGroup, rec.prefixLength);
    const prefix = rec.prefixGroup === '' ? 0 : (prefixes.get(rec.prefixGroup) ?? 0);
    const input = effectiveInputTokenCount(rec) + prefix;
    for (const [name, n] of [['input tokens (with its prefix group\'s prefix)', input], ['output_tokens', rec.outputTokens]] as const) {
      if (n > LIMITS.tokensPerRequest) {
        throw new LimitError(`${file}: record ${i + 1} (request_id ${rec.requestId}): ${name} ${grouped(n)} is above the limit of ${grouped(LIMITS.tokensPerRequest)} tokens per request (docs/usage.md, Limits); fix the record`, { file, field: name });
      }
    }
    if (input === 0 && rec.outputTokens === 0) {
      // Nothing to prefill and nothing to decode: the step loop has no token to schedule (the reference's
      // decode allocation indexes an empty output), so such a row is refused here with its line.
      const line = traceRecordLine(rec);
      const where = line === undefined ? `${file}: record ${i + 1}` : `${file}:${line}`;
      throw new BlisError('TRACE_EMPTY_REQUEST', `${where}: request_id ${rec.requestId} has 0 input tokens and 0 output tokens (and no shared prefix), so there is nothing to simulate; give it input_tokens >= 1 or output_tokens >= 1, or delete the row`, { file, ...(line === undefined ? {} : { line }), field: 'input_tokens' });
    }
    total += input + rec.outputTokens;
  });
  checkLimit(total, LIMITS.workloadTokens, `${file}: the token ids of every record`, 'replay a part of the trace', { file });
}

/**
 * One request per record, in record order, ids `request_<request_id>`. `corrected` (--semantics corrected): a
 * request's prefix length is the length of the group prefix prepended to it (the reference copies the row's).
 * @throws as {@link checkReplayRecords} (an empty trace, counts past the limits).
 */
export function buildReplayRequests(records: readonly TraceRecord[], seed: bigint, file = 'the trace data', corrected = false): Request[] {
  checkReplayRecords(records, file);
  const rng = new GoRand(seed);
  const prefixes = replayPrefixes(records, rng);

  return records.map((rec) => {
    let input = randomTokenIds(rng, effectiveInputTokenCount(rec));
    const prefix = rec.prefixGroup === '' ? undefined : prefixes.get(rec.prefixGroup);
    if (prefix !== undefined) input = concatTokens(prefix, input);
    const req = requestFromRecord(rec, input, randomTokenIds(rng, rec.outputTokens));
    if (corrected) req.prefixLength = prefix?.length ?? 0;
    return req;
  });
}

/** The shared prefix of each prefix group, drawn first from `rng` in record order (its first positive length). */
export function replayPrefixes(records: readonly TraceRecord[], rng: GoRand): Map<string, Int32Array> {
  const prefixes = new Map<string, Int32Array>();
  for (const rec of records) {
    if (rec.prefixGroup !== '' && rec.prefixLength > 0 && !prefixes.has(rec.prefixGroup)) {
      prefixes.set(rec.prefixGroup, randomTokenIds(rng, rec.prefixLength));
    }
  }
  return prefixes;
}

/** The request a trace record stands for, with the given token ids: id `request_<request_id>`, every tag copied. */
export function requestFromRecord(rec: TraceRecord, input: Int32Array, output: Int32Array): Request {
  const req = new Request(`request_${rec.requestId}`, input, output, injectionTime(rec), output.length, rec.deadlineUs);
  req.tenantId = rec.tenantId;
  req.sloClass = rec.sloClass;
  req.sessionId = rec.sessionId;
  req.roundIndex = rec.roundIndex;
  req.textTokens = rec.textTokens;
  req.imageTokens = rec.imageTokens;
  req.audioTokens = rec.audioTokens;
  req.videoTokens = rec.videoTokens;
  req.reasonRatio = rec.reasonRatio;
  req.model = rec.model;
  req.sloTargetUs = rec.sloTargetUs;
  req.clientId = rec.clientId;
  req.prefixGroup = rec.prefixGroup;
  // Copied as recorded even when the group's shared prefix has another length, as the reference does
  // (--semantics corrected: the callers set the length of the prefix actually prepended).
  req.prefixLength = rec.prefixLength;
  req.streaming = rec.streaming;
  req.adapter = rec.adapter;
  return req;
}

/** Horizon for a maximum injection time: twice it, 10 minutes when it is <= 0, unbounded if doubling overflows. */
export function horizonFromMaxArrival(maxArrival: number): number {
  if (maxArrival > MAX_INT64 / 2) return MAX_INT64;
  if (maxArrival <= 0) return REPLAY_DEFAULT_HORIZON_US;
  return maxArrival * 2;
}

/**
 * --semantics corrected: the replay horizon (and closed-loop follow-up horizon) from the latest injection time
 * of every record, the rounds closed loop regenerates included (the reference takes round 0 and the rows
 * outside sessions only, and for the follow-up bound their `arrival_time_us`).
 */
export function recordedReplayHorizon(records: readonly TraceRecord[]): number {
  let max = 0;
  for (const r of records) max = Math.max(max, injectionTime(r));
  return horizonFromMaxArrival(max);
}

/** The replay horizon when `--horizon` is not given: from the latest injection time of the built requests. */
export function defaultReplayHorizon(requests: readonly Pick<Request, 'arrivalTime'>[]): number {
  if (requests.length === 0) return MAX_INT64;
  let max = 0;
  for (const r of requests) if (r.arrivalTime > max) max = r.arrivalTime;
  return horizonFromMaxArrival(max);
}

/**
 * A trace's rows by session, in first-appearance order (each session's rows in file order), and the rows outside
 * sessions: what the session-aware replay modes start from.
 */
export function groupSessions(records: readonly TraceRecord[]): { readonly bySession: Map<string, TraceRecord[]>; readonly loose: TraceRecord[] } {
  const bySession = new Map<string, TraceRecord[]>();
  const loose: TraceRecord[] = [];
  for (const rec of records) {
    if (rec.sessionId === '') {
      loose.push(rec);
      continue;
    }
    let rounds = bySession.get(rec.sessionId);
    if (rounds === undefined) bySession.set(rec.sessionId, (rounds = []));
    rounds.push(rec);
  }
  return { bySession, loose };
}
