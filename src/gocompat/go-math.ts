/**
 * Go `math` functions the workload samplers feed straight into integer truncations and roundings.
 *
 * Why not Math.exp / Math.pow / Math.cos: V8 implements them with different algorithms (fdlibm ports), and
 * the reference's results are truncated (`int64(sample)`) or rounded (`int(math.Round(v))`) right after, so a
 * last-bit difference can move a sample across an integer boundary. Each function below performs the same
 * sequence of IEEE double operations as the reference build (Go 1.24, linux/amd64, GOAMD64=v1):
 *
 * - `Exp` is the amd64 assembly routine (a reduced-argument Taylor series). On CPUs with AVX+FMA — every x86
 *   server of the last decade — it takes a fused multiply-add path; that path is the default here, with the
 *   plain-SSE variant available for comparison. JS has no FMA, so {@link fma} emulates a correctly rounded one.
 * - `Log` is the amd64 assembly routine, already ported in the engine's GoRand ({@link goLog}).
 * - `Pow`, `Frexp`, `Ldexp`, `Modf` (and `Gamma`, `Cos` in go-math-special.ts) are Go's portable code (amd64 has
 *   no assembly for them, and the amd64 compiler never fuses multiply-adds at GOAMD64=v1).
 */
import { goLog } from './go-rand.js';

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
// Index of the 32-bit word holding the sign, exponent and top of the mantissa.
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const LO = 1 - HI;

function hiWord(x: number): number {
  f64[0] = x;
  return u32[HI]!;
}

/** The double with the given high and low 32-bit words. */
function fromWords(hi: number, lo: number): number {
  u32[HI] = hi >>> 0;
  u32[LO] = lo >>> 0;
  return f64[0]!;
}

/** Exactly 2^k for a normal exponent k in [-1022, 1023]. */
function pow2(k: number): number {
  return fromWords((k + 1023) << 20, 0);
}

/** The neighbouring double of a non-zero finite x, one step away from zero (up) or toward it (down). */
function stepUlp(x: number, awayFromZero: boolean): number {
  f64[0] = x;
  let lo = u32[LO]!;
  let hi = u32[HI]!;
  if (awayFromZero) {
    lo = (lo + 1) >>> 0;
    if (lo === 0) hi = (hi + 1) >>> 0;
  } else {
    if (lo === 0) hi = (hi - 1) >>> 0;
    lo = (lo - 1) >>> 0;
  }
  return fromWords(hi, lo);
}

// Veltkamp splitting constant 2^27 + 1: splits a double into two 26-bit halves whose products are exact.
const SPLIT = 134217729;

/**
 * Correctly rounded a*b + c (one rounding), as the x86 VFMADD instructions compute it.
 *
 * Boldo & Melquiond's emulation: the product is split exactly into hi + lo (Dekker), c + hi exactly into
 * th + tl (Knuth's TwoSum), the two low parts are added with round-to-odd, and the final addition rounds once.
 * Rounding the middle sum to odd is what prevents the double rounding a naive hi/lo sum would suffer. It is
 * exact whenever nothing over- or underflows, which holds for the Exp reduction (|operands| in [2^-60, 2^11]).
 */
export function fma(a: number, b: number, c: number): number {
  const p = a * b;
  if (!Number.isFinite(p) || !Number.isFinite(c) || p === 0 || Math.abs(p) > 2 ** 900 || Math.abs(p) < 2 ** -900) {
    return exactFma(a, b, c);
  }
  const as = SPLIT * a;
  const ah = as - (as - a);
  const al = a - ah;
  const bs = SPLIT * b;
  const bh = bs - (bs - b);
  const bl = b - bh;
  const pl = al * bl - (((p - ah * bh) - al * bh) - ah * bl);
  const th = c + p;
  const bb = th - c;
  const tl = (c - (th - bb)) + (p - bb);
  return th + addRoundToOdd(tl, pl);
}

/** x + y rounded to odd: exact sums stay, inexact ones take the neighbour whose last mantissa bit is 1. */
function addRoundToOdd(x: number, y: number): number {
  const s = x + y;
  const bb = s - x;
  const err = (x - (s - bb)) + (y - bb);
  if (err === 0) return s;
  f64[0] = s;
  if ((u32[LO]! & 1) === 1) return s;
  return stepUlp(s, s > 0 === err > 0);
}

/** Scale-free exact fallback for the cases the fast path does not cover (zeros, extremes, non-finite). */
function exactFma(a: number, b: number, c: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c) || a === 0 || b === 0) return a * b + c;
  const [ma, ea] = toExact(a);
  const [mb, eb] = toExact(b);
  const [mc, ec] = toExact(c);
  const ep = ea + eb;
  const e = Math.min(ep, ec);
  const sum = ma * mb * (1n << BigInt(ep - e)) + mc * (1n << BigInt(ec - e));
  if (sum === 0n) return 0;
  return roundBigScaled(sum, e);
}

/** x = m · 2^e with an integer m (|m| < 2^53). */
function toExact(x: number): [bigint, number] {
  if (x === 0) return [0n, 0];
  const [fr, ex] = goFrexp(x);
  return [BigInt(fr * 2 ** 53), ex - 53];
}

/** The double nearest to m · 2^e (ties to even), built without intermediate rounding. */
function roundBigScaled(m: bigint, e: number): number {
  const neg = m < 0n;
  let mag = neg ? -m : m;
  let exp = e;
  // Keep 64 significant bits plus a sticky bit so Number() performs the only rounding.
  const bits = mag.toString(2).length;
  if (bits > 64) {
    const drop = BigInt(bits - 64);
    const sticky = (mag & ((1n << drop) - 1n)) !== 0n ? 1n : 0n;
    mag = (mag >> drop) | sticky;
    exp += bits - 64;
  }
  const r = Number(mag) * 2 ** exp;
  return neg ? -r : r;
}

// Constants of the amd64 Exp routine: the shortest spellings of the doubles its (longer) decimal literals denote.
const LOG2E = 1.4426950408889634;
const LN2U = 0.693147180559663;
const LN2L = 2.8235290563031577e-13;
const EXP_OVERFLOW = 709.782712893384;
const T2 = 0.5;
const T3 = 0.16666666666666666;
const T4 = 0.041666666666666664;
const T5 = 0.008333333333333333;
const T6 = 0.001388888888888889;
const T7 = 0.0001984126984126984;
const T8 = 0.0000248015873015873;

/** CVTSD2SL: round half to even into int32; out-of-range values give the "integer indefinite" -2^31. */
function cvtsd2sl(t: number): number {
  let r = Math.round(t);
  if (r - t === 0.5 && r % 2 !== 0) r -= 1;
  if (!(r >= -2147483648 && r <= 2147483647)) return -2147483648;
  return r;
}

/** Go math.Exp on linux/amd64 with AVX+FMA (the default) or without (`withFma = false`). */
export function goExp(x: number, withFma = true): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === -Infinity) return 0;
  if (x > EXP_OVERFLOW) return Infinity;
  const k = cvtsd2sl(LOG2E * x);
  let r: number;
  let p: number;
  if (withFma) {
    r = fma(-k, LN2U, x);
    r = fma(-k, LN2L, r);
    r *= 0.0625;
    p = fma(fma(fma(fma(fma(fma(fma(T8, r, T7), r, T6), r, T5), r, T4), r, T3), r, T2), r, 1);
    r *= p;
    r *= r + 2;
    r *= r + 2;
    r *= r + 2;
    r = fma(r, r + 2, 1);
  } else {
    r = x - k * LN2U;
    r -= k * LN2L;
    r *= 0.0625;
    p = ((((((T8 * r + T7) * r + T6) * r + T5) * r + T4) * r + T3) * r + T2) * r + 1;
    r *= p;
    r *= r + 2;
    r *= r + 2;
    r *= r + 2;
    r *= r + 2;
    r += 1;
  }
  return scaleExp(r, k);
}

/** The routine's final r · 2^k, including its two-step scaling into the subnormal range. */
function scaleExp(r: number, k: number): number {
  const biased = k + 1023;
  if (biased >= 0x7ff) return Infinity;
  if (biased > 0) return r * pow2(k);
  if (biased < -52) return 0;
  return r * pow2(k + 1022) * pow2(-1022);
}

/** Go math.Frexp: x = frac · 2^exp with |frac| in [0.5, 1); zero, ±Inf and NaN come back unchanged with exp 0. */
export function goFrexp(x: number): [number, number] {
  if (x === 0 || !Number.isFinite(x)) return [x, 0];
  let e = 0;
  let y = x;
  if (Math.abs(y) < 2.2250738585072014e-308) {
    y *= 2 ** 52;
    e = -52;
  }
  const hi = hiWord(y);
  e += ((hi >>> 20) & 0x7ff) - 1022;
  f64[0] = y;
  u32[HI] = (hi & 0x800fffff) | 0x3fe00000;
  return [f64[0], e];
}

/** Go math.Ldexp: frac · 2^exp, rounding once when the result is subnormal. */
export function goLdexp(frac: number, exp: number): number {
  if (frac === 0 || !Number.isFinite(frac)) return frac;
  let y = frac;
  let e = exp;
  if (Math.abs(y) < 2.2250738585072014e-308) {
    y *= 2 ** 52;
    e -= 52;
  }
  const hi = hiWord(y);
  e += ((hi >>> 20) & 0x7ff) - 1023;
  if (e < -1075) return y < 0 ? -0 : 0;
  if (e > 1023) return y < 0 ? -Infinity : Infinity;
  let m = 1;
  if (e < -1022) {
    e += 53;
    m = 2 ** -53;
  }
  f64[0] = y;
  u32[HI] = (hi & 0x800fffff) | ((e + 1023) << 20);
  return m * f64[0];
}

/** Go math.Modf: integer part (toward zero) and fractional part, both carrying x's sign. */
export function goModf(x: number): [number, number] {
  if (x < 1) {
    if (x < 0) {
      const [i, f] = goModf(-x);
      return [-i, -f];
    }
    if (x === 0) return [x, x];
    return [0, x];
  }
  // Dropping the fraction bits is exactly truncation for finite doubles; Inf stays Inf and NaN compares false above.
  const i = Number.isFinite(x) ? Math.trunc(x) : x;
  return [i, x - i];
}

function isOddInt(x: number): boolean {
  const [xi, xf] = goModf(x);
  // Go converts to int64 before testing the low bit; beyond 2^53 every double is even.
  return xf === 0 && Math.abs(xi) < 2 ** 53 && Math.abs(xi) % 2 === 1;
}

/** Go math.Pow (the portable algorithm: x^frac via Exp(frac·Log x), x^int by squaring the frexp mantissa). */
export function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (y === 1) return x;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0) {
    if (y < 0) return isOddInt(y) ? (Object.is(x, -0) ? -Infinity : Infinity) : Infinity;
    return isOddInt(y) ? x : 0;
  }
  if (!Number.isFinite(y)) {
    if (x === -1) return 1;
    return (Math.abs(x) < 1) === (y > 0) ? 0 : Infinity;
  }
  if (!Number.isFinite(x)) {
    if (x === -Infinity) return goPow(1 / x, -y);
    return y < 0 ? 0 : Infinity;
  }
  if (y === 0.5) return Math.sqrt(x);
  if (y === -0.5) return 1 / Math.sqrt(x);
  return powFinite(x, y);
}

function powFinite(x: number, y: number): number {
  let [yi, yf] = goModf(Math.abs(y));
  if (yf !== 0 && x < 0) return NaN;
  if (yi >= 2 ** 63) {
    if (x === -1) return 1;
    return (Math.abs(x) < 1) === (y > 0) ? 0 : Infinity;
  }
  let a1 = 1;
  let ae = 0;
  if (yf !== 0) {
    if (yf > 0.5) {
      yf--;
      yi++;
    }
    a1 = goExp(yf * goLog(x));
  }
  let [x1, xe] = goFrexp(x);
  // yi < 2^63 but may exceed 2^53; halving a double integer with floor is exact, like Go's shift of an int64.
  for (let i = yi; i !== 0; i = Math.floor(i / 2)) {
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
  if (y < 0) {
    a1 = 1 / a1;
    ae = -ae;
  }
  return goLdexp(a1, ae);
}

/** Go's math.Round: halves away from zero (JS Math.round sends -2.5 to -2). */
export function goRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * Go `int64(f)` / `int(f)` on amd64: truncation toward zero; NaN and anything outside the int64 range yield the
 * "integer indefinite" MinInt64 that CVTTSD2SQ produces (which the samplers' `< 1` guards then lift to 1).
 */
export function goInt64(f: number): number {
  if (!(f > -9223372036854775808 && f < 9223372036854775808)) return -9223372036854775808;
  return Math.trunc(f);
}
