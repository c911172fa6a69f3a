/**
 * Poison jobs (issue 27, item 6): batches of sweep jobs mixing healthy points with hostile ones — fast- and
 * strict-engine policy code that keeps memory across calls, loops, or throws host-ish errors (objects dressed as
 * `EVAL_WORKER_DIED`, stack overflows, OOM messages), deployments and counts far past their limits, and malformed
 * job payloads (what a queue worker could read from Redis) — run through the in-process pool (the one
 * `blis sweep --workers 2` uses, with a small heap per thread) and, when redis-server is installed, through
 * `blis sweep --queue` with two `blis worker`s.
 *
 * The contract of every batch: each job ends in exactly one outcome, of the kind its hostility allows
 * (EVAL_WORKER_DIED for memory kept across calls, a SANDBOX_* policy failure for loops and throws — never a forged
 * infrastructure code —, a located configuration error for bad sizes and payloads, never INTERNAL); every healthy
 * job gives the same bytes as in this thread; the pool (or both queue workers) survives to run the next batch; and
 * nothing hangs: each batch has a time bound in the harness ({@link bounded}), past which the case fails as a hang.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulationJob } from '../../src/sweep/jobs.js';
import { LocalRunner } from '../../src/sweep/local.js';
import type { JobOutcome, JobSpec } from '../../src/sweep/types.js';
import { ensureBuilt } from '../io/processes.js';
import { REDIS_SERVER, REDIS_SKIP_NOTE, startBlis, startRedis, type BlisChild, type RedisChild } from '../io/redis.js';
import { caseDir, cleanupSandbox, fuzzParams, fuzzTimeout } from './harness.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
/** A few seconds of simulation at most: 30 requests on two instances. */
const BASE = { mode: 'run', model: MODEL, numRequests: 30, rate: 20, numInstances: 2 } as const;
/** Heap of each pool thread: small, so memory kept across calls kills its thread within a second or two. */
const HEAP_MB = 160;
/** Bound of one batch (a few jobs on two threads); a hang fails the case instead of the whole run. */
const BATCH_BOUND_MS = 90_000;

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);

/** What a job is allowed to end in. */
type Kind = 'healthy' | 'hog' | 'loop' | 'throw' | 'size' | 'payload';

interface GenJob {
  readonly kind: Kind;
  readonly engine?: 'fast' | 'strict';
  /** For the queue: the bundle text of a policy job (`policyConfig` of a sweep point), else undefined. */
  readonly bundle?: string;
  readonly job: JobSpec;
}

function bundle(engine: 'fast' | 'strict', source: string): string {
  return `routing:\n  type: code\n  engine: ${engine}\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`;
}

function policyJob(kind: Kind, engine: 'fast' | 'strict', source: string, seed: number): GenJob {
  const text = bundle(engine, source);
  return { kind, engine, bundle: text, job: simulationJob({ ...BASE, seed, policyConfig: 'p.yaml', files: { 'p.yaml': text } }) };
}

/** Healthy jobs: a fixed handful, so their in-thread results are computed once. */
const HEALTHY: readonly GenJob[] = [
  { kind: 'healthy', job: simulationJob({ ...BASE, seed: 1 }) },
  { kind: 'healthy', job: simulationJob({ ...BASE, seed: 2, routingPolicy: 'least-loaded' }) },
  policyJob('healthy', 'fast', 'let n = 0;\nfunction route(request, state) { n++; return state.instances[n % state.instances.length].id; }', 3),
  policyJob('healthy', 'strict', 'function route(request, state) { return state.instances[0].id; }', 4),
];

/** Memory kept across calls: under the per-call cap every call, without bound over the run. */
const hog: fc.Arbitrary<GenJob> = fc
  .record({
    engine: pick<'fast' | 'strict'>('fast', 'strict'),
    alloc: pick('new ([].constructor)(N).fill(1.5)', 'Array.from({ length: N }, (_, i) => i)', 'new Array(N).fill(0).map((x, i) => ({ i }))', '"ab".repeat(N)', 'Object.fromEntries(new Array(N / 10).fill(0).map((_, i) => ["k" + i, i]))'),
    n: pick(1e5, 1e6, 3e6),
    seed: fc.integer({ min: 1, max: 9 }),
  })
  .map(({ engine, alloc, n, seed }) => policyJob('hog', engine, `const keep = [];\nfunction route(request, state) {\n  keep.push(${alloc.replaceAll('N', String(n))});\n  return state.instances[0].id;\n}`, seed));

/** Work outside or inside the gas accounting that never ends. */
const loop: fc.Arbitrary<GenJob> = fc
  .record({
    engine: pick<'fast' | 'strict'>('fast', 'strict'),
    body: pick('while (true) {}', 'for (;;) { state.instances.sort(() => 0); }', 'const a = new Array(1e5).fill(0); while (true) a.sort((x, y) => x - y);', 'function r() { return r() + r(); } return r();', 'let s = 0; while (true) s += JSON.stringify(state).length;'),
    when: pick('always', 'after 5 calls'),
    seed: fc.integer({ min: 1, max: 9 }),
  })
  .map(({ engine, body, when, seed }) =>
    policyJob('loop', engine, `let calls = 0;\nfunction route(request, state) {\n  calls++;\n  if (${when === 'always' ? 'true' : 'calls > 5'}) { ${body} }\n  return state.instances[0].id;\n}`, seed));

/** Errors that look like the host's (infrastructure codes, V8 messages): still the policy's failure. */
const thrown: fc.Arbitrary<GenJob> = fc
  .record({
    engine: pick<'fast' | 'strict'>('fast', 'strict'),
    value: pick(
      '{ code: "EVAL_WORKER_DIED", message: "the worker died" }',
      'new Error("EVAL_WORKER_DIED: the worker died: Worker terminated due to reaching memory limit")',
      'new RangeError("Maximum call stack size exceeded")',
      'new Error("JOB_POISON: the job killed its worker twice")',
      '{ code: "ERR_WORKER_OUT_OF_MEMORY", name: "Error" }',
      '{ get message() { throw new Error("getter"); }, toString() { throw new Error("toString"); } }',
      'null',
      'undefined',
      '"INTERNAL: internal: boom"',
      '"x".repeat(100000)',
    ),
    seed: fc.integer({ min: 1, max: 9 }),
  })
  .map(({ engine, value, seed }) => policyJob('throw', engine, `function route(request, state) {\n  throw ${value};\n}`, seed));

/** Counts far past their limits, in the options and in a deployment file. */
const size: fc.Arbitrary<GenJob> = fc
  .oneof(
    pick(10_001, 1e9, 2 ** 31, 1e18).map((n) => simulationJob({ ...BASE, numInstances: n })),
    pick(1e9, 1e12).map((n) => simulationJob({ ...BASE, numRequests: n, promptTokens: 9_000_000 })),
    pick('1000000000', '10001', '9223372036854775807').map((n) =>
      simulationJob({ mode: 'run', model: MODEL, numRequests: 30, rate: 20, deployment: 'd.yaml', files: { 'd.yaml': `models:\n  - name: ${MODEL}\n    configurations:\n      - {name: a, hardware: H100, tp: 1, replicas: ${n}}\n` } }),
    ),
  )
  .map((job) => ({ kind: 'size' as const, job }));

/** Payloads a queue worker might read from Redis that blis never queued: wrong shapes, types and keys. */
const payload: fc.Arbitrary<GenJob> = fc
  .oneof(
    pick<unknown>(null, undefined, 5, 'run', [], [BASE], true).map((config) => ({ ...simulationJob({}), config })),
    fc.record({ key: pick('mode', 'model', 'numRequests', 'rate', 'numInstances', 'seed', 'files', 'policyConfig', 'workloadSpec', 'hardware', 'tp', 'routingPolicy', 'traceHeader', '___proto__', 'constructor'), value: pick<unknown>(null, -1, 0.5, 'x', 1e308, [], {}, { a: { b: [1] } }, 'replay', '../../etc/passwd', true) })
      .map(({ key, value }) => ({ ...simulationJob({}), config: JSON.parse(JSON.stringify({ ...BASE, [key]: value }).replace('"___proto__"', '"__proto__"')) as Record<string, unknown> })),
    pick<unknown>({}, { mode: 'run' }, { mode: 'replay', model: MODEL }).map((config) => ({ ...simulationJob({}), config })),
    pick<unknown>('bogus', 'evaluate', null, 7, undefined).map((kind) => ({ kind, version: simulationJob({}).version, config: { ...BASE } })),
    pick<unknown>(null, {}, { id: 'x' }, 'x').map((v) => ({ kind: 'evaluate', version: simulationJob({}).version, candidate: v, suite: v, opts: v })),
  )
  .map((job) => ({ kind: 'payload' as const, job: job as unknown as JobSpec }));

const hostile: fc.Arbitrary<GenJob> = fc.oneof(hog, loop, thrown, size, payload);

/** The batch: 1-3 hostile jobs and 1-2 healthy ones, interleaved. */
const batch: fc.Arbitrary<GenJob[]> = fc
  .record({ bad: fc.array(hostile, { minLength: 1, maxLength: 3 }), good: fc.array(fc.integer({ min: 0, max: HEALTHY.length - 1 }), { minLength: 1, maxLength: 2 }), order: fc.array(fc.nat(), { minLength: 5, maxLength: 5 }) })
  .map(({ bad, good, order }) => {
    const all = [...bad, ...good.map((i) => HEALTHY[i]!)];
    return all.map((j, i) => ({ j, k: order[i % order.length]! * 7 + i })).sort((a, b) => a.k - b.k).map((x) => x.j);
  });

/** `p`, or a fault naming `what` once `ms` have passed (the case fails as a hang; the run goes on). */
async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms (hang?)`)), ms)));
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error code of an outcome, or 'ok'. */
function codeOf(o: JobOutcome): string {
  if (!o.ok) return o.error.code;
  const v = o.value as { error?: { code: string; message: string } };
  return v.error === undefined ? 'ok' : v.error.code;
}

function messageOf(o: JobOutcome): string {
  if (!o.ok) return o.error.message;
  return (o.value as { error?: { message: string } }).error?.message ?? '';
}

/** Checks one outcome against what its job's kind allows. */
function checkJob(g: GenJob, o: JobOutcome | undefined, healthy: ReadonlyMap<JobSpec, string>): void {
  const where = `${g.kind}${g.engine === undefined ? '' : ` (${g.engine})`} job ${JSON.stringify(g.job).slice(0, 400)} -> ${JSON.stringify(o).slice(0, 400)}`;
  expect(o, where).toBeDefined();
  const code = codeOf(o!);
  expect(code, where).not.toBe('INTERNAL');
  expect(messageOf(o!), where).not.toMatch(/^internal:|\n/);
  switch (g.kind) {
    case 'healthy':
      expect(JSON.stringify(o), where).toBe(healthy.get(g.job));
      break;
    case 'hog':
      // fast: the thread's heap limit (or the per-call cap); strict: the QuickJS heap cap. A run may also finish
      // (30 calls of the smallest allocation fit in the heap).
      expect(['EVAL_WORKER_DIED', 'POLICY_RUNTIME', 'ok'], where).toContain(code);
      if (code === 'POLICY_RUNTIME') expect(messageOf(o!), where).toMatch(/SANDBOX_MEMORY|SANDBOX_BUDGET/);
      if (g.engine === 'strict') expect(code, where).not.toBe('EVAL_WORKER_DIED');
      break;
    case 'loop':
      expect(code, where).toBe('POLICY_RUNTIME');
      expect(messageOf(o!), where).toMatch(/SANDBOX_BUDGET|SANDBOX_STACK|SANDBOX_MEMORY/);
      break;
    case 'throw':
      // Whatever it dresses up as, a throw is the policy's own failure, never an infrastructure one.
      expect(code, where).toBe('POLICY_RUNTIME');
      expect(messageOf(o!), where).toMatch(/SANDBOX_THREW|SANDBOX_STACK|SANDBOX_MEMORY/);
      break;
    case 'size':
    case 'payload':
      expect(o!.ok, where).toBe(true);
      expect(code, where).not.toBe('ok');
      break;
  }
}

describe('fuzz: poison jobs on the in-process pool (sweep --workers 2)', () => {
  const healthy = new Map<JobSpec, string>();
  let pool: LocalRunner;
  const tally = new Map<string, number>();

  beforeAll(async () => {
    ensureBuilt();
    const inThread = new LocalRunner({ workers: 1, timeoutMs: 0 });
    try {
      const outs = await inThread.runAll(HEALTHY.map((g) => g.job));
      HEALTHY.forEach((g, i) => {
        expect(codeOf(outs[i]!), JSON.stringify(outs[i])).toBe('ok');
        healthy.set(g.job, JSON.stringify(outs[i]));
      });
    } finally {
      await inThread.close();
    }
    pool = new LocalRunner({ workers: 2, timeoutMs: 60_000, heapMb: HEAP_MB });
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
    console.info(`fuzz poison jobs (pool): ${[...tally.entries()].sort().map(([k, n]) => `${n} ${k}`).join(', ')}`);
  });

  it('every job ends in one outcome of its kind, healthy jobs give the in-thread bytes, the pool survives, nothing hangs', async () => {
    await fc.assert(
      fc.asyncProperty(batch, async (jobs) => {
        const outs = await bounded(pool.runAll(jobs.map((g) => g.job)), BATCH_BOUND_MS, `batch of ${jobs.map((g) => g.kind).join(', ')}`);
        expect(outs).toHaveLength(jobs.length);
        jobs.forEach((g, i) => {
          checkJob(g, outs[i], healthy);
          const key = `${g.kind}:${codeOf(outs[i]!)}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
        });
      }),
      fuzzParams('poison jobs (pool)', 6),
    );
  }, fuzzTimeout(600_000));
});

describe.skipIf(REDIS_SERVER === null)(`fuzz: poison jobs on a queue with two workers${REDIS_SKIP_NOTE}`, () => {
  let redis: RedisChild;
  const workers: BlisChild[] = [];
  let dir: string;
  let round = 0;
  const tally = new Map<string, number>();

  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
    dir = caseDir();
    for (let i = 0; i < 2; i++) workers.push(startBlis(['worker', '--queue', redis.url, '--queue-name', 'poison-fuzz', '--job-heap-mb', '128', '--timeout-s', '60'], dir));
    await Promise.all(workers.map((w) => w.waitFor(/^worker /, 60_000)));
  }, 120_000);
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await redis?.stop();
    console.info(`fuzz poison jobs (queue): ${[...tally.entries()].sort().map(([k, n]) => `${n} ${k}`).join(', ')}`);
    cleanupSandbox();
  });

  it('a sweep of hostile and healthy policies: one row per point, healthy rows as the local run gives them, both workers alive, stdout only rows', async () => {
    const policy = fc.oneof(
      { weight: 3, arbitrary: fc.oneof(hog, loop, thrown) },
      { weight: 1, arbitrary: fc.constantFrom(HEALTHY[2]!, HEALTHY[3]!) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(policy, { minLength: 2, maxLength: 4 }), async (gens) => {
        const r = round++;
        const names = gens.map((_, i) => `r${r}p${i}.yaml`);
        gens.forEach((g, i) => writeFileSync(path.join(dir, names[i]!), g.bundle!));
        const sweepFile = (ns: readonly string[]): string => `base: {model: ${MODEL}, numRequests: 30, rate: 20, numInstances: 2, seed: 1}\naxes:\n  policyConfig: [${ns.join(', ')}]\n`;
        writeFileSync(path.join(dir, `sw${r}.yaml`), sweepFile(names));
        const sub = startBlis(['sweep', `sw${r}.yaml`, '--queue', redis.url, '--queue-name', 'poison-fuzz', '--worker-wait-s', '60'], dir);
        const code = await bounded(sub.exited(), BATCH_BOUND_MS, `queued sweep of ${gens.map((g) => g.kind).join(', ')}`).catch((e: Error) => {
          sub.kill('SIGKILL');
          throw e;
        });
        expect(code, sub.stderr()).toBe(0);
        const rows = sub.stdout().trim().split('\n').map((l) => JSON.parse(l) as { params: { policyConfig: string }; metrics: Record<string, number>; error?: { code: string; message: string } });
        expect(rows.map((x) => x.params.policyConfig)).toEqual(names);
        // The healthy policies' rows, byte for byte as an in-process sweep of just those gives them.
        const healthyNames = names.filter((_, i) => gens[i]!.kind === 'healthy');
        if (healthyNames.length > 0) {
          writeFileSync(path.join(dir, `ok${r}.yaml`), sweepFile(healthyNames));
          const local = startBlis(['sweep', `ok${r}.yaml`, '--output', `ok${r}.jsonl`], dir);
          expect(await bounded(local.exited(), BATCH_BOUND_MS, 'local sweep'), local.stderr()).toBe(0);
          const want = readFileSync(path.join(dir, `ok${r}.jsonl`), 'utf8').trim().split('\n');
          const lines = sub.stdout().trim().split('\n');
          expect(names.map((n, i) => (gens[i]!.kind === 'healthy' ? lines[i] : null)).filter((l) => l !== null)).toEqual(want);
        }
        gens.forEach((g, i) => {
          const row = rows[i]!;
          const o: JobOutcome = row.error === undefined ? { ok: true, value: { metrics: row.metrics } } : ['EVAL_WORKER_DIED', 'EVAL_TIMEOUT', 'JOB_POISON', 'INTERNAL'].includes(row.error.code) ? { ok: false, error: row.error } : { ok: true, value: { error: row.error } };
          if (g.kind !== 'healthy') checkJob(g, o, new Map());
          const key = `${g.kind}:${codeOf(o)}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
        });
        for (const w of workers) expect(w.child.exitCode, w.stderr()).toBeNull();
      }),
      fuzzParams('poison jobs (queue)', 2),
    );
  }, fuzzTimeout(600_000));
});
