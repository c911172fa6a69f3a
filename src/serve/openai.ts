/**
 * The OpenAI-compatible wire format as vLLM speaks it: request bodies of /v1/completions and
 * /v1/chat/completions in, response objects and SSE chunks out. Lengths are tokenizer-free (one token per
 * word, see workload/word-prompt.ts).
 */
import { outputWord, textTokenIds } from '../workload/word-prompt.js';

export type ApiKind = 'completions' | 'chat';

/** An error answered with vLLM's error object. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = status === 404 ? 'NotFoundError' : 'BadRequestError',
  ) {
    super(message);
  }

  body(): string {
    return JSON.stringify({ object: 'error', message: this.message, type: this.type, param: null, code: this.status });
  }
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
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new ApiError(400, `${key} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  return v;
}

function promptText(kind: ApiKind, o: Record<string, unknown>): string | Int32Array {
  if (kind === 'completions') {
    let p = o['prompt'];
    if (Array.isArray(p) && p.length === 1 && (typeof p[0] === 'string' || Array.isArray(p[0]))) p = p[0];
    if (typeof p === 'string') return p;
    if (Array.isArray(p) && p.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0)) return Int32Array.from(p as number[]);
    throw new ApiError(400, 'prompt must be a string, a list of token ids, or a one-element list of either (batched prompts are not supported)');
  }
  const msgs = o['messages'];
  if (!Array.isArray(msgs) || msgs.length === 0) throw new ApiError(400, 'messages must be a non-empty list');
  const parts: string[] = [];
  for (const [i, m] of msgs.entries()) {
    const c = typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['content'] : undefined;
    if (typeof c === 'string') parts.push(c);
    else if (Array.isArray(c)) {
      for (const p of c) {
        const t = typeof p === 'object' && p !== null ? (p as Record<string, unknown>)['text'] : undefined;
        if (typeof t === 'string') parts.push(t);
      }
    } else if (c !== null && c !== undefined) throw new ApiError(400, `messages[${i}].content must be a string or a list of content parts`);
  }
  return parts.join(' ');
}

/** Validates a request body against the model and KV limits (as vLLM does before scheduling). */
export function parseCompletionRequest(kind: ApiKind, body: unknown, lim: ServeLimits): CompletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError(400, 'request body must be a JSON object');
  const o = body as Record<string, unknown>;
  const model = o['model'];
  const adapter = typeof model === 'string' && !lim.modelNames.includes(model) && (lim.adapterNames ?? []).includes(model) ? model : '';
  if (model !== undefined && model !== null && adapter === '' && (typeof model !== 'string' || !lim.modelNames.includes(model))) {
    throw new ApiError(404, `The model \`${typeof model === 'string' ? model : JSON.stringify(model)}\` does not exist.`);
  }
  const n = optInt(o, 'n', 1);
  if (n !== null && n !== 1) throw new ApiError(400, 'only n = 1 is supported');
  const p = promptText(kind, o);
  const input = typeof p === 'string' ? textTokenIds(p) : p;
  if (input.length === 0) throw new ApiError(400, 'the prompt is empty');
  const maxTokens = optInt(o, 'max_tokens', 1) ?? (kind === 'chat' ? optInt(o, 'max_completion_tokens', 1) : null);
  const minTokens = optInt(o, 'min_tokens', 0) ?? 0;
  if (maxTokens !== null && minTokens > maxTokens) throw new ApiError(400, `min_tokens (${minTokens}) must be <= max_tokens (${maxTokens})`);
  const mml = lim.maxModelLen;
  if (mml > 0 && input.length >= mml) {
    throw new ApiError(400, `This model's maximum context length is ${mml} tokens. However, your request has ${input.length} input tokens. Please reduce the length of the input messages.`);
  }
  if (Math.ceil(input.length / lim.blockSize) > lim.totalKvBlocks) throw new ApiError(400, `the prompt (${input.length} tokens) does not fit in the KV cache (${lim.totalKvBlocks} blocks of ${lim.blockSize})`);
  let outputLen = maxTokens ?? Math.max(minTokens, lim.defaultMaxTokens);
  // vLLM clamps the output budget to what the context window leaves.
  const room = mml > 0 ? mml - input.length : OUTPUT_CAP_WITHOUT_MML;
  if (outputLen > room) outputLen = room;
  const so = o['stream_options'];
  const includeUsage = typeof so === 'object' && so !== null && (so as Record<string, unknown>)['include_usage'] === true;
  return { kind, input, outputLen, stream: o['stream'] === true, includeUsage, adapter };
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
