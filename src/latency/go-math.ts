/**
 * Go's `math.Pow` for the case the latency models use: a base in [0, 1] raised to a non-negative integer.
 *
 * V8's `Math.pow` is not bit-identical to Go's (Go multiplies successive squarings of the frexp mantissa and
 * tracks the exponent separately), and the roofline MoE expert-count term truncates to an integer tick, so
 * the last ulp can matter. Only the integer-exponent path is reproduced; other inputs fall back to
 * `Math.pow`, which the models never reach.
 */

const scratch = new DataView(new ArrayBuffer(8));

/** Exactly 2^k for k in [-1022, 1023] (a normal double built from its bits). */
function pow2(k: number): number {
  scratch.setUint32(0, ((k + 1023) << 20) >>> 0);
  scratch.setUint32(4, 0);
  return scratch.getFloat64(0);
}

/** Go `math.Frexp` for a finite, positive, normal x: x = frac·2^exp with frac in [0.5, 1). */
function frexpNormal(x: number): [number, number] {
  scratch.setFloat64(0, x);
  const hi = scratch.getUint32(0);
  const biased = (hi >>> 20) & 0x7ff;
  scratch.setUint32(0, (hi & 0x800fffff) | (1022 << 20));
  return [scratch.getFloat64(0), biased - 1022];
}

/** Go `math.Ldexp` for a positive normal frac: one rounding step at most, as Go does for subnormal results. */
function ldexp(frac: number, exp: number): number {
  const [f, e] = frexpNormal(frac);
  const total = exp + e; // result = f · 2^total, f in [0.5, 1)
  if (total - 1 < -1075) return 0;
  if (total - 1 > 1023) return Infinity;
  const m = f * 2; // in [1, 2), result = m · 2^(total-1)
  const k = total - 1;
  if (k < -1022) return m * pow2(k + 53) * pow2(-53);
  return m * pow2(k);
}

export function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (y === 1) return x;
  if (!(x > 0 && x < 1) || !Number.isInteger(y) || y < 0 || y >= 2 ** 53) {
    if (x === 0 && y > 0) return 0;
    return Math.pow(x, y);
  }
  let a1 = 1;
  let ae = 0;
  let [x1, xe] = frexpNormalOrSub(x);
  for (let i = y; i !== 0; i = Math.floor(i / 2)) {
    if (xe < -(1 << 12) || 1 << 12 < xe) {
      ae += xe;
      break;
    }
    if (i % 2 === 1) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe *= 2;
    if (x1 < 0.5) {
      x1 += x1;
      xe--;
    }
  }
  return ldexp(a1, ae);
}

/** frexp that also normalises a subnormal input (Go scales it by 2^52 first). */
function frexpNormalOrSub(x: number): [number, number] {
  if (x < 2 ** -1022) {
    const [f, e] = frexpNormal(x * 2 ** 52);
    return [f, e - 52];
  }
  return frexpNormal(x);
}
