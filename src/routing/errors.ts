/**
 * Typed configuration errors of the routing layer. The messages keep the reference's wording (the CLI prefixes
 * them with the flag, e.g. "Invalid --routing-scorers: ") and say how to fix the input; `field` names it.
 */
import { BlisError } from '../domain/errors.js';
export const RoutingErrorCode = {
  UnknownRoutingPolicy: 'UNKNOWN_ROUTING_POLICY',
  UnknownAdmissionPolicy: 'UNKNOWN_ADMISSION_POLICY',
  /** A `--routing-scorers` entry is not `name:weight`. */
  MalformedScorerConfig: 'MALFORMED_SCORER_CONFIG',
  UnknownScorer: 'UNKNOWN_SCORER',
  DuplicateScorer: 'DUPLICATE_SCORER',
  /** A scorer weight does not parse as a number, or is not finite and > 0. */
  InvalidScorerWeight: 'INVALID_SCORER_WEIGHT',
  /** A numeric policy parameter (bucket capacity, thresholds, block size, budgets) is out of range. */
  InvalidParameter: 'INVALID_PARAMETER',
} as const;
export type RoutingErrorCode = (typeof RoutingErrorCode)[keyof typeof RoutingErrorCode];

export class RoutingConfigError extends BlisError {
  declare readonly code: RoutingErrorCode;
  /** The offending input, e.g. `routing-scorers`, `token-bucket-capacity`, `tenant_budgets.alice`. */
  declare readonly field: string;

  constructor(code: RoutingErrorCode, field: string, message: string) {
    super(code, message, { field });
    this.name = 'RoutingConfigError';
  }
}
