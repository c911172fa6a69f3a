/**
 * GoRand: a bit-compatible port of Go's math/rand (v1) `rand.New(rand.NewSource(seed))`.
 *
 * Why bit-compatible: the reference simulator draws every workload token, length and arrival from
 * this generator. Reproducing its exact value stream means the same seed yields the same requests
 * as the reference, so parity tests can compare simulation results exactly instead of statistically.
 *
 * Why 32-bit halves instead of BigInt: the source is an additive lagged-Fibonacci generator over
 * 63-bit integers, and it sits on the hottest path of workload generation (one draw per token).
 * BigInt arithmetic allocates and is one to two orders of magnitude slower, so the state is kept as
 * parallel hi/lo word arrays and the 64-bit addition is done with an explicit carry. BigInt appears
 * only where it runs rarely: seeding, int63Big, int63n.
 */
import { RNG_LEN, RNG_TAP, cookedHi, cookedLo, fe, fn, ke, kn, re, rn, we, wn } from './go-rand-tables.js';
import { wasmFiller, type WasmFiller } from './go-rand-wasm.js';

/**
 * Fills at least this long run in WebAssembly. The generator's state stays there between fills (see
 * makeResident), so only the call itself costs (a few draws' worth); a generator that is not resident pays one
 * 4.8 KB copy (about 100 draws) to move in, once.
 */
const WASM_MIN_FILL = 32;

const TWO_POW_32 = 4294967296;
const TWO_POW_63 = 9223372036854775808;
const INT32_MAX = 2147483647;
// Go's Seed reduces modulo 2^31-1 and replaces a zero residue with this fixed value.
const SEED_MOD = 2147483647n;
const ZERO_SEED_REPLACEMENT = 89482311;
const TWO_POW_63_BIG = 1n << 63n;

// Park-Miller minimal-standard step (x * 48271 mod 2^31-1) via Schrage's decomposition, which is
// how Go expands a 31-bit seed into the initial state. Operands stay far below 2^53, so plain
// numbers are exact.
function seedStep(x: number): number {
  // x is in [1, 2^31 - 1): `| 0` truncates the quotient and the products stay within int32 (faster than `%`,
  // and every client of a spec seeds its own generator).
  const hi = (x / 44488) | 0;
  const lo = x - hi * 44488;
  let next = 48271 * lo - 3399 * hi;
  if (next < 0) next += INT32_MAX;
  return next;
}

// Go's math.Log, reproduced operation for operation. The ziggurat tails feed Log's result straight
// into the returned sample, and V8's Math.log differs from Go's in the last bit for a few inputs per
// million, so Math.log would break bit-compatibility there. Go's amd64 assembly and its portable
// version perform the same sequence of IEEE double operations (frexp reduction, then a degree-14
// odd polynomial in s = f/(2+f)); JS has no fused multiply-add, so this matches both as long as Go
// did not fuse them either (true on amd64; arm64 builds may fuse and differ in the last bit).
const logScratch = new Float64Array(1);
const logWords = new Uint32Array(logScratch.buffer);
// Index of the word holding sign, exponent and top mantissa bits.
const HI_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

function doubleFromWords(hi: number, lo: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  return view.getFloat64(0);
}

const LN2_HI = doubleFromWords(0x3fe62e42, 0xfee00000);
const LN2_LO = doubleFromWords(0x3dea39ef, 0x35793c76);
const LG1 = doubleFromWords(0x3fe55555, 0x55555593);
const LG2 = doubleFromWords(0x3fd99999, 0x9997fa04);
const LG3 = doubleFromWords(0x3fd24924, 0x94229359);
const LG4 = doubleFromWords(0x3fcc71c5, 0x1d8e78af);
const LG5 = doubleFromWords(0x3fc74664, 0x96cb03de);
const LG6 = doubleFromWords(0x3fc39a09, 0xd078c69f);
const LG7 = doubleFromWords(0x3fc2f112, 0xdf3e5244);

/** Natural logarithm giving bit-identical results to Go's math.Log on amd64. */
export function goLog(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x < 0) return NaN;
  if (x === 0) return -Infinity;

  // Split x = f1 * 2^k with f1 in [0.5, 1) by rewriting the exponent field. Like Go's amd64
  // assembly this does not renormalise subnormal inputs (it returns what that assembly returns);
  // the generator never produces them, since Float64's smallest non-zero value is 2^-63.
  logScratch[0] = x;
  const hiWord = logWords[HI_WORD]!;
  let k = ((hiWord >>> 20) & 0x7ff) - 1022;
  logWords[HI_WORD] = (hiWord & 0x800fffff) | 0x3fe00000;
  let f1 = logScratch[0];
  if (f1 < Math.SQRT1_2) {
    f1 *= 2;
    k--;
  }

  const f = f1 - 1;
  const s = f / (2 + f);
  const s2 = s * s;
  const s4 = s2 * s2;
  const t1 = s2 * (LG1 + s4 * (LG3 + s4 * (LG5 + s4 * LG7)));
  const t2 = s4 * (LG2 + s4 * (LG4 + s4 * LG6));
  const r = t1 + t2;
  const hfsq = 0.5 * f * f;
  return k * LN2_HI - (hfsq - (s * (hfsq + r) + k * LN2_LO) - f);
}

export class GoRand {
  /** The generator whose state is in the WebAssembly filler's memory (see makeResident), if any. */
  private static resident: GoRand | null = null;

  // State: 607 64-bit words, little-endian pairs (vec[2k] = bits 0..31, vec[2k+1] = bits 32..63), the layout
  // of WebAssembly's i64 memory so that long fills run there (go-rand-wasm.ts). Bit 63 never affects bits
  // 0..62 of later values (additions carry upwards only), so the JS steps leave it cleared and the WebAssembly
  // steps leave it as it falls; every output is read from bits 0..62.
  private vec: Int32Array;
  /** The generator's own state array; `vec` is it, or the WebAssembly filler's state while this generator is resident there. */
  private readonly own = new Int32Array(2 * RNG_LEN);
  private tap = 0;
  private feed = RNG_LEN - RNG_TAP;
  // Low word of the most recent step; step() returns the high word and leaves this behind so
  // callers that need all 63 bits avoid allocating a pair.
  private lastLo = 0;

  constructor(seed: bigint) {
    this.vec = this.own;
    this.seed(seed);
  }

  /**
   * Moves this generator's state into the WebAssembly filler's memory (moving the previous resident's state back
   * to its own array), so that its fills need no copying: a workload generator alternates a few JavaScript draws
   * (lengths) with long fills (token ids), and copying the 4.8 KB state in and out around each fill cost more
   * than the fill of a short prompt. The JavaScript steps work on `vec` wherever it is.
   */
  private makeResident(w: WasmFiller): void {
    if (GoRand.resident === this) return;
    GoRand.resident?.evict();
    w.state.set(this.vec);
    this.vec = w.state;
    GoRand.resident = this;
  }

  private evict(): void {
    this.own.set(this.vec);
    this.vec = this.own;
    GoRand.resident = null;
  }

  /** Restarts the generator as `new GoRand(seed)` would start, reusing its state arrays. */
  reseed(seed: bigint): this {
    this.tap = 0;
    this.feed = RNG_LEN - RNG_TAP;
    this.lastLo = 0;
    this.seed(seed);
    return this;
  }

  private seed(seed: bigint): void {
    let s = Number(BigInt.asIntN(64, seed) % SEED_MOD);
    if (s < 0) s += INT32_MAX;
    if (s === 0) s = ZERO_SEED_REPLACEMENT;

    let x = s;
    for (let i = -20; i < RNG_LEN; i++) {
      x = seedStep(x);
      if (i < 0) continue;
      // u = x1<<40 ^ x2<<20 ^ x3 in 64-bit arithmetic (x1<<40 loses its top bits), split into
      // words: x1<<40 touches only the high word; x2<<20 straddles both.
      const x1 = x;
      x = seedStep(x);
      const x2 = x;
      x = seedStep(x);
      const x3 = x;
      const hi = (x1 << 8) ^ (x2 >>> 12) ^ cookedHi[i]!;
      const lo = ((x2 << 20) ^ x3 ^ cookedLo[i]!) >>> 0;
      this.vec[2 * i + 1] = hi & 0x7fffffff;
      this.vec[2 * i] = lo | 0;
    }
  }

  /**
   * Advances the generator one step and returns the high 31 bits of the new 63-bit value; the low
   * 32 bits are left in `lastLo`.
   */
  private step(): number {
    let tap = this.tap - 1;
    if (tap < 0) tap += RNG_LEN;
    let feed = this.feed - 1;
    if (feed < 0) feed += RNG_LEN;
    this.tap = tap;
    this.feed = feed;

    const vec = this.vec;
    const f = 2 * feed;
    const t = 2 * tap;
    const sumLo = (vec[f]! >>> 0) + (vec[t]! >>> 0);
    const carry = sumLo > 0xffffffff ? 1 : 0;
    const lo = sumLo >>> 0;
    const hi = (vec[f + 1]! + vec[t + 1]! + carry) & 0x7fffffff;
    vec[f] = lo | 0;
    vec[f + 1] = hi;
    this.lastLo = lo;
    return hi;
  }

  /**
   * Go Int63 as a JS number. Exact below 2^53; above, rounded to nearest-even exactly as Go's
   * float64(int64) conversion rounds (hi * 2^32 is exact, so the single addition is the only rounding).
   */
  int63(): number {
    const hi = this.step();
    return hi * TWO_POW_32 + this.lastLo;
  }

  /** Go Int63, exact. Use it to seed child generators: `new GoRand(parent.int63Big())`. */
  int63Big(): bigint {
    const hi = this.step();
    return (BigInt(hi) << 32n) | BigInt(this.lastLo);
  }

  /** Go Uint32: bits 31..62 of Int63. */
  uint32(): number {
    const hi = this.step();
    return ((hi << 1) | (this.lastLo >>> 31)) >>> 0;
  }

  /** Go Int31: bits 32..62 of Int63. */
  int31(): number {
    return this.step();
  }

  /** Go Int31n: masking for powers of two, otherwise modulo with rejection of the biased top range. */
  int31n(n: number): number {
    // (n | 0) !== n also rejects NaN, fractions and anything outside int32.
    if (n <= 0 || (n | 0) !== n) {
      throw new RangeError(`invalid argument to Int31n: ${n}`);
    }
    if ((n & (n - 1)) === 0) return this.step() & (n - 1);
    const max = INT32_MAX - (2147483648 % n);
    let v = this.step();
    while (v > max) v = this.step();
    return v % n;
  }

  /**
   * `out[from..to)` = successive Int31n(n) draws, the same values and stream position as calling
   * {@link int31n} that many times. The token generator's loop (one draw per token, tens of millions per
   * large run): the generator state stays in locals instead of being re-read and re-written per draw.
   */
  fillInt31n(out: Int32Array, from: number, to: number, n: number): void {
    if (n <= 0 || (n | 0) !== n) {
      throw new RangeError(`invalid argument to Int31n: ${n}`);
    }
    const pow2 = (n & (n - 1)) === 0;
    const max = INT32_MAX - (2147483648 % n);
    if (to - from >= WASM_MIN_FILL) {
      const w = wasmFiller();
      if (w !== null) {
        this.makeResident(w);
        w.fillState(this.tap, this.feed, out, from, to, n, max, pow2);
        this.tap = w.tap;
        this.feed = w.feed;
        this.lastLo = w.lastLo;
        return;
      }
    }
    const vec = this.vec;
    let tap = this.tap;
    let feed = this.feed;
    let lo = this.lastLo;
    let i = from;
    while (i < to) {
      // Both indexes count down together: the next min(tap, feed) steps need no wrap-around test.
      if (tap === 0) tap = RNG_LEN;
      if (feed === 0) feed = RNG_LEN;
      let run = tap < feed ? tap : feed;
      while (run > 0 && i < to) {
        tap--;
        feed--;
        run--;
        const f = 2 * feed;
        const t = 2 * tap;
        const sumLo = (vec[f]! >>> 0) + (vec[t]! >>> 0);
        lo = sumLo >>> 0;
        const v = (vec[f + 1]! + vec[t + 1]! + (sumLo > 0xffffffff ? 1 : 0)) & 0x7fffffff;
        vec[f] = lo | 0;
        vec[f + 1] = v;
        // A draw above `max` is rejected (Go draws again): it yields no value.
        if (pow2) out[i++] = v & (n - 1);
        else if (v <= max) out[i++] = v % n;
      }
    }
    this.tap = tap;
    this.feed = feed;
    this.lastLo = lo;
  }

  /** Go Int63n (BigInt in and out; not a hot path in the reference). */
  int63n(n: bigint): bigint {
    if (n <= 0n || n >= TWO_POW_63_BIG) {
      throw new RangeError(`invalid argument to Int63n: ${n}`);
    }
    if ((n & (n - 1n)) === 0n) return this.int63Big() & (n - 1n);
    const max = TWO_POW_63_BIG - 1n - (TWO_POW_63_BIG % n);
    let v = this.int63Big();
    while (v > max) v = this.int63Big();
    return v % n;
  }

  /** Go Intn: Int31n when n fits in an int32, Int63n otherwise. */
  intn(n: number): number {
    if (n <= INT32_MAX) return this.int31n(n);
    if (!Number.isSafeInteger(n)) throw new RangeError(`invalid argument to Intn: ${n}`);
    return Number(this.int63n(BigInt(n)));
  }

  /** Go Float64: float64(Int63()) / 2^63, drawn again in the rare case that rounds up to 1. */
  float64(): number {
    for (;;) {
      const hi = this.step();
      const f = (hi * TWO_POW_32 + this.lastLo) / TWO_POW_63;
      if (f !== 1) return f;
    }
  }

  /** Go NormFloat64: Marsaglia-Tsang ziggurat with 128 strips and Go's float32 edge test. */
  normFloat64(): number {
    for (;;) {
      const j = this.uint32() | 0; // Go reinterprets the draw as int32, so the sign picks the side.
      const i = j & 0x7f;
      let x = j * wn[i]!;
      const absJ = j < 0 ? -j : j;
      if (absJ < kn[i]!) return x;

      if (i === 0) {
        // Base strip: sample the tail beyond rn.
        for (;;) {
          // Go folds 1/rn at compile time with exact arithmetic; the runtime division rounds to
          // the same double (checked), so writing it inline is safe.
          x = -goLog(this.float64()) * (1.0 / rn);
          const y = -goLog(this.float64());
          if (y + y >= x * x) break;
        }
        return j > 0 ? rn + x : -rn - x;
      }
      // Go evaluates this comparison in float32: every intermediate is rounded with fround.
      // Math.exp may differ from Go's math.Exp in the last float64 bit, but once both are rounded
      // to float32 they agreed on all 3M inputs checked, so the accept/reject decision matches.
      const f0 = fn[i]!;
      const u = Math.fround(this.float64());
      const lhs = Math.fround(f0 + Math.fround(u * Math.fround(fn[i - 1]! - f0)));
      if (lhs < Math.fround(Math.exp(-0.5 * x * x))) return x;
    }
  }

  /** Go ExpFloat64: ziggurat with 256 strips and Go's float32 edge test; rate 1. */
  expFloat64(): number {
    for (;;) {
      const j = this.uint32();
      const i = j & 0xff;
      const x = j * we[i]!;
      if (j < ke[i]!) return x;
      if (i === 0) return re - goLog(this.float64());
      const f0 = fe[i]!;
      const u = Math.fround(this.float64());
      const lhs = Math.fround(f0 + Math.fround(u * Math.fround(fe[i - 1]! - f0)));
      if (lhs < Math.fround(Math.exp(-x))) return x;
    }
  }

  /**
   * Go Rand.Shuffle. Indices that fit in int32 use Go's internal multiply-shift reduction (not
   * Int31n), so the consumed values and results differ from calling intn in a loop.
   */
  shuffle(n: number, swap: (i: number, j: number) => void): void {
    if (!(n >= 0) || !Number.isSafeInteger(n)) {
      throw new RangeError(`invalid argument to Shuffle: ${n}`);
    }
    let i = n - 1;
    for (; i > INT32_MAX - 1; i--) {
      swap(i, Number(this.int63n(BigInt(i + 1))));
    }
    for (; i > 0; i--) {
      swap(i, this.multiplyShift31(i + 1));
    }
  }

  /** Go Rand.Perm: the inside-out Fisher-Yates that Go 1 fixed, including its no-op first draw. */
  perm(n: number): number[] {
    const m = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) {
      const j = this.intn(i + 1);
      m[i] = m[j]!;
      m[j] = i;
    }
    return m;
  }

  /**
   * Go's unexported int31n (Lemire): the top 32 bits of uint32 * n, rejecting the biased low range.
   * The 64-bit product is not exact in a double, so it is assembled from 16-bit pieces.
   */
  private multiplyShift31(n: number): number {
    let v = this.uint32();
    let low = Math.imul(v, n) >>> 0;
    if (low < n) {
      const thresh = (TWO_POW_32 - n) % n;
      while (low < thresh) {
        v = this.uint32();
        low = Math.imul(v, n) >>> 0;
      }
    }
    const a = (v >>> 16) * n; // < 2^47, exact
    const b = (v & 0xffff) * n; // < 2^47, exact
    return Math.floor(a / 65536) + Math.floor(((a % 65536) * 65536 + b) / TWO_POW_32);
  }
}
