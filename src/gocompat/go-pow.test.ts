import { describe, expect, it } from 'vitest';
import { goPow } from './go-math.js';

/**
 * Bit patterns of Go's math.Pow(x, n) (Go 1.19 math package, amd64, pure-Go path, which the reference's
 * Go 1.24 shares), captured by running it. The roofline MoE weight term uses such powers, and the step time
 * truncates to whole ticks, so the last bit matters.
 */
const GO_POW: ReadonlyArray<readonly [number, ReadonlyArray<readonly [number, string]>]> = [
  [0.75, [
    [1, '3fe8000000000000'],
    [2, '3fe2000000000000'],
    [7, '3fc1160000000000'],
    [13, '3f9853d300000000'],
    [14, '3f923ede40000000'],
    [17, '3f7eca170c000000'],
    [31, '3f218e2a5afb5158'],
    [64, '3e45ab6a57c7bc99'],
    [100, '3d569194f299cddb'],
    [255, '3951f1b08e87ec42'],
    [513, '32a0fadffb306768'],
    [1000, '25ff2dd011353698'],
    [2048, 'ad009197920b75a'],
    [8191, '0'],
  ]],
  [0.9375, [
    [1, '3fee000000000000'],
    [2, '3fec200000000000'],
    [7, '3fe45e36de000000'],
    [13, '3fdba83766da4b3c'],
    [14, '3fd9edb3f06ca688'],
    [17, '3fd55d4c73ea8678'],
    [31, '3fc14f96db31a9e0'],
    [64, '3f9076119663ebd4'],
    [100, '3f59cbb4039ce343'],
    [255, '3e731f07967a7260'],
    [513, '3cf2d431b4fc3662'],
    [1000, '3a1da9be690a5a84'],
    [2048, '3403dcacc31efbf2'],
    [8191, '104443a957e746de'],
    [1, '3fee000000000000'],
    [2, '3fec200000000000'],
    [7, '3fe45e36de000000'],
    [13, '3fdba83766da4b3c'],
    [14, '3fd9edb3f06ca688'],
    [17, '3fd55d4c73ea8678'],
    [31, '3fc14f96db31a9e0'],
    [64, '3f9076119663ebd4'],
    [100, '3f59cbb4039ce343'],
    [255, '3e731f07967a7260'],
    [513, '3cf2d431b4fc3662'],
    [1000, '3a1da9be690a5a84'],
    [2048, '3403dcacc31efbf2'],
    [8191, '104443a957e746de'],
  ]],
  [0.90625, [
    [1, '3fed000000000000'],
    [2, '3fea480000000000'],
    [7, '3fe010b0e5540000'],
    [13, '3fd1cca26e710245'],
    [14, '3fd0217334166a0f'],
    [17, '3fc8030b11856d99'],
    [31, '3fa8353e3c64a60d'],
    [64, '3f5e14c09ab897d5'],
    [100, '3f0bd22971449eae'],
    [255, '3dab9289d2f6830b'],
    [513, '3b61aeb86f954774'],
    [1000, '370f94cb049a9ea5'],
    [2048, '2dc1b15154846ebf'],
    [8191, '0'],
  ]],
  [248 / 256, [
    [1, '3fef000000000000'],
    [2, '3fee080000000000'],
    [7, '3fe99f84b37c0000'],
    [13, '3fe52dc8cfce1ddd'],
    [14, '3fe4845a894facee'],
    [17, '3fe2a72c47a21dda'],
    [31, '3fd7eb441346ffe0'],
    [64, '3fc0c75c9042ecd1'],
    [100, '3fa566bffb174bf3'],
    [255, '3f33f95f1eee1212'],
    [513, '3e76ab7fb4ae7754'],
    [1000, '3d12550d069eaf05'],
    [2048, '3a124daee00967f9'],
    [8191, '287c49069bd3eda9'],
  ]],
  [0.5, [
    [1, '3fe0000000000000'],
    [2, '3fd0000000000000'],
    [7, '3f80000000000000'],
    [13, '3f20000000000000'],
    [14, '3f10000000000000'],
    [17, '3ee0000000000000'],
    [31, '3e00000000000000'],
    [64, '3bf0000000000000'],
    [100, '39b0000000000000'],
    [255, '3000000000000000'],
    [513, '1fe0000000000000'],
    [1000, '170000000000000'],
    [2048, '0'],
    [8191, '0'],
  ]],
  [1 / 3, [
    [1, '3fd5555555555555'],
    [2, '3fbc71c71c71c71c'],
    [7, '3f3df75680feb65e'],
    [13, '3ea50bd367972688'],
    [14, '3e8c0fc48a1ede0b'],
    [17, '3e40a10c2bec5da7'],
    [31, '3cdd2a388ca90943'],
    [64, '3997a0a91194ed8a'],
    [100, '3606afb1df2eff7b'],
    [255, '26ac88764a5801bd'],
    [513, 'd1e273543e29c85'],
    [1000, '0'],
    [2048, '0'],
    [8191, '0'],
  ]],
];

function bits(v: number): string {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, v);
  return dv.getBigUint64(0).toString(16);
}

describe('goPow', () => {
  for (const [x, cases] of GO_POW) {
    it(`matches Go math.Pow bit for bit for base ${x}`, () => {
      for (const [n, want] of cases) expect([n, bits(goPow(x, n))]).toEqual([n, want]);
    });
  }

  it('handles the special cases the models can reach', () => {
    expect(goPow(0.75, 0)).toBe(1);
    expect(goPow(1, 12345)).toBe(1);
    expect(goPow(0, 5)).toBe(0);
    expect(goPow(0.3, 1)).toBe(0.3);
  });
});
