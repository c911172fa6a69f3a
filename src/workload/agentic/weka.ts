/**
 * `blis convert weka` (upstream PR #1605): SemiAnalysis WekaTrace JSON lines — one proxy session per line,
 * `{"id": ..., "requests": [{"type": "n"|"s"|"subagent", "t": <s since trace start>, "in": <tokens>,
 * "out": <tokens>, "api_time": <s>, ...}, ...]}` — into agentic sessions. Sub-agent groups are skipped (their
 * wall-clock time falls into the next main turn's think gap); the main turns, in stream order, are the rounds.
 * Arrival = round(t · 10⁶) µs; think time before turn i = max(0, t[i] − t[i−1] − api_time[i−1]) (the client's
 * own time after the previous response), capped at `maxThinkTimeUs` when given. The recorded model (claude-*) is
 * dropped. blis-ts also keeps type "s" as a streaming call (upstream ignores the type otherwise).
 */
import { fieldError, isRecord, parseDocument } from './json-docs.js';
import type { AgenticConvertOptions, AgenticDocument, AgenticSession, NormalizedRound } from './types.js';

interface Turn {
  readonly t: number;
  readonly api: number;
  readonly input: number;
  readonly output: number;
  readonly streaming: boolean;
}

function num(doc: AgenticDocument, path: readonly (string | number)[], field: string, v: unknown, integer: boolean): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isSafeInteger(v))) {
    throw fieldError(doc, path, field, `must be a ${integer ? 'whole' : 'finite'} number, got ${JSON.stringify(v) ?? String(v)}`);
  }
  if (v < 0) throw fieldError(doc, path, field, `must be >= 0, got ${v}`);
  return v;
}

/**
 * One session per document, in order.
 * @throws AgenticTraceError naming `file:line` and the field: invalid JSON, no `id`, `requests` not a list, a
 *   main turn without `in`/`out` (unless `skipIncomplete`), a negative or non-numeric `t`, `api_time`, `in`, `out`.
 */
export function readWekaSessions(docs: Iterable<AgenticDocument>, opts: AgenticConvertOptions): AgenticSession[] {
  const sessions: AgenticSession[] = [];
  let dropped = 0;
  let short = 0;
  for (const doc of docs) {
    const root = parseDocument(doc);
    if (!isRecord(root)) throw fieldError(doc, [], 'id', 'each line must be one session object {"id": ..., "requests": [...]}');
    const id = root['id'];
    if (typeof id !== 'string' || id === '') throw fieldError(doc, ['id'], 'id', 'a session needs a non-empty string "id"');
    const reqs = root['requests'];
    if (!Array.isArray(reqs)) throw fieldError(doc, ['requests'], 'requests', 'must be a list of the session\'s requests');
    const turns: Turn[] = [];
    reqs.forEach((r, i) => {
      const path = ['requests', i];
      if (!isRecord(r)) throw fieldError(doc, path, 'requests', 'each request must be an object');
      if (r['type'] === 'subagent') return;
      if (r['in'] === undefined || r['out'] === undefined) {
        if (opts.skipIncomplete) {
          dropped++;
          return;
        }
        const key = r['in'] === undefined ? 'in' : 'out';
        throw fieldError(doc, path, key, `main turn ${i} has no "${key}" token count; a turn without token counts cannot be replayed (add it, or pass --skip-incomplete to drop such turns)`);
      }
      turns.push({
        t: num(doc, [...path, 't'], 't', r['t'] ?? 0, false),
        api: num(doc, [...path, 'api_time'], 'api_time', r['api_time'] ?? 0, false),
        input: num(doc, [...path, 'in'], 'in', r['in'], true),
        output: num(doc, [...path, 'out'], 'out', r['out'], true),
        streaming: r['type'] === 's',
      });
    });
    if (turns.length < opts.minRounds) {
      short++;
      continue;
    }
    const rounds: NormalizedRound[] = turns.map((tn, i) => {
      let think = 0;
      if (i > 0) {
        const prev = turns[i - 1]!;
        think = Math.max(0, Math.round((tn.t - prev.t - prev.api) * 1e6));
        if (opts.maxThinkTimeUs > 0 && think > opts.maxThinkTimeUs) think = opts.maxThinkTimeUs;
      }
      return { inputTokensAbs: tn.input, outputTokens: tn.output, arrivalUs: Math.round(tn.t * 1e6), thinkUs: think, status: 'ok', streaming: tn.streaming };
    });
    sessions.push({ id, rounds });
  }
  if (dropped > 0) opts.warn?.(`--skip-incomplete: dropped ${dropped} main turn(s) without in/out token counts`);
  if (short > 0) opts.warn?.(`--min-rounds ${opts.minRounds}: skipped ${short} session(s) with fewer main turns`);
  return sessions;
}
