/**
 * Errors for policy bundles (`--policy-config`) and for the policy flags resolved against them. Each is one
 * line naming where the bad value came from (`file:line:col` plus the field path, or the flag), what is wrong
 * and how to fix it.
 */
import { BlisError, showValue } from '../domain/errors.js';

export type PolicyConfigErrorCode =
  /** The file is not valid YAML, or holds no document at all. */
  | 'POLICY_YAML'
  /** A key the bundle schema does not define (a typo, usually); the reference decodes with KnownFields. */
  | 'POLICY_UNKNOWN_KEY'
  /** The same key twice in one mapping. */
  | 'POLICY_DUPLICATE_KEY'
  /** A value of the wrong kind: text where a number belongs, a list where a mapping belongs. */
  | 'POLICY_TYPE'
  /** An unknown admission / routing / scheduler / preemption policy or scorer name. */
  | 'POLICY_UNKNOWN_NAME'
  /** A value outside its allowed range (negative rate, budget above 1, priority beyond ±100, ...). */
  | 'POLICY_RANGE'
  /** A scorer listed twice. */
  | 'POLICY_DUPLICATE_SCORER'
  /** A flag value (or a bundle value only checked once flags are merged) that cannot be used. */
  | 'POLICY_FLAG'
  /** A control-point section (`type: parameterized | decision_tree | code`) that is malformed. */
  | 'POLICY_SPEC'
  /** An unknown template, or a template parameter that is unknown or out of range. */
  | 'POLICY_TEMPLATE'
  /** A decision tree that is malformed: bad node, unknown feature, wrong operator or leaf for the control point. */
  | 'POLICY_TREE'
  /** A code policy that does not compile, lacks its entry point, or fails at load. */
  | 'POLICY_CODE';

/** A YAML path: mapping keys and sequence indices from the document root. */
export type PolicyPath = readonly (string | number)[];

export interface PolicyPosition {
  readonly line: number;
  readonly col: number;
}

export class PolicyConfigError extends BlisError {
  declare readonly code: PolicyConfigErrorCode;
  /** `admission.slo_priorities.batch`, `routing.scorers[1].weight`, or a flag such as `--scheduler`. */
  declare readonly field: string;

  constructor(
    code: PolicyConfigErrorCode,
    where: { readonly file: string; readonly pos: PolicyPosition } | null,
    field: string,
    problem: string,
    fix: string,
  ) {
    const loc = where === null ? '' : `${where.file}:${where.pos.line}:${where.pos.col}: `;
    const name = field === '' ? '' : `${field}: `;
    super(code, `${loc}${name}${problem}; ${fix}`, { file: where?.file, line: where?.pos.line, col: where?.pos.col, field });
    this.name = 'PolicyConfigError';
  }
}

/** `routing.scorers[1].weight` for ['routing', 'scorers', 1, 'weight']. */
export function formatPolicyPath(path: PolicyPath): string {
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

/** Go's `%v` for a float64 as the reference prints it in messages (NaN, +Inf, -Inf, 1e+06 ...). */
export function goFloatText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const abs = Math.abs(v);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    // Go's %v switches to exponent form with a signed, at-least-two-digit exponent.
    const [mant, exp] = v.toExponential().split('e');
    const e = Number(exp);
    return `${mant}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return String(v);
}

/**
 * A policy failed while the simulation ran: its sandbox ran out of budget or memory, it threw, or it returned
 * a decision the simulator cannot carry out. Names the control point, the policy, the call and the reason; the
 * simulation stops (a search scores the candidate as failed, the CLI exits 2).
 */
export class PolicyRuntimeError extends BlisError {
  constructor(
    readonly controlPoint: string,
    /** `code (fast) at bundle.yaml:3:3`, `tree at ...`, `template weighted_scorers at ...`. */
    readonly policy: string,
    /** `budget`, `memory`, `stack`, `threw`, `return` (sandbox kinds) or `decision` (an unusable decision). */
    readonly reason: string,
    /** 1-based call number of this control point's policy. */
    readonly callNumber: number,
    detail: string,
  ) {
    super('POLICY_RUNTIME', `${controlPoint} policy ${policy}: call #${callNumber}: ${detail}`);
    this.name = 'PolicyRuntimeError';
  }
}

/**
 * A run (or a program's top level at compile time) stopped by the fast engine's wall-clock backstop
 * (sandbox/watchdog.ts), code SANDBOX_BUDGET. Not deterministic: the evaluator and sweeps report it as
 * EVAL_TIMEOUT and never cache it.
 */
export class WallClockError extends BlisError {
  /** `perCall`: stopped by the per-call limit (--policy-call-wall-clock-s), not the run's budget. */
  constructor(detail: string, perCall = false) {
    super('SANDBOX_BUDGET', `fast engine: ${detail}; use the strict engine for code you do not trust, or raise ${perCall ? '--policy-call-wall-clock-s' : '--policy-wall-clock-s (blis evaluate: --timeout-s)'}`);
    this.name = 'WallClockError';
  }
}
