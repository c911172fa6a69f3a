/** Positions in a parsed sweep file, for errors at `file:line:col`. */
import { isMap, isScalar, isSeq } from 'yaml';
import { BlisError } from '../domain/errors.js';
import type { ParsedYaml } from '../format/yaml.js';

export const SWEEP_FILE_ERROR = 'SWEEP_FILE';

export type YamlPath = readonly (string | number)[];

/** The node at `path` (or its nearest existing ancestor); `key` asks for the map key's position instead of its value's. */
function offsetOf(parsed: ParsedYaml, path: YamlPath, key: boolean): number {
  let node = parsed.deref(parsed.doc.contents);
  let offset = node?.range?.[0] ?? 0;
  for (let i = 0; i < path.length && node !== null; i++) {
    const seg = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (pair === undefined) break;
      const last = i === path.length - 1;
      const k = pair.key as { range?: [number, number, number] };
      if (last && key) return k.range?.[0] ?? offset;
      node = parsed.deref(pair.value);
      offset = node?.range?.[0] ?? k.range?.[0] ?? offset;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = parsed.deref(node.items[seg]);
      if (node === null) break;
      offset = node.range?.[0] ?? offset;
    } else break;
  }
  return offset;
}

/** `a.b[2].c` for messages. */
export function fieldName(path: YamlPath): string {
  return path.map((x) => (typeof x === 'number' ? `[${x}]` : `.${x}`)).join('').replace(/^\./, '');
}

/** A located sweep-file error: `file:line:col: field: problem; fix`. */
export function sweepError(parsed: ParsedYaml, path: YamlPath, problem: string, fix: string, opts: { key?: boolean; cause?: unknown } = {}): BlisError {
  const p = parsed.pos(offsetOf(parsed, path, opts.key === true));
  const field = fieldName(path);
  return new BlisError(SWEEP_FILE_ERROR, `${parsed.file}:${p.line}:${p.col}: ${field === '' ? '' : `${field}: `}${problem}; ${fix}`, {
    file: parsed.file,
    line: p.line,
    col: p.col,
    field,
    cause: opts.cause,
  });
}
