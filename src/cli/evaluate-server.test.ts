/**
 * The GEPA evaluation-server protocol over loopback, with a fake evaluator (no simulation): every endpoint,
 * budget accounting and exhaustion, bad input, oversized bodies, serialized concurrency and port release.
 */
import { connect, createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Candidate, EvaluationResult, Scenario, Suite } from '../evaluate/types.js';
import { candidateId, exampleId, serveEvaluationUntilSignal, slimResult, startEvaluationServer, suiteExamples, type EvalServerOptions, type EvaluationServer, type ExampleRef } from './evaluate-server.js';

const scenario = (name: string, seeds: number[]): Scenario => ({ name, description: name, config: {}, files: {}, seeds, holdoutSeeds: [], weight: 1, slo: {} });

const SUITE: Suite = {
  name: 'fake-suite',
  description: 'a suite for the server tests',
  stage1: [scenario('smoke', [101])],
  stage2: [scenario('steady', [1, 2]), scenario('tight', [3])],
  objectives: [{ name: 'slo', metric: 'slo_attainment', direction: 'maximize', weight: 1, normalization: { kind: 'linear', best: 1, worst: 0 } }],
  stage1Threshold: 0.05,
  constraints: [],
  defaults: {},
  baseline: null,
  knownGood: [],
  knownBad: [],
  load: null,
};

const CONTROL_POINTS = new Set(['bundle', 'admission', 'priority', 'routing', 'scheduler', 'autoscale']);

function fromComponents(c: Record<string, string>, id: string): Candidate {
  for (const k of Object.keys(c)) if (!CONTROL_POINTS.has(k)) throw new Error(`unknown component "${k}"`);
  return { id, label: id, bundle: c.bundle ?? JSON.stringify(c), files: {} };
}

interface Call {
  readonly candidate: Candidate;
  readonly only: readonly ExampleRef[] | null;
  readonly stage?: 1 | 2 | undefined;
}

/** A fake result: the score is the text's length mod 10 / 10 (+ the seed / 1000), 'FAIL' fails, 'THROW' throws. */
function fakeEvaluate(calls: Call[], gate?: () => Promise<void>): EvalServerOptions['evaluate'] {
  return async (candidate, only, stage) => {
    calls.push({ candidate, only, stage });
    if (gate) await gate();
    if (candidate.bundle.includes('THROW')) throw new Error('evaluator exploded');
    const seed = only?.[0]?.seed ?? 0;
    const failed = candidate.bundle.includes('FAIL');
    const score = failed ? 0 : (candidate.bundle.length % 10) / 10 + seed / 1000;
    const runs = only ?? suiteExamples(SUITE);
    const result: EvaluationResult = {
      combined_score: score,
      combined_score_se: null,
      combined_score_ci95: null,
      constraints: {},
      objectives: { slo: score },
      scores: { slo: score },
      features: { cache_affinity: 0.5 },
      scenarios: runs.map((r) => ({
        scenario: r.scenario,
        seed: r.seed,
        key: { policy_id: candidate.id, workload_seed: r.seed, sim_seed: r.seed, jitter_seed: 0 },
        metrics: { slo_attainment: score },
        objectives: { slo: score },
        scores: { slo: score },
        score,
        objective_score: score,
        constraint_factor: 1,
        constraints: [],
        anomalies: {},
        requests: [{ id: 1 }, { id: 2 }],
      }) as EvaluationResult['scenarios'][number]),
      artifacts: { summary: `summary of ${candidate.id}`, worst_decisions: 'none' },
      candidate: { id: candidate.id, hash: 'h' },
      suite: { name: SUITE.name, stage: 2, stages_run: [1, 2] },
      blis_version: 'test',
      ...(failed ? { error: { code: 'SANDBOX_SYNTAX', message: 'Unexpected token at routing.js:1:5' } } : {}),
    };
    return result;
  };
}

let servers: EvaluationServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function start(over: Partial<EvalServerOptions> = {}, calls: Call[] = []): Promise<EvaluationServer> {
  const s = await startEvaluationServer({ suite: SUITE, budget: 10, evaluate: fakeEvaluate(calls), candidateFromComponents: fromComponents, ...over });
  servers.push(s);
  return s;
}

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function get(url: string, path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const ROUTE = { routing: 'function route(request, state) { return 0; }' };

describe('evaluation server (GEPA protocol)', () => {
  it('binds to loopback on an ephemeral port', async () => {
    const s = await start();
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('GET /task describes the suite, its examples, objectives and the candidate format', async () => {
    const s = await start();
    const { status, json } = await get(s.url, '/task');
    expect(status).toBe(200);
    expect(json.suite).toBe('fake-suite');
    expect(json.description).toBe(SUITE.description);
    expect(json.examples).toEqual(['steady@1', 'steady@2', 'tight@3']);
    expect(json.objectives).toEqual([{ name: 'slo', metric: 'slo_attainment', direction: 'maximize', weight: 1, normalization: { kind: 'linear', best: 1, worst: 0 } }]);
    expect(String(json.candidate_format)).toContain('route(request, state)');
    expect(json.has_dataset).toBe(true);
    expect(json.train_size).toBe(3);
  });

  it('GET /status reports the budget and the example count', async () => {
    const s = await start({ budget: 7 });
    const { status, json } = await get(s.url, '/status');
    expect(status).toBe(200);
    expect(json).toMatchObject({ suite: 'fake-suite', examples: 3, best_score: null, budget: { used: 0, total: 7, remaining: 7, exhausted: false, max_evals: 7, remaining_evals: 7 } });
    expect(json.runs).toBeUndefined();
    const counted = await start({ runStats: () => ({ simulated: 5, remembered: 2 }) });
    expect((await get(counted.url, '/status')).json.runs).toEqual({ simulated: 5, remembered: 2 });
  });

  it('POST /evaluate with an example id evaluates that example and charges 1', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    const { status, json } = await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@2' });
    expect(status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.only).toEqual([{ scenario: 'steady', seed: 2 }]);
    expect(calls[0]!.candidate.id).toBe(candidateId(ROUTE));
    const info = json.info as Record<string, unknown>;
    expect(json.score).toBe(info.combined_score);
    expect(info.feedback).toBe(`summary of ${candidateId(ROUTE)}`);
    expect(info.features).toEqual({ cache_affinity: 0.5 });
    expect((info.scenarios as Record<string, unknown>[])[0]).not.toHaveProperty('requests');
    expect(json.budget).toMatchObject({ used: 1, total: 10, remaining: 9 });
  });

  it('POST /evaluate without an example id evaluates the whole suite and charges every example', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    const { status, json } = await post(s.url, '/evaluate', { candidate: ROUTE });
    expect(status).toBe(200);
    expect(calls[0]!.only).toBeNull();
    expect(json.budget).toMatchObject({ used: 3, remaining: 7 });
  });

  it('POST /evaluate with stage 1 evaluates the smoke stage and charges its runs; stage 2 is the cascade', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    const one = await post(s.url, '/evaluate', { candidate: ROUTE, stage: 1 });
    expect(one.status).toBe(200);
    expect(calls[0]).toMatchObject({ only: null, stage: 1 });
    expect(one.json.budget).toMatchObject({ used: 1 });
    const two = await post(s.url, '/evaluate', { candidate: ROUTE, stage: 2 });
    expect(two.status).toBe(200);
    expect(calls[1]).toMatchObject({ only: null, stage: 2 });
    expect(two.json.budget).toMatchObject({ used: 4 });
    for (const bad of [{ stage: 3 }, { stage: '1' }, { stage: 1, example_id: 'steady@1' }]) {
      const r = await post(s.url, '/evaluate', { candidate: ROUTE, ...bad });
      expect(r.status).toBe(400);
      expect(String(r.json.error)).toMatch(/stage/);
    }
    expect(calls).toHaveLength(2);
  });

  it('a string candidate is a bundle text', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    const { status } = await post(s.url, '/evaluate', { candidate: 'routing: {type: parameterized, template: least_loaded_routing}', example_id: 'tight@3' });
    expect(status).toBe(200);
    expect(calls[0]!.candidate.bundle).toContain('least_loaded_routing');
  });

  it('a failed candidate is a 200 with score 0, the error and feedback naming it', async () => {
    const s = await start();
    const { status, json } = await post(s.url, '/evaluate', { candidate: { routing: 'FAIL (' }, example_id: 'steady@1' });
    expect(status).toBe(200);
    expect(json.score).toBe(0);
    const info = json.info as Record<string, unknown>;
    expect(info.error).toEqual({ code: 'SANDBOX_SYNTAX', message: 'Unexpected token at routing.js:1:5' });
    expect(String(info.feedback)).toContain('SANDBOX_SYNTAX');
    expect(json.budget).toMatchObject({ used: 1 });
  });

  it('an evaluator that throws is a 500 (and the attempt is charged)', async () => {
    const s = await start();
    const { status, json } = await post(s.url, '/evaluate', { candidate: { routing: 'THROW' }, example_id: 'steady@1' });
    expect(status).toBe(500);
    expect(String(json.error)).toContain('evaluator exploded');
    expect(json.budget).toMatchObject({ used: 1 });
    expect((await get(s.url, '/status')).status).toBe(200);
  });

  it('POST /evaluate_examples evaluates each example once, in order, charging one each', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    const { status, json } = await post(s.url, '/evaluate_examples', { candidate: ROUTE, example_ids: ['tight@3', 'steady@1'] });
    expect(status).toBe(200);
    const results = json.results as { example_id: string; score: number; info: Record<string, unknown> }[];
    expect(results.map((r) => r.example_id)).toEqual(['tight@3', 'steady@1']);
    expect(calls.map((c) => c.only)).toEqual([[{ scenario: 'tight', seed: 3 }], [{ scenario: 'steady', seed: 1 }]]);
    expect(results[0]!.score).toBeCloseTo((JSON.stringify(ROUTE).length % 10) / 10 + 0.003, 12);
    expect(json.scores).toEqual({ 'tight@3': results[0]!.score, 'steady@1': results[1]!.score });
    expect(json.average_score).toBeCloseTo((results[0]!.score + results[1]!.score) / 2, 12);
    expect(json.num_evaluated).toBe(2);
    expect(json.errors).toEqual({});
    expect(json.budget).toMatchObject({ used: 2, remaining: 8 });
  });

  it('POST /evaluate_examples without ids evaluates every example', async () => {
    const s = await start();
    const { status, json } = await post(s.url, '/evaluate_examples', { candidate: ROUTE });
    expect(status).toBe(200);
    expect((json.results as { example_id: string }[]).map((r) => r.example_id)).toEqual(['steady@1', 'steady@2', 'tight@3']);
    expect(json.budget).toMatchObject({ used: 3 });
  });

  it('POST /validate checks without charging the budget', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    expect(await post(s.url, '/validate', { candidate: ROUTE })).toEqual({ status: 200, json: { valid: true } });
    const bad = await post(s.url, '/validate', { candidate: { routing: 'FAIL (' } });
    expect(bad.status).toBe(200);
    expect(bad.json.valid).toBe(false);
    expect(String(bad.json.error)).toContain('SANDBOX_SYNTAX');
    const unknown = await post(s.url, '/validate', { candidate: { nonsense: 'x' } });
    expect(unknown.json).toEqual({ valid: false, error: 'unknown component "nonsense"' });
    expect((await get(s.url, '/status')).json.budget).toMatchObject({ used: 0 });
  });

  it('POST /validate uses the validate hook when given', async () => {
    const calls: Call[] = [];
    const s = await start({ validate: (c) => Promise.resolve(c.bundle.includes('bad') ? { valid: false, error: 'nope' } : { valid: true }) }, calls);
    expect((await post(s.url, '/validate', { candidate: { routing: 'bad' } })).json).toEqual({ valid: false, error: 'nope' });
    expect((await post(s.url, '/validate', { candidate: { routing: 'good' } })).json).toEqual({ valid: true });
    expect(calls).toHaveLength(0);
  });

  it('answers 429 once the budget is spent, and when a request needs more than remains', async () => {
    const s = await start({ budget: 3 });
    expect((await post(s.url, '/evaluate_examples', { candidate: ROUTE, example_ids: ['steady@1', 'steady@2'] })).status).toBe(200);
    const tooMany = await post(s.url, '/evaluate_examples', { candidate: ROUTE, example_ids: ['steady@1', 'steady@2'] });
    expect(tooMany.status).toBe(429);
    expect(String(tooMany.json.error)).toContain('1 remaining, 2 needed');
    expect((await post(s.url, '/evaluate', { candidate: ROUTE })).status).toBe(429);
    expect((await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'tight@3' })).status).toBe(200);
    const spent = await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'tight@3' });
    expect(spent.status).toBe(429);
    expect(spent.json.budget).toMatchObject({ used: 3, remaining: 0, exhausted: true });
    expect((await post(s.url, '/validate', { candidate: ROUTE })).status).toBe(200);
  });

  it('answers 400 for unknown ids, malformed JSON and bad candidate shapes, without charging', async () => {
    const s = await start();
    const cases: [string, unknown][] = [
      ['/evaluate', { candidate: ROUTE, example_id: 'steady@9' }],
      ['/evaluate', { candidate: ROUTE, example_id: 3 }],
      ['/evaluate_examples', { candidate: ROUTE, example_ids: ['steady@1', 'nope'] }],
      ['/evaluate_examples', { candidate: ROUTE, example_ids: 'steady@1' }],
      ['/evaluate_examples', { candidate: ROUTE, example_ids: [] }],
      ['/evaluate', '{"candidate": '],
      ['/evaluate', '[1, 2]'],
      ['/evaluate', 'null'],
      ['/evaluate', {}],
      ['/evaluate', { candidate: 42 }],
      ['/evaluate', { candidate: ['x'] }],
      ['/evaluate', { candidate: {} }],
      ['/evaluate', { candidate: { routing: 7 } }],
      ['/evaluate', { candidate: { nonsense: 'x' } }],
      ['/validate', { candidate: null }],
    ];
    for (const [path, body] of cases) {
      const { status, json } = await post(s.url, path, body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(typeof json.error).toBe('string');
    }
    expect((await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@9' })).json.error).toContain('steady@1');
    expect((await get(s.url, '/status')).json.budget).toMatchObject({ used: 0 });
  });

  it('answers 404 for an unknown path and 405 for a wrong method', async () => {
    const s = await start();
    expect((await get(s.url, '/nope')).status).toBe(404);
    expect((await post(s.url, '/nope', {})).status).toBe(404);
    const wrong = await fetch(`${s.url}/evaluate`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect((await post(s.url, '/status', {})).status).toBe(405);
    expect((await fetch(`${s.url}/task`, { method: 'DELETE' })).status).toBe(405);
    expect((await get(s.url, '/status?verbose=1')).status).toBe(200);
  });

  it('answers 413 for a body over 1 MiB and keeps serving', async () => {
    const calls: Call[] = [];
    const s = await start({}, calls);
    const big = JSON.stringify({ candidate: { routing: 'x'.repeat(1024 * 1024 + 10) } });
    const { status, json } = await post(s.url, '/evaluate', big);
    expect(status).toBe(413);
    expect(String(json.error)).toContain('1048576');
    expect(calls).toHaveLength(0);
    expect((await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@1' })).status).toBe(200);
  });

  it('survives garbage on the wire and a client that hangs up mid-body', async () => {
    const s = await start();
    const { hostname, port } = new URL(s.url);
    const raw = (text: string, end: boolean): Promise<string> => new Promise((resolve) => {
      const sock = connect(Number(port), hostname, () => {
        sock.write(text);
        if (end) sock.end();
        else setTimeout(() => sock.destroy(), 20);
      });
      let got = '';
      sock.on('data', (d: Buffer) => (got += d.toString('utf8')));
      sock.on('close', () => resolve(got));
      sock.on('error', () => resolve(got));
    });
    expect(await raw('NOT HTTP AT ALL\r\n\r\n', true)).toMatch(/^HTTP\/1\.1 400/);
    await raw('POST /evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"candidate":', false);
    expect((await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@1' })).status).toBe(200);
  });

  it('serves concurrent requests one at a time, charging each', async () => {
    let active = 0;
    let maxActive = 0;
    const calls: Call[] = [];
    const gate = async (): Promise<void> => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, 20));
      active -= 1;
    };
    const s = await start({ evaluate: fakeEvaluate(calls, gate) }, calls);
    const replies = await Promise.all([
      post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@1' }),
      post(s.url, '/evaluate_examples', { candidate: ROUTE, example_ids: ['steady@2', 'tight@3'] }),
      post(s.url, '/evaluate', { candidate: { routing: 'other' }, example_id: 'tight@3' }),
      post(s.url, '/validate', { candidate: ROUTE }),
    ]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(maxActive).toBe(1);
    expect(calls).toHaveLength(5);
    expect((await get(s.url, '/status')).json.budget).toMatchObject({ used: 4 });
    // Same candidate, same example → same score, whatever the interleaving.
    expect(replies[0].json.score).toBe((await post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@1' })).json.score);
  });

  it('close() releases the port and is idempotent', async () => {
    const s = await startEvaluationServer({ suite: SUITE, budget: 1, evaluate: fakeEvaluate([]), candidateFromComponents: fromComponents });
    const port = Number(new URL(s.url).port);
    expect((await get(s.url, '/status')).status).toBe(200);
    await s.close();
    await s.close();
    await new Promise<void>((resolve, reject) => {
      const probe = createNetServer();
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
    await expect(fetch(`${s.url}/status`)).rejects.toThrow();
  });

  it('close() lets the running evaluation finish and answers 503 to the queued ones', async () => {
    let release: () => void = () => undefined;
    const started = new Promise<void>((r) => {
      release = r;
    });
    let unblock: () => void = () => undefined;
    const blocked = new Promise<void>((r) => {
      unblock = r;
    });
    const gate = async (): Promise<void> => {
      release();
      await blocked;
    };
    const s = await startEvaluationServer({ suite: SUITE, budget: 5, evaluate: fakeEvaluate([], gate), candidateFromComponents: fromComponents });
    const first = post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@1' });
    await started;
    const second = post(s.url, '/evaluate', { candidate: ROUTE, example_id: 'steady@2' });
    await new Promise((r) => setTimeout(r, 50));
    const closing = s.close();
    unblock();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(503);
    await closing;
  });

  it('serveEvaluationUntilSignal prints the URL first and stops when told', async () => {
    const lines: string[] = [];
    let stop: () => void = () => undefined;
    const until = new Promise<void>((r) => {
      stop = r;
    });
    const done = serveEvaluationUntilSignal({ suite: SUITE, budget: 1, evaluate: fakeEvaluate([]), candidateFromComponents: fromComponents }, (l) => lines.push(l), until);
    while (lines.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(lines[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const url = lines[0]!.slice('listening on '.length).trim();
    expect((await get(url, '/status')).status).toBe(200);
    stop();
    await done;
  });

  it('slimResult keeps the documented fields and cuts long artifacts', () => {
    const r = {
      combined_score: 0.5, objectives: {}, scores: {}, features: {}, scenarios: [], candidate: { id: 'c', hash: 'h' },
      suite: { name: 's', stage: 1, stages_run: [1] }, blis_version: 'v', artifacts: { summary: 'y'.repeat(40_000) }, requests: [1, 2, 3], note: 'kept',
    } as unknown as EvaluationResult;
    const info = slimResult(r);
    expect(info).not.toHaveProperty('requests');
    expect(info.note).toBe('kept');
    expect(String((info.artifacts as Record<string, string>).summary).length).toBeLessThan(33_000);
    expect(exampleId({ scenario: 'a', seed: 4 })).toBe('a@4');
  });
});
