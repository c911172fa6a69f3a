/**
 * The one way blis-ts parses YAML (and JSON, which is YAML) input: bounded before anything is expanded.
 *
 * A small file can describe an enormous tree through anchors and aliases (`b: &b [*a, *a, ...]` nested a few
 * levels, or `<<: [*m, *m]` merge keys); decoders that resolve aliases as they walk would do exponential work.
 * {@link parseYaml} parses to a syntax tree (aliases unexpanded), then measures the tree *as it would be
 * expanded* — node count and depth, memoised per node so the measurement itself is linear — and refuses it
 * with a located error before any decoder sees it. Every alias is resolved once here, so decoders can use
 * {@link ParsedYaml.deref}, which is a map lookup instead of yaml's document-wide anchor search.
 */
import { Document as YamlDocument, LineCounter, isAlias, isCollection, isMap, isPair, isScalar, isSeq, parseAllDocuments, parseDocument } from 'yaml';
import type { Alias, Document, DocumentOptions, Node as YamlNode, ParseOptions, SchemaOptions, YAMLMap } from 'yaml';
import { BlisError } from '../domain/errors.js';
import { INPUT_LIMITS } from '../domain/limits.js';
import { DEFAULT_TEXT_LIMITS, INPUT_SYNTAX, INPUT_TOO_LARGE, formatBytes, type TextLimits } from './text-limits.js';
import { linePos, prescanYaml, type ScanLimits } from './prescan.js';

export { DEFAULT_TEXT_LIMITS, INPUT_SYNTAX, INPUT_TOO_LARGE, checkTextSize, formatBytes, type TextLimits } from './text-limits.js';

export type YamlOptions = ParseOptions & DocumentOptions & SchemaOptions;

export interface ParsedYaml {
  readonly file: string;
  readonly text: string;
  readonly doc: Document;
  readonly lines: LineCounter;
  /** Documents in the stream (0 for an empty stream; only the first is parsed with `documents: 'first'`). */
  readonly documents: number;
  /** The node an alias stands for (the node itself otherwise); null for null/undefined. */
  deref(node: unknown): YamlNode | null;
  /** 1-based line and column of a character offset. */
  pos(offset: number): { line: number; col: number };
  /** 1-based line and column where `node` starts (1:1 when it has no position). */
  at(node: unknown): { line: number; col: number };
  /**
   * Plain JavaScript value of `node` (default: the document), aliases expanded through {@link deref} — bounded,
   * because the expanded size was measured at parse time. Mappings become objects (own data properties, so a
   * `__proto__` key is just a key), or `Map`s with `maps: true`; with `merge: true`, `<<` merge keys are
   * applied (explicit keys win) instead of kept as a key.
   */
  toJs(node?: unknown, options?: { readonly maps?: boolean; readonly merge?: boolean }): unknown;
}

/** Raises a located error in the caller's own error type (default: a {@link BlisError}). */
export type YamlFail = (where: { line: number; col: number }, problem: string, fix: string, code: string) => never;


/**
 * Parses one YAML document with limits. `what` names the kind of file in messages ("policy bundle",
 * "workload spec"). Syntax errors and limit violations are {@link BlisError}s at `file:line:col`.
 */
export interface ParseYamlOptions {
  readonly yaml?: YamlOptions;
  readonly limits?: Partial<TextLimits>;
  /** Pre-scan caps (default {@link INPUT_LIMITS}); the depth is `limits.maxDepth`. */
  readonly scan?: Partial<ScanLimits>;
  /** Code of syntax and limit errors (default {@link INPUT_SYNTAX} / {@link INPUT_TOO_LARGE}). */
  readonly code?: string;
  /**
   * `single` (default): the text is one document (a second one is a syntax error). `first`: a stream whose first
   * document is used and the rest are not looked at (as Go's yaml.v3 Decoder.Decode reads one document).
   */
  readonly documents?: 'single' | 'first';
  /** Raises the located errors (syntax, aliases, limits) in the caller's error type. */
  readonly fail?: YamlFail;
}

/**
 * Parses one YAML document with limits. Syntax errors and limit violations are {@link BlisError}s at
 * `file:line:col` (or whatever `options.fail` raises). The size cap is checked before parsing; the alias and
 * merge-key expansion and the depth are measured on the syntax tree before any value is built.
 */
export function parseYaml(text: string, file: string, options: ParseYamlOptions = {}): ParsedYaml {
  const limits: TextLimits = { ...DEFAULT_TEXT_LIMITS, ...options.limits };
  const fail: YamlFail = options.fail ?? ((p, problem, fix, code) => {
    throw new BlisError(code, `${file}:${p.line}:${p.col}: ${problem}; ${fix}`, { file, line: p.line, col: p.col });
  });
  if (text.length > limits.maxBytes) {
    fail({ line: 1, col: 1 }, `the file is larger than ${formatBytes(limits.maxBytes)} (${formatBytes(text.length)})`, 'blis-ts refuses inputs this large — split it or pass a smaller file', options.code ?? INPUT_TOO_LARGE);
  }
  // Bounds before work: a linear scan refuses a file too large or too deep before the parser builds anything.
  const scanned = prescanYaml(text, { ...INPUT_LIMITS, ...options.scan, depth: limits.maxDepth });
  if (scanned !== null) fail(linePos(text, scanned.offset), scanned.problem, scanned.fix, options.code ?? INPUT_TOO_LARGE);
  const lines = new LineCounter();
  // yaml's own duplicate-key check is quadratic in a mapping's size; the same check is done here in linear time.
  const unique = options.yaml?.uniqueKeys ?? true;
  const yamlOptions = { prettyErrors: true, ...options.yaml, ...(unique === true ? { uniqueKeys: false } : {}), lineCounter: lines };
  let doc: Document;
  let documents = 1;
  if (options.documents === 'first') {
    const all = parseAllDocuments(text, yamlOptions);
    const docs = Array.isArray(all) ? all : [];
    documents = docs.length;
    doc = docs[0] ?? new YamlDocument(null, yamlOptions);
    // A syntax error in the stream before the first document ends (e.g. a bad directive) is reported too.
    if (docs.length === 0 && !Array.isArray(all)) {
      const err = (all as { errors?: { message: string; linePos?: [{ line: number; col: number }] }[] }).errors?.[0];
      if (err !== undefined) fail(err.linePos?.[0] ?? { line: 1, col: 1 }, `invalid YAML: ${firstLine(err.message)}`, 'fix the YAML syntax', options.code ?? INPUT_SYNTAX);
    }
  } else {
    doc = parseDocument(text, yamlOptions);
  }
  const pos = (offset: number): { line: number; col: number } => lines.linePos(offset);
  const err = doc.errors[0];
  if (err !== undefined) {
    const p = err.linePos?.[0] ?? pos(err.pos[0]);
    // The parser recurses per level: nesting the pre-scan's estimate missed overflows its stack.
    if (/Maximum call stack/.test(err.message)) fail(p, `the document nests deeper than ${limits.maxDepth} levels`, 'flatten the structure', options.code ?? INPUT_TOO_LARGE);
    fail(p, `invalid YAML: ${firstLine(err.message)}`, 'fix the YAML syntax', options.code ?? INPUT_SYNTAX);
  }
  if (unique === true) checkUniqueKeys(doc.contents, pos, options.code ?? INPUT_SYNTAX, fail);
  let targets: Map<Alias, YamlNode>;
  try {
    targets = resolveAliases(doc, pos, options.code ?? INPUT_SYNTAX, fail);
  } catch (e) {
    if (e instanceof RangeError) fail({ line: 1, col: 1 }, `the document nests deeper than ${limits.maxDepth} levels`, 'flatten the structure', options.code ?? INPUT_TOO_LARGE);
    throw e;
  }
  measure(doc.contents, targets, limits, pos, options.code ?? INPUT_TOO_LARGE, fail);
  const deref = (node: unknown): YamlNode | null => {
    if (node === null || node === undefined) return null;
    if (isAlias(node)) return targets.get(node) ?? null;
    return node as YamlNode;
  };
  const at = (node: unknown): { line: number; col: number } => {
    const r = (node as { range?: [number, number, number] | null } | null)?.range;
    return r === undefined || r === null ? { line: 1, col: 1 } : pos(r[0]);
  };
  const toJs = (node?: unknown, o: { readonly maps?: boolean; readonly merge?: boolean } = {}): unknown =>
    plain(node === undefined ? doc.contents : node, deref, o.maps === true, o.merge === true, text);
  return { file, text, doc, lines, documents, deref, pos, at, toJs };
}

function firstLine(message: string): string {
  return message.split(' at line ')[0]?.split('\n')[0] ?? message;
}

/**
 * yaml's `uniqueKeys: true` (two scalar keys with the same value in one mapping: "Map keys must be unique"), in
 * linear time. Runs before aliases are resolved, so the tree is walked as written (depth bounded by the parser).
 */
function checkUniqueKeys(root: unknown, pos: (o: number) => { line: number; col: number }, code: string, raise: YamlFail): void {
  const visit = (node: unknown): void => {
    if (node === null || node === undefined) return;
    if (isPair(node)) {
      visit(node.key);
      visit(node.value);
      return;
    }
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const k = pair.key;
        if (isScalar(k) && !(typeof k.value === 'number' && Number.isNaN(k.value))) {
          if (seen.has(k.value)) raise(pos(k.range?.[0] ?? 0), 'invalid YAML: Map keys must be unique', 'fix the YAML syntax', code);
          seen.add(k.value);
        }
      }
    }
    if (isCollection(node)) for (const item of node.items) visit(item);
  };
  visit(root);
}

/** A merge key (`<<`), as the yaml library marks it with `merge: true` or as plain text otherwise. */
export function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (typeof key.value === 'symbol' || (key.type === 'PLAIN' && key.value === '<<' && key.tag === undefined));
}

function plain(node: unknown, deref: (n: unknown) => YamlNode | null, maps: boolean, merge: boolean, text: string): unknown {
  const n = deref(node);
  if (n === null) return null;
  if (isScalar(n)) return n.value ?? null;
  if (isSeq(n)) return n.items.map((i) => plain(i, deref, maps, merge, text));
  if (!isMap(n)) return null;
  const entries = new Map<string, unknown>();
  const keyText = (k: unknown): string => {
    const kn = deref(k);
    if (kn === null) return '';
    if (isScalar(kn)) return typeof kn.value === 'string' ? kn.value : String(kn.value);
    const r = kn.range;
    return r === undefined || r === null ? '' : text.slice(r[0], r[1]);
  };
  const sources: YAMLMap[] = [];
  for (const pair of n.items) {
    if (merge && isMergeKey(pair.key)) {
      const v = deref(pair.value);
      for (const m of isSeq(v) ? v.items.map((i) => deref(i)) : [v]) if (isMap(m)) sources.push(m);
      continue;
    }
    entries.set(keyText(pair.key), plain(pair.value, deref, maps, merge, text));
  }
  for (const m of sources) {
    const inner = plain(m, deref, true, merge, text) as Map<string, unknown>;
    for (const [k, v] of inner) if (!entries.has(k)) entries.set(k, v);
  }
  if (maps) return entries;
  const obj: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  return obj;
}

/**
 * Resolves every alias once, in document order (an anchor may be redefined: an alias names the latest
 * definition before it). An alias to an unknown anchor or to a node that contains it is an error.
 */
function resolveAliases(
  doc: Document,
  pos: (o: number) => { line: number; col: number },
  code: string,
  raise: YamlFail,
): Map<Alias, YamlNode> {
  const anchors = new Map<string, YamlNode>();
  const out = new Map<Alias, YamlNode>();
  const open = new Set<YamlNode>();
  const fail = (node: YamlNode, problem: string, fix: string): never => raise(pos(node.range?.[0] ?? 0), problem, fix, code);
  const visit = (node: unknown): void => {
    if (node === null || node === undefined) return;
    if (isPair(node)) {
      visit(node.key);
      visit(node.value);
      return;
    }
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) fail(node, `alias *${node.source} names no anchor defined before it`, `define &${node.source} first`);
      if (open.has(target!)) fail(node, `alias *${node.source} refers to a node that contains it`, 'remove the recursive alias');
      out.set(node, target!);
      return;
    }
    const n = node as YamlNode;
    if (isCollection(n)) {
      open.add(n);
      for (const item of n.items) visit(item);
      open.delete(n);
    }
    // The anchor becomes visible once its node is complete (as in YAML: an alias cannot be inside its anchor).
    if (typeof (n as { anchor?: unknown }).anchor === 'string') anchors.set((n as { anchor: string }).anchor, n);
  };
  visit(doc.contents);
  return out;
}

/** Node count and depth of the tree with aliases expanded, memoised per node; throws past the limits. */
function measure(
  root: YamlNode | null,
  targets: Map<Alias, YamlNode>,
  limits: TextLimits,
  pos: (o: number) => { line: number; col: number },
  code: string,
  raise: YamlFail,
): void {
  const memo = new Map<YamlNode, { size: number; depth: number }>();
  const tooBig = (at: YamlNode, what: string): never =>
    raise(pos(at.range?.[0] ?? 0), what, 'blis-ts refuses documents this large (aliases and merge keys count as expanded) — write the values out or use fewer nested aliases', code);
  const walk = (node: unknown, depth: number): { size: number; depth: number } => {
    if (node === null || node === undefined) return { size: 0, depth: 0 };
    if (depth > limits.maxDepth) tooBig(node as YamlNode, `the document nests deeper than ${limits.maxDepth} levels`);
    if (isPair(node)) {
      const k = walk(node.key, depth);
      const v = walk(node.value, depth);
      return { size: k.size + v.size, depth: Math.max(k.depth, v.depth) };
    }
    const n = isAlias(node) ? (targets.get(node) ?? null) : (node as YamlNode);
    if (n === null) return { size: 1, depth: 1 };
    if (isScalar(n)) return { size: 1, depth: 1 };
    const known = memo.get(n);
    if (known !== undefined) {
      if (depth + known.depth > limits.maxDepth) tooBig(node as YamlNode, `the document nests deeper than ${limits.maxDepth} levels`);
      return known;
    }
    let size = 1;
    let inner = 0;
    if (isMap(n) || isSeq(n)) {
      for (const item of n.items) {
        const m = walk(item, depth + 1);
        size += m.size;
        if (m.depth > inner) inner = m.depth;
        if (size > limits.maxNodes) tooBig(node as YamlNode, `the document expands to more than ${limits.maxNodes.toLocaleString('en-US')} values`);
      }
    }
    const r = { size, depth: inner + 1 };
    memo.set(n, r);
    return r;
  };
  const total = walk(root, 0);
  if (total.size > limits.maxNodes && root !== null) tooBig(root, `the document expands to more than ${limits.maxNodes.toLocaleString('en-US')} values`);
}
