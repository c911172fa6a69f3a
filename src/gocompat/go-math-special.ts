/**
 * Go's portable `math.Gamma` and `math.Cos` (Cephes algorithms), for the Weibull shape search and the diurnal
 * cohort windows. See go-math.ts for why the reference's own algorithms are reproduced instead of V8's.
 */
import { goExp, goPow } from './go-math.js';

const GAM_P = [
  0.00016011952247675185, 0.0011913514700658638, 0.010421379756176158, 0.04763678004571372,
  0.20744822764843598, 0.4942148268014971, 1,
] as const;
const GAM_Q = [
  -0.000023158187332412014, 0.0005396055804933034, -0.004456419138517973, 0.011813978522206043,
  0.035823639860549865, -0.23459179571824335, 0.0714304917030273, 1,
] as const;
const GAM_S = [
  0.0007873113957930937, -0.00022954996161337813, -0.0026813261780578124, 0.0034722222160545866,
  0.08333333333334822,
] as const;

/** Stirling's formula as Go evaluates it, returned as two factors whose product is Γ(x). */
function stirling(x: number): [number, number] {
  if (x > 200) return [Infinity, 1];
  const sqrtTwoPi = 2.5066282746310007;
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
  const euler = 0.5772156649015329;
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
  1.5896230157654656e-10, -2.5050747762857807e-8, 0.0000027557313621385722, -0.0001984126982958954,
  0.008333333333322118, -0.1666666666666663,
] as const;
const COS = [
  -1.1358536521387682e-11, 2.087570084197473e-9, -2.755731417929674e-7, 0.000024801587288851704,
  -0.0013888888888873056, 0.041666666666666595,
] as const;
const PI4A = 0.7853981256484985;
const PI4B = 3.774894707930798e-8;
const PI4C = 2.6951514290790595e-15;

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
    r = 1 - 0.5 * zz + zz * zz * (((((COS[0] * zz + COS[1]) * zz + COS[2]) * zz + COS[3]) * zz + COS[4]) * zz + COS[5]);
  }
  return sign ? -r : r;
}
