/**
 * A real `redis-server` for the queue tests: Debian's binary on a free loopback port, in a temporary folder
 * (optionally with an append-only file, so a restart keeps the queue), and `blis` child processes (workers,
 * submitters) whose stderr lines the tests can wait for. Tests skip with {@link REDIS_SKIP_NOTE} when the
 * binary is absent (`.ci/run` installs it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BLIS, ROOT } from './processes.js';

function which(name: string): string | null {
  for (const dir of ['/usr/bin', '/usr/sbin', '/usr/local/bin']) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  try {
    const p = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    return p === '' ? null : p;
  } catch {
    return null;
  }
}

export const REDIS_SERVER = which('redis-server');
export const REDIS_SKIP_NOTE = REDIS_SERVER === null ? ' (skipped: redis-server is not installed; apt-get install -y redis-server, as .ci/run does)' : '';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisChild {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM: with persistence, the data is flushed to disk first). */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
}

/**
 * Starts redis-server on a free loopback port; `persist` keeps an append-only file across restarts, `args`
 * adds options (e.g. `--requirepass`), `tls` serves TLS only (rediss://) with the given PEM files.
 */
export async function startRedis(opts: { persist?: boolean; args?: readonly string[]; tls?: { cert: string; key: string; ca: string } } = {}): Promise<RedisChild> {
  if (REDIS_SERVER === null) throw new Error('redis-server is not installed');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'blis-redis-'));
  let child: ChildProcess | null = null;
  const start = (): Promise<void> => new Promise((resolve, reject) => {
    const listen = opts.tls === undefined
      ? ['--port', String(port)]
      : ['--port', '0', '--tls-port', String(port), '--tls-cert-file', opts.tls.cert, '--tls-key-file', opts.tls.key, '--tls-ca-cert-file', opts.tls.ca, '--tls-auth-clients', 'no'];
    const c = spawn(REDIS_SERVER, [...listen, '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', opts.persist === true ? 'yes' : 'no', '--appendfsync', 'always', '--protected-mode', 'yes', ...(opts.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let out = '';
    const t = setTimeout(() => reject(new Error(`redis-server did not start in 10 s: ${out}`)), 10_000);
    c.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(t);
        resolve();
      }
    });
    c.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`redis-server exited with ${String(code)}: ${out}`));
    });
  });
  const stop = async (): Promise<void> => {
    const c = child;
    if (c === null || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  await start();
  return { port, url: `${opts.tls === undefined ? 'redis' : 'rediss'}://127.0.0.1:${port}`, stop, start };
}

export interface BlisChild {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr has a line matching `re` (rejects after `timeoutMs` or when the process exits). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (null when killed by a signal) once the process has ended. */
  exited(): Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `blis ARGS` (the built CLI; `env` added to this process's environment) and records its output. */
export function startBlis(args: readonly string[], cwd: string = ROOT, env: Readonly<Record<string, string>> = {}): BlisChild {
  const child = spawn(process.execPath, [BLIS, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const check = (): void => {
    for (const w of [...waiters]) {
      const m = err.split('\n').find((l) => w.re.test(l));
      if (m !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout?.on('data', (d: Buffer) => void (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    check();
  });
  const done = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (re, timeoutMs = 60_000) => new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no stderr line matching ${String(re)} within ${timeoutMs} ms:\n${err}`)), timeoutMs);
      waiters.push({ re, resolve: (l) => {
        clearTimeout(t);
        resolve(l);
      } });
      void done.then(() => {
        check();
        setTimeout(() => reject(new Error(`exited before a stderr line matched ${String(re)}:\n${err}`)), 50);
      });
      check();
    }),
    exited: () => done,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
