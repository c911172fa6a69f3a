import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { BlisError } from '../domain/errors.js';
import { ConfigError } from './config-error.js';
import { simulate, type SimulationConfig, type SimulationProgress } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';

async function cli(argv: string[]): Promise<string> {
  let out = '';
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => (out += `ERR ${t}`) });
  expect(code).toBe(0);
  return out;
}

async function rejection(p: Promise<unknown>): Promise<BlisError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BlisError);
    return e as BlisError;
  }
  throw new Error('expected a rejection');
}

describe('simulate (library API)', () => {
  it('gives the same bytes as the CLI for the same options', async () => {
    const argv = ['run', '--model', MODEL, '--num-requests', '60', '--rate', '8', '--num-instances', '2',
      '--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2', '--prefix-tokens', '64', '--seed', '9'];
    const viaCli = await cli([...argv, '--output-format', 'reference']);
    const r = await simulate({
      mode: 'run', model: MODEL, numRequests: 60, rate: 8, numInstances: 2,
      routingPolicy: 'weighted', routingScorers: 'prefix-affinity:3,queue-depth:2', prefixTokens: 64, seed: 9,
    });
    expect(r.referenceText).toBe(viaCli);
    expect(r.metrics.completed_requests).toBe(60);
    expect(r.report.instances).toHaveLength(2);
    expect(JSON.stringify(r.report)).toBe(JSON.stringify(JSON.parse(await cli(argv))));
  });

  it('reads option-named files from config.files, never the disk', async () => {
    const spec = [
      'version: "2"', 'seed: 5', 'aggregate_rate: 4', 'num_requests: 20', 'clients:', '  - id: a', '    rate_fraction: 1',
      '    arrival: {process: poisson}', '    input_distribution: {type: constant, params: {value: 100}}',
      '    output_distribution: {type: constant, params: {value: 20}}',
    ].join('\n');
    const r = await simulate({ mode: 'run', model: MODEL, workloadSpec: 'w.yaml', files: { 'w.yaml': spec } });
    expect(r.metrics.completed_requests).toBe(20);
    const e = await rejection(simulate({ mode: 'run', model: MODEL, workloadSpec: 'missing.yaml' }));
    expect(e.message).toMatch(/^workloadSpec: "missing.yaml" is not in config.files/);
  });

  it('rejects unknown keys, wrong types and unknown enum values, naming the key', async () => {
    // @ts-expect-error -- a misspelled key does not type-check
    const unknown = await rejection(simulate({ mode: 'run', model: 'x', numRequest: 5 }));
    expect(unknown).toBeInstanceOf(ConfigError);
    expect(unknown.message).toBe('invalid simulation config: numRequest: unknown key; did you mean "numRequests"?');
    expect(unknown.field).toBe('numRequest');
    // @ts-expect-error -- a string where a number belongs
    const wrongType = await rejection(simulate({ mode: 'run', model: 'x', rate: 'fast' }));
    expect(wrongType.message).toMatch(/^invalid simulation config: rate: /);
    // @ts-expect-error -- not one of the schedulers
    const badEnum = await rejection(simulate({ mode: 'run', model: 'x', scheduler: 'lifo' }));
    expect(badEnum.message).toBe('invalid simulation config: scheduler: unknown scheduler "lifo"; valid: fcfs, priority-fcfs, sjf, reverse-priority');
    // @ts-expect-error -- a replay option in run mode
    const wrongMode = await rejection(simulate({ mode: 'run', model: 'x', traceHeader: 'h.yaml' }));
    expect(wrongMode.message).toMatch(/traceHeader: unknown key/);
  });

  it('names config keys, not CLI flags, in errors raised deep inside (one translation at the edge)', async () => {
    const e1 = await rejection(simulate({ mode: 'run', model: MODEL, numInstances: 0 }));
    expect(e1.code).toBe('bad-flag');
    expect(e1.message).toBe('numInstances must be > 0, got 0');
    const e2 = await rejection(simulate({ mode: 'run', model: MODEL, concurrency: 4, rate: 3 }));
    expect(e2.message).toBe('concurrency and rate are mutually exclusive; use one or the other');
    const e3 = await rejection(simulate({ mode: 'run', model: MODEL, latencyModel: 'roofline', hardware: 'H100', tp: 1, dp: 2 }));
    expect(e3.message).not.toMatch(/--/);
    expect(e3.message).toMatch(/\bdp\b.*\blatencyModel\b/);
  });

  it('never ignores an option that writes a file: rejects it and returns the content on request', async () => {
    // @ts-expect-error -- file-writing options are not library keys
    const e = await rejection(simulate({ mode: 'run', model: MODEL, metricsPath: 'm.json' }));
    expect(e.message).toBe('metricsPath: the library writes no files; pass outputs: { metrics: true } and read result.files.metrics');
    expect(e.field).toBe('metricsPath');
    // @ts-expect-error -- likewise
    expect((await rejection(simulate({ mode: 'run', model: MODEL, traceOutput: 't' }))).message).toMatch(/^traceOutput: .*outputs: \{ trace: true \}/);

    const plain = await simulate({ mode: 'run', model: MODEL, numRequests: 30, rate: 5 });
    expect(plain.files).toEqual({});
    const withFile = await simulate({ mode: 'run', model: MODEL, numRequests: 30, rate: 5, outputs: { metrics: true } });
    const path = join(mkdtempSync(join(tmpdir(), 'blis-lib-')), 'm.json');
    await cli(['run', '--model', MODEL, '--num-requests', '30', '--rate', '5', '--metrics-path', path]);
    expect(withFile.files.metrics).toBe(readFileSync(path, 'utf8'));
    expect(withFile.referenceText).toBe(plain.referenceText);
  });

  it('gives identical results however the run is sliced (the clock only decides when to yield)', async () => {
    const cfg = { mode: 'run', model: MODEL, numRequests: 200, rate: 20, numInstances: 3, routingPolicy: 'least-loaded' } as const;
    const whole = await simulate(cfg, { now: () => 0 });
    let t = 0;
    const progress: SimulationProgress[] = [];
    // A clock that jumps 60 ms per read: the driver yields after every chunk.
    const sliced = await simulate(cfg, { now: () => (t += 60), onProgress: (p) => progress.push(p) });
    expect(sliced.referenceText).toBe(whole.referenceText);
    expect(progress.length).toBeGreaterThan(3);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]!.simulatedTimeUs).toBeGreaterThanOrEqual(progress[i - 1]!.simulatedTimeUs);
      expect(progress[i]!.requestsDone).toBeGreaterThanOrEqual(progress[i - 1]!.requestsDone);
    }
    expect(progress.at(-1)).toMatchObject({ requestsArrived: 200, requestsDone: 200, requestsTotal: 200, etaSeconds: 0 });
    expect(progress.every((p) => p.requestsTotal === 200)).toBe(true);
  });

  it('a generated workload longer than one chunk of arrivals runs as the CLI runs it, however sliced', async () => {
    // 700 requests: the library injects a streamed workload 256 arrivals at a time (the CLI 4,096), driving the
    // events up to each next chunk; the events and their order must not change.
    const viaCli = await cli(['run', '--model', MODEL, '--num-requests', '700', '--rate', '40', '--num-instances', '2', '--output-format', 'reference']);
    let t = 0;
    const sliced = await simulate({ mode: 'run', model: MODEL, numRequests: 700, rate: 40, numInstances: 2 }, { now: () => (t += 60) });
    expect(sliced.referenceText).toBe(viaCli);
    expect(sliced.metrics.injected_requests).toBe(700);
  });

  it('aborts with a BlisError of code aborted, before the start or while running', async () => {
    const ac = new AbortController();
    ac.abort(new Error('user cancelled'));
    const before = await rejection(simulate({ mode: 'run', model: MODEL }, { signal: ac.signal }));
    expect(before.code).toBe('aborted');
    expect(before.message).toBe('simulation aborted: user cancelled');

    const running = new AbortController();
    let t = 0;
    let calls = 0;
    const e = await rejection(simulate({ mode: 'run', model: MODEL, numRequests: 2000, rate: 50 }, {
      signal: running.signal,
      now: () => (t += 30),
      onProgress: () => {
        if (++calls === 2) running.abort();
      },
    }));
    expect(e.code).toBe('aborted');
    expect(calls).toBe(2);
  });

  it('turns an unexpected exception into a BlisError internal', async () => {
    const e = await rejection(simulate({ mode: 'run', model: MODEL, numRequests: 10 }, { now: () => { throw new TypeError('clock broke'); } }));
    expect(e.code).toBe('internal');
    expect(e.message).toMatch(/^internal error .*: clock broke$/);
    expect(e.cause).toBeInstanceOf(TypeError);
  });
});

describe('typed report sections (issue 29)', () => {
  it('anomaly_counters and kv_cache_metrics are numbers under typed keys', async () => {
    const r = await simulate({ mode: 'run', model: MODEL, numRequests: 200, rate: 200, timeout: 1, kvCpuBlocks: 1000 });
    const a = r.report.anomaly_counters;
    const kv = r.report.kv_cache_metrics;
    const timedOut: number | undefined = a?.timed_out_requests;
    const thrash: number | undefined = kv?.kv_thrashing_rate;
    expect(timedOut).toBeGreaterThan(0);
    expect(Object.values(a ?? {}).every((v) => typeof v === 'number')).toBe(true);
    expect(Object.keys(kv ?? {})).toEqual(['preemption_rate', 'cache_hit_rate', 'kv_thrashing_rate']);
    expect(typeof thrash).toBe('number');
  });
});

describe('simulate: a config that cannot be read as plain data is a config error, not an internal one', () => {
  const base = { mode: 'run' as const, model: 'meta-llama/llama-3.1-8b-instruct', hardware: 'H100', tp: 1, numRequests: 2, rate: 1 };
  const errorOf = async (config: unknown): Promise<BlisError> => {
    try {
      await simulate(config as SimulationConfig);
    } catch (e) {
      return e as BlisError;
    }
    throw new Error('no error');
  };
  it('a throwing getter, a throwing Proxy, a cycle and a deep structure each name the key', async () => {
    const getter = { ...base };
    Object.defineProperty(getter, 'seed', { enumerable: true, get: () => { throw new Error('boom'); } });
    let e = await errorOf(getter);
    expect([e.code, e.message]).toEqual(['bad-config', 'invalid simulation config: reading seed threw (boom); pass plain data (no getters or proxies that throw)']);
    e = await errorOf(new Proxy(base, { ownKeys: () => { throw new Error('trap'); } }));
    expect(e.code).toBe('bad-config');
    expect(e.message).toMatch(/reading the config threw \(trap\)/);
    const files: Record<string, unknown> = {};
    files['self'] = files;
    expect((await errorOf({ ...base, files })).message).toMatch(/files\.self contains itself/);
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    e = await errorOf({ ...base, files: deep });
    expect(e.code).toBe('bad-config');
    expect(e.message).toMatch(/nests deeper than 32 levels/);
    // An own "__proto__" (what JSON.parse makes of one) is an unknown key, not a prototype to adopt silently.
    e = await errorOf(JSON.parse(`{"mode":"run","model":"meta-llama/llama-3.1-8b-instruct","__proto__":{"seed":7}}`) as Record<string, unknown>);
    expect([e.code, e.message]).toEqual(['bad-config', 'invalid simulation config: __proto__: unknown key; remove it']);
    e = await errorOf({ ...base, outputs: JSON.parse('{"__proto__":{"metrics":true}}') as Record<string, unknown> });
    expect(e.message).toBe('invalid simulation config: outputs.__proto__: unknown key; remove it');
  });
});
