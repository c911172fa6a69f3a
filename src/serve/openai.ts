/**
 * The OpenAI-compatible wire format as vLLM speaks it: request bodies of /v1/completions and
 * /v1/chat/completions in, response objects and SSE chunks out. Lengths are tokenizer-free (one token per
 * word, see workload/word-prompt.ts).
 */
import { outputWord, textTokenIds } from '../workload/word-prompt.js';

export type ApiKind = 'completions' | 'chat';

/**
 * An error answered with vLLM's error body (v0.15: `{"error": {"message", "type", "param", "code"}}`). `type`
 * follows vLLM: `BadRequestError` / `NotFoundError` for what its serving layer rejects, the HTTP reason
 * phrase for what FastAPI rejects first (an unknown route, a malformed or mistyped body).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = status === 404 ? 'NotFoundError' : status >= 500 ? 'InternalServerError' : 'BadRequestError',
    readonly param: string | null = null,
  ) {
    super(message);
  }

  body(): string {
    return JSON.stringify({ error: { message: this.message, type: this.type, param: this.param, code: this.status } });
  }
}

/** What FastAPI's request validation answers (400, type "Bad Request"): malformed JSON or a field of the wrong type. */
export function invalidRequest(message: string, param: string | null = null): ApiError {
  return new ApiError(400, message, 'Bad Request', param);
}

/** An integer as Python prints it (no exponent), for vLLM's messages. */
function intText(v: number): string {
  return Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
}

export interface ServeLimits {
  /** Names a request's `model` may use. */
  readonly modelNames: readonly string[];
  /** LoRA adapter ids a request's `model` may name instead (vLLM's convention for LoRA modules). */
  readonly adapterNames?: readonly string[];
  /** 0 = unknown. */
  readonly maxModelLen: number;
  readonly totalKvBlocks: number;
  readonly blockSize: number;
  /** Output length when the request sets neither max_tokens nor min_tokens. */
  readonly defaultMaxTokens: number;
}

export interface CompletionRequest {
  readonly kind: ApiKind;
  readonly input: Int32Array;
  readonly outputLen: number;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** The LoRA adapter the request's `model` named ('' = the base model). */
  readonly adapter: string;
}

/** Without a model length, the largest output a request may ask for (keeps the oracle arrays bounded). */
const OUTPUT_CAP_WITHOUT_MML = 1 << 20;

function optInt(o: Record<string, unknown>, key: string, min: number): number | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  // pydantic's lax int: an integral float (1e9) is an int, 1.5 or "5" is not.
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidRequest(`${key}: Input should be a valid integer, got ${describeValue(v)}`, key);
  if (v < min) throw new ApiError(400, `${key} must be at least ${min}, got ${intText(v)}.`, 'BadRequestError', key);
  return v;
}

function optBool(o: Record<string, unknown>, key: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalidRequest(`${key}: Input should be a valid boolean, got ${describeValue(v)}`, key);
  return v;
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object' && v !== null) return 'an object';
  if (typeof v === 'string') return v.length > 40 ? 'a string' : JSON.stringify(v);
  return String(v);
}

function promptText(kind: ApiKind, o: Record<string, unknown>): string | Int32Array {
  if (kind === 'completions') {
    let p = o['prompt'];
    if (Array.isArray(p) && p.length === 1 && (typeof p[0] === 'string' || Array.isArray(p[0]))) p = p[0];
    if (typeof p === 'string') return p;
    if (Array.isArray(p) && p.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 0x7fffffff)) return Int32Array.from(p as number[]);
    throw invalidRequest('prompt: Input should be a string, a list of token ids, or a one-element list of either (batched prompts are not supported)', 'prompt');
  }
  const msgs = o['messages'];
  if (!Array.isArray(msgs) || msgs.length === 0) throw invalidRequest('messages: Input should be a non-empty list of messages', 'messages');
  const parts: string[] = [];
  for (const [i, m] of msgs.entries()) {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalidRequest(`messages[${i}]: Input should be an object with a role and content`, 'messages');
    const c = (m as Record<string, unknown>)['content'];
    if (typeof c === 'string') parts.push(c);
    else if (Array.isArray(c)) {
      for (const p of c) {
        const t = typeof p === 'object' && p !== null ? (p as Record<string, unknown>)['text'] : undefined;
        if (typeof t === 'string') parts.push(t);
      }
    } else if (c !== null && c !== undefined) throw invalidRequest(`messages[${i}].content: Input should be a string or a list of content parts`, 'messages');
  }
  return parts.join(' ');
}

/**
 * Validates a request body against the model and KV limits, with vLLM's checks and messages: the prompt must
 * leave room for one token (400, param `input_tokens`), and an explicit `max_tokens` must fit in what the
 * context leaves (400, param `max_tokens`) where vLLM rejects rather than clamps.
 */
export function parseCompletionRequest(kind: ApiKind, body: unknown, lim: ServeLimits): CompletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidRequest('Input should be a valid dictionary or object to extract fields from');
  const o = body as Record<string, unknown>;
  const model = o['model'];
  const adapter = typeof model === 'string' && !lim.modelNames.includes(model) && (lim.adapterNames ?? []).includes(model) ? model : '';
  if (model !== undefined && model !== null && adapter === '' && (typeof model !== 'string' || !lim.modelNames.includes(model))) {
    const shown = typeof model === 'string' ? model : describeValue(model);
    throw new ApiError(404, `The model \`${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}\` does not exist.`, 'NotFoundError', 'model');
  }
  const n = optInt(o, 'n', 1);
  if (n !== null && n !== 1) throw new ApiError(400, 'only n = 1 is supported', 'BadRequestError', 'n');
  const stream = optBool(o, 'stream');
  const so = o['stream_options'];
  if (so !== undefined && so !== null && (typeof so !== 'object' || Array.isArray(so))) throw invalidRequest('stream_options: Input should be an object', 'stream_options');
  const includeUsage = so !== undefined && so !== null && optBool(so as Record<string, unknown>, 'include_usage');
  const maxTokens = optInt(o, 'max_tokens', 1) ?? (kind === 'chat' ? optInt(o, 'max_completion_tokens', 1) : null);
  const minTokens = optInt(o, 'min_tokens', 0) ?? 0;
  const p = promptText(kind, o);
  const input = typeof p === 'string' ? textTokenIds(p) : p;
  if (input.length === 0) throw new ApiError(400, 'The prompt is empty: it must have at least one token.', 'BadRequestError', 'prompt');
  const mml = lim.maxModelLen > 0 ? lim.maxModelLen : 0;
  if (mml > 0 && input.length >= mml) {
    throw new ApiError(400, `This model's maximum context length is ${mml} tokens. However, your request has ${input.length} input tokens. Please reduce the length of the input messages.`, 'BadRequestError', 'input_tokens');
  }
  if (Math.ceil(input.length / lim.blockSize) > lim.totalKvBlocks) {
    throw new ApiError(400, `the prompt (${input.length} tokens) does not fit in the KV cache (${lim.totalKvBlocks} blocks of ${lim.blockSize})`, 'BadRequestError', 'input_tokens');
  }
  const room = mml > 0 ? mml - input.length : OUTPUT_CAP_WITHOUT_MML;
  if (maxTokens !== null && maxTokens > room) {
    const limitText = mml > 0 ? `This model's maximum context length is ${mml} tokens and your request has ${input.length} input tokens (${intText(maxTokens)} > ${mml} - ${input.length}).` : `This server caps outputs at ${OUTPUT_CAP_WITHOUT_MML} tokens.`;
    throw new ApiError(400, `'max_tokens' or 'max_completion_tokens' is too large: ${intText(maxTokens)}. ${limitText}`, 'BadRequestError', 'max_tokens');
  }
  if (maxTokens !== null && minTokens > maxTokens) throw new ApiError(400, `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`, 'BadRequestError', 'min_tokens');
  // Without max_tokens, vLLM's limit is what the context leaves: a min_tokens above it could never be met.
  if (maxTokens === null && minTokens > room) {
    const limitText = mml > 0 ? `the model's maximum context length ${mml} minus the ${input.length} input tokens` : `this server's output cap`;
    throw new ApiError(400, `min_tokens must be less than or equal to max_tokens=${room} (${limitText}), got ${intText(minTokens)}.`, 'BadRequestError', 'min_tokens');
  }
  // Without max_tokens vLLM fills what the context leaves; blis serve uses the default output length, clamped the same way.
  let outputLen = maxTokens ?? Math.max(minTokens, lim.defaultMaxTokens);
  if (outputLen > room) outputLen = room;
  return { kind, input, outputLen, stream, includeUsage, adapter };
}

/** Text of token `index` (1-based). */
export function tokenText(index: number): string {
  return ` ${outputWord(index - 1)}`;
}

export function completionText(tokens: number): string {
  let s = '';
  for (let i = 1; i <= tokens; i++) s += tokenText(i);
  return s;
}

export interface ResponseIds {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

function usage(prompt: number, completion: number): Record<string, number> {
  return { prompt_tokens: prompt, total_tokens: prompt + completion, completion_tokens: completion };
}

/** One SSE `data:` event carrying token `index`; `finish` marks the last token. The chat role rides on the first. */
export function tokenChunk(kind: ApiKind, ids: ResponseIds, index: number, finish: boolean): string {
  const finishReason = finish ? 'length' : null;
  if (kind === 'completions') {
    return JSON.stringify({ ...base(ids, 'text_completion'), choices: [{ index: 0, text: tokenText(index), logprobs: null, finish_reason: finishReason, stop_reason: null }] });
  }
  return JSON.stringify({ ...base(ids, 'chat.completion.chunk'), choices: [{ index: 0, delta: { content: tokenText(index) }, logprobs: null, finish_reason: finishReason }] });
}

/** vLLM's first chat chunk: the assistant role with empty content. */
export function roleChunk(ids: ResponseIds): string {
  return JSON.stringify({ ...base(ids, 'chat.completion.chunk'), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
}

/** The final usage chunk of `stream_options.include_usage` (empty choices). */
export function usageChunk(kind: ApiKind, ids: ResponseIds, prompt: number, completion: number): string {
  return JSON.stringify({ ...base(ids, kind === 'chat' ? 'chat.completion.chunk' : 'text_completion'), choices: [], usage: usage(prompt, completion) });
}

export function fullResponse(kind: ApiKind, ids: ResponseIds, prompt: number, completion: number): string {
  const text = completionText(completion);
  if (kind === 'completions') {
    return JSON.stringify({ ...base(ids, 'text_completion'), choices: [{ index: 0, text, logprobs: null, finish_reason: 'length', stop_reason: null }], usage: usage(prompt, completion) });
  }
  return JSON.stringify({
    ...base(ids, 'chat.completion'),
    choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: 'length', stop_reason: null }],
    usage: usage(prompt, completion),
  });
}

function base(ids: ResponseIds, object: string): Record<string, unknown> {
  return { id: ids.id, object, created: ids.created, model: ids.model };
}
