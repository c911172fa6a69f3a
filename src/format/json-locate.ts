/**
 * Where a value is in a JSON text, for errors found after parsing (a schema check names a path; the message
 * names `file:line:col`). Only run on the error path, on text that already parsed, so it is a plain scanner
 * written for clarity.
 */

export interface JsonPosition {
  readonly line: number;
  readonly col: number;
}

/**
 * Line and column of the value at `path` (object keys and array indices from the root), or of the deepest
 * enclosing value that exists — a missing key points at its object. With duplicate keys the last one wins, as in
 * JSON.parse.
 */
export function locateJson(text: string, path: readonly (string | number)[]): JsonPosition {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r\ufeff'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return '';
    }
  };
  /** Skips one value; returns the offset of the value at path[depth..] inside it, or its own start. */
  const value = (depth: number): number => {
    ws();
    const start = i;
    const want = path[depth];
    const c = text[i];
    if (c === '{') {
      i++;
      let found = -1;
      for (;;) {
        ws();
        if (text[i] === '}') break;
        if (text[i] !== '"') break;
        const key = str();
        ws();
        i++; // ':'
        const at = value(key === want ? depth + 1 : path.length + 1);
        if (key === want) found = at;
        ws();
        if (text[i] === ',') i++;
      }
      i++;
      return found >= 0 ? found : start;
    }
    if (c === '[') {
      i++;
      let found = -1;
      for (let k = 0; ; k++) {
        ws();
        if (text[i] === ']') break;
        const at = value(k === want ? depth + 1 : path.length + 1);
        if (k === want) found = at;
        ws();
        if (text[i] === ',') i++;
        else break;
      }
      ws();
      i++;
      return found >= 0 ? found : start;
    }
    if (c === '"') str();
    else while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i++;
    return start;
  };
  const offset = value(0);
  let line = 1;
  let col = 1;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text.charCodeAt(k) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return { line, col };
}
