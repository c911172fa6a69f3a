/**
 * The shared session encoder (upstream `EncodeSessionToTraceRecords`, PR #1485): one TraceV2 row per round,
 * round 0 carrying its whole prompt and round n+1 the DELTA max(0, in[n+1] − in[n] − out[n]), so an
 * `accumulate` replay (closed-loop or fixed-accumulate) rebuilds each prompt as the previous prompt, the previous
 * output and the new turn — one strictly growing shared prefix. A round whose prompt shrank (context compaction)
 * stores 0 and is over-counted at replay (upstream later adds an `input_tokens_reset` column; blis-ts has none).
 * The recorded model name is never written: requests inherit `--model` (a foreign name would route nowhere).
 */
import type { TraceHeader, TraceRecord, TraceV2 } from '../tracev2-types.js';
import { emptyTraceHeader, emptyTraceRecord } from '../tracev2-types.js';
import type { AgenticSession } from './types.js';

/** `session_context_growth` of a converted corpus: "accumulate" (deltas) or "independent" (absolute inputs). */
export type ContextGrowth = 'accumulate' | 'independent';

/** Rows of one session; request ids from `firstId` on. With `independent`, each row keeps its whole prompt. */
export function encodeSession(s: AgenticSession, firstId: number, growth: ContextGrowth = 'accumulate'): TraceRecord[] {
  let prevIn = 0;
  let prevOut = 0;
  return s.rounds.map((r, i) => {
    const rec = emptyTraceRecord();
    rec.requestId = firstId + i;
    rec.sessionId = s.id;
    rec.roundIndex = i;
    rec.inputTokens = i === 0 || growth === 'independent' ? r.inputTokensAbs : Math.max(0, r.inputTokensAbs - prevIn - prevOut);
    rec.outputTokens = r.outputTokens;
    rec.arrivalTimeUs = r.arrivalUs;
    rec.thinkTimeUs = i === 0 ? 0 : r.thinkUs;
    rec.status = r.status;
    rec.streaming = r.streaming;
    prevIn = r.inputTokensAbs;
    prevOut = r.outputTokens;
    return rec;
  });
}

/** The TraceV2 of a converted corpus: version 3, µs, mode "generated", sessions in order, ids 0.. in order. */
export function agenticTrace(sessions: readonly AgenticSession[], growth: ContextGrowth): TraceV2 {
  const header: TraceHeader = { ...emptyTraceHeader(), traceVersion: 3, timeUnit: 'microseconds', mode: 'generated', sessionContextGrowth: growth === 'accumulate' ? 'accumulate' : '' };
  const records: TraceRecord[] = [];
  for (const s of sessions) records.push(...encodeSession(s, records.length, growth));
  return { header, records };
}
