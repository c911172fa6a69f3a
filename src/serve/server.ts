/**
 * `blis serve`'s HTTP layer: vLLM's OpenAI-compatible routes over a {@link LiveEngine}. Every completion
 * request becomes one simulated request; streamed chunks leave when the simulation produces their tokens.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { LiveEngine, LiveHandle } from './live-engine.js';
import { ServeMetrics } from './metrics.js';
import {
  ApiError,
  fullResponse,
  parseCompletionRequest,
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
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function sendJson(res: ServerResponse, status: number, body: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new ApiError(413, `request body larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export function createServeServer(opts: ServeOptions): ServeHandle {
  const { engine, limits, modelName } = opts;
  const metrics = new ServeMetrics(modelName);
  const maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
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
    if (c.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
    }
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
          sendJson(res, 200, fullResponse(kind, ids, prompt, tokens));
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
          sendJson(res, 500, err.body());
          return;
        }
        // Headers are out already: report in-band, as vLLM does for errors after the stream started.
        write(JSON.stringify({ error: { object: 'error', message: reason, type: err.type, param: null, code: 500 } }));
        write('[DONE]');
        res.end();
      },
    }, arrivedUs, c.adapter);
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
        res.writeHead(200, { 'content-length': 0 });
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
          data: [
            { id: modelName, object: 'model', created: started, owned_by: 'blis', root: modelName, parent: null, max_model_len: limits.maxModelLen },
            // LoRA modules, listed as vLLM lists them: their own id, the base model as parent.
            ...(limits.adapterNames ?? []).map((a) => ({ id: a, object: 'model', created: started, owned_by: 'blis', root: a, parent: modelName, max_model_len: limits.maxModelLen })),
          ],
        }));
        return;
      case 'POST /v1/completions':
      case 'POST /v1/chat/completions': {
        const kind: ApiKind = url === '/v1/completions' ? 'completions' : 'chat';
        const arrivedUs = engine.nowUs();
        readBody(req, maxBody)
          .then((text) => {
            let body: unknown;
            try {
              body = JSON.parse(text) as unknown;
            } catch (e) {
              throw new ApiError(400, `request body is not valid JSON: ${(e as Error).message}`);
            }
            complete(kind, parseCompletionRequest(kind, body, limits), req, res, arrivedUs);
          })
          .catch((e: unknown) => {
            metrics.failed++;
            const err = e instanceof ApiError ? e : new ApiError(500, e instanceof Error ? e.message : String(e), 'InternalServerError');
            sendJson(res, err.status, err.body());
          });
        return;
      }
      default: {
        const known = ['/health', '/metrics', '/v1/models', '/v1/completions', '/v1/chat/completions'].includes(url);
        const err = known ? new ApiError(405, `method ${req.method ?? ''} not allowed on ${url}`, 'MethodNotAllowed') : new ApiError(404, `no route ${url}`);
        sendJson(res, err.status, err.body());
      }
    }
  });
  return { server, metrics };
}
