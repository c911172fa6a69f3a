/**
 * `blis observe` on loopback: against an in-process `blis serve` (functional round trip), against a
 * fault-injecting server (every request ends in exactly one status), and interrupted (Ctrl-C keeps what it has).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { parseTraceCsv } from '../workload/tracev2-csv.js';
import { parseTraceHeaderYaml } from '../workload/tracev2-yaml-parse.js';
import { parseItlCsv } from '../calibrate/io.js';
import { startServe, type RunningServer } from '../serve/index.js';
import { prefixGroupText, textTokenIds } from '../workload/word-prompt.js';
import { SseReader } from './sse.js';
import { pendingFactory } from './prompts.js';
import { buildObserveWorkload } from './workload.js';
import { observe } from './run.js';
import { FAULTS, startFaultServer, type Fault } from '../../test/io/fault-server.js';
import { TEST_MODEL, testSetup } from '../../test/io/engine.js';

const quietIo = (out: string[] = [], errs: string[] = []): { stdout: (t: string) => void; warn: (t: string) => void; error: (t: string) => void; info: () => void } => ({
  stdout: (t) => void out.push(t),
  warn: (t) => void errs.push(t),
  error: (t) => void errs.push(t),
  info: () => undefined,
});

describe('SSE reader', () => {
  it('splits events across reads, accepts CRLF, stops at [DONE]', () => {
    const r = new SseReader();
    const enc = new TextEncoder();
    expect(r.push(enc.encode('data: {"choices":[{"text":"a","finish_reason":null}]}\r\n\r\nda'), 10)).toBe(true);
    expect(r.push(enc.encode('ta: {"choices":[{"text":"b","finish_reason":"length"}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}\n\n'), 20)).toBe(true);
    expect(r.push(enc.encode('data: [DONE]\n\ndata: {"late":1}\n\n'), 30)).toBe(false);
    expect(r.state).toMatchObject({ chunks: 3, times: [10, 20, 20], done: true, error: '', finishReason: 'length', completionTokens: 2, promptTokens: 7 });
  });

  it('marks malformed chunks and in-band errors', () => {
    const bad = new SseReader();
    expect(bad.push(new TextEncoder().encode('data: {"x": [\n\n'), 1)).toBe(false);
    expect(bad.state.error).toMatch(/malformed SSE chunk 1/);
    const err = new SseReader();
    expect(err.push(new TextEncoder().encode('data: {"error":{"message":"boom"}}\n\n'), 1)).toBe(false);
    expect(err.state.error).toBe('server error in stream: boom');
  });
});

describe('prompt synthesis', () => {
  it('keeps lengths through serve’s word count and shares group prefixes', async () => {
    const wl = await buildObserveWorkload({
      workloadSpec: '', specText: '', preset: '', rate: 10, numRequests: 20, seed: 7n, seedChanged: true, horizonUs: 0, concurrency: 0, thinkTimeMs: 0, prefixTokens: 64,
      prompt: { mean: 300, stdev: 100, min: 10, max: 600 }, output: { mean: 20, stdev: 5, min: 1, max: 40 },
    });
    expect(wl.prefixGroups.get('shared')).toBe(64);
    const toPending = pendingFactory({ tokensPerWord: 1, seed: 7n, prefixGroups: wl.prefixGroups, unconstrained: false, streaming: () => true });
    const text = prefixGroupText('shared', 64, 7n, 1);
    expect(prefixGroupText('shared', 64, 7n, 1)).toBe(text);
    expect(prefixGroupText('shared', 64, 8n, 1)).not.toBe(text);
    for (const r of wl.requests) {
      const p = toPending(r);
      expect(textTokenIds(p.prompt).length).toBe(r.inputLen);
      expect(p.prompt.startsWith(text)).toBe(true);
      expect(p.maxOutputTokens).toBe(r.outputLen);
      expect(p.minTokens).toBe(r.outputLen);
    }
  });
});

describe('observe against blis serve (in-process)', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startServe({ setup: await testSetup(), modelName: TEST_MODEL });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('records one ok row per request with exact token counts, chunk times and a real-mode header', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blis-obs-'));
    const out: string[] = [];
    const args = [
      'observe', '--server-url', srv.url, '--model', TEST_MODEL, '--rate', '40', '--num-requests', '24', '--warmup-requests', '2',
      '--prompt-tokens', '200', '--prompt-tokens-stdev', '100', '--prompt-tokens-min', '10', '--prompt-tokens-max', '500',
      '--output-tokens', '12', '--output-tokens-stdev', '6', '--output-tokens-min', '1', '--output-tokens-max', '30',
      '--trace-header', join(dir, 't.yaml'), '--trace-data', join(dir, 't.csv'), '--record-itl', '--measure-rtt', '--scrape-kv-metrics',
    ];
    const errs: string[] = [];
    expect(await main(args, quietIo(out, errs))).toBe(0);
    const header = parseTraceHeaderYaml(readFileSync(join(dir, 't.yaml'), 'utf8'), 't.yaml');
    expect(header).toMatchObject({ traceVersion: 3, timeUnit: 'us', mode: 'real', warmUpRequests: 2, workloadSeed: 42n });
    // blis serve starts each request at its x-request-start stamp: the send times are its start times, the
    // latencies hold no round trip, so none is recorded for calibrate to add (issue 29), and stderr says why.
    expect(header.network?.measuredRttMs).toBe(0);
    expect(errs.join('\n')).toMatch(/--measure-rtt: measured [\d.]+ ms, recorded 0: the server starts each request at its x-request-start stamp/);
    expect(header.observedKvMetrics?.source).toBe('gpu-prefix-cache-fallback');
    const rows = parseTraceCsv(readFileSync(join(dir, 't.csv'), 'utf8'), 't.csv');
    expect(rows.map((r) => r.requestId)).toEqual(Array.from({ length: 22 }, (_, i) => i + 2));
    const itl = parseItlCsv(readFileSync(join(dir, 't.itl.csv'), 'utf8'), 'itl');
    for (const r of rows) {
      expect(r.status).toBe('ok');
      expect(r.serverInputTokens).toBe(r.inputTokens);
      expect(r.outputTokens).toBeGreaterThan(0);
      expect(r.numChunks).toBe(r.outputTokens + 1);
      expect(r.finishReason).toBe('length');
      expect(r.sendTimeUs).toBeGreaterThanOrEqual(r.arrivalTimeUs);
      expect(r.firstChunkTimeUs).toBeGreaterThan(r.sendTimeUs);
      expect(r.lastChunkTimeUs).toBeGreaterThanOrEqual(r.firstChunkTimeUs);
      expect(r.xRequestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(itl.filter((x) => x.requestId === r.requestId).length).toBe(r.numChunks);
    }
    const summary = JSON.parse(out.join('')) as { observe_metrics: { status_counts: Record<string, number>; completed_requests: number } };
    expect(summary.observe_metrics.status_counts).toEqual({ ok: 22, error: 0, timeout: 0 });
  });

  it('speaks the chat format and the non-streaming form', async () => {
    const stop = new AbortController().signal;
    for (const [apiFormat, noStreaming] of [['chat', false], ['completions', true]] as const) {
      const wl = await buildObserveWorkload({
        workloadSpec: '', specText: '', preset: 'chatbot', rate: 50, numRequests: 6, seed: 1n, seedChanged: true, horizonUs: 0, concurrency: 0, thinkTimeMs: 0, prefixTokens: 0,
        prompt: { mean: 1, stdev: 0, min: 1, max: 1 }, output: { mean: 1, stdev: 0, min: 1, max: 1 },
      });
      const res = await observe({
        serverUrl: srv.url, model: TEST_MODEL, apiKey: '', apiFormat, serverType: 'vllm', workload: { ...wl, requests: wl.requests.map((r) => { r.maxOutputLen = Math.min(r.maxOutputLen, 8); return r; }) },
        maxConcurrency: 8, warmupRequests: 0, noStreaming, unconstrained: false, recordItl: false, timeoutSec: 30, rttMs: 0, measureRtt: false, prewarmUs: 0, scrapeKv: null, goodput: null, stop, warn: () => undefined,
      });
      expect(res.tokensPerWord).toBe(1);
      expect(res.records.map((r) => r.status)).toEqual(Array(6).fill('ok'));
      for (const r of res.records) {
        expect(r.streaming).toBe(!noStreaming);
        expect(r.outputTokens).toBe(8);
        // chat streams a role chunk with the first token
        expect(r.numChunks).toBe(noStreaming ? 1 : apiFormat === 'chat' ? 10 : 9);
      }
    }
  });

  it('--no-streaming through the CLI sends plain JSON requests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blis-ns-'));
    const args = ['observe', '--server-url', srv.url, '--model', TEST_MODEL, '--rate', '50', '--num-requests', '4', '--no-streaming', '--api-format', 'chat',
      '--output-tokens', '6', '--output-tokens-stdev', '0', '--output-tokens-min', '6', '--output-tokens-max', '6', '--trace-header', join(dir, 't.yaml'), '--trace-data', join(dir, 't.csv')];
    expect(await main(args, quietIo())).toBe(0);
    const rows = parseTraceCsv(readFileSync(join(dir, 't.csv'), 'utf8'), 't.csv');
    expect(rows.map((r) => [r.status, r.streaming, r.numChunks, r.outputTokens])).toEqual(Array(4).fill(['ok', false, 1, 6]));
  });

  it('runs --concurrency users as closed-loop sessions: each next round after the previous ends plus the think time', async () => {
    const wl = await buildObserveWorkload({
      workloadSpec: '', specText: '', preset: '', rate: null, numRequests: 12, seed: 3n, seedChanged: true, horizonUs: 0, concurrency: 3, thinkTimeMs: 5, prefixTokens: 0,
      prompt: { mean: 50, stdev: 0, min: 50, max: 50 }, output: { mean: 4, stdev: 0, min: 4, max: 4 },
    });
    expect(wl.requests.length).toBe(3);
    const res = await observe({
      serverUrl: srv.url, model: TEST_MODEL, apiKey: '', apiFormat: 'completions', serverType: 'vllm', workload: wl, maxConcurrency: 3, warmupRequests: 0, noStreaming: false,
      unconstrained: false, recordItl: false, timeoutSec: 30, rttMs: 0, measureRtt: false, prewarmUs: 0, scrapeKv: null, goodput: null, stop: new AbortController().signal, warn: () => undefined,
    });
    expect(res.records.length).toBe(12);
    expect(res.records.every((r) => r.status === 'ok')).toBe(true);
    const bySession = new Map<string, typeof res.records>();
    for (const r of res.records) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), r]);
    expect(bySession.size).toBe(3);
    for (const rounds of bySession.values()) {
      rounds.sort((a, b) => a.roundIndex - b.roundIndex);
      expect(rounds.map((r) => r.roundIndex)).toEqual(rounds.map((_, i) => i));
      for (let i = 1; i < rounds.length; i++) {
        const prev = rounds[i - 1] as (typeof rounds)[0];
        const cur = rounds[i] as (typeof rounds)[0];
        expect(cur.arrivalTimeUs).toBeGreaterThanOrEqual(prev.lastChunkTimeUs + 5000);
        expect(cur.sendTimeUs).toBeGreaterThanOrEqual(cur.arrivalTimeUs);
      }
    }
  });

  it('--think-time-dist draws each user\'s think time from the distribution instead of the constant', async () => {
    const flags = {
      workloadSpec: '', specText: '', preset: '', rate: null, numRequests: 12, seed: 3n, seedChanged: true, horizonUs: 0, concurrency: 3, thinkTimeMs: 0, prefixTokens: 0,
      prompt: { mean: 50, stdev: 0, min: 50, max: 50 }, output: { mean: 4, stdev: 0, min: 4, max: 4 },
    };
    const wl = await buildObserveWorkload({ ...flags, thinkTimeDist: 'constant:value=250ms' });
    expect(wl.sessions.length).toBe(3);
    for (const bp of wl.sessions) expect(bp.thinkTimeSampler?.sample(bp.rng)).toBe(250_000);
    const plain = await buildObserveWorkload(flags);
    for (const bp of plain.sessions) expect(bp.thinkTimeSampler).toBeNull();
  });

  it('continues multi-turn spec sessions, growing the conversation the server sees', async () => {
    const spec = [
      'version: "2"', 'seed: 8', 'aggregate_rate: 20', 'num_requests: 4', 'clients:', '  - id: chat', '    rate_fraction: 1', '    streaming: true',
      '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 64}}',
      '    output_distribution: {type: constant, params: {value: 16}}',
      '    reasoning: {multi_turn: {max_rounds: 3, think_time_us: 20000, context_growth: accumulate}}',
    ].join('\n');
    const wl = await buildObserveWorkload({
      workloadSpec: 'w.yaml', specText: spec, preset: '', rate: null, numRequests: 0, seed: 8n, seedChanged: false, horizonUs: 0, concurrency: 0, thinkTimeMs: 0, prefixTokens: 0,
      prompt: { mean: 1, stdev: 0, min: 1, max: 1 }, output: { mean: 1, stdev: 0, min: 1, max: 1 },
    });
    // num_requests caps the pre-generated rounds (all rounds of every session), so fewer sessions start.
    expect(wl.sessions.length).toBeGreaterThan(0);
    expect(wl.requests.every((r) => r.roundIndex === 0)).toBe(true);
    const res = await observe({
      serverUrl: srv.url, model: TEST_MODEL, apiKey: '', apiFormat: 'chat', serverType: 'vllm', workload: wl, maxConcurrency: 16, warmupRequests: 0, noStreaming: false,
      unconstrained: false, recordItl: false, timeoutSec: 30, rttMs: 0, measureRtt: false, prewarmUs: 0, scrapeKv: null, goodput: null, stop: new AbortController().signal, warn: () => undefined,
    });
    expect(res.records.length).toBe(wl.sessions.length * 3);
    expect(res.records.every((r) => r.status === 'ok')).toBe(true);
    // Round r's prompt is the conversation so far: 64, then 64 + 16 + 64, then + 16 + 64.
    expect(new Set(res.records.map((r) => `${r.roundIndex}:${r.serverInputTokens}`))).toEqual(new Set(['0:64', '1:144', '2:224']));
  });

  it('Ctrl-C stops dispatching, records the requests in flight as errors, and keeps the rest', async () => {
    const wl = await buildObserveWorkload({
      workloadSpec: '', specText: '', preset: '', rate: 100, numRequests: 200, seed: 5n, seedChanged: true, horizonUs: 0, concurrency: 0, thinkTimeMs: 0, prefixTokens: 0,
      prompt: { mean: 50, stdev: 0, min: 50, max: 50 }, output: { mean: 400, stdev: 0, min: 400, max: 400 },
    });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 300);
    const t = performance.now();
    const res = await observe({
      serverUrl: srv.url, model: TEST_MODEL, apiKey: '', apiFormat: 'completions', serverType: 'vllm', workload: wl, maxConcurrency: 256, warmupRequests: 0, noStreaming: false,
      unconstrained: false, recordItl: false, timeoutSec: 30, rttMs: 0, measureRtt: false, prewarmUs: 0, scrapeKv: null, goodput: null, stop: ctl.signal, warn: () => undefined,
    });
    expect(performance.now() - t).toBeLessThan(3000);
    expect(res.records.length).toBeGreaterThan(5);
    expect(res.records.length).toBeLessThan(200);
    expect(res.records.map((r) => r.requestId)).toEqual(res.records.map((_, i) => i));
    expect(res.records.every((r) => r.status === 'error' && r.errorMessage.startsWith('interrupted'))).toBe(true);
    const deadline = Date.now() + 5000;
    while (srv.engine.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(srv.engine.inFlight).toBe(0);
  });
});

describe('observe against a fault-injecting server', () => {
  it('ends every request in exactly one status matching the fault it met', async () => {
    const fs = await startFaultServer(3000);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'blis-fault-'));
      const n = FAULTS.length * 3;
      const args = ['observe', '--server-url', fs.url, '--model', 'm', '--rate', '200', '--num-requests', String(n), '--timeout', '1',
        '--prompt-tokens', '8', '--prompt-tokens-stdev', '0', '--prompt-tokens-min', '8', '--prompt-tokens-max', '8',
        '--output-tokens', '2', '--output-tokens-stdev', '0', '--output-tokens-min', '2', '--output-tokens-max', '2',
        '--trace-header', join(dir, 't.yaml'), '--trace-data', join(dir, 't.csv')];
      const t = performance.now();
      expect(await main(args, quietIo())).toBe(0);
      expect(performance.now() - t).toBeLessThan(10_000);
      const rows = parseTraceCsv(readFileSync(join(dir, 't.csv'), 'utf8'), 't.csv');
      expect(rows.length).toBe(n);
      const expected: Record<Fault, string> = { ok: 'ok', http500: 'error', 'slow-first-byte': 'timeout', 'reset-mid-stream': 'error', 'malformed-sse': 'error', truncated: 'error' };
      const messages: Record<Fault, RegExp> = { ok: /^$/, http500: /^HTTP 500: .*injected failure/, 'slow-first-byte': /^timeout after 1s/, 'reset-mid-stream': /^streaming error: /, 'malformed-sse': /^malformed SSE chunk 2/, truncated: /^truncated stream/ };
      const counts: Record<string, number> = {};
      for (const r of rows) {
        const fault = fs.served.get(r.xRequestId);
        expect(fault, `request ${r.requestId}`).toBeDefined();
        expect(r.status, String(fault)).toBe(expected[fault as Fault]);
        expect(r.errorMessage).toMatch(messages[fault as Fault]);
        counts[r.status] = (counts[r.status] ?? 0) + 1;
      }
      expect(counts).toEqual({ ok: 3, error: 12, timeout: 3 });
    } finally {
      await fs.close();
    }
  });
});

describe('observe flags and KV metrics', () => {
  it('rejects bad flag combinations with one error line and exit 2', async () => {
    const base = ['observe', '--server-url', 'http://127.0.0.1:9', '--model', 'm', '--trace-header', '/tmp/x.yaml', '--trace-data', '/tmp/x.csv'];
    const cases: [string[], RegExp][] = [
      [['observe', '--model', 'm'], /--server-url is required/],
      [[...base], /one of --workload, --workload-spec, --rate or --concurrency is required/],
      [[...base, '--rate', '5', '--record-itl', '--no-streaming', '--num-requests', '3'], /mutually exclusive/],
      [[...base, '--workload', 'chatbot'], /requires --rate/],
      [[...base, '--rate', '5', '--concurrency', '2'], /mutually exclusive/],
      [[...base, '--rate', '5', '--num-requests', '3', '--api-format', 'grpc'], /--api-format must be completions or chat/],
      [[...base, '--rate', '5', '--num-requests', '3', '--timeout', '0'], /--timeout must be between 1 and 86400/],
      [[...base, '--rate', '5'], /--num-requests or --horizon/],
      [[...base, '--concurrency', '2', '--num-requests', '4', '--think-time-dist', 'lognormal:mu=1'], /--think-time-dist "lognormal:mu=1": lognormal requires parameter "sigma"/],
      [[...base, '--concurrency', '2', '--num-requests', '4', '--think-time-dist', 'constant:value=1s', '--think-time-ms', '5'], /mutually exclusive/],
      [[...base, '--rate', '5', '--num-requests', '4', '--think-time-dist', 'constant:value=1s'], /--think-time-dist requires --concurrency/],
    ];
    for (const [args, msg] of cases) {
      const errs: string[] = [];
      expect(await main(args, quietIo([], errs)), args.join(' ')).toBe(2);
      expect(errs.length).toBe(1);
      expect(errs[0]).toMatch(msg);
    }
  });

  it('derives the observed hit rate from counter deltas (tiered first, then the GPU prefix cache)', async () => {
    const { deriveObservedHitRate, parsePromSums } = await import('./prom.js');
    const start = parsePromSums('# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{engine="0"} 100.0\nvllm:prefix_cache_hits_total{engine="0"} 10.0\n');
    const end = parsePromSums('vllm:prefix_cache_queries_total{engine="0"} 300.0\nvllm:prefix_cache_hits_total{engine="0"} 60.0\n');
    expect(deriveObservedHitRate(start, end, 'abc')).toEqual({ source: 'gpu-prefix-cache-fallback', hitRate: 0.25, blockHits: 50, blockQueries: 200, readTimeTotal: 0, writeTimeTotal: 0, vllmCommit: 'abc' });
    const tiered = parsePromSums('vllm:kv_offload_tiering_block_queries_total{tier="cpu"} 30\nvllm:kv_offload_tiering_block_queries_total{tier="disk"} 10\nvllm:kv_offload_tiering_block_hits_total{tier="cpu"} 20\n');
    expect(deriveObservedHitRate(new Map(), tiered, '')).toMatchObject({ source: 'tiered', hitRate: 0.5 });
    expect(deriveObservedHitRate(end, start, '')).toMatch(/went backwards/);
    expect(deriveObservedHitRate(new Map(), new Map(), '')).toMatch(/no prefix-cache counters/);
  });
});
