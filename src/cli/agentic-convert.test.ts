/**
 * Agentic traces end to end: `blis convert otel|weka` writes a TraceV2 pair that `blis replay` runs in every
 * session mode; fixed-accumulate and the session pool change results in the documented direction; bad input
 * and bad flags end as one `error:` line naming the file:line or flag, exit 2.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulate } from '../sim/simulate.js';
import { main } from './main.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string[] }> {
  let out = '';
  const err: string[] = [];
  const code = await main(argv, { stdout: (t) => void (out += t), warn: (t) => void err.push(`warning: ${t}`), error: (t) => void err.push(t) });
  return { code, out, err };
}

const ns = (s: number): string => String(1_750_000_000_000_000_000n + BigInt(Math.round(s * 1e9)));
const attr = (key: string, v: number | string): object => ({ key, value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v } });

/** Six sessions of three calls: call r of session s starts at s·0.2 + r·2 s with prompt 2000 + 600·r tokens and 100 output. */
function otlpCorpus(): string {
  const lines: string[] = [];
  for (let s = 0; s < 6; s++) {
    const spans = [0, 1, 2].map((r) => ({
      traceId: `trace-${s}`, spanId: `s${s}r${r}`, name: 'chat model', startTimeUnixNano: ns(s * 0.2 + r * 2), endTimeUnixNano: ns(s * 0.2 + r * 2 + 1),
      attributes: [attr('gen_ai.conversation.id', `conv-${s}`), attr('gen_ai.operation.name', 'chat'), attr('gen_ai.usage.input_tokens', 2000 + 600 * r), attr('gen_ai.usage.output_tokens', 100)],
    }));
    lines.push(JSON.stringify({ resourceSpans: [{ resource: { attributes: [attr('service.name', 'agent')] }, scopeSpans: [{ scope: { name: 'x' }, spans }] }] }));
  }
  return `${lines.join('\n')}\n`;
}

function dir(): string {
  return mkdtempSync(path.join(tmpdir(), 'blis-agentic-'));
}

interface Row {
  arrived_at: number;
  e2e_ms: number;
  session_id: string;
  num_prefill_tokens: number;
  requestID: string;
}

function rowsOf(metricsJson: string | undefined): Row[] {
  return (JSON.parse(metricsJson!) as { requests: Row[] }).requests;
}

function counted(m: object): number {
  return ['completed_requests', 'still_queued', 'still_running', 'dropped_unservable', 'timed_out_requests'].reduce((a, k) => a + ((m as Record<string, number>)[k] ?? 0), 0);
}

/**
 * Most sessions in flight at once: a session runs from its first arrival to its last request's end (µs). The
 * pool (like closed-loop think times) counts a session ended when its last token is produced; the E2E the
 * reference reports adds the output-token overhead after that (a few ms here), so ends are taken `slackUs` early.
 */
function peakSessions(rows: readonly Row[], slackUs = 10_000): number {
  const span = new Map<string, [number, number]>();
  for (const r of rows) {
    const start = Math.round(r.arrived_at * 1e6);
    const end = start + Math.round(r.e2e_ms * 1e3);
    const cur = span.get(r.session_id);
    span.set(r.session_id, cur === undefined ? [start, end - slackUs] : [Math.min(cur[0], start), Math.max(cur[1], end - slackUs)]);
  }
  // Ends before starts at the same tick: the pool admits the next session at the tick the last one ended.
  const events = [...span.values()].flatMap(([s, e]) => [[s, 1], [e, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let peak = 0;
  for (const [, d] of events) peak = Math.max(peak, (cur += d));
  return peak;
}

describe('blis convert otel → blis replay', () => {
  it('writes the TraceV2 pair (hand-checked rows) and replays it in every mode, every request counted', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'export.jsonl'), otlpCorpus());
    const r = await cli('convert', 'otel', '--input', path.join(d, 'export.jsonl'), '--trace-output', path.join(d, 'agent'));
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(readFileSync(path.join(d, 'agent.yaml'), 'utf8')).toBe('trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\nsession_context_growth: accumulate\n');
    const csv = readFileSync(path.join(d, 'agent.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(1 + 18);
    // Session 1 (rows 3..5): deltas 2000, 2600 − 2000 − 100 = 500, 3200 − 2600 − 100 = 500; arrivals 0, 2 s, 4 s.
    const cols = csv[0]!.split(',');
    const pick = (line: string): string[] => ['request_id', 'session_id', 'round_index', 'input_tokens', 'output_tokens', 'arrival_time_us', 'status'].map((c) => line.split(',')[cols.indexOf(c)]!);
    expect(csv.slice(4, 7).map(pick)).toEqual([
      ['3', 'conv-1', '0', '2000', '100', '0', 'ok'],
      ['4', 'conv-1', '1', '500', '100', '2000000', 'ok'],
      ['5', 'conv-1', '2', '500', '100', '4000000', 'ok'],
    ]);
    const files = { 'a.yaml': readFileSync(path.join(d, 'agent.yaml'), 'utf8'), 'a.csv': readFileSync(path.join(d, 'agent.csv'), 'utf8') };
    const base = { mode: 'replay' as const, model: MODEL, traceHeader: 'a.yaml', traceData: 'a.csv', files, outputs: { metrics: true } };
    for (const extra of [{ sessionMode: 'fixed' as const }, { sessionMode: 'closed-loop' as const }, { sessionMode: 'fixed-accumulate' as const }, { concurrentSessions: 2 }]) {
      const out = await simulate({ ...base, ...extra });
      expect(out.metrics['injected_requests'], JSON.stringify(extra)).toBe(18);
      expect(counted(out.metrics), JSON.stringify(extra)).toBe(18);
      expect(out.metrics['completed_requests'], JSON.stringify(extra)).toBe(18);
    }
  });

  it('fixed-accumulate: recorded arrivals, prompts grown by the previous round\'s input + output, more prefix-cache hits than fixed', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'e.jsonl'), otlpCorpus());
    expect((await cli('convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'a'))).code).toBe(0);
    const files = { 'a.yaml': readFileSync(path.join(d, 'a.yaml'), 'utf8'), 'a.csv': readFileSync(path.join(d, 'a.csv'), 'utf8') };
    const base = { mode: 'replay' as const, model: MODEL, traceHeader: 'a.yaml', traceData: 'a.csv', files, outputs: { metrics: true } };
    const fixed = await simulate({ ...base, sessionMode: 'fixed' });
    const acc = await simulate({ ...base, sessionMode: 'fixed-accumulate' });
    const byId = (rows: Row[]): Map<string, Row> => new Map(rows.map((r) => [r.requestID, r]));
    const f = byId(rowsOf(fixed.files.metrics));
    const a = byId(rowsOf(acc.files.metrics));
    for (let s = 0; s < 6; s++) {
      const ids = [0, 1, 2].map((r) => `request_${s * 3 + r}`);
      // Arrivals: the recorded ones (0, 2 s, 4 s of each session), in both modes.
      expect(ids.map((id) => a.get(id)!.arrived_at)).toEqual([0, 2, 4]);
      expect(ids.map((id) => f.get(id)!.arrived_at)).toEqual([0, 2, 4]);
      // Prompts: fixed reads the deltas (2000, 500, 500); fixed-accumulate rebuilds 2000, 2000 + 100 + 500, 2600 + 100 + 500.
      expect(ids.map((id) => f.get(id)!.num_prefill_tokens)).toEqual([2000, 500, 500]);
      expect(ids.map((id) => a.get(id)!.num_prefill_tokens)).toEqual([2000, 2600, 3200]);
    }
    // The reference prints the KV section only when it has something to say (no hits, no preemptions: none).
    const hit = (m: { report: unknown }): number => (m.report as { kv_cache_metrics?: { cache_hit_rate: number } }).kv_cache_metrics?.cache_hit_rate ?? 0;
    expect(hit(fixed)).toBe(0);
    expect(hit(acc)).toBeGreaterThan(0.4);
  });

  it('--concurrent-sessions N: never more than N sessions in flight, all complete; a smaller pool takes longer', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'e.jsonl'), otlpCorpus());
    expect((await cli('convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'a'))).code).toBe(0);
    const files = { 'a.yaml': readFileSync(path.join(d, 'a.yaml'), 'utf8'), 'a.csv': readFileSync(path.join(d, 'a.csv'), 'utf8') };
    const base = { mode: 'replay' as const, model: MODEL, traceHeader: 'a.yaml', traceData: 'a.csv', files, outputs: { metrics: true } };
    const durations: number[] = [];
    for (const n of [1, 2, 4, 6]) {
      const out = await simulate({ ...base, concurrentSessions: n });
      const rows = rowsOf(out.files.metrics);
      expect(rows).toHaveLength(18);
      expect(new Set(rows.map((r) => r.session_id)).size).toBe(6);
      expect(peakSessions(rows), `pool ${n}`).toBe(n);
      if (n === 1) {
        // One at a time: each session starts after the previous one's last round arrived.
        const starts = [0, 1, 2, 3, 4, 5].map((s) => Math.min(...rows.filter((r) => r.session_id === `conv-${s}`).map((r) => r.arrived_at)));
        const lastArrivals = [0, 1, 2, 3, 4, 5].map((s) => Math.max(...rows.filter((r) => r.session_id === `conv-${s}`).map((r) => r.arrived_at)));
        for (let s = 1; s < 6; s++) expect(starts[s]!).toBeGreaterThan(lastArrivals[s - 1]!);
      }
      expect(out.referenceText).toMatch(/Sessions: 6\n/);
      durations.push(out.metrics['vllm_estimated_duration_s']);
    }
    // A session lasts about 6 s (two 2 s gaps after its rounds' ends, plus service): one at a time ≈ 6 × 6 s;
    // all six at once ≈ 6 s (measured: 37, 18.7, 12.6, 6.5 s).
    expect(durations[0]!).toBeGreaterThan(durations[1]! + 5);
    expect(durations[1]!).toBeGreaterThan(durations[2]!);
    expect(durations[2]!).toBeGreaterThan(durations[3]!);
  });
});

describe('blis convert otel --keep-offsets', () => {
  it('keeps the recorded start of each session (session s starts s · 0.2 s after the first)', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'e.jsonl'), otlpCorpus());
    expect((await cli('convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'k'), '--keep-offsets')).code).toBe(0);
    const csv = readFileSync(path.join(d, 'k.csv'), 'utf8').trim().split('\n');
    const col = csv[0]!.split(',').indexOf('arrival_time_us');
    // Rows 3s..3s+2 are session s: arrivals s · 200,000 + 0, 2,000,000, 4,000,000 µs.
    expect(csv.slice(1).map((l) => Number(l.split(',')[col]))).toEqual([0, 1, 2, 3, 4, 5].flatMap((s) => [0, 2e6, 4e6].map((t) => s * 200_000 + t)));
  });
});

describe('blis convert weka → blis replay', () => {
  it('converts sessions and replays them through a pool', async () => {
    const d = dir();
    const sessions = [0, 1, 2].map((s) => JSON.stringify({ id: `w${s}`, requests: [{ type: 'n', t: 0, in: 800, out: 40, api_time: 0.5 }, { type: 'subagent', t: 1, requests: [] }, { type: 's', t: 3, in: 1000, out: 40, api_time: 0.5 }] }));
    writeFileSync(path.join(d, 'w.jsonl'), `${sessions.join('\n')}\n`);
    const r = await cli('convert', 'weka', '--input', path.join(d, 'w.jsonl'), '--trace-output', path.join(d, 'w'));
    expect(r.code, r.err.join('\n')).toBe(0);
    const csv = readFileSync(path.join(d, 'w.csv'), 'utf8').trim().split('\n');
    const cols = csv[0]!.split(',');
    // Round 1: delta 1000 − 800 − 40 = 160, arrival 3 s, think 3 − 0 − 0.5 = 2.5 s, streaming (type "s").
    const row1 = csv[2]!.split(',');
    expect(['input_tokens', 'arrival_time_us', 'think_time_us', 'streaming'].map((c) => row1[cols.indexOf(c)])).toEqual(['160', '3000000', '2500000', 'true']);
    const rep = await cli('replay', '--trace-header', path.join(d, 'w.yaml'), '--trace-data', path.join(d, 'w.csv'), '--model', MODEL, '--concurrent-sessions', '2', '--log', 'error');
    expect(rep.code, rep.err.join('\n')).toBe(0);
    expect((JSON.parse(rep.out) as { simulation_metrics: Record<string, number> }).simulation_metrics['completed_requests']).toBe(6);
  });
});

describe('blis convert weka reads JSON lines a line at a time', () => {
  it('handles lines longer than its 1 MiB read chunk, and names the line of an error after them', async () => {
    const d = dir();
    // Line 1: a session whose request carries 400,000 block hashes (about 3 MB of JSON), as real Weka lines do.
    const big = JSON.stringify({ id: 'big', requests: [{ type: 'n', t: 0, in: 100, out: 10, api_time: 1, hash_ids: Array.from({ length: 400_000 }, (_, i) => i) }] });
    expect(big.length).toBeGreaterThan(2 * (1 << 20));
    const small = JSON.stringify({ id: 'small', requests: [{ type: 'n', t: 1, in: 50, out: 5 }] });
    writeFileSync(path.join(d, 'w.jsonl'), `${big}\r\n\n${small}\n`);
    const ok = await cli('convert', 'weka', '--input', path.join(d, 'w.jsonl'), '--trace-output', path.join(d, 'o'));
    expect(ok.code, ok.err.join('\n')).toBe(0);
    expect(readFileSync(path.join(d, 'o.csv'), 'utf8').trim().split('\n')).toHaveLength(3);
    writeFileSync(path.join(d, 'bad.jsonl'), `${big}\n\n${small.replace('"in":50', '"in":-50')}\n`);
    const bad = await cli('convert', 'weka', '--input', path.join(d, 'bad.jsonl'), '--trace-output', path.join(d, 'o'));
    expect([bad.code, bad.err.length]).toEqual([2, 1]);
    expect(bad.err[0]).toMatch(/bad\.jsonl:3: in: must be >= 0, got -50/);
    writeFileSync(path.join(d, 'bin.jsonl'), Buffer.concat([Buffer.from(`${small}\n`), Buffer.from([0xff, 0xfe, 0x0a])]));
    const bin = await cli('convert', 'weka', '--input', path.join(d, 'bin.jsonl'), '--trace-output', path.join(d, 'o'));
    expect([bin.code, bin.err.length]).toEqual([2, 1]);
    expect(bin.err[0]).toMatch(/bin\.jsonl:2: is not UTF-8 text/);
  });
});

describe('bad input and bad flags: one error line, exit 2', () => {
  it('names the file:line and field of a bad trace', async () => {
    const d = dir();
    const good = otlpCorpus().split('\n')[0]!;
    const noOut = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 't', spanId: 'x', name: 'chat m', startTimeUnixNano: ns(1), attributes: [attr('gen_ai.usage.input_tokens', 5)] }] }] }] });
    writeFileSync(path.join(d, 'bad.jsonl'), `${good}\n${noOut}\n`);
    const r = await cli('convert', 'otel', '--input', path.join(d, 'bad.jsonl'), '--trace-output', path.join(d, 'o'));
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/bad\.jsonl:2: gen_ai\.usage\.output_tokens: the LLM call "chat m" has no gen_ai\.usage\.output_tokens/);
    writeFileSync(path.join(d, 'neg.jsonl'), `${JSON.stringify({ id: 'a', requests: [{ type: 'n', t: -2, in: 1, out: 1 }] })}\n`);
    const w = await cli('convert', 'weka', '--input', path.join(d, 'neg.jsonl'), '--trace-output', path.join(d, 'o'));
    expect([w.code, w.err.length]).toEqual([2, 1]);
    expect(w.err[0]).toMatch(/neg\.jsonl:1: t: must be >= 0, got -2/);
  });

  it('refuses bad converter flags', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'e.jsonl'), otlpCorpus());
    const args = ['convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'o')];
    for (const [extra, msg] of [
      [['--context-growth', 'grow'], /^--context-growth must be accumulate or independent, got "grow"/],
      [['--min-rounds', '0'], /^--min-rounds must be >= 1, got 0/],
      [['--max-think-time', '-1s'], /^--max-think-time must be >= 0, got "-1s"/],
      [['--max-think-time', 'soon'], /^--max-think-time must be a duration such as 15s/],
    ] as const) {
      const r = await cli(...args, ...extra);
      expect([r.code, r.err.length], extra.join(' ')).toEqual([2, 1]);
      expect(r.err[0]).toMatch(msg);
    }
    const none = await cli('convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'o'), '--min-rounds', '4');
    expect(none.code).toBe(2);
    expect(none.err.at(-1)).toMatch(/no usable session found/);
  });

  it('refuses bad replay flags', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'e.jsonl'), otlpCorpus());
    expect((await cli('convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'a'), '--context-growth', 'independent')).code).toBe(0);
    const replay = ['replay', '--trace-header', path.join(d, 'a.yaml'), '--trace-data', path.join(d, 'a.csv'), '--model', MODEL];
    for (const [extra, msg] of [
      [['--concurrent-sessions', '-1'], /--concurrent-sessions must be >= 0/],
      [['--concurrent-sessions', '2', '--session-mode', 'fixed'], /--concurrent-sessions .* needs --session-mode closed-loop/],
      [['--concurrent-sessions', '2', '--trace-output', path.join(d, 'x')], /--trace-output cannot record a --concurrent-sessions replay/],
      [['--session-mode', 'fixed-accumulate'], /fixed-accumulate needs a trace whose header says session_context_growth: accumulate/],
      [['--session-mode', 'accumulate'], /--session-mode/],
    ] as const) {
      const r = await cli(...replay, ...extra);
      expect([r.code, r.err.filter((l) => !l.startsWith('warning')).length], extra.join(' ')).toEqual([2, 1]);
      expect(r.err.find((l) => !l.startsWith('warning'))).toMatch(msg);
    }
  });
});

describe('blis run --concurrent-sessions (a spec\'s multi-turn sessions)', () => {
  const spec = [
    'version: "2"', 'seed: 8', 'aggregate_rate: 20', 'num_requests: 8', 'clients:', '  - id: chat', '    rate_fraction: 1',
    '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 256}}',
    '    output_distribution: {type: constant, params: {value: 32}}',
    '    reasoning: {multi_turn: {max_rounds: 3, think_time_us: 500000, context_growth: accumulate}}',
  ].join('\n');
  const base = { mode: 'run' as const, model: MODEL, workloadSpec: 'w.yaml', files: { 'w.yaml': spec }, outputs: { metrics: true } };

  it('keeps at most N sessions in flight, runs the same requests, and takes longer than without a pool', async () => {
    const free = await simulate(base);
    const pooled = await simulate({ ...base, concurrentSessions: 2 });
    const freeRows = rowsOf(free.files.metrics);
    const rows = rowsOf(pooled.files.metrics);
    expect(rows).toHaveLength(freeRows.length);
    expect(new Set(rows.map((r) => r.session_id))).toEqual(new Set(freeRows.map((r) => r.session_id)));
    expect(counted(pooled.metrics)).toBe(pooled.metrics['injected_requests']);
    expect(peakSessions(freeRows)).toBeGreaterThan(2);
    expect(peakSessions(rows)).toBe(2);
    expect(pooled.metrics['vllm_estimated_duration_s']).toBeGreaterThan((free.metrics['vllm_estimated_duration_s']) + 1);
  });

  it('refuses a negative pool and --concurrency users', async () => {
    await expect(simulate({ ...base, concurrentSessions: -2 })).rejects.toThrow(/^concurrentSessions must be >= 0/);
    await expect(simulate({ mode: 'run', model: MODEL, concurrency: 2, numRequests: 4, concurrentSessions: 2 })).rejects.toThrow(/concurrent-?[sS]essions pools a workload spec's multi-turn sessions/);
  });
});

describe('blis replay --total-sessions', () => {
  it('replays L sessions through the pool: the corpus, then copies of it', async () => {
    const d = dir();
    writeFileSync(path.join(d, 'e.jsonl'), otlpCorpus());
    expect((await cli('convert', 'otel', '--input', path.join(d, 'e.jsonl'), '--trace-output', path.join(d, 'a'))).code).toBe(0);
    const files = { 'a.yaml': readFileSync(path.join(d, 'a.yaml'), 'utf8'), 'a.csv': readFileSync(path.join(d, 'a.csv'), 'utf8') };
    const base = { mode: 'replay' as const, model: MODEL, traceHeader: 'a.yaml', traceData: 'a.csv', files, outputs: { metrics: true } };
    const more = await simulate({ ...base, concurrentSessions: 2, totalSessions: 9 });
    const rows = rowsOf(more.files.metrics);
    // 9 sessions of 3 rounds; copies conv-0_dup1 .. conv-2_dup3 after the six originals.
    expect(rows).toHaveLength(27);
    expect([...new Set(rows.map((r) => r.session_id))].sort()).toEqual(['conv-0', 'conv-0_dup1', 'conv-1', 'conv-1_dup2', 'conv-2', 'conv-2_dup3', 'conv-3', 'conv-4', 'conv-5']);
    expect(peakSessions(rows)).toBe(2);
    // A copy's round 0 carries one busting token: 2001 prompt tokens; closed loop then appends the output the
    // round produced (99 of 100: the reference ends a request one token before its KV end) and the 500-token turn:
    // 2001 + 99 + 500 = 2600, 2600 + 99 + 500 = 3199 (the source: 2000, 2599, 3198).
    expect(rows.filter((r) => r.session_id === 'conv-1_dup2').map((r) => r.num_prefill_tokens).sort((x, y) => x - y)).toEqual([2001, 2600, 3199]);
    expect(rows.filter((r) => r.session_id === 'conv-1').map((r) => r.num_prefill_tokens).sort((x, y) => x - y)).toEqual([2000, 2599, 3198]);
    // Under --semantics corrected too the rows are new input (the format's convention): the prompts grow as in
    // the reference mode (they grew by 99 tokens only, 2000/2099/2198, when corrected read rows as whole prompts).
    const corrected = rowsOf((await simulate({ ...base, sessionMode: 'closed-loop', semantics: 'corrected' })).files.metrics);
    expect(corrected.filter((r) => r.session_id === 'conv-1').map((r) => r.num_prefill_tokens).sort((x, y) => x - y)).toEqual([2000, 2599, 3198]);
    const fewer = await simulate({ ...base, concurrentSessions: 2, totalSessions: 3 });
    expect(fewer.metrics['completed_requests']).toBe(9);
    await expect(simulate({ ...base, totalSessions: 3 })).rejects.toThrow(/^totalSessions sizes a session pool; give concurrentSessions too/);
    await expect(simulate({ ...base, concurrentSessions: 4, totalSessions: 3 })).rejects.toThrow(/^totalSessions 3 is below concurrentSessions 4/);
  });
});
