/**
 * Blackbox latency model: a linear regression on token counts (removed from the reference, kept here for
 * users who still have per-model α/β fits from older BLIS releases).
 *
 *   stepTime     = max(1, trunc(β0 + β1·Σ prefill new tokens + β2·Σ decode new tokens))
 *   queueingTime = trunc(α0 + α1·inputLen), per-output-token overhead = trunc(α2), post-decode = 0
 */
import type { Request } from '../domain/request.js';
import { clampToInt64 } from '../domain/units.js';
import { validateCoefficients } from './errors.js';
import type { LatencyModel, StepBatch } from './types.js';

export interface BlackboxOptions {
  /** [α0, α1, α2], at least 3 entries, each finite and >= 0. */
  readonly alpha: readonly number[];
  /** [β0, β1, β2], at least 3 entries, each finite and >= 0. */
  readonly beta: readonly number[];
  /** Speculative decoding's verify width K+1 (default 1 = off): each decode entry counts as w decode tokens. */
  readonly verifyWidth?: number;
}

export function createBlackboxModel(opts: BlackboxOptions): LatencyModel {
  validateCoefficients('alpha', opts.alpha, 3, 'blackbox');
  validateCoefficients('beta', opts.beta, 3, 'blackbox');
  const [a0, a1, a2] = opts.alpha as readonly [number, number, number];
  const [b0, b1, b2] = opts.beta as readonly [number, number, number];
  const otp = clampToInt64(a2);
  const w = opts.verifyWidth ?? 1;
  const stepTime = (b: StepBatch, extraDecodes: number): number => {
    let prefillTokens = 0;
    let decodeTokens = extraDecodes * w;
    for (let i = 0; i < b.count; i++) {
      if (b.progress[i]! < b.inputLen[i]!) prefillTokens += b.newTokens[i]!;
      else if (b.outputLen[i]! > 0) decodeTokens += w === 1 ? b.newTokens[i]! : w;
    }
    let t = b0;
    t += b1 * prefillTokens;
    t += b2 * decodeTokens;
    return Math.max(1, clampToInt64(t));
  };
  return {
    name: 'blackbox',
    stepTime: (b) => stepTime(b, 0),
    // Decode entries add one token each to an integer sum: any order gives the same value.
    stepTimeWithDecodes: (b, decodes) => stepTime(b, decodes),
    queueingTime(req: Request): number {
      let t = a0;
      t += a1 * req.inputLen;
      return clampToInt64(t);
    },
    outputTokenProcessingTime(): number {
      return otp;
    },
    postDecodeFixedOverhead(): number {
      return 0;
    },
  };
}
