/**
 * `parseWorkloadSpec`: YAML text → validated {@link WorkloadSpec}, or one {@link WorkloadSpecError} naming
 * `file:line:col`, the field and the fix.
 *
 * Stages: YAML syntax (yaml-source.ts) → structure and value kinds (zod schemas, unknown keys rejected) → the
 * v1 → v2 upgrade → semantic rules (validate.ts). When several structural problems exist, the one earliest in the
 * file is reported.
 */
import type { core } from 'zod';
import { showValue } from '../../domain/errors.js';
import { editDistance } from '../../domain/suggest.js';
import { SCHEMA_KEYS, workloadSpecSchema } from './schema.js';
import type { SpecPath, SpecPosition } from './errors.js';
import type { WorkloadSpec } from './types.js';
import { validateWorkloadSpec } from './validate.js';
import { SpecSource } from './yaml-source.js';

export interface ParseWorkloadSpecOptions {
  /** Receives the deprecation notices the reference logs (v1 SLO class names). */
  readonly onWarning?: (message: string) => void;
}

/** v1 SLO class names and their v2 replacements. */
export const V1_TO_V2_SLO_CLASSES: ReadonlyMap<string, string> = new Map([
  ['realtime', 'critical'],
  ['interactive', 'standard'],
]);

/**
 * Upgrades a v1 spec (version "" or "1") in place: version becomes "2" and the clients' v1 SLO class names are
 * renamed. Cohorts are not renamed, as in the reference, so a cohort with a v1 name fails validation.
 */
export function upgradeV1ToV2(spec: WorkloadSpec, onWarning?: (message: string) => void): void {
  if (spec.version !== '' && spec.version !== '1') return;
  spec.version = '2';
  for (const c of spec.clients) {
    const renamed = V1_TO_V2_SLO_CLASSES.get(c.sloClass);
    if (renamed === undefined) continue;
    onWarning?.(`deprecated SLO class "${c.sloClass}" auto-mapped to "${renamed}"; update your spec to use v2 tier names`);
    c.sloClass = renamed;
  }
}

/**
 * Parses and validates a workload spec. `fileLabel` names the file in error messages.
 * @throws WorkloadSpecError
 */
export function parseWorkloadSpec(yamlText: string, fileLabel: string, opts: ParseWorkloadSpecOptions = {}): WorkloadSpec {
  const src = new SpecSource(yamlText, fileLabel, checkKey);
  if (typeof src.raw !== 'object' || src.raw === null || Array.isArray(src.raw) || src.raw instanceof Map) {
    src.fail(
      'WORKLOAD_SPEC_TYPE',
      [],
      'the document must be a mapping of top-level keys',
      'start with keys such as `version: "2"`, `aggregate_rate:` and `clients:`',
    );
  }
  const parsed = workloadSpecSchema.safeParse(src.raw, { reportInput: true });
  if (!parsed.success) reportIssue(src, parsed.error.issues);
  const spec = parsed.data;
  upgradeV1ToV2(spec, opts.onWarning);
  validateWorkloadSpec(spec, src);
  return spec;
}

interface Located {
  readonly issue: core.$ZodIssue;
  readonly path: SpecPath;
  readonly atKey: boolean;
  readonly pos: SpecPosition;
}

function locate(src: SpecSource, issue: core.$ZodIssue): Located {
  const base = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const path = unknownKey === undefined ? base : [...base, unknownKey];
  const atKey = unknownKey !== undefined;
  return { issue, path, atKey, pos: src.position(path, atKey) };
}

/**
 * Rejects a key the schema does not define before its value is converted (so nothing under a misspelt key is
 * built). Mappings whose keys are free-form (params, goodput_slo_targets, anything the key table does not know)
 * are left to the schema.
 */
function checkKey(src: SpecSource, path: SpecPath): void {
  const known = SCHEMA_KEYS.forPath(path.slice(0, -1));
  const key = String(path[path.length - 1]);
  if (known.length === 0 || known.includes(key)) return;
  unknownKey(src, path, known);
}

function unknownKey(src: SpecSource, path: SpecPath, known: readonly string[]): never {
  const key = String(path[path.length - 1]);
  const near = closest(key, known);
  const hint = near === null ? '' : `did you mean "${near}"? `;
  return src.fail(
    'WORKLOAD_SPEC_UNKNOWN_KEY',
    path,
    `unknown key ${showValue(key)}`,
    `${hint}remove it or fix its spelling (valid keys here: ${known.join(', ')})`,
    true,
  );
}

/** Reports the structural problem that comes first in the file. */
function reportIssue(src: SpecSource, issues: readonly core.$ZodIssue[]): never {
  const located = issues.map((i) => locate(src, i));
  located.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  const first = located[0]!;
  const { issue, path, atKey } = first;
  if (issue.code === 'unrecognized_keys' && atKey) return unknownKey(src, path, SCHEMA_KEYS.forPath(path.slice(0, -1)));
  const [problem, fix] = describeTypeIssue(issue);
  return src.fail('WORKLOAD_SPEC_TYPE', path, problem, fix);
}

function describeValue(v: unknown): string {
  if (v === undefined || v === null) return 'nothing';
  if (typeof v === 'string') return `text ${showValue(v)}`;
  if (typeof v === 'bigint') return `the integer ${v}`;
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : String(v);
  if (typeof v === 'boolean') return `the boolean ${v}`;
  if (Array.isArray(v)) return 'a list';
  return 'a mapping';
}

const EXPECTED: Record<string, [string, string]> = {
  number: ['a number', 'write an unquoted number such as 0.5'],
  int: ['an integer', 'write an unquoted whole number such as 100'],
  string: ['text', 'write a plain or quoted string'],
  boolean: ['true or false', 'write true or false (unquoted)'],
  object: ['a mapping of keys to values', 'indent the nested keys under this one'],
  array: ['a list', 'write one "- " item per entry'],
  map: ['a mapping', 'write `key: value` pairs under this key'],
  bigint: ['a 64-bit integer', 'write an unquoted whole number'],
};

function describeTypeIssue(issue: core.$ZodIssue): [string, string] {
  const input: unknown = issue.input;
  if (issue.code === 'invalid_type') {
    if (typeof input === 'number' && !Number.isFinite(input)) return [`must be a finite number, got ${describeValue(input)}`, 'write a finite value'];
    if (typeof input === 'bigint') return [`${input} is out of range for this field`, 'use a value between -2^53 and 2^53'];
    const [what, fix] = EXPECTED[issue.expected] ?? [issue.expected, 'fix the value'];
    return [`expected ${what}, got ${describeValue(input)}`, fix];
  }
  if (issue.code === 'too_big' || issue.code === 'too_small') return [`${describeValue(input)} is out of range`, 'use a value between -2^53 and 2^53'];
  if (issue.code === 'invalid_union') return [`expected an integer, got ${describeValue(input)}`, 'write an unquoted whole number'];
  return [issue.message, 'fix the value'];
}

/** The known key closest to `key` by edit distance, when it is close enough to be a plausible typo. */
function closest(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(key, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}
