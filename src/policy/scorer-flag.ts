/**
 * The `--routing-scorers name:weight,...` grammar and the `--lora-scorer-weight` composition, as the flag
 * resolver needs them. Errors name the flag; they carry no file position.
 */
import { PolicyConfigError, goFloatText } from './errors.js';
import { DEFAULT_SCORERS, type ScorerSetting } from './names.js';
import { showValue } from '../domain/errors.js';

const LORA_SCORER = 'lora-affinity';

function flagError(flag: string, problem: string, fix: string): PolicyConfigError {
  return new PolicyConfigError('POLICY_FLAG', null, flag, problem, fix);
}

/**
 * Parses `name:weight[,name:weight]` (whitespace around parts trimmed). Empty text means "no profile" (null).
 * Names must be known and unique; weights finite and > 0.
 */
export function parseScorerFlag(text: string, validNames: readonly string[], flag = '--routing-scorers'): ScorerSetting[] | null {
  if (text === '') return null;
  const out: ScorerSetting[] = [];
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const part = raw.trim();
    const colon = part.indexOf(':');
    if (colon < 0) throw flagError(flag, `invalid scorer entry ${showValue(part)} (expected name:weight)`, 'write entries such as queue-depth:2');
    const name = part.slice(0, colon).trim();
    if (!validNames.includes(name)) throw flagError(flag, `unknown scorer ${showValue(name)}`, `use one of: ${validNames.join(', ')}`);
    if (seen.has(name)) throw flagError(flag, `scorer ${showValue(name)} is listed twice`, 'each scorer may appear at most once');
    seen.add(name);
    const weightText = part.slice(colon + 1).trim();
    const weight = parseGoFloat(weightText);
    if (weight === null) throw flagError(flag, `invalid weight ${showValue(weightText)} for scorer ${showValue(name)}`, 'write the weight as a number such as 1.5');
    if (!(weight > 0 && Number.isFinite(weight))) {
      throw flagError(flag, `weight of scorer ${showValue(name)} must be a finite positive number, got ${goFloatText(weight)}`, 'use a weight above 0');
    }
    out.push({ name, weight });
  }
  return out;
}

/**
 * Appends `lora-affinity` at `weight` to the profile, starting from the default profile when none was given,
 * so the LoRA dimension adds to the usual ones instead of replacing them.
 */
export function composeLoraScorer(base: readonly ScorerSetting[], weight: number): ScorerSetting[] {
  const flag = '--lora-scorer-weight';
  if (!(weight > 0 && Number.isFinite(weight))) {
    throw flagError(flag, `weight must be a finite positive number, got ${goFloatText(weight)}`, 'give a weight above 0, or leave the flag unset');
  }
  const start = base.length === 0 ? DEFAULT_SCORERS : base;
  if (start.some((s) => s.name === LORA_SCORER)) {
    throw flagError(flag, `${LORA_SCORER} is already in the scorer profile`, `set its weight in --routing-scorers or with ${flag}, not both`);
  }
  return [...start, { name: LORA_SCORER, weight }];
}

/**
 * The strconv.ParseFloat forms that matter for a weight: decimal with optional exponent, and inf / infinity /
 * nan in any case (then rejected as non-finite). Hex floats are left out: no one writes a weight as 0x1p1.
 */
export function parseGoFloat(text: string): number | null {
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return NaN;
  if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(text)) return Number(text);
  return null;
}
