/**
 * Weighted-routing profiles: the `--routing-scorers "name:weight,..."` grammar, the default profile, weight
 * normalisation and the `--lora-scorer-weight` composition (reference blis-cluster.md §3.1).
 */
import { RoutingConfigError, RoutingErrorCode } from './errors.js';
import { goFormatV, goParseFloat, goQuote } from '../gocompat/go-text.js';
import { isScorerName, SCORER_NAMES, type ScorerName } from './scorer-registry.js';

export interface ScorerConfig {
  readonly name: ScorerName;
  /** Relative weight, finite and > 0; normalised by the sum when the policy is built. */
  readonly weight: number;
}

/** llm-d's production profile, used whenever a weighted policy is given no scorers. */
export function defaultScorerConfigs(): ScorerConfig[] {
  return [
    { name: 'precise-prefix-cache', weight: 2.0 },
    { name: 'queue-depth', weight: 1.0 },
    { name: 'kv-utilization', weight: 1.0 },
  ];
}

function unknownScorer(field: string, name: string, prefix = ''): RoutingConfigError {
  return new RoutingConfigError(
    RoutingErrorCode.UnknownScorer,
    field,
    `${prefix}unknown scorer ${goQuote(name)}; valid: ${SCORER_NAMES.join(', ')}`,
  );
}

function badWeight(field: string, name: string, weight: number, prefix = ''): RoutingConfigError {
  return new RoutingConfigError(
    RoutingErrorCode.InvalidScorerWeight,
    field,
    `${prefix}scorer ${goQuote(name)} weight must be a finite positive number, got ${goFormatV(weight)}`,
  );
}

function isValidWeight(w: number): boolean {
  return Number.isFinite(w) && w > 0;
}

/**
 * Parses `--routing-scorers`. Entries are comma-separated `name:weight` pairs, each part whitespace-trimmed.
 * Returns null for the empty string (meaning "use the default profile"). Checks run in the reference's
 * order — shape, name, duplicate, number syntax, positivity — so the first error reported is the same.
 */
export function parseScorerConfigs(text: string, field = 'routing-scorers'): ScorerConfig[] | null {
  if (text === '') return null;
  const configs: ScorerConfig[] = [];
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const entry = part.trim();
    const colon = entry.indexOf(':');
    if (colon < 0) {
      throw new RoutingConfigError(
        RoutingErrorCode.MalformedScorerConfig,
        field,
        `invalid scorer config ${goQuote(entry)} (expected name:weight)`,
      );
    }
    const name = entry.slice(0, colon).trim();
    if (!isScorerName(name)) throw unknownScorer(field, name);
    if (seen.has(name)) {
      throw new RoutingConfigError(
        RoutingErrorCode.DuplicateScorer,
        field,
        `duplicate scorer ${goQuote(name)}; each scorer may appear at most once`,
      );
    }
    seen.add(name);
    const weightText = entry.slice(colon + 1).trim();
    const parsed = goParseFloat(weightText);
    if (!parsed.ok) {
      throw new RoutingConfigError(
        RoutingErrorCode.InvalidScorerWeight,
        field,
        `invalid weight for scorer ${goQuote(name)}: strconv.ParseFloat: parsing ${goQuote(weightText)}: ${parsed.error}`,
      );
    }
    if (!isValidWeight(parsed.value)) throw badWeight(field, name, parsed.value);
    configs.push({ name, weight: parsed.value });
  }
  return configs;
}

/**
 * Validates a profile that did not come through the parser (a policy bundle's `routing.scorers`, the library
 * API): known names, no duplicates, finite positive weights. Messages follow the reference bundle validator.
 */
export function validateScorerConfigs(configs: readonly { readonly name: string; readonly weight: number }[], field = 'routing.scorers'): ScorerConfig[] {
  const seen = new Set<string>();
  return configs.map((c, i) => {
    const prefix = `routing scorer[${i}]: `;
    if (!isScorerName(c.name)) throw unknownScorer(field, c.name, prefix);
    if (seen.has(c.name)) {
      throw new RoutingConfigError(
        RoutingErrorCode.DuplicateScorer,
        field,
        `${prefix}duplicate scorer ${goQuote(c.name)}; each scorer may appear at most once`,
      );
    }
    seen.add(c.name);
    if (!isValidWeight(c.weight)) {
      throw new RoutingConfigError(
        RoutingErrorCode.InvalidScorerWeight,
        field,
        `routing scorer[${i}] ${goQuote(c.name)}: weight must be a finite positive number, got ${goFormatV(c.weight)}`,
      );
    }
    return { name: c.name, weight: c.weight };
  });
}

/** Weights divided by their sum (summed left to right, as the reference does, so the quotients match). */
export function normalizeScorerWeights(configs: readonly ScorerConfig[]): number[] {
  let total = 0.0;
  for (const c of configs) total += c.weight;
  if (!(total > 0)) {
    throw new RoutingConfigError(RoutingErrorCode.InvalidScorerWeight, 'routing-scorers', `scorer weights sum to ${total}; must be positive`);
  }
  return configs.map((c) => c.weight / total);
}

/**
 * `--lora-scorer-weight w`: appends `lora-affinity:w` to the effective profile, materialising the default
 * profile first when none was given, so LoRA affinity adds to the usual dimensions instead of replacing them.
 */
export function composeLoraScorer(base: readonly ScorerConfig[] | null, weight: number): ScorerConfig[] {
  if (!isValidWeight(weight)) {
    throw new RoutingConfigError(
      RoutingErrorCode.InvalidScorerWeight,
      'lora-scorer-weight',
      `weight must be a finite positive number, got ${goFormatV(weight)}`,
    );
  }
  const profile = base === null || base.length === 0 ? defaultScorerConfigs() : [...base];
  if (profile.some((c) => c.name === 'lora-affinity')) {
    throw new RoutingConfigError(
      RoutingErrorCode.DuplicateScorer,
      'lora-scorer-weight',
      'lora-affinity already present in the scorer profile; set its weight via --routing-scorers OR --lora-scorer-weight, not both',
    );
  }
  return [...profile, { name: 'lora-affinity', weight }];
}
