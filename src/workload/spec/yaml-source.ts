/**
 * Reading a workload spec's YAML into plain values, keeping enough of the syntax tree to point errors at
 * `line:col`.
 *
 * Scalars are converted the way the reference's decoder (yaml.v3) would hand them to its struct fields:
 * - a field declared as a string takes any scalar's text (`version: 2` is the string "2", `id: 007` is "007");
 * - a bool field also takes the YAML 1.1 words yes/no/on/off/y/n;
 * - the map-typed fields (`params`, `goodput_slo_targets`) become JS Maps keyed by the keys' text, so integer-like
 *   keys keep their spelling and YAML order;
 * - null means "absent" (yaml.v3 leaves the zero value), and `<<` merge keys are expanded with explicit keys winning.
 * Integers arrive as numbers when exactly representable, otherwise as bigints (only `seed` accepts those).
 *
 * The text goes through the bounded loader (src/format/yaml.ts: size cap, alias and merge-key expansion and depth
 * measured first), and every key is checked against the schema before its value is converted, so a large value
 * under a misspelt key is never built.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import type { Node as YamlNode, Pair, Scalar, YAMLMap } from 'yaml';
import { isMergeKey, parseYaml, type ParsedYaml } from '../../format/yaml.js';
import { WorkloadSpecError, formatSpecPath } from './errors.js';
import type { SpecPath, SpecPosition, WorkloadSpecErrorCode } from './errors.js';

/** Keys whose reference field is a Go string: any scalar is accepted and taken verbatim. */
const STRING_KEYS = new Set([
  'version', 'category', 'id', 'tenant_id', 'slo_class', 'model', 'adapter', 'process', 'type', 'file',
  'prefix_group', 'prefix_sharing', 'context_growth', 'path', 'time_window',
]);
/** Keys whose reference field is a Go bool. */
const BOOL_KEYS = new Set(['streaming', 'closed_loop', 'single_session', 'enable_multi_turn_chat']);
/** Keys whose reference field is a Go map (arbitrary keys) rather than a struct. */
const MAP_KEYS = new Set(['params', 'goodput_slo_targets']);

const YAML11_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON']);
const YAML11_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF']);

/**
 * Checks a key before its value is converted: `path` ends with the key. Returns normally for a known key and
 * throws (through {@link SpecSource.fail}) for an unknown one.
 */
export type SpecKeyCheck = (src: SpecSource, path: SpecPath) => void;

/** A parsed spec file: plain values plus a way back from a path to the text. */
export class SpecSource {
  readonly raw: unknown;
  private readonly parsed: ParsedYaml;

  constructor(
    private readonly text: string,
    readonly file: string,
    private readonly checkKey: SpecKeyCheck | null = null,
  ) {
    this.parsed = parseYaml(text, file, {
      yaml: { intAsBigInt: true, merge: true, uniqueKeys: false },
      fail: (pos, problem, fix) => {
        throw new WorkloadSpecError('WORKLOAD_SPEC_YAML', file, pos, '', problem, fix);
      },
    });
    const contents = this.parsed.doc.contents;
    if (contents === null || (isScalar(contents) && contents.value === null)) {
      throw new WorkloadSpecError(
        'WORKLOAD_SPEC_YAML',
        file,
        { line: 1, col: 1 },
        '',
        'the workload spec is empty',
        'add at least `aggregate_rate` and `clients`',
      );
    }
    this.raw = this.convert(contents, []);
  }

  /** The `version` as written (any scalar's text), or null when absent. */
  versionText(): string | null {
    const v = this.raw !== null && typeof this.raw === 'object' && !(this.raw instanceof Map) ? (this.raw as Record<string, unknown>)['version'] : undefined;
    return typeof v === 'string' ? v : null;
  }

  /** Throws a {@link WorkloadSpecError} located at `path` (or at its key when `atKey`). */
  fail(code: WorkloadSpecErrorCode, path: SpecPath, problem: string, fix: string, atKey = false): never {
    throw new WorkloadSpecError(code, this.file, this.position(path, atKey), formatSpecPath(path), problem, fix);
  }

  private failAtNode(code: WorkloadSpecErrorCode, node: YamlNode, path: SpecPath, problem: string, fix: string): never {
    throw new WorkloadSpecError(code, this.file, this.parsed.at(node), formatSpecPath(path), problem, fix);
  }

  /** Whether `path` names a value actually written in the file (null values count as absent). */
  has(path: SpecPath): boolean {
    let v: unknown = this.raw;
    for (const seg of path) {
      if (v instanceof Map) v = v.get(String(seg));
      else if (Array.isArray(v) && typeof seg === 'number') v = v[seg];
      else if (typeof v === 'object' && v !== null && typeof seg === 'string') v = (v as Record<string, unknown>)[seg];
      else return false;
    }
    return v !== undefined && v !== null;
  }

  /**
   * Where `path` is in the text: its value, or its key when `atKey` or when the value is empty. A path that
   * does not exist (a missing field) resolves to the deepest mapping or list that does.
   */
  position(path: SpecPath, atKey = false): SpecPosition {
    let node: YamlNode | null = this.parsed.doc.contents;
    let offset = node?.range?.[0] ?? 0;
    for (let i = 0; i < path.length && node !== null; i++) {
      const seg = path[i]!;
      const last = i === path.length - 1;
      if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as YamlNode | undefined;
        if (item === undefined) break;
        node = this.deref(item);
        offset = item.range?.[0] ?? offset;
        continue;
      }
      if (!isMap(node)) break;
      const pair = this.findPair(node, String(seg));
      if (pair === undefined) break;
      const keyOffset = (pair.key as YamlNode | null)?.range?.[0] ?? offset;
      const value = this.deref(pair.value as YamlNode | null);
      const empty = value === null || (isScalar(value) && value.value === null);
      offset = (last && atKey) || empty ? keyOffset : (value?.range?.[0] ?? keyOffset);
      node = value;
    }
    return this.parsed.pos(offset);
  }

  private findPair(map: YAMLMap, key: string): Pair | undefined {
    const direct = map.items.find((p) => this.keyText(p.key as YamlNode | null) === key);
    if (direct !== undefined) return direct;
    for (const merged of this.mergeSources(map)) {
      const p = this.findPair(merged, key);
      if (p !== undefined) return p;
    }
    return undefined;
  }

  private deref(node: YamlNode | null | undefined): YamlNode | null {
    return this.parsed.deref(node);
  }

  private keyText(key: YamlNode | null): string | null {
    const k = this.deref(key);
    if (k === null) return '';
    if (!isScalar(k)) return null;
    if (k.value === null) return '';
    return typeof k.value === 'string' ? k.value : this.sourceText(k);
  }

  private sourceText(s: Scalar): string {
    const r = s.range;
    return r === undefined || r === null ? String(s.value) : this.text.slice(r[0], r[1]);
  }

  private mergeSources(map: YAMLMap): YAMLMap[] {
    const out: YAMLMap[] = [];
    for (const p of map.items) {
      if (!isMergeKey(p.key)) continue;
      const v = this.deref(p.value as YamlNode | null);
      const items = isSeq(v) ? v.items.map((n) => this.deref(n as YamlNode)) : [v];
      for (const m of items) if (isMap(m)) out.push(m);
    }
    return out;
  }

  private convert(node: YamlNode | null, path: SpecPath): unknown {
    const n = this.deref(node);
    if (n === null) return null;
    if (isSeq(n)) return n.items.map((item, i) => this.convert(item as YamlNode, [...path, i]));
    if (isMap(n)) return this.convertMap(n, path);
    if (!isScalar(n)) return null;
    return this.convertScalar(n, path[path.length - 1]);
  }

  private convertScalar(s: Scalar, key: string | number | undefined): unknown {
    const v: unknown = s.value;
    if (v === null || v === undefined) return null;
    if (typeof key === 'string' && STRING_KEYS.has(key)) return typeof v === 'string' ? v : this.sourceText(s);
    if (typeof key === 'string' && BOOL_KEYS.has(key) && typeof v === 'string') {
      if (YAML11_TRUE.has(v)) return true;
      if (YAML11_FALSE.has(v)) return false;
    }
    if (typeof v === 'bigint') {
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
    }
    return v;
  }

  private convertMap(map: YAMLMap, path: SpecPath): unknown {
    const asMap = MAP_KEYS.has(String(path[path.length - 1] ?? ''));
    const entries = new Map<string, unknown>();
    const explicit = new Set<string>();
    for (const pair of map.items) {
      if (isMergeKey(pair.key)) continue;
      const key = this.keyText(pair.key as YamlNode | null);
      if (key === null) this.fail('WORKLOAD_SPEC_TYPE', path, 'mapping keys must be plain scalars', 'use a name or number as the key');
      if (!asMap && this.checkKey !== null && !path.includes('params')) this.checkKey(this, [...path, key]);
      // Checked here rather than by the YAML parser so the message can name the field (and "1" vs 1 collide, as in Go).
      if (explicit.has(key)) {
        this.failAtNode(
          'WORKLOAD_SPEC_YAML',
          pair.key as YamlNode,
          [...path, key],
          `duplicate key "${key}"`,
          'keep only one of them',
        );
      }
      explicit.add(key);
      entries.set(key, this.convert(pair.value as YamlNode | null, [...path, key]));
    }
    for (const merged of this.mergeSources(map)) {
      const inner = this.convertMap(merged, path);
      const innerEntries: Map<string, unknown> = inner instanceof Map ? (inner as Map<string, unknown>) : new Map(Object.entries(inner as object));
      for (const [k, v] of innerEntries) if (!entries.has(k)) entries.set(k, v);
    }
    if (asMap) return entries;
    const obj: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of entries) {
      // A null struct field is the same as an absent one to yaml.v3 (the field keeps its zero value).
      if (v !== null) Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true });
    }
    return obj;
  }
}
