/**
 * The E/P/D encode decider (reference sim/disaggregation.go EncodeDecider, blis-cluster.md §8.2 step 4): after
 * the decode pod is chosen and the P/D decider has spoken, decide whether the request first goes through the
 * encode pool. Built-ins: `never` (default), `always`, `multimodal` (the request carries image, audio or video
 * tokens). A decider sees the input only (never the output tokens) and the decode pod chosen for the request.
 */
import type { Request } from '../domain/request.js';
import { RoutingConfigError, RoutingErrorCode } from './errors.js';
import type { RouterState } from './types.js';

/** What a decider that looks beyond the request may read (policy-bundle deciders). */
export interface EncodeContext {
  /** The encode pool's router state for this request, built on demand. */
  readonly encodeState: () => RouterState;
  readonly clock: number;
}

export interface EncodeDecision {
  readonly encode: boolean;
  readonly reason: string;
}

export interface EncodeDecider {
  readonly name: string;
  shouldEncode(req: Request, decodeInstanceId: string): boolean;
  /**
   * The decision with its reason, for deciders that read the encode pool or explain themselves (policy-bundle
   * deciders); when present the encode stage calls it instead of shouldEncode and records the decision.
   */
  readonly decide?: (req: Request, decodeInstanceId: string, ctx: EncodeContext) => EncodeDecision;
}

export const ENCODE_DECIDERS = ['never', 'always', 'multimodal'] as const;
export type EncodeDeciderName = (typeof ENCODE_DECIDERS)[number];

export function isEncodeDecider(name: string): name is EncodeDeciderName {
  return (ENCODE_DECIDERS as readonly string[]).includes(name);
}

/** The request carries any non-text modality (the reference's Request.IsMultimodal). */
export function isMultimodal(req: Request): boolean {
  return req.imageTokens > 0 || req.audioTokens > 0 || req.videoTokens > 0;
}

const NEVER: EncodeDecider = { name: 'never', shouldEncode: () => false };
const ALWAYS: EncodeDecider = { name: 'always', shouldEncode: () => true };
const MULTIMODAL: EncodeDecider = { name: 'multimodal', shouldEncode: (req) => isMultimodal(req) };

export function makeEncodeDecider(name: string): EncodeDecider {
  switch (name) {
    case '':
    case 'never':
      return NEVER;
    case 'always':
      return ALWAYS;
    case 'multimodal':
      return MULTIMODAL;
    default:
      throw new RoutingConfigError(RoutingErrorCode.InvalidParameter, 'encode-decider', `Unknown encode decider "${name}". Valid: ${[...ENCODE_DECIDERS].sort().join(', ')}`);
  }
}
