/**
 * Agentic session traces (upstream PRs #1485 `blis convert otel`, #1605 `blis convert weka`): the
 * source-agnostic session every reader produces and the shared encoder (encode.ts) turns into TraceV2 rows.
 */
import { BlisError } from '../../domain/errors.js';

/** One LLM call of a captured session, as a reader found it. */
export interface NormalizedRound {
  /** The call's whole prompt, in tokens (the encoder stores the delta to the previous round). */
  readonly inputTokensAbs: number;
  readonly outputTokens: number;
  /** µs after the session's first call. */
  readonly arrivalUs: number;
  /** Recorded client think time before this round, µs; 0 = not recorded. */
  readonly thinkUs: number;
  /** "ok" or "error". */
  readonly status: string;
  /** Recorded as a streaming call (Weka type "s"). */
  readonly streaming: boolean;
}

export interface AgenticSession {
  readonly id: string;
  readonly rounds: readonly NormalizedRound[];
}

/** One JSON document of the input: a whole file, or one line of a JSON-lines file. */
export interface AgenticDocument {
  /** The file as the user named it. */
  readonly file: string;
  /** 1-based line the document starts on (1 for a whole file). */
  readonly line: number;
  readonly text: string;
  /** True for a whole file (JSON), false for one line of a JSON-lines file. */
  readonly whole: boolean;
}

/** What both converters take besides the documents. */
export interface AgenticConvertOptions {
  /** Cap on the recorded gap between two calls of a session (µs); 0 = none. */
  readonly maxThinkTimeUs: number;
  /** Sessions with fewer usable calls are skipped. */
  readonly minRounds: number;
  /** Drop (with a warning) an LLM call without token counts instead of refusing the input. */
  readonly skipIncomplete: boolean;
  /** OTel only: session starts keep their offsets from the input's first call (default: every session at 0). */
  readonly keepOffsets?: boolean;
  /** OTel only: keep calls whose span status is an error. */
  readonly includeErrors?: boolean;
  readonly warn?: (message: string) => void;
}

/** A malformed agentic trace: the message names `file:line`, the field and the fix. */
export class AgenticTraceError extends BlisError {
  constructor(file: string, line: number, field: string, message: string) {
    super('AGENTIC_TRACE', `${file}:${line}: ${field}: ${message}`, { file, line, field });
    this.name = 'AgenticTraceError';
  }
}
