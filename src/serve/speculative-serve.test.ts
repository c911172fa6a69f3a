import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServer } from './index.js';
import { TEST_MODEL, testSetup } from '../../test/io/engine.js';

let srv: RunningServer;

beforeAll(async () => {
  const setup = await testSetup({ maxModelLen: 4096, numSpeculativeTokens: 3, speculativeAcceptanceRate: 0.7 });
  srv = await startServe({ setup, modelName: TEST_MODEL });
});
afterAll(async () => {
  await srv.close();
});

describe('blis serve with speculative decoding', () => {
  it('streams every token once (a verification step\'s tokens together), then usage and [DONE]', async () => {
    const res = await fetch(`${srv.url}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(20_000),
      body: JSON.stringify({ model: TEST_MODEL, prompt: 'a b c d e f', max_tokens: 20, min_tokens: 20, stream: true, stream_options: { include_usage: true } }),
    });
    const text = await res.text();
    const events = text.split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]').map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(events).toHaveLength(21);
    const choices = events.slice(0, 20).map((e) => (e['choices'] as { finish_reason: string | null }[])[0]);
    expect(choices[19]?.finish_reason).toBe('length');
    expect(choices.slice(0, 19).every((c) => c?.finish_reason === null)).toBe(true);
    expect(events[20]).toMatchObject({ usage: { completion_tokens: 20 } });
    const metrics = await (await fetch(`${srv.url}/metrics`)).text();
    expect(metrics).toMatch(/vllm:generation_tokens_total\S* 20\b/);
  });
});
