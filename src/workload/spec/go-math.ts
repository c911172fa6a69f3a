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
 * - `Pow`, `Gamma`, `Cos`, `Frexp`, `Ldexp`, `Modf` are Go's portable code (no amd64 assembly exists for them, and
 *   the amd64 compiler never fuses multiply-adds at GOAMD64=v1).
 */
import { goLog } from '../../engine/go-rand.js';

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

// Constants of the amd64 Exp routine, parsed from the same decimal literals as the reference assembler.
const LOG2E = 1.442695040888963407359924681001892;
const LN2U = 0.69314718055966295651160180568695068359375;
const LN2L = 0.28235290563031577122588448175013436025525412068e-12;
const EXP_OVERFLOW = 7.09782712893384e2;
const T2 = 0.5;
const T3 = 1.6666666666666666667e-1;
const T4 = 4.1666666666666666667e-2;
const T5 = 8.3333333333333333333e-3;
const T6 = 1.3888888888888888889e-3;
const T7 = 1.984126984126984127e-4;
const T8 = 2.4801587301587301587e-5;

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
  return [f64[0]!, e];
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
  return m * f64[0]!;
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

const GAM_P = [
  1.60119522476751861407e-4, 1.19135147006586384913e-3, 1.04213797561761569935e-2, 4.76367800457137231464e-2,
  2.0744822764843597515e-1, 4.94214826801497100753e-1, 9.99999999999999996796e-1,
] as const;
const GAM_Q = [
  -2.31581873324120129819e-5, 5.39605580493303397842e-4, -4.45641913851797240494e-3, 1.18139785222060435552e-2,
  3.58236398605498653373e-2, -2.34591795718243348568e-1, 7.14304917030273074085e-2, 1.0000000000000000032,
] as const;
const GAM_S = [
  7.87311395793093628397e-4, -2.2954996161337812638e-4, -2.68132617805781232825e-3, 3.4722222160545866731e-3,
  8.33333333333482257126e-2,
] as const;

/** Stirling's formula as Go evaluates it, returned as two factors whose product is Γ(x). */
function stirling(x: number): [number, number] {
  if (x > 200) return [Infinity, 1];
  const sqrtTwoPi = 2.506628274631000502417;
  const maxStirling = 143.01608;
  let w = 1 / x;
  w = 1 + w * ((((GAM_S[0] * w + GAM_S[1]) * w + GAM_S[2]) * w + GAM_S[3]) * w + GAM_S[4]);
  let y1 = goExp(x);
  let y2 = 1;
  if (x > maxStirling) {
    const v = goPow(x, 0.5 * x - 0.25);
    y2 = v / y1;
    y1 = v;
  } else {
    y1 = goPow(x, x - 0.5) / y1;
  }
  return [y1, sqrtTwoPi * w * y2];
}

/**
 * Go math.Gamma for x > 0 (the only domain the Weibull shape search uses); other inputs are rejected rather than
 * approximated, since the reflection branch needs Go's Sin as well.
 */
export function goGamma(x: number): number {
  const euler = 0.5772156649015328606065120900824024310421;
  if (Number.isNaN(x) || x <= 0) throw new RangeError(`goGamma supports x > 0 only, got ${x}`);
  if (x === Infinity) return Infinity;
  if (x > 33) {
    const [a, b] = stirling(x);
    return a * b;
  }
  let z = 1;
  let v = x;
  while (v >= 3) {
    v -= 1;
    z *= v;
  }
  while (v < 2) {
    if (v < 1e-9) return z / ((1 + euler * v) * v);
    z /= v;
    v += 1;
  }
  if (v === 2) return z;
  v -= 2;
  const p = (((((v * GAM_P[0] + GAM_P[1]) * v + GAM_P[2]) * v + GAM_P[3]) * v + GAM_P[4]) * v + GAM_P[5]) * v + GAM_P[6];
  const q =
    ((((((v * GAM_Q[0] + GAM_Q[1]) * v + GAM_Q[2]) * v + GAM_Q[3]) * v + GAM_Q[4]) * v + GAM_Q[5]) * v + GAM_Q[6]) * v +
    GAM_Q[7];
  return (z * p) / q;
}

const SIN = [
  1.5896230157654656806e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6, -1.98412698295895385996e-4,
  8.33333333332211858878e-3, -1.66666666666666307295e-1,
] as const;
const COS = [
  -1.135853652138768173e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7, 2.48015872888517045348e-5,
  -1.38888888888730564116e-3, 4.16666666666665929218e-2,
] as const;
const PI4A = 7.85398125648498535156e-1;
const PI4B = 3.77489470793079817668e-8;
const PI4C = 2.69515142907905952645e-15;

/**
 * Go math.Cos (Cephes, octant reduction with a three-part π/4). Arguments at or beyond 2^29 need Payne–Hanek
 * reduction, which the diurnal windows (|x| < 2π) never reach, so they are rejected instead of approximated.
 */
export function goCos(xIn: number): number {
  if (!Number.isFinite(xIn)) return NaN;
  const x = Math.abs(xIn);
  if (x >= 2 ** 29) throw new RangeError(`goCos supports |x| < 2^29 only, got ${xIn}`);
  // 4/π as Go's constant arithmetic rounds it (it happens to equal 4 / Math.PI).
  let j = Math.trunc(x * 1.2732395447351628);
  let y = j;
  if (j % 2 === 1) {
    j++;
    y++;
  }
  j %= 8;
  const z = x - y * PI4A - y * PI4B - y * PI4C;
  let sign = false;
  if (j > 3) {
    j -= 4;
    sign = !sign;
  }
  if (j > 1) sign = !sign;
  const zz = z * z;
  let r: number;
  if (j === 1 || j === 2) {
    r = z + z * zz * (((((SIN[0] * zz + SIN[1]) * zz + SIN[2]) * zz + SIN[3]) * zz + SIN[4]) * zz + SIN[5]);
  } else {
    r = 1.0 - 0.5 * zz + zz * zz * (((((COS[0] * zz + COS[1]) * zz + COS[2]) * zz + COS[3]) * zz + COS[4]) * zz + COS[5]);
  }
  return sign ? -r : r;
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
