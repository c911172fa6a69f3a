/**
 * The input of `blis convert otel|weka`: a JSON file (one document), a `.jsonl` file (one document per
 * non-empty line), or a directory of them (`*.json` and `*.jsonl`, in name order, as upstream sorts them).
 * A `.jsonl` file is read line by line (real WekaTrace files are gigabytes: one line is one session with its
 * block hashes), so only a line at a time is held; one line may be up to {@link MAX_INPUT_BYTES}.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { formatBytes } from '../format/bytes.js';
import { splitDocuments } from '../workload/agentic/json-docs.js';
import type { AgenticDocument } from '../workload/agentic/types.js';
import { UsageError } from './errors.js';
import { MAX_INPUT_BYTES, firstInvalidUtf8, readInputFile } from './read-input.js';

/** The documents of a regular `.jsonl` file, one line at a time. */
function* jsonLines(file: string, flag: string): Generator<AgenticDocument> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError('io', `${flag}: cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message}; check the path`);
  }
  try {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const buf = Buffer.allocUnsafe(1 << 20);
    let carry = '';
    let line = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      let text: string;
      try {
        text = n === 0 ? decoder.decode() : decoder.decode(buf.subarray(0, n), { stream: true });
      } catch {
        // The line of the first invalid byte: those before it in this chunk, after the lines already read.
        const chunk = buf.subarray(0, n);
        const at = firstInvalidUtf8(chunk);
        const lines = (carry.match(/\n/g)?.length ?? 0) + chunk.subarray(0, at < 0 ? n : at).toString('latin1').split('\n').length;
        throw new UsageError('io', `${flag}: ${file}:${line + lines}: is not UTF-8 text (an invalid byte); pass a UTF-8 text file`);
      }
      const parts = (carry + text).split('\n');
      carry = n === 0 ? '' : parts.pop()!;
      for (const l of parts) {
        line++;
        if (l.includes('\0')) throw new UsageError('io', `${flag}: ${file}:${line}: holds binary data (a NUL byte); pass a UTF-8 text file`);
        if (l.trim() !== '') yield { file, line, text: l, whole: false };
      }
      if (carry.length > MAX_INPUT_BYTES) throw new UsageError('io', `${flag}: ${file}:${line + 1}: a line longer than ${formatBytes(MAX_INPUT_BYTES)}; split it (one JSON document a line)`);
      if (n === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

function isRegularFile(file: string): boolean {
  try {
    const fd = openSync(file, 'r');
    try {
      return fstatSync(fd).isFile();
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** The documents of `input`, lazily (a JSON-lines file is streamed). */
export function* readAgenticDocuments(input: string, flag: string): Generator<AgenticDocument> {
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
  for (const f of files) {
    if (f.endsWith('.jsonl') && isRegularFile(f)) yield* jsonLines(f, flag);
    else yield* splitDocuments(f, readInputFile(f, flag), f.endsWith('.jsonl'));
  }
}
