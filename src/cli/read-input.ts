/**
 * The one way the CLI reads an input file (specs, bundles, traces, model and hardware files, suites, candidates,
 * calibrate inputs): bounded and never blocking.
 *
 * - At most `maxBytes + 1` bytes are read, so `/dev/zero` or an endless pipe fails as "larger than" at once
 *   instead of filling memory; a regular file's size is checked before reading.
 * - The file is opened non-blocking: a named pipe with no writer fails at once ("sent nothing") instead of
 *   hanging in open(2); a pipe whose writer is slow is waited for, with a deadline.
 * - Directories, binary data (a NUL byte) and text that is not UTF-8 are refused with the position, never the
 *   bytes.
 * Every failure is one {@link ConfigError} naming the option, the path and the fix.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { formatBytes } from '../format/bytes.js';
import { ConfigError } from '../sim/config-error.js';

/** Default cap of YAML and JSON inputs (src/format/yaml.ts uses the same). */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;
/** Cap of CSV inputs (traces): about 1.7M trace rows; JavaScript strings stop at 2^29 characters. */
export const MAX_CSV_INPUT_BYTES = 256 * 1024 * 1024;
/** JavaScript strings stop at 2^29 - 24 characters: no cap may exceed what one string can hold. */
const STRING_CEILING = 2 ** 29 - 24;
/** How long a pipe may stay silent before the read gives up. */
const PIPE_IDLE_MS = 10_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function fail(option: string, path: string, problem: string, fix: string): never {
  throw new ConfigError('io', `${option}: ${path}: ${problem}; ${fix}`);
}

/** Reads `path` (named by `option` in messages) as UTF-8 text of at most `maxBytes` bytes. */
export function readInputFile(path: string, option: string, cap = MAX_INPUT_BYTES): string {
  const maxBytes = Math.min(cap, STRING_CEILING);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message;
    throw new ConfigError('io', `${option}: cannot read ${path}: ${why}; check the path`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) fail(option, path, 'is a directory', 'pass a file');
    if (st.isFile() && st.size > maxBytes) {
      fail(option, path, `the file is larger than ${formatBytes(maxBytes)} (${formatBytes(st.size)})`, 'blis-ts refuses inputs this large — split it or pass a smaller file');
    }
    const stream = !st.isFile();
    const bytes = readBounded(fd, maxBytes, option, path, stream);
    if (bytes.length === 0 && st.isFIFO()) fail(option, path, 'is a named pipe that sent nothing (no writer?)', 'write the input to a file, or start the writer first');
    return decodeText(bytes, option, path);
  } finally {
    closeSync(fd);
  }
}

function readBounded(fd: number, maxBytes: number, option: string, path: string, stream: boolean): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let idleSince = performance.now();
  for (;;) {
    const want = Math.min(1 << 20, maxBytes + 1 - total);
    const buf = Buffer.allocUnsafe(want);
    let n: number;
    try {
      n = readSync(fd, buf, 0, want, null);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EAGAIN' && stream) {
        if (performance.now() - idleSince > PIPE_IDLE_MS) fail(option, path, `nothing arrived for ${PIPE_IDLE_MS / 1000} s`, 'write the input to a file and pass its path');
        Atomics.wait(sleeper, 0, 0, 10);
        continue;
      }
      if (err.code === 'EISDIR') fail(option, path, 'is a directory', 'pass a file');
      throw new ConfigError('io', `${option}: cannot read ${path}: ${err.message}`);
    }
    if (n === 0) break;
    chunks.push(n === want ? buf : buf.subarray(0, n));
    total += n;
    idleSince = performance.now();
    if (total > maxBytes) {
      fail(option, path, `the input is larger than ${formatBytes(maxBytes)}`, 'blis-ts refuses inputs this large — split it or pass a smaller file');
    }
  }
  return Buffer.concat(chunks, total);
}

/** UTF-8 text; NUL bytes (binary data) and invalid UTF-8 are errors at their line and byte offset. */
function decodeText(bytes: Buffer, option: string, path: string): string {
  const nul = bytes.indexOf(0);
  const bad = nul >= 0 ? nul : firstInvalidUtf8(bytes);
  if (bad >= 0) {
    let line = 1;
    for (let i = bytes.indexOf(10); i >= 0 && i < bad; i = bytes.indexOf(10, i + 1)) line++;
    const what = nul >= 0 ? `holds binary data (a NUL byte at line ${line}, byte ${bad + 1})` : `is not UTF-8 text (an invalid byte at line ${line}, byte ${bad + 1})`;
    fail(option, path, what, 'pass a UTF-8 text file (re-save it as UTF-8, or check the path)');
  }
  return bytes.toString('utf8');
}

/** Offset of the first byte that is not part of a well-formed UTF-8 sequence, or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) [need, min] = [1, 0x80];
    else if (c >= 0xe0 && c <= 0xef) [need, min] = [2, 0x800];
    else if (c >= 0xf0 && c <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    let cp = c & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || (d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}
