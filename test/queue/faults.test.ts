/**
 * Faults on a real redis-server: a worker killed mid-job (the job completes elsewhere, nothing lost, no
 * duplicate rows), the stall limit (the job fails with its reason, a resubmission retries it), a poison job
 * that kills every worker taking it (failed after two deaths, the other jobs done by a survivor), Redis stopped
 * and restarted mid-sweep (the sweep finishes), Redis gone for good or never there (a clear error within the
 * timeout, exit 1), and an interrupted submitter (exit 130; a resubmission collects everything and nothing
 * finished is run again). Each test uses its own queue name.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../io/processes.js';
import { freePort, REDIS_SERVER, REDIS_SKIP_NOTE, startBlis, startRedis, type BlisChild, type RedisChild } from '../io/redis.js';
import { sweepFolder } from './fixtures.js';

const POINTS = 5;
const FAST_STALLS = ['--lock-duration-ms', '2000', '--stalled-interval-ms', '500'];
const lines = (c: BlisChild, prefix: string): string[] => c.stderr().split('\n').filter((l) => l.startsWith(prefix));
const idOf = (line: string): string => line.split(' ')[1] as string;
/** The job a killed worker was running: started and never done (earlier jobs may have finished first). */
const runningOn = (c: BlisChild): string | undefined => {
  const done = new Set(lines(c, 'done ').map(idOf));
  return lines(c, 'start ').map(idOf).filter((id) => !done.has(id)).at(-1);
};

describe.skipIf(REDIS_SERVER === null)(`job queue faults${REDIS_SKIP_NOTE}`, () => {
  let redis: RedisChild;
  let dir: string;
  let localRows: string;
  const started: BlisChild[] = [];
  const blis = (args: readonly string[]): BlisChild => {
    const c = startBlis(args, dir);
    started.push(c);
    return c;
  };
  const worker = (queue: string, ...extra: string[]): BlisChild => blis(['worker', '--queue', redis.url, '--queue-name', queue, ...extra]);
  const finished = async (c: BlisChild, timeoutMs: number): Promise<number | null> => {
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    const code = await c.exited();
    clearTimeout(t);
    return code;
  };

  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis({ persist: true });
    dir = sweepFolder(POINTS);
    const local = blis(['sweep', 'long.yaml', '--workers', '2', '--output', 'local.jsonl']);
    expect(await finished(local, 120_000), local.stderr()).toBe(0);
    localRows = readFileSync(path.join(dir, 'local.jsonl'), 'utf8');
    expect(localRows.trim().split('\n')).toHaveLength(POINTS);
  }, 180_000);
  afterEach(() => {
    for (const c of started.splice(0)) c.kill('SIGKILL');
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('a worker killed mid-job: the job completes on another worker, nothing lost, no duplicate rows', async () => {
    const a = worker('kill', ...FAST_STALLS);
    const b = worker('kill', ...FAST_STALLS);
    await Promise.all([a.waitFor(/^worker /), b.waitFor(/^worker /)]);
    const sweep = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'kill', '--output', 'kill.jsonl']);
    await a.waitFor(/^start /);
    await new Promise((r) => setTimeout(r, 300));
    a.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 50));
    const victim = runningOn(a);
    expect(victim, a.stderr()).toBeDefined();
    expect(await finished(sweep, 120_000), sweep.stderr()).toBe(0);
    expect(readFileSync(path.join(dir, 'kill.jsonl'), 'utf8')).toBe(localRows);
    expect(lines(a, 'done ').map(idOf)).not.toContain(victim);
    expect(lines(b, 'done ').map(idOf)).toContain(victim);
    expect(b.stderr()).toContain(`stalled ${victim}`);
  }, 120_000);

  it('past the stall limit a job fails with its reason; a resubmission retries it', async () => {
    const a = worker('stall', ...FAST_STALLS, '--max-stalls', '0');
    await a.waitFor(/^worker /);
    const sweep = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'stall', '--output', 'stall.jsonl']);
    await a.waitFor(/^start /);
    await new Promise((r) => setTimeout(r, 300));
    a.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 50));
    const victim = runningOn(a);
    expect(victim, a.stderr()).toBeDefined();
    const b = worker('stall', ...FAST_STALLS, '--max-stalls', '0');
    expect(await finished(sweep, 120_000), sweep.stderr()).toBe(0);
    const rows = readFileSync(path.join(dir, 'stall.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { error?: { code: string; message: string } });
    expect(rows).toHaveLength(POINTS);
    const failed = rows.filter((r) => r.error !== undefined);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.error?.code).toBe('JOB_POISON');
    expect(failed[0]?.error?.message).toMatch(/^the job killed its worker once \(--max-stalls 0\).*stalled more than allowable limit/);
    expect(sweep.stderr()).toMatch(/sweep: 5\/5 done \(0 reused, 1 failed\)/);
    const again = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'stall', '--output', 'stall.jsonl']);
    expect(await finished(again, 120_000), again.stderr()).toBe(0);
    expect(again.stderr()).toMatch(/sweep: 5\/5 done \(4 reused, 0 failed\)/);
    expect(readFileSync(path.join(dir, 'stall.jsonl'), 'utf8')).toBe(localRows);
    expect(lines(b, 'start ').map(idOf).filter((id) => id === victim)).toHaveLength(1);
  }, 120_000);

  it('an evaluation that exhausts its heap fails with EVAL_WORKER_DIED and the worker takes the next job', async () => {
    mkdirSync(path.join(dir, 'oom'));
    copyFileSync(path.join(dir, 'pop', 'a.yaml'), path.join(dir, 'oom', 'a.yaml'));
    // Memory kept across calls: the sandbox accounts each call's allocations, not what the program keeps.
    writeFileSync(path.join(dir, 'oom', 'hog.js'), 'const keep = [];\nfunction route(req, state) { for (let i = 0; i < 100000; i++) keep.push({ a: i, b: [i, i] }); return 0; }\n');
    const w = worker('oom', '--job-heap-mb', '96');
    await w.waitFor(/^worker /);
    const ev = blis(['evaluate', '--population', 'oom', '--suite', 'routing-prefix-heavy', '--stage', '1', '--queue', redis.url, '--queue-name', 'oom']);
    expect(await finished(ev, 90_000), ev.stderr()).toBe(0);
    const doc = JSON.parse(ev.stdout()) as { candidates: { candidate: { id: string }; error?: { code: string; message: string } }[] };
    const hog = doc.candidates.find((c) => c.candidate.id === 'hog.js');
    expect(hog?.error?.code).toBe('EVAL_WORKER_DIED');
    expect(hog?.error?.message).toMatch(/memory limit/);
    expect(doc.candidates.find((c) => c.candidate.id === 'a.yaml')?.error).toBeUndefined();
    expect(lines(w, 'failed ')).toHaveLength(1);
    expect(lines(w, 'done ')).toHaveLength(1);
    expect(w.child.exitCode).toBeNull();
  }, 120_000);

  it('a poison job (it kills every worker that runs it): failed JOB_POISON after two deaths, a surviving worker completes the rest, the submitter gets its row', async () => {
    // A job that kills its worker process (a native crash, the kernel's OOM killer: what a thread's heap limit
    // does not catch) is simulated by killing whichever worker starts it. Default --max-stalls (1).
    const a = worker('poison', ...FAST_STALLS);
    const b = worker('poison', ...FAST_STALLS);
    await Promise.all([a.waitFor(/^worker /), b.waitFor(/^worker /)]);
    const sweep = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'poison', '--output', 'poison.jsonl']);
    const victim = idOf(await a.waitFor(/^start /));
    a.kill('SIGKILL');
    // The next worker to take it (b or c, once a's lock expired) dies too; the other one survives.
    const c = worker('poison', ...FAST_STALLS);
    await c.waitFor(/^worker /);
    const startsVictim = new RegExp(`^start ${victim} `);
    const second = await Promise.race([b.waitFor(startsVictim, 60_000).then(() => b), c.waitFor(startsVictim, 60_000).then(() => c)]);
    second.kill('SIGKILL');
    const survivor = second === b ? c : b;
    expect(await finished(sweep, 120_000), sweep.stderr()).toBe(0);
    const rows = readFileSync(path.join(dir, 'poison.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { error?: { code: string; message: string } });
    expect(rows).toHaveLength(POINTS);
    const failed = rows.filter((r) => r.error !== undefined);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.error?.code).toBe('JOB_POISON');
    expect(failed[0]?.error?.message).toMatch(/^the job killed its worker twice \(/);
    expect(sweep.stderr()).toMatch(/sweep: 5\/5 done \(0 reused, 1 failed\)/);
    // The other rows are the local run's, byte for byte.
    const local = localRows.trim().split('\n');
    const got = readFileSync(path.join(dir, 'poison.jsonl'), 'utf8').trim().split('\n');
    expect(got.filter((l, i) => l !== local[i])).toHaveLength(1);
    expect(lines(survivor, 'start ').map(idOf)).not.toContain(victim);
    expect(survivor.child.exitCode).toBeNull();
  }, 120_000);

  it('Redis stopped and restarted mid-sweep: the sweep finishes with the same rows', async () => {
    const w = worker('restart');
    await w.waitFor(/^worker /);
    const sweep = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'restart', '--output', 'restart.jsonl']);
    await w.waitFor(/^done /);
    await redis.stop();
    await new Promise((r) => setTimeout(r, 3000));
    await redis.start();
    expect(await finished(sweep, 120_000), sweep.stderr()).toBe(0);
    expect(sweep.stderr()).toMatch(/lost Redis at redis:\/\/127\.0\.0\.1:\d+ \(.*\); retrying with backoff for up to 60 s/);
    expect(sweep.stderr()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ answers again/);
    expect(readFileSync(path.join(dir, 'restart.jsonl'), 'utf8')).toBe(localRows);
  }, 120_000);

  it('Redis restarted empty (no persistence): the vanished jobs are queued again and the sweep finishes', async () => {
    const bare = await startRedis();
    try {
      const w = blis(['worker', '--queue', bare.url]);
      await w.waitFor(/^worker /);
      const sweep = blis(['sweep', 'long.yaml', '--queue', bare.url, '--output', 'empty.jsonl']);
      await w.waitFor(/^done /);
      await bare.stop();
      await bare.start();
      expect(await finished(sweep, 120_000), sweep.stderr()).toBe(0);
      expect(sweep.stderr()).toMatch(/job\(s\) vanished from the queue \(Redis restarted without persistence, or the queue was cleaned\); queued again/);
      expect(readFileSync(path.join(dir, 'empty.jsonl'), 'utf8')).toBe(localRows);
    } finally {
      await bare.stop();
    }
  }, 120_000);

  it('Redis gone for good: the submitter and a worker stop with a clear error within their timeouts', async () => {
    const w = worker('gone', '--redis-timeout-s', '4');
    await w.waitFor(/^worker /);
    const sweep = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'gone', '--redis-timeout-s', '3']);
    await w.waitFor(/^done /);
    await redis.stop();
    const t0 = performance.now();
    try {
      expect(await finished(sweep, 60_000)).toBe(1);
      expect(performance.now() - t0).toBeLessThan(30_000);
      expect(sweep.stdout()).toBe('');
      expect(sweep.stderr()).toMatch(/\nerror: cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+ for 3 s \(.*\): rerun the same command once Redis is back: finished jobs are kept and not run again\n$/);
      expect(await finished(w, 60_000)).toBe(1);
      expect(w.stderr()).toMatch(/error: cannot reach Redis at .* for 4 s .*this worker stops/);
    } finally {
      await redis.start();
    }
  }, 120_000);

  it('no Redis at the address: a clear error after the timeout, exit 1; a bad URL is exit 2', async () => {
    const port = await freePort();
    const t0 = performance.now();
    const r = blis(['sweep', 'long.yaml', '--queue', `redis://127.0.0.1:${port}`, '--redis-timeout-s', '2']);
    expect(await finished(r, 60_000)).toBe(1);
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(r.stderr()).toMatch(new RegExp(`error: cannot reach Redis at redis://127\\.0\\.0\\.1:${port} for 2 s \\(.*ECONNREFUSED.*\\)`));
    const s = blis(['queue', 'status', '--queue', `redis://127.0.0.1:${port}`, '--redis-timeout-s', '2']);
    expect(await finished(s, 60_000)).toBe(1);
    expect(s.stderr()).toMatch(/error: cannot reach Redis at .* within 2 s/);
    const u = blis(['sweep', 'long.yaml', '--queue', 'http://127.0.0.1:1']);
    expect(await finished(u, 60_000)).toBe(2);
    expect(u.stderr()).toMatch(/^error: --queue "http:\/\/127\.0\.0\.1:1": the scheme must be redis: or rediss:/);
  }, 120_000);

  it('an interrupted submitter leaves the queue consistent; resubmitted, nothing finished runs again', async () => {
    const w = worker('interrupt');
    await w.waitFor(/^worker /);
    const sweep = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'interrupt', '--output', 'interrupt.jsonl']);
    await w.waitFor(/^done /);
    sweep.kill('SIGINT');
    expect(await finished(sweep, 60_000)).toBe(130);
    expect(sweep.stderr()).toMatch(/error: interrupted after \d of 5 points; the other points stay queued at redis:\/\/127\.0\.0\.1:\d+ and workers finish them: rerun the same command/);
    const again = blis(['sweep', 'long.yaml', '--queue', redis.url, '--queue-name', 'interrupt', '--output', 'interrupt.jsonl']);
    expect(await finished(again, 120_000), again.stderr()).toBe(0);
    expect(again.stderr()).toMatch(/sweep: 5\/5 done \([1-5] reused, 0 failed\)/);
    expect(readFileSync(path.join(dir, 'interrupt.jsonl'), 'utf8')).toBe(localRows);
    const ran = lines(w, 'start ').map(idOf);
    expect(ran).toHaveLength(POINTS);
    expect(new Set(ran).size).toBe(POINTS);
  }, 120_000);
});
