import { describe, expect, it } from 'vitest';
import { expectedAccepted, speculativeTokens } from './speculative.js';

/** The tokens each speculative step emits until `need` tokens are out. */
function sequence(accepted: number, need: number): number[] {
  const out: number[] = [];
  let left = need;
  for (let n = 1; left > 0; n++) {
    const g = speculativeTokens(n, accepted, left);
    out.push(g);
    left -= g;
  }
  return out;
}

describe('speculative decoding: the deterministic fractional carry', () => {
  it('K=3, α=0.7 (a = α·K = 2.1, 3.1 tokens/step) over a 20-token output', () => {
    // The first output token comes from the prefill; the decode emits the other 19. By hand, step n emits
    // 1 + ⌊2.1·n⌋ − ⌊2.1·(n−1)⌋:  n=1: 1+2−0=3  n=2: 1+4−2=3  n=3: 1+6−4=3  n=4: 1+8−6=3  n=5: 1+10−8=3
    // n=6: 1+12−10=3 (18 out), n=7: 1+14−12=3 but only 1 is left, so 1.
    const a = 0.7 * 3;
    expect(sequence(a, 19)).toEqual([3, 3, 3, 3, 3, 3, 1]);
    // All 20 by the decode (e.g. a P/D decode half): the 7th step emits the 2 left.
    expect(sequence(a, 20)).toEqual([3, 3, 3, 3, 3, 3, 2]);
  });

  it('the carry pays its extra token when the fractions add up to one: step 10 of a = 2.1 emits 4', () => {
    // ⌊2.1·10⌋ − ⌊2.1·9⌋ = 21 − 18 = 3 accepted: the tenth step's 0.1s have summed to a whole token (in binary
    // 0.7·3 = 2.0999999999999996 and 10 times it 20.999999999999996; the carry must still count 21).
    const a = 0.7 * 3;
    const seq = sequence(a, 31);
    expect(seq).toEqual([3, 3, 3, 3, 3, 3, 3, 3, 3, 4]);
    expect(seq.reduce((s, g) => s + g, 0)).toBe(31);
    // Over n steps the mean is n + ⌊n·a⌋ tokens: 100 steps emit 100 + 210 = 310.
    expect(sequence(a, 310)).toHaveLength(100);
  });

  it('α = 0 emits one token per step; α = 1 emits K+1; never past what is left', () => {
    expect(sequence(0, 5)).toEqual([1, 1, 1, 1, 1]);
    expect(sequence(1 * 4, 12)).toEqual([5, 5, 2]);
    expect(speculativeTokens(1, 4, 1)).toBe(1);
  });

  it('per-position acceptance rates: E = Σ_i Π_{j≤i} a_j', () => {
    // 0.8 + 0.8·0.6 + 0.8·0.6·0.4 = 0.8 + 0.48 + 0.192 = 1.472 accepted drafts per step (2.472 tokens).
    expect(expectedAccepted([0.8, 0.6, 0.4])).toBeCloseTo(1.472, 12);
    // One rate repeated: the geometric sum α + α² + α³ (0.7 + 0.49 + 0.343 = 1.533), below upstream's α·K = 2.1.
    expect(expectedAccepted([0.7, 0.7, 0.7])).toBeCloseTo(1.533, 12);
    expect(expectedAccepted([1, 1, 1])).toBe(3);
    expect(expectedAccepted([0, 1, 1])).toBe(0);
    // a = 1.472: steps emit 1+1−0=2, 1+2−1=2, 1+4−2=3 (⌊4.416⌋ = 4), 1+5−4=2 (⌊5.888⌋ = 5).
    expect(sequence(1.472, 9)).toEqual([2, 2, 3, 2]);
  });
});
