/**
 * One request to an OpenAI-compatible server, timed on observe's clock. Every call resolves (never throws)
 * with exactly one status: ok, error (non-200, connection failure or reset, malformed or truncated stream,
 * interruption) or timeout (the whole exchange exceeded the per-request timeout).
 */
import { randomUUID } from 'node:crypto';
import { readUsage, SseReader } from './sse.js';

export type ApiFormat = 'completions' | 'chat';

export interface ClientConfig {
  /** Base URL without a trailing slash. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey: string;
  readonly apiFormat: ApiFormat;
  readonly timeoutMs: number;
  /** Observe's clock: µs since the observation started. */
  readonly clock: () => number;
  /** Aborts every request in flight (Ctrl-C). */
  readonly stop: AbortSignal;
  /**
   * For a server that starts requests at their `x-request-start` (blis serve says so on /health): send each
   * request this many µs before its arrival, stamped with the arrival, so it is there in time (0 = send at the
   * arrival, stamped with the send time).
   */
  readonly leadUs?: number;
  /** Epoch µs of an instant of {@link clock} (for `x-request-start`), and back. */
  readonly epochUs?: (clockUs: number) => number;
  readonly clockOfEpochUs?: (epochUs: number) => number;
}

/** blis serve's response header: when (epoch µs) the simulated request started. */
const ARRIVAL_HEADER = 'x-blis-arrival';

/** The header blis serve puts on /health: it starts a request at its `x-request-start` when that is ahead. */
export const REQUEST_START_HEADER = 'x-blis-request-start';

export interface PendingRequest {
  readonly prompt: string;
  /** Planned output length; <= 0 asks for the 2048 default. */
  readonly maxOutputTokens: number;
  /** Exact-length mode: min_tokens = max_tokens (0 = not sent). */
  readonly minTokens: number;
  readonly unconstrained: boolean;
  readonly streaming: boolean;
  readonly sloClass: string;
  /** vLLM priority for the class (sent when a class is set). */
  readonly vllmPriority: number;
  readonly tenantId: string;
  readonly sloTargetUs: number;
  /** LoRA adapter: sent as the request's `model`, as vLLM addresses LoRA modules ('' = the base model). */
  readonly adapter?: string;
}

export type RequestStatus = 'ok' | 'error' | 'timeout';

export interface SendResult {
  status: RequestStatus;
  errorMessage: string;
  xRequestId: string;
  sendTimeUs: number;
  firstChunkTimeUs: number;
  lastChunkTimeUs: number;
  numChunks: number;
  finishReason: string;
  outputTokens: number;
  serverInputTokens: number;
  /** Per-chunk arrival times (streaming). */
  chunkTimes: number[];
}

const DEFAULT_MAX_OUTPUT = 2048;
const MAX_INT32 = 2147483647;

export function requestBody(p: PendingRequest, cfg: Pick<ClientConfig, 'model' | 'apiFormat'>): Record<string, unknown> {
  const body: Record<string, unknown> = { model: p.adapter !== undefined && p.adapter !== '' ? p.adapter : cfg.model, stream: p.streaming };
  if (!p.unconstrained) body['max_tokens'] = p.maxOutputTokens > 0 ? p.maxOutputTokens : DEFAULT_MAX_OUTPUT;
  else if (cfg.apiFormat === 'completions') body['max_tokens'] = MAX_INT32;
  if (p.minTokens > 0) body['min_tokens'] = p.minTokens;
  if (cfg.apiFormat === 'chat') body['messages'] = [{ role: 'user', content: p.prompt }];
  else body['prompt'] = p.prompt;
  if (p.streaming) body['stream_options'] = { include_usage: true };
  if (p.sloClass !== '') body['priority'] = p.vllmPriority;
  return body;
}

function headersFor(p: PendingRequest, cfg: ClientConfig, xRequestId: string, startUs: number): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': xRequestId };
  // When the request entered, as proxies stamp it: blis serve starts the simulated request then, so neither the
  // loopback path nor a busy client shifts it (other servers ignore the header).
  const epoch = cfg.epochUs !== undefined ? cfg.epochUs(startUs) : (performance.timeOrigin + performance.now()) * 1000;
  h['x-request-start'] = `t=${Math.round(epoch)}`;
  if (cfg.apiKey !== '') h['authorization'] = `Bearer ${cfg.apiKey}`;
  if (p.tenantId !== '') h['x-gateway-inference-fairness-id'] = p.tenantId;
  if (p.sloClass !== '') h['x-gateway-inference-objective'] = p.sloClass;
  if (p.sloTargetUs > 0) h['x-slo-ttft-ms'] = String(Math.ceil(p.sloTargetUs / 1000));
  return h;
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message;
}

/** `arrivalUs`: when the request is due (observe's clock); with a lead it is sent early and counts from then. */
export async function sendRequest(p: PendingRequest, cfg: ClientConfig, arrivalUs?: number): Promise<SendResult> {
  const r: SendResult = {
    status: 'ok',
    errorMessage: '',
    xRequestId: randomUUID(),
    sendTimeUs: 0,
    firstChunkTimeUs: 0,
    lastChunkTimeUs: 0,
    numChunks: 0,
    finishReason: '',
    outputTokens: 0,
    serverInputTokens: 0,
    chunkTimes: [],
  };
  const timeout = AbortSignal.timeout(cfg.timeoutMs);
  const signal = AbortSignal.any([timeout, cfg.stop]);
  // Failures are classified by which signal fired, not by the error's shape (undici wraps them variously).
  const fail = (phase: string, e: unknown): SendResult => {
    if (timeout.aborted) {
      r.status = 'timeout';
      r.errorMessage = `timeout after ${cfg.timeoutMs / 1000}s (${phase})`;
    } else {
      r.status = 'error';
      r.errorMessage = cfg.stop.aborted ? `interrupted (${phase})` : `${phase}: ${describe(e)}`;
    }
    return r;
  };
  const url = `${cfg.baseUrl}${cfg.apiFormat === 'chat' ? '/v1/chat/completions' : '/v1/completions'}`;
  const now = cfg.clock();
  // Sent ahead of its arrival (lead), the request counts from its arrival: the server starts it then.
  r.sendTimeUs = (cfg.leadUs ?? 0) > 0 && arrivalUs !== undefined && arrivalUs > now ? arrivalUs : now;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: headersFor(p, cfg, r.xRequestId, r.sendTimeUs), body: JSON.stringify(requestBody(p, cfg)), signal });
  } catch (e) {
    return fail('HTTP error', e);
  }
  // With a lead, the server says when it started the request: the trace records that, so a replay starts it
  // at the same instant even when this request reached the server late (a stalled client or machine).
  const started = res.headers.get(ARRIVAL_HEADER);
  if ((cfg.leadUs ?? 0) > 0 && started !== null && cfg.clockOfEpochUs !== undefined) {
    const m = /^t=(\d+)$/.exec(started);
    // Never before the stamped start: the server does not start a request early, and converting its epoch time
    // back to this clock can round a microsecond below the stamp.
    if (m !== null) r.sendTimeUs = Math.max(r.sendTimeUs, Math.round(cfg.clockOfEpochUs(Number(m[1]))));
  }
  if (res.status !== 200) {
    try {
      const text = await res.text();
      r.status = 'error';
      r.errorMessage = `HTTP ${res.status}: ${text}`;
      return r;
    } catch (e) {
      return fail(`HTTP ${res.status} (body read failed)`, e);
    }
  }
  if (res.body === null) {
    r.status = 'error';
    r.errorMessage = 'HTTP 200 without a body';
    return r;
  }
  const reader = res.body.getReader();
  try {
    return p.streaming ? await readStream(reader, r, cfg) : await readWhole(reader, r, cfg);
  } catch (e) {
    return fail(p.streaming ? 'streaming error' : 'read error', e);
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

async function readStream(reader: ReadableStreamDefaultReader<Uint8Array>, r: SendResult, cfg: ClientConfig): Promise<SendResult> {
  const sse = new SseReader();
  for (;;) {
    const { done, value } = await reader.read();
    const now = cfg.clock();
    if (done) {
      sse.end(now);
      break;
    }
    if (!sse.push(value, now)) break;
  }
  const s = sse.state;
  r.numChunks = s.chunks;
  r.chunkTimes = s.times;
  r.firstChunkTimeUs = s.times[0] ?? 0;
  r.lastChunkTimeUs = s.times[s.times.length - 1] ?? 0;
  r.finishReason = s.finishReason;
  if (s.completionTokens !== null) r.outputTokens = s.completionTokens;
  if (s.promptTokens !== null) r.serverInputTokens = s.promptTokens;
  if (s.error !== '') {
    r.status = 'error';
    r.errorMessage = s.error;
  } else if (!s.done) {
    r.status = 'error';
    r.errorMessage = `truncated stream: the response ended after ${s.chunks} chunk(s) without data: [DONE]`;
  }
  return r;
}

async function readWhole(reader: ReadableStreamDefaultReader<Uint8Array>, r: SendResult, cfg: ClientConfig): Promise<SendResult> {
  const parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (r.firstChunkTimeUs === 0 && value.length > 0) r.firstChunkTimeUs = cfg.clock();
    parts.push(value);
  }
  const end = cfg.clock();
  if (r.firstChunkTimeUs === 0) r.firstChunkTimeUs = end;
  r.lastChunkTimeUs = end;
  r.numChunks = 1;
  let obj: unknown;
  try {
    obj = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
  } catch (e) {
    r.status = 'error';
    r.errorMessage = `JSON parse error: ${(e as Error).message}`;
    return r;
  }
  if (typeof obj === 'object' && obj !== null) {
    const o = obj as Record<string, unknown>;
    const u = { completionTokens: null as number | null, promptTokens: null as number | null };
    readUsage(o, u);
    if (u.completionTokens !== null) r.outputTokens = u.completionTokens;
    if (u.promptTokens !== null) r.serverInputTokens = u.promptTokens;
    const choices = o['choices'];
    if (Array.isArray(choices) && choices.length > 0) {
      const fr = (choices[0] as Record<string, unknown> | null)?.['finish_reason'];
      if (typeof fr === 'string') r.finishReason = fr;
    }
  }
  return r;
}
