import { describe, expect, it } from 'vitest';
import { stepBatchOf } from './types.js';
import { createBlackboxModel } from './blackbox.js';
import { LatencyConfigError } from './errors.js';
import { req } from './test-fixtures.js';

describe('blackbox latency model', () => {
  // Coefficients in the shape of the old per-model fits (β0 per step, β1 per prefill token, β2 per decode).
  const m = createBlackboxModel({ alpha: [1601.35, 3.51, 1805.54], beta: [6910.42, 17.67, 2.84] });

  it('is β0 + β1·prefill tokens + β2·decode tokens, truncated', () => {
    const batch = [req(500, 10, 0, 300), req(200, 10, 100, 100), req(50, 5, 52, 1), req(70, 5, 80, 1)];
    // 6910.42 + 17.67·400 + 2.84·2 = 6910.42 + 7068 + 5.68 = 13984.1
    expect(m.stepTime(stepBatchOf(batch, batch.length))).toBe(13984);
  });

  it('ignores zero-output requests past their prompt and requests beyond count', () => {
    const batch = [req(100, 0, 100, 1), req(100, 10, 0, 100)];
    expect(m.stepTime(stepBatchOf(batch, 1))).toBe(6910);
  });

  it('never returns less than 1', () => {
    const zero = createBlackboxModel({ alpha: [0, 0, 0], beta: [0, 0, 0] });
    expect(zero.stepTime(stepBatchOf([], 0))).toBe(1);
  });

  it('has queueing α0 + α1·inputLen, per-token α2 and no post-decode overhead', () => {
    expect(m.queueingTime(req(1000, 1, 0, 0))).toBe(5111); // trunc(1601.35 + 3510)
    expect(m.outputTokenProcessingTime()).toBe(1805);
    expect(m.postDecodeFixedOverhead()).toBe(0);
  });

  it('needs three finite non-negative betas', () => {
    expect(() => createBlackboxModel({ alpha: [0, 0, 0], beta: [1, 2] })).toThrow(LatencyConfigError);
    expect(() => createBlackboxModel({ alpha: [0, 0, 0], beta: [1, Number.POSITIVE_INFINITY, 0] })).toThrow(/beta\[1\]/);
  });
});
