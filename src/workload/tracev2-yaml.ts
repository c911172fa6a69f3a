/**
 * TraceV2 header YAML: a writer byte-identical to the reference's `yaml.Marshal(TraceHeader)` and a strict
 * reader equivalent to its `KnownFields(true)` decode (unknown keys, duplicate keys and wrong types are errors).
 *
 * The reader parses with the failsafe schema (every scalar a string) and types each value itself, so that the
 * accepted forms follow yaml.v3 rather than the JS library's YAML 1.2 core schema, and so that every error can
 * point at a line and key.
 */
import { emitYamlDocument, sortYamlKeys, yBool, yFloat, yInt, yStr } from '../gocompat/go-yaml-emit.js';
import type { YamlTree } from '../gocompat/go-yaml-emit.js';
import { HEADER_SPEC } from './tracev2-yaml-spec.js';
import type { FieldKind, StructSpec } from './tracev2-yaml-spec.js';
import type { TraceHeader } from './tracev2-types.js';

type Entries = Array<readonly [string, YamlTree]>;

/** Serialises a struct by its spec: fields in declaration order, `omitempty` fields skipped at zero/null. */
function structTree(spec: StructSpec, obj: Readonly<Record<string, unknown>>): Entries {
  const out: Entries = [];
  for (const f of spec.fields) {
    const v = obj[f.prop];
    const t = valueTree(f.kind, v, f.omitEmpty);
    if (t !== null) out.push([f.key, t]);
  }
  return out;
}

function valueTree(kind: FieldKind, v: unknown, omitEmpty: boolean): YamlTree | null {
  if (v === null || v === undefined) return null;
  if (typeof kind === 'string') {
    switch (kind) {
      case 'bigint':
        // A Go pointer: omitempty drops only nil, so a seed of 0 is still written.
        return yInt(v as bigint);
      case 'int':
        if (omitEmpty && v === 0) return null;
        return yInt(v as number);
      case 'float':
        if (omitEmpty && v === 0) return null;
        return yFloat(v as number);
      case 'bool':
        if (omitEmpty && v === false) return null;
        return yBool(v as boolean);
      case 'string':
        if (omitEmpty && v === '') return null;
        return yStr(v as string);
    }
  }
  if (kind.t === 'struct') return { k: 'map', entries: structTree(kind.spec, v as Record<string, unknown>) };
  if (kind.t === 'list') {
    const items = v as ReadonlyArray<Record<string, unknown>>;
    if (omitEmpty && items.length === 0) return null;
    return { k: 'seq', items: items.map((it) => ({ k: 'map', entries: structTree(kind.spec, it) })) };
  }
  const m = v as ReadonlyMap<string, Record<string, unknown>>;
  if (omitEmpty && m.size === 0) return null;
  const entries: Entries = sortYamlKeys(m.keys()).map((key) => [key, { k: 'map', entries: structTree(kind.spec, m.get(key) ?? {}) }]);
  return { k: 'map', entries };
}

/** The header YAML exactly as the reference writes it. */
export function formatTraceHeaderYaml(h: TraceHeader): string {
  return emitYamlDocument(structTree(HEADER_SPEC, h as unknown as Record<string, unknown>));
}

