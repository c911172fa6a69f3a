/** Queue URLs, credentials, TLS options and the exposure warning; failure reasons; backoff. */
import { describe, expect, it } from 'vitest';
import { backoffMs, connectionOptions, exposureWarning, isLoopback, parseQueueUrl } from './connection.js';
import { parseFailure } from './submit.js';

describe('queue URLs', () => {
  it('host, port, database, TLS and credentials; the password never shows', () => {
    expect(parseQueueUrl('redis://127.0.0.1:6390')).toMatchObject({ host: '127.0.0.1', port: 6390, db: 0, tls: false, loopback: true, display: 'redis://127.0.0.1:6390' });
    expect(parseQueueUrl('redis://localhost')).toMatchObject({ port: 6379, loopback: true });
    const t = parseQueueUrl('rediss://ops:s%40cret@redis.example.org:6380/2');
    expect(t).toMatchObject({ host: 'redis.example.org', port: 6380, db: 2, tls: true, username: 'ops', password: 's@cret', loopback: false });
    expect(t.display).toBe('rediss://ops@redis.example.org:6380/2');
    expect(parseQueueUrl('redis://[::1]:7000')).toMatchObject({ host: '::1', loopback: true, display: 'redis://[::1]:7000' });
    expect(parseQueueUrl('redis://10.1.2.3:6379', '--queue', 'fromenv').password).toBe('fromenv');
    expect(parseQueueUrl('redis://:inurl@10.1.2.3:6379', '--queue', 'fromenv').password).toBe('inurl');
  });
  it('a bad URL is one error naming the flag and the form to use, without the password', () => {
    expect(() => parseQueueUrl('http://x:1')).toThrow(/^--queue "http:\/\/x:1": the scheme must be redis: or rediss:.*write redis:\/\/HOST:PORT/);
    expect(() => parseQueueUrl('127.0.0.1:6379')).toThrow(/127\.0\.0\.1:6379.*write redis:\/\/HOST:PORT/);
    expect(() => parseQueueUrl('redis://h:1/abc')).toThrow(/names the database number/);
    expect(() => parseQueueUrl('not a url')).toThrow(/not a URL/);
    try {
      parseQueueUrl('http://u:topsecret@h:1');
    } catch (e) {
      expect((e as Error).message).not.toContain('topsecret');
    }
  });
  it('TLS options only with rediss://; loopback needs neither TLS nor a password', () => {
    const plain = connectionOptions(parseQueueUrl('redis://127.0.0.1:1'), { ca: 'CA' });
    expect(plain['tls']).toBeUndefined();
    const tls = connectionOptions(parseQueueUrl('rediss://h:1'), { ca: 'CA', cert: 'C', key: 'K' });
    expect(tls['tls']).toEqual({ servername: 'h', rejectUnauthorized: true, ca: 'CA', cert: 'C', key: 'K' });
    expect(connectionOptions(parseQueueUrl('rediss://10.0.0.1:1'))['tls']).toEqual({ rejectUnauthorized: true });
    expect(isLoopback('127.0.0.5')).toBe(true);
    expect(isLoopback('192.168.1.2')).toBe(false);
    expect(exposureWarning(parseQueueUrl('redis://127.0.0.1:1'))).toBeNull();
    expect(exposureWarning(parseQueueUrl('redis://10.0.0.1:1'))).toBe('redis://10.0.0.1:1 is not on this machine and has no TLS (use rediss://) and no password (set BLIS_REDIS_PASSWORD): anyone who can reach it can read results and queue work (docs/distributed.md, "Security")');
    expect(exposureWarning(parseQueueUrl('rediss://10.0.0.1:1'))).toMatch(/has no password/);
    expect(exposureWarning(parseQueueUrl('rediss://:pw@10.0.0.1:1'))).toBeNull();
  });
  it('reconnection backs off from 200 ms to 5 s, and stops once closed', () => {
    expect([1, 2, 3, 5, 6, 100].map(backoffMs)).toEqual([200, 400, 800, 3200, 5000, 5000]);
    const control = { stopped: false };
    const retry = connectionOptions(parseQueueUrl('redis://127.0.0.1:1'), {}, control)['retryStrategy'] as (n: number) => number | null;
    expect(retry(1)).toBe(200);
    control.stopped = true;
    expect(retry(1)).toBeNull();
  });
  it('failure reasons keep their code; BullMQ\'s stall limit becomes JOB_POISON with the number of deaths', () => {
    expect(parseFailure('EVAL_WORKER_DIED: the worker died: x')).toEqual({ code: 'EVAL_WORKER_DIED', message: 'the worker died: x' });
    expect(parseFailure('job stalled more than allowable limit').code).toBe('JOB_POISON');
    expect(parseFailure('job stalled more than allowable limit', 2).message).toMatch(/^the job killed its worker twice \(.*\(job stalled more than allowable limit\)$/);
    expect(parseFailure('job stalled more than allowable limit', 1).message).toMatch(/^the job killed its worker once \(--max-stalls 0\)/);
    expect(parseFailure('job stalled more than allowable limit', 3).message).toMatch(/^the job killed its worker 3 times/);
    expect(parseFailure('something else')).toEqual({ code: 'JOB_FAILED', message: 'something else' });
  });
});
