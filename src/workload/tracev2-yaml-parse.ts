/**
 * Strict reader of the TraceV2 header YAML (the writer is in tracev2-yaml.ts). Separate so that commands
 * that only write traces never load the YAML library.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { showValue } from '../domain/errors.js';
import { checkNotBinary } from '../format/csv.js';
import { parseYaml, type ParsedYaml } from '../format/yaml.js';
import { HEADER_SPEC } from './tracev2-yaml-spec.js';
import type { FieldKind, ScalarKind, StructSpec } from './tracev2-yaml-spec.js';
import { TraceFormatError, emptyTraceHeader } from './tracev2-types.js';
import type { TraceHeader } from './tracev2-types.js';

const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const INT_RE = /^[-+]?(0|[1-9][0-9]*)$/;
const FLOAT_RE = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const TRUE_WORDS = new Set(['true', 'True', 'TRUE', 'y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON']);
const FALSE_WORDS = new Set(['false', 'False', 'FALSE', 'n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF']);
const INT64_MAX = 2n ** 63n - 1n;

/** The time units the reference writes (observe: us; run and replay: microseconds). */
export const TRACE_TIME_UNITS: readonly string[] = ['us', 'microseconds'];
/** Trace versions this reader understands (3 added goodput_slo_targets; 1 and 2 are its subsets). */
export const TRACE_VERSIONS: readonly number[] = [1, 2, 3];

class HeaderReader {
  private parsed: ParsedYaml | null = null;

  constructor(private readonly file: string) {}

  private lineOf(node: YamlNode | null | undefined): number {
    return node === null || node === undefined || this.parsed === null ? 0 : this.parsed.at(node).line;
  }

  fail(code: 'TRACE_HEADER_TYPE' | 'TRACE_HEADER_UNKNOWN_KEY' | 'TRACE_HEADER_SYNTAX' | 'TRACE_HEADER_VALUE', node: YamlNode | null | undefined, path: string, msg: string): never {
    const line = this.lineOf(node);
    const shown = /^[\x20-\x7e]*$/.test(path) ? path : showValue(path);
    throw new TraceFormatError(code, this.file, line, path, `${this.file}:${line}: ${shown}: ${msg}`);
  }

  read(text: string): TraceHeader {
    checkNotBinary(text, this.file, (line, col, problem, fix) => {
      throw new TraceFormatError('TRACE_INPUT', this.file, line, '', `${this.file}:${line}:${col}: ${problem}; ${fix}`);
    });
    // Duplicate keys are checked while decoding, where the message can name the key and both lines.
    this.parsed = parseYaml(text, this.file, {
      yaml: { schema: 'failsafe', uniqueKeys: false },
      fail: ({ line }, problem, fix, code) => {
        const syntax = code === 'INPUT_SYNTAX';
        throw new TraceFormatError(
          syntax ? 'TRACE_HEADER_SYNTAX' : 'TRACE_INPUT', this.file, line, '',
          syntax && problem.startsWith('invalid YAML: ')
            ? `${this.file}:${line}: invalid YAML (${problem.slice('invalid YAML: '.length)}); fix the syntax so the file is one YAML mapping of header keys`
            : `${this.file}:${line}: ${problem}; ${fix}`,
        );
      },
    });
    const root = this.deref(this.parsed.doc.contents);
    if (root === null || (isScalar(root) && root.type === 'PLAIN' && NULLS.has(String(root.value)))) {
      throw new TraceFormatError(
        'TRACE_HEADER_EMPTY', this.file, 0, '',
        `${this.file}: trace header is empty; it needs at least trace_version, time_unit and mode`,
      );
    }
    const header = emptyTraceHeader();
    this.fillStruct(root, HEADER_SPEC, header as unknown as Record<string, unknown>, '');
    this.checkValues(root, header);
    return header;
  }

  /** Values of the right type that the simulator could only misread (the reference accepts anything). */
  private checkValues(root: YamlNode, header: TraceHeader): void {
    const valueOf = (key: string): YamlNode | null => {
      if (!isMap(root)) return root;
      const pair = root.items.find((p) => isScalar(this.deref(p.key)) && String((this.deref(p.key) as { value: unknown }).value) === key);
      return pair === undefined ? root : (this.deref(pair.value) ?? this.deref(pair.key));
    };
    if (!TRACE_VERSIONS.includes(header.traceVersion)) {
      const what = header.traceVersion === 0 ? 'is missing (or 0)' : `${header.traceVersion} is not a version this reader knows`;
      this.fail('TRACE_HEADER_VALUE', valueOf('trace_version'), 'trace_version', `${what}; write trace_version: 3 (versions ${TRACE_VERSIONS.join(', ')} are read)`);
    }
    if (header.timeUnit !== '' && !TRACE_TIME_UNITS.includes(header.timeUnit)) {
      this.fail('TRACE_HEADER_VALUE', valueOf('time_unit'), 'time_unit', `unknown time unit ${showValue(header.timeUnit)}: every time in a TraceV2 trace is in microseconds; write time_unit: ${TRACE_TIME_UNITS.join(' or ')}`);
    }
    if (header.warmUpRequests < 0) {
      this.fail('TRACE_HEADER_VALUE', valueOf('warm_up_requests'), 'warm_up_requests', `must be >= 0 (the number of first requests that are warm-up), got ${header.warmUpRequests}; write warm_up_requests: 0 when there are none`);
    }
  }

  private deref(node: unknown): YamlNode | null {
    return this.parsed === null ? null : this.parsed.deref(node);
  }

  private isNull(node: YamlNode | null): boolean {
    return node === null || (isScalar(node) && node.type === 'PLAIN' && NULLS.has(String(node.value)));
  }

  /** The key text, after rejecting a key already seen in the same mapping (yaml.v3 refuses duplicates). */
  private keyOf(keyNode: YamlNode | null, seen: Map<string, YamlNode | null>, path: string): string {
    const key = keyNode !== null && isScalar(keyNode) ? String(keyNode.value) : '';
    const first = seen.get(key);
    if (seen.has(key)) {
      const where = path === '' ? key : `${path}.${key}`;
      this.fail('TRACE_HEADER_SYNTAX', keyNode, where, `duplicate key (first defined on line ${this.lineOf(first)}); keep only one of them`);
    }
    seen.set(key, keyNode);
    return key;
  }

  private fillStruct(node: YamlNode, spec: StructSpec, target: Record<string, unknown>, path: string): void {
    if (!isMap(node)) this.fail('TRACE_HEADER_TYPE', node, path || '(top level)', `expected a mapping of ${spec.name} keys`);
    const seen = new Map<string, YamlNode | null>();
    for (const pair of node.items) {
      const keyNode = this.deref(pair.key);
      const key = this.keyOf(keyNode, seen, path);
      const field = spec.fields.find((f) => f.key === key);
      const where = path === '' ? key : `${path}.${key}`;
      if (field === undefined) {
        this.fail(
          'TRACE_HEADER_UNKNOWN_KEY', keyNode, where,
          `unknown key in ${spec.name}; remove it or fix its spelling (known keys: ${spec.fields.map((f) => f.key).join(', ')})`,
        );
      }
      const valNode = this.deref(pair.value);
      target[field.prop] = this.value(valNode ?? keyNode, this.isNull(valNode), field.kind, where, target[field.prop]);
    }
  }

  private value(node: YamlNode | null, isNull: boolean, kind: FieldKind, path: string, zero: unknown): unknown {
    if (isNull) {
      // yaml.v3 decodes null as the zero value (nil for pointers, empty for maps and slices).
      if (typeof kind !== 'string') return kind.t === 'map' ? new Map() : kind.t === 'list' ? [] : null;
      return kind === 'bigint' ? null : zero;
    }
    if (typeof kind === 'string') return this.scalar(node, kind, path);
    if (kind.t === 'struct') {
      const obj = kind.spec.make();
      this.fillStruct(node as YamlNode, kind.spec, obj, path);
      return obj;
    }
    if (kind.t === 'list') {
      if (!isSeq(node)) this.fail('TRACE_HEADER_TYPE', node, path, `expected a list of ${kind.spec.name} entries`);
      return node.items.map((item, i) => {
        const obj = kind.spec.make();
        const n = this.deref(item);
        if (n !== null && !this.isNull(n)) this.fillStruct(n, kind.spec, obj, `${path}[${i}]`);
        return obj;
      });
    }
    if (!isMap(node)) this.fail('TRACE_HEADER_TYPE', node, path, `expected a mapping from name to ${kind.spec.name}`);
    const out = new Map<string, Record<string, unknown>>();
    const seen = new Map<string, YamlNode | null>();
    for (const pair of node.items) {
      const keyNode = this.deref(pair.key);
      const key = this.keyOf(keyNode, seen, path);
      const obj = kind.spec.make();
      const valNode = this.deref(pair.value);
      if (!this.isNull(valNode)) this.fillStruct(valNode ?? node, kind.spec, obj, `${path}.${key}`);
      out.set(key, obj);
    }
    return out;
  }

  private scalar(node: YamlNode | null, kind: ScalarKind, path: string): unknown {
    if (node === null || !isScalar(node)) {
      return this.fail('TRACE_HEADER_TYPE', node, path, `expected a single ${kind === 'bigint' ? 'int' : kind} value, not a mapping or list`);
    }
    const s = String(node.value);
    if (kind === 'string') return s;
    const plain = node.type === 'PLAIN';
    if (kind === 'bool') {
      if (plain && TRUE_WORDS.has(s)) return true;
      if (plain && FALSE_WORDS.has(s)) return false;
      return this.fail('TRACE_HEADER_TYPE', node, path, `${showValue(s)} is not a boolean; write true or false (unquoted)`);
    }
    if (kind === 'float') {
      if (plain && (FLOAT_RE.test(s) || INT_RE.test(s))) return Number(s);
      if (plain && /^[-+]?\.(inf|Inf|INF)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
      if (plain && /^\.(nan|NaN|NAN)$/.test(s)) return Number.NaN;
      return this.fail('TRACE_HEADER_TYPE', node, path, `${showValue(s)} is not a number; write an unquoted number such as 0.9`);
    }
    if (!plain || !INT_RE.test(s)) {
      return this.fail('TRACE_HEADER_TYPE', node, path, `${showValue(s)} is not an integer; write an unquoted base-10 integer`);
    }
    const big = BigInt(s);
    if (big > INT64_MAX || big < -INT64_MAX - 1n) this.fail('TRACE_HEADER_TYPE', node, path, `${s} overflows a 64-bit integer`);
    if (kind === 'bigint') return big;
    if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail('TRACE_HEADER_TYPE', node, path, `${s} exceeds 2^53, which this simulator cannot represent exactly`);
    }
    return Number(big);
  }
}

/**
 * Parses a TraceV2 header. `fileLabel` names the file in error messages.
 * @throws TraceFormatError for YAML syntax errors, duplicate or unknown keys, and values of the wrong type.
 */
export function parseTraceHeaderYaml(text: string, fileLabel: string): TraceHeader {
  return new HeaderReader(fileLabel).read(text);
}
