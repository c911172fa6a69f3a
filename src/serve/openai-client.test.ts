/**
 * `blis serve` (a child process) driven by the official `openai` npm client: models, completions, streaming
 * chat with usage, and every error path. The expectations are what vLLM 0.15's OpenAI server answers to the
 * same calls (vllm/entrypoints/openai: ErrorResponse = {"error": {message, type, param, code}}; the serving
 * layer's BadRequestError / NotFoundError with `param`; FastAPI's validation and routing errors typed by their
 * HTTP reason phrase; `_validate_input`'s context-length messages; ModelCard and UsageInfo fields), so the
 * client sees the same status, error class, error fields and usage.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, startServeChild, type ServeChild } from '../../test/io/processes.js';
import { TEST_MODEL } from '../../test/io/engine.js';

let serve: ServeChild;
let client: OpenAI;

beforeAll(async () => {
  ensureBuilt();
  serve = await startServeChild(['--model', TEST_MODEL, '--hardware', 'H100', '--tp', '1', '--max-model-len', '4096']);
  client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30_000 });
}, 120_000);
afterAll(async () => {
  await serve?.stop();
});

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i % 17}`).join(' ');

/** What vLLM's error for the call looks like through the client. */
interface VllmError {
  readonly ctor: abstract new (...args: never[]) => InstanceType<typeof OpenAI.APIError>;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly message: RegExp;
}

async function expectVllmError(call: Promise<unknown>, want: VllmError): Promise<void> {
  let caught: unknown = null;
  try {
    await call;
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(want.ctor);
  const e = caught as InstanceType<typeof OpenAI.APIError>;
  expect(e.status).toBe(want.status);
  // The client read vLLM's body: not "404 status code (no body)".
  expect(e.error).toMatchObject({ type: want.type, param: want.param, code: want.status });
  expect(e.type).toBe(want.type);
  expect(e.param).toBe(want.param);
  expect(e.code).toBe(want.status);
  expect((e.error as { message: string }).message).toMatch(want.message);
  expect(e.message).toBe(`${want.status} ${(e.error as { message: string }).message}`);
}

describe('blis serve through the official openai client', () => {
  it('lists the model as vLLM does', async () => {
    const page = await client.models.list();
    expect(page.data).toHaveLength(1);
    const m = page.data[0] as unknown as Record<string, unknown>;
    expect(m).toMatchObject({ id: TEST_MODEL, object: 'model', owned_by: 'vllm', root: TEST_MODEL, parent: null, max_model_len: 4096 });
    expect(typeof m['created']).toBe('number');
    expect((m['permission'] as { object: string }[])[0]?.object).toBe('model_permission');
  });

  it('streams chat with the role first, one delta per token and a final usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: TEST_MODEL,
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'tell me about the sea' }],
      max_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    const deltas = chunks.filter((c) => c.choices.length === 1 && c.choices[0]?.delta.content !== '');
    expect(deltas).toHaveLength(12);
    expect(deltas.at(-1)?.choices[0]?.finish_reason).toBe('length');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const last = chunks.at(-1) as OpenAI.Chat.Completions.ChatCompletionChunk;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 7, completion_tokens: 12, total_tokens: 19 });
    expect(last.object).toBe('chat.completion.chunk');
  });

  it('answers completions, whole and streamed, with usage', async () => {
    const whole = await client.completions.create({ model: TEST_MODEL, prompt: words(30), max_tokens: 5 });
    expect(whole.object).toBe('text_completion');
    expect(whole.choices[0]?.finish_reason).toBe('length');
    expect(whole.choices[0]?.text.trim().split(' ')).toHaveLength(5);
    expect(whole.usage).toEqual({ prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 });
    const stream = await client.completions.create({ model: TEST_MODEL, prompt: words(8), max_tokens: 4, stream: true, stream_options: { include_usage: true } });
    const texts: string[] = [];
    let usage: OpenAI.Completions.CompletionUsage | undefined;
    for await (const c of stream) {
      if (c.choices.length > 0) texts.push(c.choices[0]?.text ?? '');
      if (c.usage) usage = c.usage;
    }
    expect(texts).toHaveLength(4);
    expect(usage).toEqual({ prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 });
    const chat = await client.chat.completions.create({ model: TEST_MODEL, messages: [{ role: 'user', content: 'a b c' }], max_completion_tokens: 3 });
    expect(chat.choices[0]?.message.role).toBe('assistant');
    expect(chat.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
  });

  it('gets vLLM\'s error for each bad call (status, class, type, param, message)', async () => {
    const chat = (body: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming>): Promise<unknown> =>
      client.chat.completions.create({ model: TEST_MODEL, messages: [{ role: 'user', content: 'hello there' }], ...body });
    await expectVllmError(chat({ model: 'no-such-model' }), { ctor: OpenAI.NotFoundError, status: 404, type: 'NotFoundError', param: 'model', message: /^The model `no-such-model` does not exist\.$/ });
    // max_tokens: 1e9 is rejected up front, as vLLM does, instead of streaming for hours.
    await expectVllmError(chat({ max_tokens: 1e9, stream: false }), {
      ctor: OpenAI.BadRequestError, status: 400, type: 'BadRequestError', param: 'max_tokens',
      message: /^'max_tokens' or 'max_completion_tokens' is too large: 1000000000\. This model's maximum context length is 4096 tokens and your request has 2 input tokens \(1000000000 > 4096 - 2\)\.$/,
    });
    const t0 = performance.now();
    await expectVllmError(client.chat.completions.create({ model: TEST_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1e9, stream: true }), {
      ctor: OpenAI.BadRequestError, status: 400, type: 'BadRequestError', param: 'max_tokens', message: /too large: 1000000000\./,
    });
    expect(performance.now() - t0).toBeLessThan(10_000);
    await expectVllmError(client.completions.create({ model: TEST_MODEL, prompt: words(4096), max_tokens: 1 }), {
      ctor: OpenAI.BadRequestError, status: 400, type: 'BadRequestError', param: 'input_tokens',
      message: /^This model's maximum context length is 4096 tokens\. However, your request has 4096 input tokens\. Please reduce the length of the input messages\.$/,
    });
    await expectVllmError(chat({ max_tokens: 0 }), { ctor: OpenAI.BadRequestError, status: 400, type: 'BadRequestError', param: 'max_tokens', message: /at least 1/ });
    // A field of the wrong type fails FastAPI's validation: 400 typed "Bad Request".
    await expectVllmError(chat({ max_tokens: 'many' as unknown as number }), { ctor: OpenAI.BadRequestError, status: 400, type: 'Bad Request', param: 'max_tokens', message: /valid integer/ });
    await expectVllmError(client.get('/no/such/route'), { ctor: OpenAI.NotFoundError, status: 404, type: 'Not Found', param: null, message: /^Not Found$/ });
    await expectVllmError(client.post('/models'), { ctor: OpenAI.APIError, status: 405, type: 'Method Not Allowed', param: null, message: /^Method Not Allowed$/ });
  });
});
