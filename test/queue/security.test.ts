/**
 * A Redis that is not open to everyone: a password (BLIS_REDIS_PASSWORD; a missing or wrong one is one clear
 * error at once, exit 2) and TLS with a private CA (rediss:// and --tls-ca; an untrusted certificate says
 * so). Certificates are made here with openssl; the TLS test skips without it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../io/processes.js';
import { REDIS_SERVER, REDIS_SKIP_NOTE, startBlis, startRedis, type RedisChild } from '../io/redis.js';
import { sweepFolder } from './fixtures.js';

const OPENSSL = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((p) => existsSync(p)) ?? null;

async function blis(args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const c = startBlis(args, cwd, env);
  const t = setTimeout(() => c.kill('SIGKILL'), 60_000);
  const code = await c.exited();
  clearTimeout(t);
  return { code, out: c.stdout(), err: c.stderr() };
}

/** A CA and a server certificate for 127.0.0.1 signed by it. */
function makeCerts(openssl: string): { dir: string; ca: string; cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'blis-tls-'));
  const run = (...args: string[]): void => void execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=blis test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.pem');
  return { dir, ca: path.join(dir, 'ca.pem'), cert: path.join(dir, 'server.pem'), key: path.join(dir, 'server.key') };
}

describe.skipIf(REDIS_SERVER === null)(`a protected Redis${REDIS_SKIP_NOTE}`, () => {
  let dir: string;
  const servers: RedisChild[] = [];
  beforeAll(() => {
    ensureBuilt();
    dir = sweepFolder(2);
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('a password from BLIS_REDIS_PASSWORD; none or a wrong one is one clear error at once', async () => {
    const r = await startRedis({ args: ['--requirepass', 'blis-test-pw'] });
    servers.push(r);
    const ok = await blis(['queue', 'status', '--queue', r.url], dir, { BLIS_REDIS_PASSWORD: 'blis-test-pw' });
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ queue: 'blis', counts: { waiting: 0 } });
    const none = await blis(['sweep', 'long.yaml', '--queue', r.url], dir);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/error: Redis at redis:\/\/127\.0\.0\.1:\d+ refused the connection: no password \(NOAUTH.*\); set BLIS_REDIS_PASSWORD to its password/);
    const wrong = await blis(['queue', 'status', '--queue', r.url], dir, { BLIS_REDIS_PASSWORD: 'nope' });
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/refused the connection: a wrong user or password \(WRONGPASS/);
    expect(wrong.err).not.toContain('nope');
  }, 60_000);

  it.skipIf(OPENSSL === null)('TLS with a private CA: rediss:// and --tls-ca; an untrusted certificate says so', async () => {
    const certs = makeCerts(OPENSSL!);
    const r = await startRedis({ tls: certs });
    servers.push(r);
    expect(r.url).toMatch(/^rediss:/);
    const w = startBlis(['worker', '--queue', r.url, '--tls-ca', certs.ca], dir);
    try {
      const q = await blis(['sweep', 'long.yaml', '--queue', r.url, '--tls-ca', certs.ca, '--output', 'tls.jsonl'], dir);
      expect(q.code, q.err).toBe(0);
      expect(q.err).toMatch(/sweep: 2\/2 done/);
      const untrusted = await blis(['queue', 'status', '--queue', r.url, '--redis-timeout-s', '3'], dir);
      expect(untrusted.code).toBe(1);
      expect(untrusted.err).toMatch(/self-signed certificate.*the TLS handshake failed: give --tls-ca FILE/);
      const flags = await blis(['queue', 'status', '--queue', r.url.replace('rediss:', 'redis:'), '--tls-ca', certs.ca], dir);
      expect(flags.code).toBe(2);
      expect(flags.err).toMatch(/--tls-\* options need a rediss:\/\/ URL/);
    } finally {
      w.kill('SIGKILL');
    }
  }, 90_000);
});
