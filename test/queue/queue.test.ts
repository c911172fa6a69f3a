/**
 * The job queue end to end on a real redis-server (loopback, free port): a sweep through three worker
 * processes gives the local run's rows byte for byte (JSON lines and CSV), a resubmission reuses every
 * result, `blis queue status|clean` show and clear the work, an evaluation population gives the local
 * ranking, and a bad sweep file queues nothing.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../io/processes.js';
import { REDIS_SERVER, REDIS_SKIP_NOTE, startBlis, startRedis, type BlisChild, type RedisChild } from '../io/redis.js';
import { sweepFolder } from './fixtures.js';

async function blis(args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<{ code: number | null; out: string; err: string }> {
  const c = startBlis(args, cwd);
  const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
  const code = await c.exited();
  clearTimeout(t);
  return { code, out: c.stdout(), err: c.stderr() };
}

const starts = (w: BlisChild): string[] => w.stderr().split('\n').filter((l) => l.startsWith('start '));

describe.skipIf(REDIS_SERVER === null)(`the Redis job queue${REDIS_SKIP_NOTE}`, () => {
  let redis: RedisChild;
  let dir: string;
  const workers: BlisChild[] = [];
  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
    dir = sweepFolder();
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await redis?.stop();
  });

  it('three workers give the local rows byte for byte; a resubmission runs nothing again', async () => {
    const local = await blis(['sweep', 'short.yaml', '--output', 'local.jsonl'], dir);
    expect(local.code, local.err).toBe(0);
    const localCsv = await blis(['sweep', 'short.yaml', '--workers', '2', '--output', 'local.csv'], dir);
    expect(localCsv.code, localCsv.err).toBe(0);
    for (let i = 0; i < 3; i++) workers.push(startBlis(['worker', '--queue', redis.url, '--concurrency', '1']));
    await Promise.all(workers.map((w) => w.waitFor(/^worker .* on queue "blis"/)));
    const q = await blis(['sweep', 'short.yaml', '--queue', redis.url, '--output', 'queued.jsonl'], dir);
    expect(q.code, q.err).toBe(0);
    expect(q.err).toMatch(/sweep: 8\/8 done \(0 reused, 0 failed\)/);
    const rows = readFileSync(path.join(dir, 'queued.jsonl'), 'utf8');
    expect(rows).toBe(readFileSync(path.join(dir, 'local.jsonl'), 'utf8'));
    expect(rows.trim().split('\n')).toHaveLength(8);
    // The summary on stdout names the same best point as the local run's.
    expect(JSON.parse(q.out)).toEqual(JSON.parse(local.out));
    const ran = workers.flatMap(starts);
    expect(ran).toHaveLength(8);
    expect(new Set(ran).size).toBe(8);
    // Resubmitted (as CSV): every row comes from the queue, no worker starts anything.
    const again = await blis(['sweep', 'short.yaml', '--queue', redis.url, '--output', 'queued.csv'], dir);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(/sweep: 8\/8 done \(8 reused, 0 failed\)/);
    expect(readFileSync(path.join(dir, 'queued.csv'), 'utf8')).toBe(readFileSync(path.join(dir, 'local.csv'), 'utf8'));
    expect(workers.flatMap(starts)).toHaveLength(8);
  }, 180_000);

  it('a job queued by another blis-ts version fails with VERSION_MISMATCH instead of giving a result', async () => {
    const { QueueRunner, parseQueueUrl } = await import('../../src/queue/index.js');
    const { simulationJob } = await import('../../src/sweep/index.js');
    const runner = new QueueRunner({ target: parseQueueUrl(redis.url), queueName: 'blis', redisTimeoutMs: 10_000, noWorkerTimeoutMs: 30_000, warn: () => undefined });
    try {
      const job = { ...simulationJob({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numRequests: 10 }), version: '0.0.0-other' };
      const [out] = await runner.runAll([job]);
      expect(out).toMatchObject({ ok: false, error: { code: 'VERSION_MISMATCH' } });
      expect(out?.ok === false && out.error.message).toMatch(/job was queued by 0\.0\.0-other; run workers of the submitter's version/);
    } finally {
      await runner.close();
    }
  }, 60_000);

  it('blis queue status and clean: counts by state, connected workers, removal', async () => {
    const s = await blis(['queue', 'status', '--queue', redis.url], dir);
    expect(s.code, s.err).toBe(0);
    const status = JSON.parse(s.out) as { counts: Record<string, number>; workers: string[] };
    expect(status.counts).toMatchObject({ completed: 8, waiting: 0, active: 0, failed: 1 });
    expect(status.workers).toHaveLength(3);
    const c = await blis(['queue', 'clean', '--queue', redis.url, '--state', 'completed'], dir);
    expect(c.code, c.err).toBe(0);
    expect(JSON.parse(c.out)).toMatchObject({ removed: { completed: 8 }, active_left: 0 });
    const after = JSON.parse((await blis(['queue', 'status', '--queue', redis.url], dir)).out) as { counts: Record<string, number> };
    expect(after.counts['completed']).toBe(0);
    const bad = await blis(['queue', 'clean', '--queue', redis.url, '--state', 'running'], dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^error: --state "running": use waiting, delayed, completed, failed/);
  }, 60_000);

  it('an evaluation population on the queue ranks like the local run (a broken candidate included)', async () => {
    const local = await blis(['evaluate', '--population', 'pop', '--suite', 'routing-prefix-heavy', '--stage', '1'], dir);
    expect(local.code, local.err).toBe(0);
    const q = await blis(['evaluate', '--population', 'pop', '--suite', 'routing-prefix-heavy', '--stage', '1', '--queue', redis.url], dir);
    expect(q.code, q.err).toBe(0);
    expect(q.out).toBe(local.out);
    const single = await blis(['evaluate', '--candidate', 'pop/a.yaml', '--suite', 'routing-prefix-heavy', '--queue', redis.url], dir);
    expect(single.code).toBe(2);
    expect(single.err).toMatch(/^error: --queue evaluates a --population/);
  }, 180_000);

  it('a bad sweep file is one error before anything is queued', async () => {
    const before = JSON.parse((await blis(['queue', 'status', '--queue', redis.url], dir)).out) as { counts: Record<string, number> };
    const r = await blis(['sweep', 'short.yaml', '--queue', redis.url, '--output', 'x.txt'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toBe('error: --output x.txt: name a .jsonl or .csv file\n');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(dir, 'bad.yaml'), 'base: {model: meta-llama/llama-3.1-8b-instruct}\naxes:\n  numInstances: [1, 2, 0]\n');
    const b = await blis(['sweep', 'bad.yaml', '--queue', redis.url], dir);
    expect(b.code).toBe(2);
    expect(b.out).toBe('');
    expect(b.err.trim().split('\n')).toEqual([expect.stringMatching(/^error: bad\.yaml:3:24: axes\.numInstances\[2\]: point 3 of 3 \(numInstances=0\) is not a valid configuration/)]);
    const after = JSON.parse((await blis(['queue', 'status', '--queue', redis.url], dir)).out) as { counts: Record<string, number> };
    expect(after.counts).toEqual(before.counts);
  }, 60_000);
});
