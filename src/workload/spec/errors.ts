/**
 * Errors for workload spec files: one line each, naming `file:line:col`, the field path and the fix.
 */
import { BlisError, showValue } from '../../domain/errors.js';

export type WorkloadSpecErrorCode =
  /** The file is not valid YAML (or is empty, or holds several documents). */
  | 'WORKLOAD_SPEC_YAML'
  /** A key the schema does not define (a typo, usually). */
  | 'WORKLOAD_SPEC_UNKNOWN_KEY'
  /** A value of the wrong kind: text where a number belongs, a list where a mapping belongs, 1.5 for an integer. */
  | 'WORKLOAD_SPEC_TYPE'
  /** A missing or non-positive / non-finite rate (aggregate_rate, rate_fraction, trace_rate). */
  | 'WORKLOAD_SPEC_RATE'
  /** Every rate-based client has rate_fraction 0, so there is nothing to split aggregate_rate by. */
  | 'WORKLOAD_SPEC_RATE_SUM'
  /** No clients, cohorts or other workload source. */
  | 'WORKLOAD_SPEC_EMPTY'
  /** An unknown distribution type, a missing or non-finite parameter, or min > max. */
  | 'WORKLOAD_SPEC_DISTRIBUTION'
  /** Settings that cannot be combined (concurrency with rate_fraction, mixed slo_class, several sources). */
  | 'WORKLOAD_SPEC_CONFLICT'
  /** Any other out-of-range or unknown value (slo_class, arrival process, window bounds, population...). */
  | 'WORKLOAD_SPEC_VALUE'
  /** A feature the reference supports but this implementation does not generate yet. */
  | 'WORKLOAD_SPEC_UNSUPPORTED';

/** A YAML path: mapping keys and sequence indices from the document root. */
export type SpecPath = readonly (string | number)[];

export interface SpecPosition {
  readonly line: number;
  readonly col: number;
}

export class WorkloadSpecError extends BlisError {
  declare readonly code: WorkloadSpecErrorCode;
  declare readonly file: string;
  declare readonly line: number;
  declare readonly col: number;
  /** Dotted field path such as `clients[1].rate_fraction` ('' for the whole document). */
  declare readonly field: string;

  /** `pos` is null for specs built in code rather than read from a file (line and col are then 0). */
  constructor(code: WorkloadSpecErrorCode, file: string, pos: SpecPosition | null, field: string, problem: string, fix: string) {
    const where = field === '' ? '' : `${field}: `;
    const at = pos === null ? file : `${file}:${pos.line}:${pos.col}`;
    super(code, `${at}: ${where}${problem}; ${fix}`, { file, line: pos?.line ?? 0, col: pos?.col ?? 0, field });
    this.name = 'WorkloadSpecError';
  }
}

/** `clients[1].input_distribution.params.mean` for ['clients', 1, 'input_distribution', 'params', 'mean']. */
export function formatSpecPath(path: SpecPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      // A key with unusual characters is quoted so it cannot break the message (binary, newlines, invisible).
      const key = /^[\x21-\x7e]+$/.test(seg) ? seg : showValue(seg);
      out += out === '' ? key : `.${key}`;
    }
  }
  return out;
}
