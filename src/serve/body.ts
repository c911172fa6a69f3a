/**
 * Request bodies of `blis serve`: read with a size limit, then decoded (strict UTF-8), parsed and tokenised.
 * Small bodies are handled inline; large ones in a worker thread, so a multi-megabyte prompt never holds up the
 * event loop that paces every other stream (decoding, JSON.parse and word splitting of a 5M-word prompt take
 * a few hundred ms in one piece).
 */
import { fileURLToPath } from 'node:url';
import type { IncomingMessage } from 'node:http';
import { Piscina } from 'piscina';
import { ApiError, invalidRequest, parseCompletionRequest, type ApiKind, type CompletionRequest, type ServeLimits } from './openai.js';

/** Bodies up to this size are parsed inline (a few ms at most); larger ones go to the worker. */
export const INLINE_BODY_BYTES = 256 * 1024;

/** Decodes, parses and validates one body (the worker runs the same function). */
export function parseRequestBytes(kind: ApiKind, bytes: Uint8Array, limits: ServeLimits): CompletionRequest {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // What FastAPI answers when the body cannot be decoded.
    throw invalidRequest('There was an error parsing the body: it is not valid UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch (e) {
    throw invalidRequest(`JSON decode error: ${(e as Error).message}`);
  }
  return parseCompletionRequest(kind, body, limits);
}

/** The worker's answer: the parsed request, or the error to send. */
export type ParseOutcome =
  | { readonly ok: true; readonly req: CompletionRequest }
  | { readonly ok: false; readonly status: number; readonly message: string; readonly type: string; readonly param: string | null };

export function parseOutcome(kind: ApiKind, bytes: Uint8Array, limits: ServeLimits): ParseOutcome {
  try {
    return { ok: true, req: parseRequestBytes(kind, bytes, limits) };
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, status: e.status, message: e.message, type: e.type, param: e.param };
    const message = e instanceof Error ? e.message : String(e);
    return { ok: false, status: 500, message: `internal error while parsing the request: ${message}`, type: 'InternalServerError', param: null };
  }
}

/**
 * The built worker module, dist/serve/body-worker.js (an entry point of the bundle). This code may sit in any
 * bundle chunk under dist/, or in src/ when tests run from sources (they use the build beside them).
 */
function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return here.replace(/\/src\/serve\/body\.ts$/, '/dist/serve/body-worker.js');
  return `${here.slice(0, here.lastIndexOf('/dist/') + '/dist/'.length)}serve/body-worker.js`;
}

/** Parses bodies inline or on one worker thread, created on the first large body. */
export class BodyParser {
  private pool: Piscina | null = null;

  constructor(private readonly limits: ServeLimits) {}

  async parse(kind: ApiKind, bytes: Uint8Array): Promise<CompletionRequest> {
    const outcome = bytes.length <= INLINE_BODY_BYTES ? parseOutcome(kind, bytes, this.limits) : await this.offload(kind, bytes);
    if (!outcome.ok) throw new ApiError(outcome.status, outcome.message, outcome.type, outcome.param);
    return outcome.req;
  }

  private offload(kind: ApiKind, bytes: Uint8Array): Promise<ParseOutcome> {
    // One thread: large bodies are rare, and the engine's own thread must keep a core.
    this.pool ??= new Piscina({ filename: workerFile(), minThreads: 0, maxThreads: 1, idleTimeout: 30_000, workerData: this.limits });
    // Moved, not copied, when the bytes own their buffer (BodyReader allocates them that way).
    const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    return this.pool.run(Piscina.move(owned), { name: kind }) as Promise<ParseOutcome>;
  }

  async close(): Promise<void> {
    const p = this.pool;
    this.pool = null;
    if (p !== null) await p.destroy();
  }
}

/** Why a body was not read. */
export class BodyTooLarge extends ApiError {
  /** `closeConnection`: the body is too large even to be drained; the connection ends after the answer. */
  constructor(limit: number, readonly closeConnection: boolean) {
    super(413, `The request body is larger than the server's limit of ${limit} bytes.`, 'Request Entity Too Large');
  }
}

/**
 * Reads a request body into one buffer of its own (moveable to the worker) without a final concatenation:
 * preallocated from Content-Length, else grown by doubling. Rejects with {@link BodyTooLarge} as soon as the
 * declared or received size passes `limit`; the rest of the body is then read and discarded (so the client
 * reads the 413 rather than a reset) until `limit` more bytes, after which the connection is dropped.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const known = Number.isSafeInteger(declared) && declared >= 0 && declared <= limit;
    // The declared size is allocated at once: growing would copy tens of MB on the event loop. Pages a slow
    // client has not filled yet are not resident.
    let buf = new Uint8Array(new ArrayBuffer(known ? declared : Math.min(64 * 1024, limit)));
    let size = 0;
    let rejected = false;
    const tooLarge = (): void => {
      rejected = true;
      buf = new Uint8Array(0);
      reject(new BodyTooLarge(limit, Number.isSafeInteger(declared) && declared > 2 * limit));
    };
    if (Number.isSafeInteger(declared) && declared > limit) tooLarge();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (rejected) {
        if (size > 2 * limit) req.destroy();
        return;
      }
      if (size > limit) {
        tooLarge();
        return;
      }
      if (size > buf.length) {
        const grown = new Uint8Array(new ArrayBuffer(Math.min(Math.max(buf.length * 2, size), limit)));
        grown.set(buf.subarray(0, size - c.length));
        buf = grown;
      }
      buf.set(c, size - c.length);
    });
    req.on('end', () => {
      if (!rejected) resolve(size === buf.length ? buf : buf.subarray(0, size));
    });
    req.on('error', (e) => {
      if (!rejected) reject(e);
    });
  });
}
