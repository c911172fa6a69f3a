/**
 * Reading a ServeGen directory for the pure converter (src/workload/servegen): the `chunk-*-trace.csv` files in
 * byte order of their names (the reference globs and sorts them), each with its `chunk-<id>-dataset.json`.
 * Reads are bounded: a file larger than {@link MAX_FILE_BYTES}, more than {@link MAX_TOTAL_BYTES} in all or more
 * than {@link MAX_CHUNKS} chunks is one clear error instead of an exhausted process.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { byteOrder, datasetFileName, type ServeGenChunkFiles } from '../workload/servegen/index.js';
import { UsageError } from './errors.js';

export const MAX_FILE_BYTES = 256 * 1024 * 1024;
export const MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024;
export const MAX_CHUNKS = 100_000;

const TRACE = /^chunk-(.*)-trace\.csv$/s;

/** The directory's chunks; `option` names where the directory came from (`--path`, `servegen_data.path`). */
export function readServeGenDir(dir: string, option: string): ServeGenChunkFiles[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new UsageError('io', `${option}: cannot read the ServeGen directory ${dir}: ${(e as Error).message}`);
  }
  const traces = names.filter((n) => TRACE.test(n)).sort(byteOrder);
  if (traces.length > MAX_CHUNKS) throw new UsageError('too-large', `${option}: ${dir} has ${traces.length} chunk traces; at most ${MAX_CHUNKS} are read`);
  let total = 0;
  const read = (name: string): string | null => {
    const file = path.join(dir, name);
    let size: number;
    try {
      const st = statSync(file);
      if (!st.isFile()) return null;
      size = st.size;
    } catch {
      return null;
    }
    if (size > MAX_FILE_BYTES) throw new UsageError('too-large', `${option}: ${file} is ${size} bytes; ServeGen files above ${MAX_FILE_BYTES} bytes are not read`);
    total += size;
    if (total > MAX_TOTAL_BYTES) throw new UsageError('too-large', `${option}: the ServeGen files of ${dir} exceed ${MAX_TOTAL_BYTES} bytes in all`);
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError('io', `${option}: cannot read ${file}: ${(e as Error).message}`);
    }
  };
  const out: ServeGenChunkFiles[] = [];
  for (const name of traces) {
    const id = TRACE.exec(name)![1]!;
    const trace = read(name);
    if (trace === null) throw new UsageError('io', `${option}: ${path.join(dir, name)} is not a readable file`);
    out.push({ id, trace, dataset: read(datasetFileName(id)) });
  }
  return out;
}
