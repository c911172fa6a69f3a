/**
 * `--slo-targets critical=100000,standard=500000`: SLO class → TTFT target in µs for slo-deadline dispatch.
 * Only read when flow control is on; it then replaces the bundle's `admission.slo_targets` wholesale.
 */
import { PolicyConfigError } from './errors.js';
import { showValue } from '../domain/errors.js';

const FLAG = '--slo-targets';

/** Empty text → null (keep the bundle's). A repeated class keeps its last value. */
export function parseSloTargetsFlag(text: string): Map<string, number> | null {
  if (text === '') return null;
  const out = new Map<string, number>();
  for (const pair of text.split(',')) {
    const trimmed = pair.trim();
    const eq = trimmed.indexOf('=');
    if (eq < 0) throw new PolicyConfigError('POLICY_FLAG', null, FLAG, `invalid entry ${showValue(pair)} (expected class=microseconds)`, 'write entries such as critical=100000');
    const key = trimmed.slice(0, eq).trim();
    if (key === '') throw new PolicyConfigError('POLICY_FLAG', null, FLAG, `empty class name in ${showValue(pair)}`, 'put the SLO class before the =');
    const valueText = trimmed.slice(eq + 1).trim();
    // strconv.ParseInt(s, 10, 64): optional sign, decimal digits only.
    const v = /^[+-]?[0-9]+$/.test(valueText) ? Number(valueText) : NaN;
    if (!(v > 0) || !Number.isSafeInteger(v)) {
      throw new PolicyConfigError('POLICY_FLAG', null, FLAG, `target for ${showValue(key)} must be a positive integer (µs), got ${valueText}`, 'give the TTFT target in whole microseconds');
    }
    out.set(key, v);
  }
  return out;
}
