/**
 * `blis replay --session-mode fixed-accumulate` (upstream PR #1696, `LoadTraceV2FixedAccumulateRequests`): every
 * round of every session injected at its RECORDED time (like `fixed`), its prompt rebuilt as the accumulated
 * context (like closed-loop with `session_context_growth: accumulate`). The trace alone fixes each prompt:
 * round 0 is [group prefix] + its input; round r is round r−1's prompt + round r−1's output (the full recorded
 * length, its token ids as generated for that request) + round r's input (the delta) — so every round shares
 * its predecessor's whole prompt and output as a prefix, and prefix caching sees the growing conversation.
 *
 * Token ids: group prefixes first from `rand(seed)` (record order); then per session (first-appearance order) a
 * stream seeded from the main one, drawing round 0's input, round 0's output, then per later round its delta and
 * its output; rows outside sessions last from the main stream, as in fixed mode. Session rounds carry no prefix
 * group (the prefix is folded into the prompt); rows outside sessions keep theirs.
 */
import { GoRand } from '../gocompat/go-rand.js';
import type { Request } from '../domain/request.js';
import { LIMITS, LimitError, checkLimit, grouped } from '../domain/limits.js';
import { effectiveInputTokenCount, groupSessions, replayPrefixes, requestFromRecord } from './replay.js';
import { TokenBuffer } from './spec/reasoning.js';
import { concatTokens, randomTokenIds } from './tokens.js';
import { TraceFormatError, type TraceV2 } from './tracev2-types.js';

/**
 * The requests of a fixed-accumulate replay: sessions in first-appearance order (rounds in order), then the rows
 * outside sessions in record order.
 * @throws TraceFormatError for a header whose `session_context_growth` is not "accumulate" (the rows then hold
 *   whole prompts, and accumulating them would count the conversation twice) or a session whose round indexes
 *   are not 0, 1, 2, ...; LimitError for a rebuilt prompt past the per-request token limit.
 */
export function buildFixedAccumulateReplay(trace: TraceV2, seed: bigint, file = ''): Request[] {
  const { header, records } = trace;
  if (records.length === 0) throw new TraceFormatError('TRACE_CSV_EMPTY', file, 0, '', 'empty trace: the trace data file has no records to replay');
  if (header.sessionContextGrowth !== 'accumulate') {
    throw new TraceFormatError('TRACE_HEADER_VALUE', file, 0, 'session_context_growth', `--session-mode fixed-accumulate needs a trace whose header says session_context_growth: accumulate (its rows hold each round's new input only), got ${header.sessionContextGrowth === '' ? 'none' : `"${header.sessionContextGrowth}"`}; replay this trace with --session-mode fixed or closed-loop`);
  }
  const rng = new GoRand(seed);
  const prefixes = replayPrefixes(records, rng);
  const { bySession, loose } = groupSessions(records);
  const requests: Request[] = [];
  let total = 0;
  for (const [id, rounds] of bySession) {
    rounds.sort((a, b) => a.roundIndex - b.roundIndex);
    rounds.forEach((r, i) => {
      if (r.roundIndex !== i) {
        throw new TraceFormatError('TRACE_CSV_VALUE', file, 0, 'round_index', `session "${id}" has non-consecutive round indices (expected ${i}, got ${r.roundIndex}); a session's rows must have round_index 0, 1, 2, ...`);
      }
    });
    const srng = new GoRand(rng.int63Big());
    const r0 = rounds[0]!;
    const prefix = r0.prefixGroup === '' ? undefined : prefixes.get(r0.prefixGroup);
    const buf = new TokenBuffer();
    if (prefix !== undefined) buf.append(prefix);
    let prevOutput: Int32Array | null = null;
    for (const rec of rounds) {
      if (prevOutput !== null) buf.append(prevOutput);
      const end = buf.append(randomTokenIds(srng, effectiveInputTokenCount(rec)));
      if (end > LIMITS.tokensPerRequest) {
        throw new LimitError(`${file}: session "${id}" round ${rec.roundIndex} (request_id ${rec.requestId}): its accumulated prompt of ${grouped(end)} tokens is above the limit of ${grouped(LIMITS.tokensPerRequest)} tokens per request (docs/usage.md, Limits); replay fewer rounds of it`, { file, field: 'input_tokens' });
      }
      // A view: the buffer only appends past `end`, so this round's prompt never changes.
      const input = buf.head(end);
      total += end + rec.outputTokens;
      const output = randomTokenIds(srng, rec.outputTokens);
      const req = requestFromRecord(rec, input, output);
      req.prefixGroup = '';
      req.prefixLength = 0;
      requests.push(req);
      prevOutput = output;
    }
  }
  checkLimit(total, LIMITS.workloadTokens, `${file}: the accumulated prompts of every session`, 'replay fewer sessions', { file });
  for (const rec of loose) {
    let input = randomTokenIds(rng, effectiveInputTokenCount(rec));
    const prefix = rec.prefixGroup === '' ? undefined : prefixes.get(rec.prefixGroup);
    if (prefix !== undefined) input = concatTokens(prefix, input);
    requests.push(requestFromRecord(rec, input, randomTokenIds(rng, rec.outputTokens)));
  }
  return requests;
}
