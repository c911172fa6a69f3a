/**
 * JSON documents of an agentic trace input, parsed with their positions: a syntax error, and any field error
 * found after parsing, name `file:line` (the line of the document inside a JSON-lines file).
 */
import { locateJson } from '../../format/json-locate.js';
import { parseJson } from '../../format/json.js';
import { AgenticTraceError, type AgenticDocument } from './types.js';

/** The documents of one input file: each non-empty line of a `.jsonl` file, else the whole file. */
export function splitDocuments(file: string, text: string, jsonLines: boolean): AgenticDocument[] {
  if (!jsonLines) return [{ file, line: 1, text, whole: true }];
  const docs: AgenticDocument[] = [];
  const lines = text.split('\n');
  lines.forEach((l, i) => {
    if (l.trim() !== '') docs.push({ file, line: i + 1, text: l, whole: false });
  });
  return docs;
}

/** The document's value. @throws AgenticTraceError (invalid JSON) at the document's line. */
export function parseDocument(doc: AgenticDocument): unknown {
  if (doc.whole) return parseJson(doc.text, doc.file, { code: 'AGENTIC_TRACE' });
  try {
    return JSON.parse(doc.text) as unknown;
  } catch (e) {
    const what = (e as Error).message.replace(/ in JSON at position \d+.*$/, '').replace(/, ".*" is not valid JSON$/s, '');
    throw new AgenticTraceError(doc.file, doc.line, 'JSON', `invalid JSON: ${what}; each line of a JSON-lines file must be one JSON document`);
  }
}

/** An error at the value `path` (keys and indices from the document's root) names. */
export function fieldError(doc: AgenticDocument, path: readonly (string | number)[], field: string, message: string): AgenticTraceError {
  const at = locateJson(doc.text, path);
  return new AgenticTraceError(doc.file, doc.line - 1 + at.line, field, message);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
