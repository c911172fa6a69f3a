import { describe, expect, it } from 'vitest';
import { fma, goExp, goFrexp, goInt64, goLdexp, goModf, goPow, goRound } from './go-math.js';
import { goCos, goGamma } from './go-math-special.js';

// Bit patterns recorded from Go's math package on linux/amd64 (CPU with AVX+FMA; the no-FMA column from the same
// binary run with GODEBUG=cpu.fma=off). Each row is inputs..., result, as IEEE-754 hex.
const view = new DataView(new ArrayBuffer(8));
function f(hex: string): number {
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}
function hex(x: number): string {
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, '0');
}

const EXP_FMA_VS_SSE: [string, string, string][] = [
  ['bfd3bca436b82fd4', '3fe782161360a203', '3fe782161360a204'],
  ['4010d1be534fa198', '4050c0942d950a6f', '4050c0942d950a70'],
  ['40144dffa94fddc3', '4064051b22971ccb', '4064051b22971cca'],
  ['407d6ae45e26ea60', '6a608ce37089daa5', '6a608ce37089daa6'],
  ['c0729698554f614b', '251e6082d8c6de87', '251e6082d8c6de88'],
  ['407b9bf8bae2cb38', '67c3ceb7391ca41f', '67c3ceb7391ca420'],
];
const EXP: [string, string][] = [
  ['bfe99be2fc063b00', '3fdcbfc048d709c0'],
  ['4012afc28e4e4e33', '405ab7de2c7e08af'],
  ['40733e253b34a309', '5bb229774f12f3df'],
  ['3ff4cf85884df0e0', '400d5fb6e521ee76'],
  ['c08742d0141eb8aa', '0000000000000001'],
  // Inputs where a correctly rounded exp (and V8's Math.exp) differ from Go's in the last bit.
  ['4013f3d0fb43e9b8', '4062550c95ec0ace'],
  ['bfde8d401cf8771c', '3fe3da6a9bc2131a'],
  ['4019a30255a7d464', '4082fb347e9914f4'],
  ['3fdb74f61f3b43b0', '3ff892665fe57be7'],
];
const FMA: [string, string, string, string][] = [
  ['3f2d843d37e73b4a', 'bf42bfe8be5ab642', '3e814b666b286234', 'bbf0420d3e291c7e'],
  ['bf5949242c0114e8', 'c04a15afb18e0f90', 'c0028e7bb9123cbd', 'c001e9973753f9a3'],
  ['c0314a5e2c443266', 'bf2d61a20ebaae28', 'bf6fc04cac0c4b32', 'bcb89cf82c447d66'],
  ['c07ddc2413b73256', 'bf69da6623da4f5e', 'bff81fc73454ecab', 'bd33e6f4424d7b7d'],
  ['3ed88feca043ec36', 'bf4eebbc9049de71', '4074ade9cd497626', '4074ade9cd47fa68'],
  ['c0bd8d812f44001e', '3e9609379057a588', '3ff5133033ded524', '3ff509034de8293e'],
];
const POW: [string, string, string][] = [
  ['3fbe7b7033685ab5', '3fd89f67384fc36a', '3fdc394b5eb40ead'],
  ['3fec40457837e4c4', '3ff0000000000000', '3fec40457837e4c4'],
  ['401c4c03b5a121a6', '3fd381350c3a601d', '3ffd0b7bdb710385'],
  ['3fa7afa0384d11c1', '4024000000000000', '3d294673144599f4'],
  ['40054ae8de337358', '3fd301551ba27e0a', '3ff565d1a591f899'],
  ['411290eb46d93ec9', '4000c403402eeff0', '4252083df0398f54'],
  ['4126d48c944a40d3', '3ff60412d6c73fe0', '419cd50d305fb520'],
  ['3fd8567aa114c8cc', '3fde89fe882c02cf', '3fe42c78d395578b'],
];
const GAMMA: [string, string][] = [
  ['3ff0297e1a9a4fd2', '3fefd0ec671ddc4d'],
  ['3ff0d19ffd16b2d0', '3fef2247a868b1b7'],
  ['3ff0364ea41b515e', '3fefc2b69b657587'],
  ['3ff04c5da7d76665', '3fefaa9c2a6d37bf'],
  ['404b499095948919', '4e98792a8f366bf0'],
];
const COS: [string, string][] = [
  ['c010c152382d7365', 'bfe0000000000004'],
  ['4014f1a1a0f71d40', '3fdfffb8b3740498'],
  ['c0214dbcd50cb837', 'bfe6e84b6ee2668e'],
  ['c01b8dfbeec23f61', '3fea4fbdddac6e61'],
  ['c015aef7a48e0e21', '3fe4d25ba6c378a5'],
  ['0000000000000000', '3ff0000000000000'],
];

describe('Go math ports (bit-exact against recorded Go results)', () => {
  it('goExp matches the amd64 FMA and non-FMA assembly paths', () => {
    for (const [x, withFma, without] of EXP_FMA_VS_SSE) {
      expect(hex(goExp(f(x)))).toBe(withFma);
      expect(hex(goExp(f(x), false))).toBe(without);
    }
    for (const [x, y] of EXP) expect(hex(goExp(f(x)))).toBe(y);
  });

  it('goExp handles the special cases like Go', () => {
    expect(goExp(Number.NaN)).toBeNaN();
    expect(goExp(Infinity)).toBe(Infinity);
    expect(goExp(-Infinity)).toBe(0);
    expect(goExp(710)).toBe(Infinity);
    expect(goExp(-800)).toBe(0);
    expect(goExp(0)).toBe(1);
  });

  it('fma rounds once', () => {
    for (const [a, b, c, r] of FMA) expect(hex(fma(f(a), f(b), f(c)))).toBe(r);
    // a·b + c where the product's low bits decide the rounding: 1 + 2^-52 squared minus 1.
    const x = 1 + 2 ** -52;
    expect(fma(x, x, -1)).toBe(2 ** -51 + 2 ** -104);
    expect(fma(0, 5, 3)).toBe(3);
    expect(fma(2 ** 1000, 2 ** 20, -(2 ** 1020))).toBe(0);
  });

  it('goPow, goGamma and goCos match Go', () => {
    for (const [x, y, r] of POW) expect(hex(goPow(f(x), f(y)))).toBe(r);
    for (const [x, r] of GAMMA) expect(hex(goGamma(f(x)))).toBe(r);
    for (const [x, r] of COS) expect(hex(goCos(f(x)))).toBe(r);
  });

  it('goPow special cases follow Go', () => {
    expect(goPow(5, 0)).toBe(1);
    expect(goPow(1, Number.NaN)).toBe(1);
    expect(goPow(0, -3)).toBe(Infinity);
    expect(goPow(-0, -3)).toBe(-Infinity);
    expect(goPow(0, 2.5)).toBe(0);
    expect(goPow(0.5, Infinity)).toBe(0);
    expect(goPow(2, -Infinity)).toBe(0);
    expect(goPow(-8, 1 / 3)).toBeNaN();
    expect(goPow(9, 0.5)).toBe(3);
    expect(goPow(0.3, 4)).toBe(0.3 * 0.3 * (0.3 * 0.3));
  });

  it('frexp/ldexp/modf/round/int64 helpers', () => {
    expect(goFrexp(8)).toEqual([0.5, 4]);
    expect(goFrexp(5e-324)).toEqual([0.5, -1073]);
    expect(goLdexp(0.5, 4)).toBe(8);
    expect(goLdexp(0.75, -1074)).toBe(5e-324);
    expect(goModf(-3.25)).toEqual([-3, -0.25]);
    expect(goRound(-2.5)).toBe(-3);
    expect(goRound(2.5)).toBe(3);
    expect(goInt64(-1.9)).toBe(-1);
    expect(goInt64(Number.NaN)).toBe(-9223372036854775808);
    expect(goInt64(1e300)).toBe(-9223372036854775808);
  });

  it('rejects inputs outside the ported domains instead of approximating', () => {
    expect(() => goGamma(-1.5)).toThrow(RangeError);
    expect(() => goCos(2 ** 30)).toThrow(RangeError);
  });
});
