/**
 * Long Int31n fills of the Go generator in WebAssembly (go-rand.wat, assembled into the bytes below; a test
 * re-assembles the source and compares). Hand-rolled because it is the hottest loop of workload generation —
 * one draw per token, tens of millions per large run — and each draw is a 64-bit addition that JavaScript
 * must split into two 32-bit halves with a carry: native i64 arithmetic draws about six times faster.
 * Without WebAssembly (e.g. `node --jitless`) the caller keeps its JavaScript loop; both give the same values.
 */
import { RNG_LEN } from './go-rand-tables.js';

const WASM_BASE64 = 'AGFzbQEAAAABCwFgB39/f39/f38AAwIBAAUDAQAIBw4CA21lbQIABGZpbGwAAArQAQHNAQMBfwF+An8gAUEBayEKAkADQCAHIABPDQEgBEEBayEEIARBAEgEQCAEQd8EaiEECyAFQQFrIQUgBUEASARAIAVB3wRqIQULIAVBA3QpAwAgBEEDdCkDAHwhCCAFQQN0IAg3AwAgCEIgiKdB/////wdxIQkgAwRAIAYgB0ECdGogCSAKcTYCACAHQQFqIQcFIAkgAk0EQCAGIAdBAnRqIAkgAXA2AgAgB0EBaiEHCwsMAAsLQYAmIAQ2AgBBhCYgBTYCAEGIJiAIpzYCAAs=';

/** Byte offsets in the module's memory (see go-rand.wat). */
const STATE_WORDS = 2 * RNG_LEN;
const RESULT_WORD = 4864 / 4;
const OUT_BYTE = 8192;
/** Draws per call: the output region is the memory past OUT_BYTE (8 pages). */
const CHUNK = 65536;

/** The module's bytes (for the test that re-assembles go-rand.wat). */
export function goRandWasmBytes(): Uint8Array {
  return Uint8Array.from(Buffer.from(WASM_BASE64, 'base64'));
}

/** The slice of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmInstance {
  readonly exports: Readonly<Record<string, unknown>>;
}
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => WasmInstance;
}

export class WasmFiller {
  /** Generator position after the last {@link fillState}: tap, feed and the low word of the last step. */
  tap = 0;
  feed = 0;
  lastLo = 0;
  /**
   * The generator state the module steps, as 32-bit words (the memory never grows, so this view stays valid). A
   * generator may keep its state here between fills instead of copying it in and out each time (GoRand does).
   */
  readonly state: Int32Array;
  private readonly words: Int32Array;
  private readonly run: (count: number, n: number, max: number, pow2: number, tap: number, feed: number, out: number) => void;

  constructor(instance: WasmInstance) {
    const mem = instance.exports['mem'] as { readonly buffer: ArrayBuffer };
    this.words = new Int32Array(mem.buffer);
    this.state = this.words.subarray(0, STATE_WORDS);
    this.run = instance.exports['fill'] as WasmFiller['run'];
  }

  /**
   * `out[from..to)` = Int31n(n) draws from the generator whose 607 words (little-endian pairs) are in
   * {@link state}, at position (tap, feed); the state is updated in place and the new position left in
   * tap/feed/lastLo.
   */
  fillState(tap: number, feed: number, out: Int32Array, from: number, to: number, n: number, max: number, pow2: boolean): void {
    const words = this.words;
    for (let i = from; i < to; i += CHUNK) {
      const count = Math.min(CHUNK, to - i);
      this.run(count, n, max, pow2 ? 1 : 0, tap, feed, OUT_BYTE);
      tap = words[RESULT_WORD]!;
      feed = words[RESULT_WORD + 1]!;
      out.set(words.subarray(OUT_BYTE / 4, OUT_BYTE / 4 + count), i);
    }
    this.tap = tap;
    this.feed = feed;
    this.lastLo = words[RESULT_WORD + 2]! >>> 0;
  }
}

let filler: WasmFiller | null | undefined;

/** The shared filler, instantiated on first use; null where WebAssembly is unavailable. */
export function wasmFiller(): WasmFiller | null {
  if (filler === undefined) {
    const api = (globalThis as { readonly WebAssembly?: WasmApi }).WebAssembly;
    try {
      filler = api === undefined ? null : new WasmFiller(new api.Instance(new api.Module(goRandWasmBytes()), {}));
    } catch {
      filler = null;
    }
  }
  return filler;
}
