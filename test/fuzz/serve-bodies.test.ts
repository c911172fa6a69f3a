/**
 * Fuzzing `blis serve` request bodies: random JSON, near-valid requests with fields of the wrong type or
 * out-of-range values (huge numbers, fractions, negatives), deep nesting, truncated JSON and invalid UTF-8,
 * posted to both completion routes of a server in a child process. Every answer must be a well-formed vLLM
 * success (a completion object, or an SSE stream whose events are JSON) or a vLLM error body
 * (`{"error": {message, type, param, code}}` with `code` equal to the status, never a 5xx), and the server
 * must neither crash nor stall: it answers /health after every case.
 *
 * Conventions of test/fuzz: the case count is a base count times FUZZ_RUNS (default 1), the seed is
 * FUZZ_SEED or a fixed default, and both are printed (`fuzz <name>: <cases> cases, seed <seed>`).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, startServeChild, type ServeChild } from '../io/processes.js';
import { TEST_MODEL } from '../io/engine.js';

function fuzzFactor(): number {
  const raw = process.env['FUZZ_RUNS'];
  if (raw === undefined || raw === '') return 1;
  const f = Number(raw);
  if (!Number.isFinite(f) || f <= 0) throw new Error(`FUZZ_RUNS must be a positive number, got "${raw}"`);
  return f;
}

function fuzzParams(name: string, baseRuns: number): { seed: number; numRuns: number; endOnFailure: true } {
  const raw = process.env['FUZZ_SEED'];
  const seed = raw === undefined || raw === '' ? 20_250_611 : Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got "${raw}"`);
  const numRuns = Math.max(1, Math.round(baseRuns * fuzzFactor()));
  console.info(`fuzz ${name}: ${numRuns} cases, seed ${seed}`);
  return { seed, numRuns, endOnFailure: true };
}

let serve: ServeChild;

beforeAll(async () => {
  ensureBuilt();
  // A short model length bounds every accepted request's output (and so each case's time).
  serve = await startServeChild(['--model', TEST_MODEL, '--hardware', 'H100', '--tp', '1', '--max-model-len', '256']);
}, 120_000);
afterAll(async () => {
  await serve?.stop();
});

const FIELDS = ['model', 'prompt', 'messages', 'max_tokens', 'max_completion_tokens', 'min_tokens', 'n', 'stream', 'stream_options', 'temperature', 'user'] as const;

/** Values of every JSON type, weighted towards what breaks validators. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -1, 1, 2, 1.5, 1e9, 1e21, -1e308, 1e308, 2 ** 53 + 2, 5e-324, '', '5', 'true', null, true, false, [], {}, TEST_MODEL, 'hello world'),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.string({ maxLength: 40 }),
  fc.array(fc.oneof(fc.integer({ min: -5, max: 200_000 }), fc.string({ maxLength: 5 })), { maxLength: 8 }),
  fc.record({ role: fc.constantFrom('user', 'system', 7), content: fc.oneof(fc.string({ maxLength: 30 }), fc.constant([{ type: 'text', text: 'hi' }]), fc.integer()) }).map((m) => [m]),
  fc.record({ include_usage: fc.oneof(fc.boolean(), fc.string({ maxLength: 3 })) }),
);

/** Near-valid bodies: a random subset of the known fields with random values, plus a plausible prompt. */
const nearValid: fc.Arbitrary<unknown> = fc
  .tuple(fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }), fc.boolean(), fc.integer({ min: 1, max: 300 }))
  .map(([o, withPrompt, words]) => (withPrompt ? { prompt: Array.from({ length: words }, (_, i) => `w${i}`).join(' '), messages: [{ role: 'user', content: 'hi there' }], max_tokens: 4, ...o } : o));

function deepNest(depth: number, open: string, close: string, inner: string): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

/** What goes on the wire: bytes, with a label for failure messages. */
const body: fc.Arbitrary<{ label: string; bytes: Uint8Array }> = fc.oneof(
  fc.jsonValue().map((v) => ({ label: 'json', bytes: new TextEncoder().encode(JSON.stringify(v)) })),
  nearValid.map((v) => ({ label: 'near-valid', bytes: new TextEncoder().encode(JSON.stringify(v)) })),
  fc.integer({ min: 1, max: 200_000 }).chain((d) => fc.constantFrom(
    { label: `nested arrays ${d}`, bytes: new TextEncoder().encode(deepNest(d, '[', ']', '1')) },
    { label: `nested prompt ${d}`, bytes: new TextEncoder().encode(`{"prompt":${deepNest(d, '[', ']', '"x"')},"max_tokens":2}`) },
    { label: `nested objects ${d}`, bytes: new TextEncoder().encode(`{"model":${deepNest(d, '{"a":', '}', 'null')}}`) },
  )),
  fc.tuple(nearValid, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }).map((a) => a.map((b) => 0x80 | b))).map(([v, at, junk]) => {
    const ok = new TextEncoder().encode(JSON.stringify(v));
    const i = at % (ok.length + 1);
    return { label: 'invalid utf-8', bytes: new Uint8Array([...ok.subarray(0, i), ...junk, ...ok.subarray(i)]) };
  }),
  fc.tuple(nearValid, fc.nat()).map(([v, cut]) => {
    const t = JSON.stringify(v);
    return { label: 'truncated', bytes: new TextEncoder().encode(t.slice(0, cut % Math.max(1, t.length))) };
  }),
);

function isErrorBody(status: number, text: string): boolean {
  const o = JSON.parse(text) as Record<string, unknown>;
  const e = o['error'] as Record<string, unknown> | undefined;
  return Object.keys(o).length === 1 && typeof e === 'object' && e !== null && typeof e['message'] === 'string' && typeof e['type'] === 'string'
    && (e['param'] === null || typeof e['param'] === 'string') && e['code'] === status;
}

/** Checks one answer against the contract; reads at most the first SSE event of a stream, then hangs up. */
async function check(res: Response, label: string): Promise<void> {
  const where = `${label}: HTTP ${res.status}`;
  expect([200, 400, 404, 413], where).toContain(res.status);
  if (res.status !== 200) {
    const text = await res.text();
    expect(isErrorBody(res.status, text), `${where} ${text.slice(0, 300)}`).toBe(true);
    return;
  }
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let buf = '';
    while (!buf.includes('\n\n')) {
      const { done, value: v } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(v);
    }
    await reader.cancel();
    expect(buf.startsWith('data: '), `${where} ${buf.slice(0, 200)}`).toBe(true);
    const first = buf.slice(6, buf.indexOf('\n\n'));
    const event = JSON.parse(first) as Record<string, unknown>;
    expect(typeof event['id'] === 'string' && Array.isArray(event['choices']), `${where} ${first.slice(0, 200)}`).toBe(true);
    return;
  }
  const o = (await res.json()) as Record<string, unknown>;
  expect(['text_completion', 'chat.completion'], where).toContain(o['object']);
  expect(o['usage'], where).toMatchObject({ prompt_tokens: expect.any(Number) as unknown, completion_tokens: expect.any(Number) as unknown });
}

describe('fuzz: blis serve request bodies', () => {
  it('answers every body with a vLLM success or error and never crashes or stalls', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('/v1/completions', '/v1/chat/completions'), async ({ label, bytes }, route) => {
        const res = await fetch(`${serve.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes, signal: AbortSignal.timeout(20_000) });
        await check(res, `${route} ${label} ${new TextDecoder().decode(bytes.subarray(0, 120))}`);
        expect(serve.child.exitCode, 'server exited').toBeNull();
        const health = await fetch(`${serve.url}/health`, { signal: AbortSignal.timeout(5_000) });
        expect(health.status).toBe(200);
      }),
      fuzzParams('serve bodies', 120),
    );
  }, Math.round(300_000 * Math.max(1, fuzzFactor())));

  it('answers a body past the size limit with a 413 error body, then keeps serving', async () => {
    // 65 MiB of a valid prompt: over the default 64 MiB limit, declared up front.
    const big = new Uint8Array(65 * 1024 * 1024).fill(0x20);
    big.set(new TextEncoder().encode('{"prompt":"'), 0);
    big.set(new TextEncoder().encode('x"}'), big.length - 3);
    const res = await fetch(`${serve.url}/v1/completions`, { method: 'POST', body: big, signal: AbortSignal.timeout(60_000) });
    expect(res.status).toBe(413);
    expect(isErrorBody(413, await res.text())).toBe(true);
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
  }, 120_000);
});
