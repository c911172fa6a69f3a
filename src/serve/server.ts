/**
 * `blis serve`'s HTTP layer: vLLM's OpenAI-compatible routes over a {@link LiveEngine}. Every completion
 * request becomes one simulated request; streamed chunks leave when the simulation produces their tokens.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BodyParser, BodyTooLarge, readBody } from './body.js';
import type { LiveEngine, LiveHandle } from './live-engine.js';
import { ServeMetrics } from './metrics.js';
import {
  ApiError,
  fullResponse,
  roleChunk,
  tokenChunk,
  usageChunk,
  type ApiKind,
  type CompletionRequest,
  type ResponseIds,
  type ServeLimits,
} from './openai.js';

export interface ServeOptions {
  readonly engine: LiveEngine;
  readonly limits: ServeLimits;
  /** The name /v1/models lists and responses carry. */
  readonly modelName: string;
  /** Largest request body accepted (bytes). */
  readonly maxBodyBytes?: number;
}

export interface ServeHandle {
  readonly server: Server;
  readonly metrics: ServeMetrics;
  /** Stops the body worker (the HTTP server is closed by its owner). */
  close(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
/** Response header: the epoch µs at which the simulated request started (blis observe records it). */
export const ARRIVAL_HEADER = 'x-blis-arrival';

function sendJson(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...JSON_HEADERS, ...extra, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(res: ServerResponse, err: ApiError): void {
  // After a 413 the rest of the body is read and discarded (see readBody), so the client reads the answer
  // rather than a broken pipe; a body too large even for that gets the connection closed after the answer.
  const close = err instanceof BodyTooLarge && err.closeConnection;
  sendJson(res, err.status, err.body(), close ? { connection: 'close' } : {});
}

/** FastAPI's answer for routing errors: the reason phrase as message and type. */
function httpError(status: 404 | 405): ApiError {
  const phrase = status === 404 ? 'Not Found' : 'Method Not Allowed';
  return new ApiError(status, phrase, phrase);
}

/**
 * The client's send time from `x-request-start` (the de-facto proxy header: `t=<epoch>` or a bare number, in
 * s, ms or µs told apart by magnitude, as monitoring agents read it), as epoch µs; null when absent or unreadable.
 */
export function requestStartEpochUs(header: string | string[] | undefined): number | null {
  if (typeof header !== 'string') return null;
  const m = /^\s*(?:t=)?(\d+(?:\.\d+)?)\s*$/.exec(header);
  if (m === null) return null;
  const v = Number(m[1]);
  if (v > 1e15) return v;
  if (v > 1e12) return v * 1e3;
  if (v > 1e9) return v * 1e6;
  return null;
}

export function createServeServer(opts: ServeOptions): ServeHandle {
  const { engine, limits, modelName } = opts;
  const metrics = new ServeMetrics(modelName);
  const maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
  const parser = new BodyParser(limits);
  let counter = 0;
  const started = Math.floor(Date.now() / 1000);

  const complete = (kind: ApiKind, c: CompletionRequest, req: IncomingMessage, res: ServerResponse, arrivedUs: number): void => {
    counter++;
    const ids: ResponseIds = { id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${counter}`, created: Math.floor(Date.now() / 1000), model: c.adapter !== '' ? c.adapter : modelName };
    const prompt = c.input.length;
    metrics.promptTokens += prompt;
    // The llm-d objective header names the request's SLO class; the engine derives its priority from it.
    const objective = req.headers['x-gateway-inference-objective'];
    const sloClass = typeof objective === 'string' ? objective : '';
    let handle: LiveHandle | null = null;
    let done = false;
    // Set once the request is in the engine (before any token: the engine reports from the next turn on).
    let arrival: Record<string, string> = {};
    const write = (data: string): void => {
      if (!res.destroyed) res.write(`data: ${data}\n\n`);
    };
    handle = engine.submit(ids.id, c.input, c.outputLen, sloClass, {
      token(index, ttftUs, itlUs) {
        metrics.generationTokens++;
        if (index === 1) metrics.ttft.observe(ttftUs / 1e6);
        else metrics.itl.observe(itlUs / 1e6);
        if (!c.stream) return;
        if (index === 1 && kind === 'chat') write(roleChunk(ids));
        write(tokenChunk(kind, ids, index, index === c.outputLen));
      },
      finish(tokens, e2eUs) {
        done = true;
        metrics.e2e.observe(e2eUs / 1e6);
        metrics.finished('length');
        if (!c.stream) {
          sendJson(res, 200, fullResponse(kind, ids, prompt, tokens), arrival);
          return;
        }
        if (c.includeUsage) write(usageChunk(kind, ids, prompt, tokens));
        write('[DONE]');
        res.end();
      },
      fail(reason) {
        done = true;
        metrics.failed++;
        const err = new ApiError(500, reason, 'InternalServerError');
        if (!c.stream) {
          sendError(res, err);
          return;
        }
        // Headers are out already: report in-band, as vLLM does for errors after the stream started.
        write(err.body());
        write('[DONE]');
        res.end();
      },
    }, arrivedUs, c.adapter);
    // When the simulated request started (the arrival observe records, so a replay starts it then too).
    const epoch = engine.epochOfSimUs(handle.req.arrivalTime);
    if (epoch !== null) arrival = { [ARRIVAL_HEADER]: `t=${Math.round(epoch)}` };
    if (c.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', ...arrival });
      res.flushHeaders();
    }
    res.on('close', () => {
      if (!done && handle !== null) {
        metrics.finished('abort');
        engine.abort(handle);
      }
    });
  };

  const server = createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
    const url = (req.url ?? '/').split('?')[0] ?? '/';
    const route = `${req.method ?? 'GET'} ${url}`;
    switch (route) {
      case 'GET /health':
        // Tells blis observe that requests start at their x-request-start, so it may send them ahead.
        res.writeHead(200, { 'content-length': 0, 'x-blis-request-start': 'honored' });
        res.end();
        return;
      case 'GET /metrics': {
        const body = metrics.render(engine.stats());
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      case 'GET /v1/models':
        sendJson(res, 200, JSON.stringify({
          object: 'list',
          // vLLM's ModelCard, field for field (an emulator of vLLM reports itself as vLLM does); LoRA modules as vLLM
          // lists them: their own id, the base model as parent.
          data: [modelName, ...(limits.adapterNames ?? [])].map((id) => ({
            id, object: 'model', created: started, owned_by: 'vllm', root: id, parent: id === modelName ? null : modelName, max_model_len: limits.maxModelLen,
            permission: [{
              id: `modelperm-${id}`, object: 'model_permission', created: started, allow_create_engine: false, allow_sampling: true, allow_logprobs: true,
              allow_search_indices: false, allow_view: true, allow_fine_tuning: false, organization: '*', group: null, is_blocking: false,
            }],
          })),
        }));
        return;
      case 'POST /v1/completions':
      case 'POST /v1/chat/completions': {
        const kind: ApiKind = url === '/v1/completions' ? 'completions' : 'chat';
        // Arrival: when the client sent it, if it says so and the simulation has not moved past that yet;
        // else when it reached the server. Reading and parsing the body never count against it.
        const sent = requestStartEpochUs(req.headers['x-request-start']);
        const arrivedUs = sent === null ? engine.nowUs() : engine.arrivalFromEpochUs(sent);
        readBody(req, maxBody)
          .then((bytes) => parser.parse(kind, bytes))
          .then((c) => {
            if (!res.destroyed) complete(kind, c, req, res, arrivedUs);
          })
          .catch((e: unknown) => {
            metrics.failed++;
            sendError(res, e instanceof ApiError ? e : new ApiError(500, e instanceof Error ? e.message : String(e), 'InternalServerError'));
          });
        return;
      }
      default: {
        const known = ['/health', '/metrics', '/v1/models', '/v1/completions', '/v1/chat/completions'].includes(url);
        sendError(res, httpError(known ? 405 : 404));
      }
    }
  });
  return { server, metrics, close: () => parser.close() };
}
