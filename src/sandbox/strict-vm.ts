/**
 * Loading the `strict` engine's QuickJS (quickjs-wasi) synchronously: the WebAssembly module compiled once per
 * process ({@link loadModule}), one instance per program ({@link createVm}) with our own imports — a WASI shim with
 * a clock stuck at 0, zero "random" bytes and a sink for stdout/stderr, the interrupt import wired to the
 * program's budget, and `host_call` with the `$c` charge fast path — and the location of QuickJS's interrupt
 * countdown in its context ({@link findCounterOffset}), found and verified once per process. quickjs-wasi only
 * offers an asynchronous `QuickJS.create()`, so the VM object is built through the steps it takes (its
 * constructor, `setInstance`, `handleHostCall`); {@link loadModule} checks once that those internals exist.
 * See strict.ts for the engine's design.
 */
// The engine's own WebAssembly binary, read once per process: not I/O the policy can reach or observe.
// eslint-disable-next-line no-restricted-imports
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Intrinsics, QuickJS } from 'quickjs-wasi';

/** Native stack QuickJS may use (bytes); see strict.ts's module comment. */
const MAX_STACK_BYTES = 128 * 1024;

const INTRINSICS =
  Intrinsics.ALL & ~Intrinsics.DATE & ~Intrinsics.PROMISE & ~Intrinsics.WEAK_REF & ~Intrinsics.PERFORMANCE & ~Intrinsics.DOM_EXCEPTION & ~Intrinsics.ATOB_BTOA;


export type Exports = ReturnType<QuickJS['_getExports']>;

// The project's TypeScript libs (ES2023 + Node 20 types) do not declare WebAssembly: the little we use.
/** A compiled WebAssembly module (opaque here). */
export interface WasmModule {
  readonly __wasmModule?: never;
}
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmInstance {
  readonly exports: Readonly<Record<string, unknown>>;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  readonly Instance: new (module: WasmModule, imports: Readonly<Record<string, Readonly<Record<string, unknown>>>>) => WasmInstance;
}
const Wasm = (globalThis as unknown as { readonly WebAssembly: WasmApi }).WebAssembly;

/** The quickjs-wasi internals `QuickJS.create()` uses, which we drive synchronously. */
interface QuickJSInternals {
  setInstance(instance: WasmInstance): void;
  handleHostCall(namePtr: number, nameLen: number, thisPtr: number, argc: number, argvPtr: number): number;
}

export interface Vm {
  readonly vm: QuickJS;
  readonly exports: Exports;
  readonly memory: WasmMemory;
}

const QuickJSCtor = QuickJS as unknown as new (module: WasmModule) => QuickJS;

/** Name of the host function that charges budget units for native work (handled without quickjs-wasi's dispatch). */
export const CHARGE_NAME = '$c';

/**
 * Instantiates the module and initialises a QuickJS runtime and context. `onInterrupt` returns 1 to stop;
 * `onCharge(units)` receives the prelude's charges for native work.
 */
export function createVm(module: WasmModule, onInterrupt: () => number, onCharge: (units: number) => void): Vm {
  const vm = new QuickJSCtor(module);
  const internals = vm as unknown as QuickJSInternals;
  let memory: WasmMemory | null = null;
  const mem = (): WasmMemory => memory!;
  let bytes = new Uint8Array(0);
  const ERRNO_BADF = 8;
  const ERRNO_NOSYS = 52;
  const hostCall = (namePtr: number, nameLen: number, thisPtr: number, argc: number, argvPtr: number): number => {
    if (nameLen === 2 && argc === 1) {
      if (bytes.buffer !== mem().buffer) bytes = new Uint8Array(mem().buffer);
      if (bytes[namePtr] === 0x24 && bytes[namePtr + 1] === 0x63) {
        // '$c'(units): one wasm call to read the number, no handle objects.
        const e = vm._getExports();
        const argPtr = new DataView(mem().buffer).getUint32(argvPtr, true);
        onCharge(e.qjs_get_float64(argPtr));
        return e.qjs_get_undefined();
      }
    }
    return internals.handleHostCall(namePtr, nameLen, thisPtr, argc, argvPtr);
  };
  const instance = new Wasm.Instance(module, {
    env: {
      host_call: hostCall,
      host_interrupt: onInterrupt,
      host_promise_rejection: (promisePtr: number, reasonPtr: number) => {
        const e = vm._getExports();
        e.qjs_free_value(promisePtr);
        e.qjs_free_value(reasonPtr);
      },
      host_module_normalize: () => 0,
      host_module_load: () => 0,
      host_get_timezone_offset: () => 0,
    },
    wasi_snapshot_preview1: {
      clock_time_get: (_id: number, _precision: bigint, resultPtr: number) => {
        new DataView(mem().buffer).setBigUint64(resultPtr, 0n, true);
        return 0;
      },
      fd_write: (_fd: number, iovsPtr: number, iovsLen: number, nwrittenPtr: number) => {
        const view = new DataView(mem().buffer);
        let total = 0;
        for (let i = 0; i < iovsLen; i++) total += view.getUint32(iovsPtr + i * 8 + 4, true);
        view.setUint32(nwrittenPtr, total, true);
        return 0;
      },
      fd_close: () => ERRNO_NOSYS,
      fd_fdstat_get: () => ERRNO_BADF,
      fd_seek: () => ERRNO_NOSYS,
      random_get: (bufPtr: number, bufLen: number) => {
        new Uint8Array(mem().buffer, bufPtr, bufLen).fill(0);
        return 0;
      },
    },
  });
  memory = instance.exports['memory'] as WasmMemory;
  internals.setInstance(instance);
  const exports = vm._getExports();
  exports._initialize();
  if (exports.qjs_init2(INTRINSICS) !== 0) throw new Error('strict sandbox: QuickJS failed to initialise');
  exports.qjs_set_max_stack_size(MAX_STACK_BYTES);
  exports.qjs_set_interrupt_handler(1);
  return { vm, exports, memory };
}

/**
 * Finds `interrupt_counter` in QuickJS's `JSContext` (an int32 the interpreter decrements at each poll and
 * that calls the interrupt handler when it reaches 0): the word of the context that goes down in proportion
 * to a loop's length, and that, once written, decides when the handler fires. Verified, never guessed.
 */
function findCounterOffset(module: WasmModule): number {
  let fired = 0;
  const probe = createVm(
    module,
    () => {
      fired++;
      return 0;
    },
    () => undefined,
  );
  const { vm, exports, memory } = probe;
  const ctx = exports.qjs_get_context_ptr();
  if (ctx % 4 !== 0) throw new Error('strict sandbox: unexpected QuickJS context alignment');
  const WORDS = 256;
  const words = (): Int32Array => Int32Array.from(new Int32Array(memory.buffer, ctx, WORDS));
  const loop = (n: number): void => vm.evalCode(`for (let i = 0; i < ${n}; i++) {}`).dispose();
  const write = (i: number, v: number): void => {
    new Int32Array(memory.buffer, ctx, WORDS)[i] = v;
  };
  for (let attempt = 0; attempt < 4; attempt++) {
    loop(10);
    const f0 = fired;
    const a = words();
    loop(100);
    const b = words();
    loop(300);
    const c = words();
    if (fired !== f0) continue;
    const found: number[] = [];
    for (let i = 0; i < WORDS; i++) {
      const x = a[i]!, y = b[i]!, z = c[i]!;
      const d1 = x - y, d2 = y - z;
      if (!(x > 0 && x <= 10_000 && d1 > 0 && d2 > d1 && (d2 - d1) % 200 === 0)) continue;
      // Written low, the handler fires within a short loop; written high, it stays quiet through a long one.
      write(i, 7);
      const g0 = fired;
      loop(100);
      if (fired === g0) continue;
      write(i, 1_000_000_000);
      const g1 = fired;
      loop(20_000);
      const left = new Int32Array(memory.buffer, ctx, WORDS)[i]!;
      if (fired !== g1 || !(left < 1_000_000_000 - 20_000 && left > 1_000_000_000 - 200_000)) continue;
      found.push(i);
    }
    vm.dispose();
    if (found.length !== 1) break;
    return found[0]! * 4;
  }
  throw new Error('strict sandbox: cannot locate the QuickJS interrupt counter in this quickjs-wasi build');
}

export interface Loaded {
  readonly module: WasmModule;
  readonly counterOffset: number;
}

let loading: Promise<Loaded> | null = null;

/** The compiled module and the counter offset, once per process. */
export function loadModule(): Promise<Loaded> {
  loading ??= (async () => {
    const proto = QuickJS.prototype as unknown as Partial<QuickJSInternals>;
    if (typeof proto.setInstance !== 'function' || typeof proto.handleHostCall !== 'function') {
      throw new Error('strict sandbox: this quickjs-wasi version lacks the internals the engine drives (setInstance, handleHostCall)');
    }
    const path = createRequire(import.meta.url).resolve('quickjs-wasi/quickjs.wasm');
    const module = await Wasm.compile(await readFile(path));
    return { module, counterOffset: findCounterOffset(module) };
  })();
  return loading;
}

