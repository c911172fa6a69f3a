/**
 * Incremental reader of an OpenAI-style SSE stream: `data: <json>` events ending with `data: [DONE]`. Each
 * data line is one chunk; malformed JSON or an in-band error object ends the stream as an error.
 */
export interface SseState {
  chunks: number;
  /** Arrival time (µs) of each chunk. */
  times: number[];
  done: boolean;
  /** Set on the first malformed or error chunk; reading stops there. */
  error: string;
  finishReason: string;
  completionTokens: number | null;
  promptTokens: number | null;
}

export class SseReader {
  readonly state: SseState = { chunks: 0, times: [], done: false, error: '', finishReason: '', completionTokens: null, promptTokens: null };
  private buf = '';
  private readonly decoder = new TextDecoder();

  /** Feeds bytes received at `timeUs`; returns false once reading should stop ([DONE] or an error). */
  push(bytes: Uint8Array, timeUs: number): boolean {
    this.buf += this.decoder.decode(bytes, { stream: true });
    let nl = this.buf.indexOf('\n');
    while (nl >= 0) {
      const line = this.buf.slice(0, nl).replace(/\r$/, '');
      this.buf = this.buf.slice(nl + 1);
      if (!this.line(line, timeUs)) return false;
      nl = this.buf.indexOf('\n');
    }
    return true;
  }

  /** The stream ended: a last unterminated line still counts. */
  end(timeUs: number): void {
    this.buf += this.decoder.decode();
    if (this.buf !== '' && !this.state.done && this.state.error === '') this.line(this.buf.replace(/\r$/, ''), timeUs);
    this.buf = '';
  }

  private line(line: string, timeUs: number): boolean {
    if (!line.startsWith('data:')) return true;
    const data = line.slice(line.startsWith('data: ') ? 6 : 5);
    const s = this.state;
    if (data === '[DONE]') {
      s.done = true;
      return false;
    }
    s.chunks++;
    s.times.push(timeUs);
    let obj: unknown;
    try {
      obj = JSON.parse(data) as unknown;
    } catch {
      s.error = `malformed SSE chunk ${s.chunks}: ${JSON.stringify(data.slice(0, 120))}`;
      return false;
    }
    if (typeof obj !== 'object' || obj === null) {
      s.error = `malformed SSE chunk ${s.chunks}: not a JSON object`;
      return false;
    }
    const o = obj as Record<string, unknown>;
    if (o['error'] !== undefined && o['error'] !== null) {
      const e = o['error'];
      const msg = typeof e === 'object' && e !== null ? (e as Record<string, unknown>)['message'] : e;
      s.error = `server error in stream: ${typeof msg === 'string' ? msg : JSON.stringify(msg)}`;
      return false;
    }
    readUsage(o, s);
    const choices = o['choices'];
    if (Array.isArray(choices) && choices.length > 0) {
      const c0 = choices[0] as Record<string, unknown> | null;
      const fr = c0 !== null && typeof c0 === 'object' ? c0['finish_reason'] : undefined;
      if (typeof fr === 'string' && fr !== '') s.finishReason = fr;
    }
    return true;
  }
}

/** Copies usage.completion_tokens / prompt_tokens when present. */
export function readUsage(o: Record<string, unknown>, s: { completionTokens: number | null; promptTokens: number | null }): void {
  const u = o['usage'];
  if (typeof u !== 'object' || u === null) return;
  const ct = (u as Record<string, unknown>)['completion_tokens'];
  const pt = (u as Record<string, unknown>)['prompt_tokens'];
  if (typeof ct === 'number') s.completionTokens = Math.trunc(ct);
  if (typeof pt === 'number') s.promptTokens = Math.trunc(pt);
}
