/**
 * Where the queue lives and how to reach it: `redis://[user:password@]host[:port][/db]` or `rediss://` (TLS),
 * the password also from the environment (the CLI passes BLIS_REDIS_PASSWORD), TLS files for a private CA or
 * client certificates. Loopback needs none of it. Connections retry with exponential backoff; a
 * {@link RedisHealth} tells how long Redis has been unreachable, so every caller can give up with a clear
 * message instead of waiting forever.
 */
import { isIP } from 'node:net';
import { BlisError } from '../domain/errors.js';

export const QUEUE_URL_ERROR = 'QUEUE_URL';
export const QUEUE_UNAVAILABLE = 'QUEUE_UNAVAILABLE';
export const QUEUE_AUTH = 'QUEUE_AUTH';

/** Redis's answers to missing or wrong credentials. */
const AUTH_ERROR = /\b(NOAUTH|WRONGPASS|NOPERM)\b|invalid password/;

export interface QueueTarget {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly tls: boolean;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** The URL without its password, for messages. */
  readonly display: string;
  readonly loopback: boolean;
}

export interface TlsFiles {
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
  /** Skip certificate verification (testing only). */
  readonly insecure?: boolean | undefined;
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Parses `--queue URL`; `password` (from the environment) is used when the URL has none. */
export function parseQueueUrl(url: string, flag = '--queue', password?: string): QueueTarget {
  const fail = (why: string): never => {
    throw new BlisError(QUEUE_URL_ERROR, `${flag} "${url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')}": ${why}; write redis://HOST:PORT (rediss:// for TLS, e.g. redis://127.0.0.1:6379)`, { field: flag });
  };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return fail('not a URL');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') fail(`the scheme must be redis: or rediss:, not ${u.protocol}`);
  if (u.hostname === '') fail('no host');
  const port = u.port === '' ? 6379 : Number(u.port);
  const dbText = u.pathname.replace(/^\//, '');
  if (dbText !== '' && !/^\d+$/.test(dbText)) fail(`the path names the database number, not "${dbText}"`);
  if (u.search !== '' || u.hash !== '') fail('query strings and fragments are not used');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const user = u.username === '' ? undefined : decodeURIComponent(u.username);
  const pass = u.password !== '' ? decodeURIComponent(u.password) : password !== undefined && password !== '' ? password : undefined;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    db: dbText === '' ? 0 : Number(dbText),
    tls: u.protocol === 'rediss:',
    username: user,
    password: pass,
    display: `${u.protocol}//${user !== undefined ? `${user}@` : ''}${shownHost}:${port}${dbText === '' ? '' : `/${dbText}`}`,
    loopback: isLoopback(host),
  };
}

/** A warning for a queue reachable by others with neither TLS nor a password (null when fine). */
export function exposureWarning(t: QueueTarget): string | null {
  if (t.loopback || (t.tls && t.password !== undefined)) return null;
  const missing = [t.tls ? null : 'no TLS (use rediss://)', t.password !== undefined ? null : 'no password (set BLIS_REDIS_PASSWORD)'].filter((x) => x !== null);
  return `${t.display} is not on this machine and has ${missing.join(' and ')}: anyone who can reach it can read results and queue work (docs/distributed.md, "Security")`;
}

/** A hint for a failed TLS handshake (empty otherwise). */
export function tlsHint(error: string): string {
  return /certificate|CERT_|SSL|TLS|handshake/i.test(error) ? '; the TLS handshake failed: give --tls-ca FILE with the CA that signed the server\'s certificate' : '';
}

/** Delay before reconnection attempt `times` (1, 2, ...): 200 ms, doubling up to 5 s. */
export function backoffMs(times: number): number {
  return Math.min(100 * 2 ** Math.min(times, 16), 5000);
}

/** Set `stopped` to end reconnection attempts (closing with Redis gone must not keep the process alive). */
export interface ReconnectControl {
  stopped: boolean;
}

/** ioredis options as BullMQ takes them (`connection:`). */
export function connectionOptions(t: QueueTarget, tls: TlsFiles = {}, control: ReconnectControl = { stopped: false }): Record<string, unknown> {
  return {
    host: t.host,
    port: t.port,
    db: t.db,
    ...(t.username !== undefined ? { username: t.username } : {}),
    ...(t.password !== undefined ? { password: t.password } : {}),
    ...(t.tls
      ? { tls: { ...(isIP(t.host) === 0 ? { servername: t.host } : {}), rejectUnauthorized: tls.insecure !== true, ...(tls.ca !== undefined ? { ca: tls.ca } : {}), ...(tls.cert !== undefined ? { cert: tls.cert } : {}), ...(tls.key !== undefined ? { key: tls.key } : {}) } }
      : {}),
    connectTimeout: 5000,
    // BullMQ's workers need commands to wait through a reconnection; the callers' own deadlines bound the wait.
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    retryStrategy: (times: number) => (control.stopped ? null : backoffMs(times)),
  };
}

/** A client's connection events, as ioredis emits them. */
interface EventSource {
  on(event: string, fn: (...args: unknown[]) => void): unknown;
}

/**
 * Whether Redis answers, from the events of every connection attached: down from the first error or close
 * until a connection is ready again.
 */
export class RedisHealth {
  private downSince: number | null = null;
  private lastError = '';
  private authError: string | null = null;
  private refusal: Promise<never> | null = null;
  private reject: ((e: BlisError) => void) | null = null;
  private readonly listeners: ((up: boolean, error: string) => void)[] = [];

  constructor(readonly target: QueueTarget) {}

  attach(client: EventSource): void {
    client.on('ready', () => this.up());
    client.on('error', (e) => this.down(e instanceof Error ? e.message : String(e)));
    client.on('close', () => this.down(this.lastError === '' ? 'connection closed' : this.lastError));
  }

  /** Called when an operation failed for want of Redis. */
  down(error: string): void {
    if (error !== '') this.lastError = error.split('\n')[0] ?? error;
    if (AUTH_ERROR.test(error) && this.authError === null) {
      this.authError = error;
      this.reject?.(this.refused()!);
    }
    if (this.downSince === null) {
      this.downSince = performance.now();
      for (const l of this.listeners) l(false, this.lastError);
    }
  }

  up(): void {
    if (this.downSince !== null) {
      this.downSince = null;
      for (const l of this.listeners) l(true, '');
    }
  }

  onChange(l: (up: boolean, error: string) => void): void {
    this.listeners.push(l);
  }

  /** Milliseconds Redis has been unreachable (0 when up). */
  downForMs(): number {
    return this.downSince === null ? 0 : performance.now() - this.downSince;
  }

  get error(): string {
    return this.lastError;
  }

  /**
   * Throws QUEUE_AUTH at once when Redis refused the credentials (retrying cannot help), and
   * QUEUE_UNAVAILABLE once Redis has been unreachable for `limitMs` (0 = never).
   */
  check(limitMs: number, what: string): void {
    const auth = this.refused();
    if (auth !== null) throw auth;
    if (limitMs > 0 && this.downForMs() >= limitMs) throw this.unavailable(limitMs, what);
  }

  /** Rejects as soon as Redis refuses the credentials (to race an operation against; never resolves). */
  whenRefused(): Promise<never> {
    if (this.refusal === null) {
      this.refusal = new Promise<never>((_, reject) => (this.reject = reject));
      this.refusal.catch(() => undefined);
      const r = this.refused();
      if (r !== null) this.reject?.(r);
    }
    return this.refusal;
  }

  /** The credentials error, when Redis refused them. */
  refused(): BlisError | null {
    if (this.authError === null) return null;
    const why = /WRONGPASS|invalid password/.test(this.authError) ? 'a wrong user or password' : /NOPERM/.test(this.authError) ? 'a user without the permissions BullMQ needs' : 'no password';
    return new BlisError(QUEUE_AUTH, `Redis at ${this.target.display} refused the connection: ${why} (${this.authError.split(/[,.]/)[0] ?? ''}); set BLIS_REDIS_PASSWORD to its password, or give redis://user:password@host:port`);
  }

  unavailable(limitMs: number, what: string): BlisError {
    return new BlisError(QUEUE_UNAVAILABLE, `cannot reach Redis at ${this.target.display} for ${Math.round(limitMs / 1000)} s (${this.lastError || 'no answer'})${tlsHint(this.lastError)}: ${what}`);
  }
}

/** Resolves after `ms` without keeping the process alive (for races against closing connections). */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** Closes (`close`) within `ms`, else gives up waiting: with Redis gone a close may never settle. */
export async function closeWithin(close: () => Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([close().then(() => true, () => true), pause(ms).then(() => false)]);
}

export class DeadlineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadlineError';
  }
}

/** Resolves with `p`, or rejects with a {@link DeadlineError} after `ms` (the promise itself is left to settle). */
export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new DeadlineError(`${what}: no answer from Redis within ${ms} ms`)), ms);
    p.then((v) => {
      clearTimeout(t);
      resolve(v);
    }, (e: unknown) => {
      clearTimeout(t);
      reject(e instanceof Error ? e : new Error(String(e)));
    });
  });
}
