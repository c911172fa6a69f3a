/**
 * The input of `blis convert otel|weka`: a JSON file (one document), a `.jsonl` file (one document per
 * non-empty line), or a directory of them (`*.json` and `*.jsonl`, in name order, as upstream sorts them).
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { splitDocuments } from '../workload/agentic/json-docs.js';
import type { AgenticDocument } from '../workload/agentic/types.js';
import { UsageError } from './errors.js';
import { readInputFile } from './read-input.js';

export function readAgenticDocuments(input: string, flag: string): AgenticDocument[] {
  let dir = false;
  try {
    dir = statSync(input).isDirectory();
  } catch {
    // readInputFile names a missing file with its fix.
  }
  const files = dir
    ? readdirSync(input)
        .filter((n) => n.endsWith('.json') || n.endsWith('.jsonl'))
        .sort()
        .map((n) => path.join(input, n))
    : [input];
  if (dir && files.length === 0) throw new UsageError('bad-flag', `${flag} ${input}: the directory holds no *.json or *.jsonl file; give a trace file or a directory of them`);
  return files.flatMap((f) => splitDocuments(f, readInputFile(f, flag), f.endsWith('.jsonl')));
}
