/**
 * A small OpenAI-style server on loopback that injects one fault per streaming request, round-robin over
 * {@link FAULTS}, and remembers which fault each `x-request-id` got. Non-streaming requests (observe's
 * tokens-per-word calibration) are answered normally.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAULTS = ['ok', 'http500', 'slow-first-byte', 'reset-mid-stream', 'malformed-sse', 'truncated'] as const;
export type Fault = (typeof FAULTS)[number];

export interface FaultServer {
  readonly url: string;
  /** x-request-id → fault served. */
  readonly served: Map<string, Fault>;
  close(): Promise<void>;
}

function chunk(text: string, finish: string | null): string {
  return `data: ${JSON.stringify({ id: 'cmpl-x', object: 'text_completion', created: 0, model: 'm', choices: [{ index: 0, text, finish_reason: finish }] })}\n\n`;
}

export async function startFaultServer(slowMs: number): Promise<FaultServer> {
  const served = new Map<string, Fault>();
  const timers = new Set<NodeJS.Timeout>();
  let n = 0;
  const later = (ms: number, f: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };
  const normal = (res: ServerResponse): void => {
    res.write(chunk(' a', null));
    res.write(chunk(' b', 'length'));
    res.write(`data: ${JSON.stringify({ id: 'cmpl-x', object: 'text_completion', created: 0, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"Not Found","type":"Not Found","param":null,"code":404}}');
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean; prompt?: string };
      if (body.stream !== true) {
        const words = (body.prompt ?? '').split(/\s+/).filter((w) => w !== '').length;
        const text = JSON.stringify({ id: 'cmpl-c', object: 'text_completion', choices: [{ index: 0, text: ' x', finish_reason: 'length' }], usage: { prompt_tokens: words, completion_tokens: 1, total_tokens: words + 1 } });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text);
        return;
      }
      const fault = FAULTS[n++ % FAULTS.length] as Fault;
      served.set(String(req.headers['x-request-id']), fault);
      if (fault === 'http500') {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"object":"error","message":"injected failure","code":500}');
        return;
      }
      if (fault === 'slow-first-byte') {
        later(slowMs, () => {
          if (res.destroyed) return;
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          normal(res);
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (fault === 'ok') normal(res);
      else if (fault === 'reset-mid-stream') {
        res.write(chunk(' a', null));
        later(20, () => res.socket?.destroy());
      } else if (fault === 'malformed-sse') {
        res.write(chunk(' a', null));
        res.end('data: {"choices": [ not json\n\ndata: [DONE]\n\n');
      } else {
        res.write(chunk(' a', null));
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
