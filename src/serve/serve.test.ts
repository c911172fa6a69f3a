/**
 * `blis serve` over real loopback sockets (in-process): routes, the vLLM stream format, validation, timing
 * against the offline simulation, client aborts, and /metrics through a strict exposition parser.
 */
import { availableParallelism, loadavg } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Request } from '../domain/request.js';
import { MAX_INT64 } from '../domain/units.js';
import { runEngine } from '../sim/engine-setup.js';
import { startServe, type RunningServer } from './index.js';
import { parsePrometheusText, type PromFamily } from '../../test/io/prom-parse.js';
import { TEST_MODEL, testSetup } from '../../test/io/engine.js';

let srv: RunningServer;
let setup: Awaited<ReturnType<typeof testSetup>>;

beforeAll(async () => {
  setup = await testSetup({ maxModelLen: 4096 });
  srv = await startServe({ setup, modelName: TEST_MODEL, aliases: ['alias-name'] });
});
afterAll(async () => {
  await srv.close();
});

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i % 13}`).join(' ');

async function post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: signal ?? AbortSignal.timeout(20_000) });
}

/** Reads an SSE response; returns the parsed data events (without [DONE]), their times (ms) and whether [DONE] came. */
async function readSse(res: Response, t0: number): Promise<{ events: Record<string, unknown>[]; times: number[]; done: boolean }> {
  const events: Record<string, unknown>[] = [];
  const times: number[] = [];
  let done = false;
  let buf = '';
  const dec = new TextDecoder();
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now() - t0;
    buf += dec.decode(part, { stream: true });
    let i = buf.indexOf('\n\n');
    while (i >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      expect(ev.startsWith('data: ')).toBe(true);
      const data = ev.slice(6);
      if (data === '[DONE]') done = true;
      else {
        events.push(JSON.parse(data) as Record<string, unknown>);
        times.push(now);
      }
      i = buf.indexOf('\n\n');
    }
  }
  return { events, times, done };
}

/** TTFT and E2E (µs) of one request alone on an idle engine, from the offline simulator. */
function offline(inputLen: number, outputLen: number): { ttft: number; e2e: number } {
  const r = new Request('request_0', Int32Array.from({ length: inputLen }, (_, i) => i), new Int32Array(outputLen), 0, outputLen, 0);
  runEngine({ ...setup, horizon: MAX_INT64 }, [r]);
  return { ttft: r.ttft, e2e: r.e2e };
}

describe('blis serve HTTP API', () => {
  it('answers /health, /v1/models, unknown routes and wrong methods', async () => {
    expect((await fetch(`${srv.url}/health`)).status).toBe(200);
    const models = (await (await fetch(`${srv.url}/v1/models`)).json()) as { data: { id: string; max_model_len: number }[] };
    expect(models.data.map((m) => m.id)).toEqual([TEST_MODEL]);
    expect(models.data[0]?.max_model_len).toBe(4096);
    const nf = await fetch(`${srv.url}/nope`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ error: { message: 'Not Found', type: 'Not Found', param: null, code: 404 } });
    const wrongMethod = await fetch(`${srv.url}/v1/completions`);
    expect(wrongMethod.status).toBe(405);
    expect(await wrongMethod.json()).toEqual({ error: { message: 'Method Not Allowed', type: 'Method Not Allowed', param: null, code: 405 } });
  });

  it('streams one chunk per token at the simulated times, then usage and [DONE]', async () => {
    const t0 = performance.now();
    const res = await post('/v1/completions', { model: TEST_MODEL, prompt: words(900), max_tokens: 40, min_tokens: 40, stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, times, done } = await readSse(res, t0);
    expect(done).toBe(true);
    expect(events.length).toBe(41);
    const choices = events.map((e) => e['choices'] as { text: string; finish_reason: string | null }[]);
    expect(choices.slice(0, 40).every((c) => c.length === 1 && typeof c[0]?.text === 'string')).toBe(true);
    expect(choices[39]?.[0]?.finish_reason).toBe('length');
    expect(choices[38]?.[0]?.finish_reason).toBeNull();
    expect(events[40]).toMatchObject({ choices: [], usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } });
    // Tokens never arrive before the simulation produces them; loopback and timers add only a little (on a
    // machine so overloaded that this process waits tens of ms for a core, a load average over three per
    // core, more: the margin then only rules out gross lateness).
    const sim = offline(900, 40);
    const ttftMs = times[0] as number;
    const e2eMs = times[40] as number;
    const margin = (loadavg()[0] ?? 0) > 3 * availableParallelism() ? 250 : 40;
    expect(ttftMs).toBeGreaterThanOrEqual(sim.ttft / 1000 - 1);
    expect(ttftMs).toBeLessThan(sim.ttft / 1000 + margin);
    expect(e2eMs).toBeGreaterThanOrEqual(sim.e2e / 1000 - 1);
    expect(e2eMs).toBeLessThan(sim.e2e / 1000 + margin);
  });

  it('answers non-streaming completions and streaming chat (role chunk first)', async () => {
    const full = (await (await post('/v1/completions', { model: 'alias-name', prompt: 'one two three', max_tokens: 5 })).json()) as Record<string, unknown>;
    expect(full).toMatchObject({ object: 'text_completion', choices: [{ index: 0, finish_reason: 'length' }], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } });
    expect(((full['choices'] as { text: string }[])[0]?.text ?? '').trim().split(' ').length).toBe(5);
    const res = await post('/v1/chat/completions', { model: TEST_MODEL, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hello there' }] }], max_completion_tokens: 3, stream: true });
    const { events, done } = await readSse(res, performance.now());
    expect(done).toBe(true);
    expect(events.length).toBe(4);
    expect(events[0]).toMatchObject({ object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant', content: '' } }] });
    expect(events[3]).toMatchObject({ choices: [{ finish_reason: 'length' }] });
    const chat = (await (await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'a b c d' }], max_tokens: 2 })).json()) as Record<string, unknown>;
    expect(chat).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant' } }], usage: { prompt_tokens: 4, completion_tokens: 2 } });
  });

  it('rejects bad requests with vLLM 0.15 error bodies (status, type, param)', async () => {
    type Case = [string, unknown, number, string, string | null, RegExp];
    const cases: Case[] = [
      ['/v1/completions', { model: TEST_MODEL, prompt: words(5000), max_tokens: 1 }, 400, 'BadRequestError', 'input_tokens', /^This model's maximum context length is 4096 tokens\. However, your request has 5000 input tokens\./],
      ['/v1/completions', { model: TEST_MODEL, prompt: words(10), max_tokens: 4087 }, 400, 'BadRequestError', 'max_tokens', /^'max_tokens' or 'max_completion_tokens' is too large: 4087\. This model's maximum context length is 4096 tokens and your request has 10 input tokens \(4087 > 4096 - 10\)\.$/],
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1e9 }, 400, 'BadRequestError', 'max_tokens', /too large: 1000000000\./],
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 1e21 }, 400, 'BadRequestError', 'max_tokens', /too large: 1000000000000000000000\./],
      ['/v1/completions', { model: 'other', prompt: 'x', max_tokens: 1 }, 404, 'NotFoundError', 'model', /^The model `other` does not exist\.$/],
      ['/v1/completions', { prompt: 'x y', max_tokens: 2, min_tokens: 3 }, 400, 'BadRequestError', 'min_tokens', /min_tokens/],
      ['/v1/completions', { prompt: words(10), min_tokens: 1e9 }, 400, 'BadRequestError', 'min_tokens', /^min_tokens must be less than or equal to max_tokens=4086 \(the model's maximum context length 4096 minus the 10 input tokens\), got 1000000000\.$/],
      ['/v1/completions', { prompt: '   ', max_tokens: 2 }, 400, 'BadRequestError', 'prompt', /empty/],
      ['/v1/completions', { prompt: ['a', 'b'], max_tokens: 2 }, 400, 'Bad Request', 'prompt', /batched/],
      ['/v1/completions', { prompt: 'a', max_tokens: 0 }, 400, 'BadRequestError', 'max_tokens', /max_tokens must be at least 1/],
      ['/v1/completions', { prompt: 'a', max_tokens: 1.5 }, 400, 'Bad Request', 'max_tokens', /valid integer/],
      ['/v1/completions', { prompt: 'a', stream: 'yes' }, 400, 'Bad Request', 'stream', /valid boolean/],
      ['/v1/chat/completions', { messages: 'hello' }, 400, 'Bad Request', 'messages', /messages/],
      ['/v1/completions', [1, 2], 400, 'Bad Request', null, /dictionary/],
    ];
    for (const [path, body, status, type, param, msg] of cases) {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      const e = (await res.json()) as { error: { message: string; type: string; param: string | null; code: number } };
      expect(Object.keys(e)).toEqual(['error']);
      expect(e.error).toMatchObject({ type, param, code: status });
      expect(e.error.message).toMatch(msg);
    }
    const bad = await fetch(`${srv.url}/v1/completions`, { method: 'POST', body: '{nope' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { type: string } }).error.type).toBe('Bad Request');
    const latin1 = await fetch(`${srv.url}/v1/completions`, { method: 'POST', body: Buffer.from([0x7b, 0x22, 0x70, 0xff, 0x22, 0x3a, 0x31, 0x7d]) });
    expect(latin1.status).toBe(400);
    expect(((await latin1.json()) as { error: { message: string } }).error.message).toMatch(/UTF-8/);
  });

  it('answers a body over the limit with a 413 and vLLM\'s error body, not a reset', async () => {
    const small = await startServe({ setup, modelName: TEST_MODEL, maxBodyBytes: 100_000 });
    try {
      const big = JSON.stringify({ prompt: words(40_000), max_tokens: 1 });
      const declared = await fetch(`${small.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
      expect(declared.status).toBe(413);
      expect(await declared.json()).toMatchObject({ error: { type: 'Request Entity Too Large', code: 413 } });
      // Chunked (no Content-Length): noticed while reading.
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < big.length; i += 16_384) c.enqueue(new TextEncoder().encode(big.slice(i, i + 16_384)));
          c.close();
        },
      });
      const chunked = await fetch(`${small.url}/v1/completions`, { method: 'POST', body: stream, duplex: 'half' });
      expect(chunked.status).toBe(413);
      expect(((await chunked.json()) as { error: { code: number } }).error.code).toBe(413);
      // The server still serves.
      expect((await fetch(`${small.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'a b', max_tokens: 1 }) })).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('takes an aborted stream out of the engine', async () => {
    const ctl = new AbortController();
    const res = await post('/v1/completions', { prompt: words(50), max_tokens: 3000, stream: true }, ctl.signal);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    ctl.abort();
    await reader.read().catch(() => undefined);
    const deadline = Date.now() + 5000;
    while (srv.engine.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(srv.engine.inFlight).toBe(0);
    while (srv.engine.stats().running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(srv.engine.stats().running).toBe(0);
  });

  it('serves 60 concurrent streams and exposes consistent vLLM metrics', async () => {
    const before = parsePrometheusText(await (await fetch(`${srv.url}/metrics`)).text());
    const value = (fams: Map<string, PromFamily>, name: string, sample = name, pred: (l: Readonly<Record<string, string>>) => boolean = () => true): number =>
      (fams.get(name)?.samples ?? []).filter((s) => s.name === sample && pred(s.labels)).reduce((a, s) => a + s.value, 0);
    const n = 60;
    const results = await Promise.all(Array.from({ length: n }, async (_, i) => {
      const res = await post('/v1/completions', { prompt: words(20 + i), max_tokens: 5 + (i % 7), stream: true, stream_options: { include_usage: true } });
      return readSse(res, performance.now());
    }));
    expect(results.every((r) => r.done)).toBe(true);
    const tokens = Array.from({ length: n }, (_, i) => 5 + (i % 7)).reduce((a, b) => a + b, 0);
    const prompts = Array.from({ length: n }, (_, i) => 20 + i).reduce((a, b) => a + b, 0);
    const text = await (await fetch(`${srv.url}/metrics`)).text();
    const after = parsePrometheusText(text);
    for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total']) {
      expect(after.has(name), name).toBe(true);
    }
    expect(after.get('vllm:time_to_first_token_seconds')?.type).toBe('histogram');
    expect(after.get('vllm:inter_token_latency_seconds')?.type).toBe('histogram');
    expect(after.get('vllm:request_success_total')?.type).toBe('counter');
    expect(value(after, 'vllm:num_requests_running')).toBe(0);
    expect(value(after, 'vllm:generation_tokens_total') - value(before, 'vllm:generation_tokens_total')).toBe(tokens);
    expect(value(after, 'vllm:prompt_tokens_total') - value(before, 'vllm:prompt_tokens_total')).toBe(prompts);
    const ok = (l: Readonly<Record<string, string>>): boolean => l['finished_reason'] === 'length';
    expect(value(after, 'vllm:request_success_total', 'vllm:request_success_total', ok) - value(before, 'vllm:request_success_total', 'vllm:request_success_total', ok)).toBe(n);
    const count = (f: Map<string, PromFamily>, h: string): number => value(f, h, `${h}_count`);
    expect(count(after, 'vllm:time_to_first_token_seconds') - count(before, 'vllm:time_to_first_token_seconds')).toBe(n);
    expect(count(after, 'vllm:e2e_request_latency_seconds') - count(before, 'vllm:e2e_request_latency_seconds')).toBe(n);
    expect(count(after, 'vllm:inter_token_latency_seconds') - count(before, 'vllm:inter_token_latency_seconds')).toBe(tokens - n);
    expect(after.get('vllm:num_requests_running')?.samples[0]?.labels).toEqual({ engine: '0', model_name: TEST_MODEL });
  });
});

describe('blis serve flags', () => {
  it('reports bad flags as one error line with exit 2', async () => {
    const { main } = await import('../cli/main.js');
    const cases: [string[], RegExp][] = [
      [['serve'], /--model is required/],
      [['serve', '--model', TEST_MODEL, '--num-instances', '2'], /one blis serve process is one instance/],
      [['serve', '--model', TEST_MODEL, '--port', '70000'], /--port must be in 0..65535/],
      [['serve', '--model', TEST_MODEL, '--routing-policy', 'weighted'], /unknown option/],
    ];
    for (const [args, msg] of cases) {
      const errs: string[] = [];
      expect(await main(args, { stdout: () => undefined, warn: () => undefined, error: (t) => void errs.push(t) })).toBe(2);
      expect(errs[0]).toMatch(msg);
    }
    const help: string[] = [];
    expect(await main(['serve', '--help'], { stdout: (t) => void help.push(t), warn: () => undefined, error: () => undefined })).toBe(0);
    expect(help.join('')).toMatch(/--port <value>/);
    expect(help.join('')).not.toMatch(/--num-instances/);
  });
});

describe('LiveEngine', () => {
  it('finishes every submitted request once and prunes finished ones from the engine lists', async () => {
    const { LiveEngine } = await import('./live-engine.js');
    const engine = new LiveEngine(setup);
    const n = 300;
    let finished = 0;
    let tokens = 0;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`only ${finished} of ${n} finished`)), 20_000);
      for (let i = 0; i < n; i++) {
        engine.submit(`r${i}`, Int32Array.from({ length: 30 + i }, (_, k) => k + i), 3, '', {
          token: () => void tokens++,
          finish: (count) => {
            expect(count).toBe(3);
            if (++finished === n) {
              clearTimeout(t);
              resolve();
            }
          },
          fail: (why) => reject(new Error(why)),
        });
      }
    });
    engine.close();
    expect(tokens).toBe(3 * n);
    expect(engine.inFlight).toBe(0);
    expect(engine.cs.arrivals.length).toBeLessThan(n - 200);
    expect(engine.stats().deliveries).toBe(4 * n);
  });
});
