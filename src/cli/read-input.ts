/**
 * Reading an input file with a size cap enforced while reading: `--workload-spec /dev/zero` (or a FIFO, or a
 * multi-gigabyte file) is refused after the cap instead of being read until memory runs out.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { DEFAULT_TEXT_LIMITS, formatBytes } from '../format/yaml.js';
import { UsageError } from './errors.js';

function tooLarge(flag: string, path: string, maxBytes: number): never {
  throw new UsageError('INPUT_TOO_LARGE', `${flag}: ${path} is larger than ${formatBytes(maxBytes)}; blis-ts refuses inputs this large — split it or pass a smaller file`);
}

/**
 * The file's text (UTF-8).
 * @throws UsageError naming the flag when the file cannot be read, is a directory, or exceeds `maxBytes`.
 */
export function readInputText(path: string, flag: string, maxBytes: number = DEFAULT_TEXT_LIMITS.maxBytes): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new UsageError('io', `${flag}: cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new UsageError('io', `${flag}: ${path} is a directory; give a file`);
    if (st.isFile() && st.size > maxBytes) tooLarge(flag, path, maxBytes);
    const parts: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        if ((e as { code?: unknown }).code === 'EAGAIN') continue;
        throw new UsageError('io', `${flag}: cannot read ${path}: ${(e as Error).message}`);
      }
      if (n === 0) break;
      total += n;
      if (total > maxBytes) tooLarge(flag, path, maxBytes);
      parts.push(Buffer.from(chunk.subarray(0, n)));
    }
    return Buffer.concat(parts, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
