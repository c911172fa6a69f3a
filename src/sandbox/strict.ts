/**
 * The `strict` sandbox engine: untrusted policy JavaScript in QuickJS compiled to WebAssembly (quickjs-wasi
 * 3.6.2, QuickJS-NG 0.17), one WebAssembly instance per program. The policy's heap is the instance's own
 * linear memory: no host object is ever reachable from it, and the engine's allocator caps it.
 *
 * Design:
 * - **Loading**: the WebAssembly module is compiled once per process ({@link strictEngine}); `compile()` then
 *   instantiates it synchronously (`new WebAssembly.Instance`, ~12 ms with the prelude) with our own
 *   imports: a WASI shim with a clock stuck at 0, zero "random" bytes and a sink for stdout/stderr, an
 *   interrupt import wired to the program's budget, and `host_call`. quickjs-wasi only offers an
 *   asynchronous `QuickJS.create()`, so the VM object is built through the steps it takes (its constructor,
 *   `setInstance`, `handleHostCall`); {@link loadModule} checks once that those internals exist and fails
 *   loudly if an upgrade removed them. Evaluations go through the raw `qjs_eval`/`qjs_call` exports, never
 *   through quickjs-wasi's `JSException` (whose constructor reads the thrown value's `message`/`toString` on
 *   the host side, i.e. runs policy code outside any budget). No quickjs-wasi extension is loaded.
 * - **Context**: every intrinsic except Date, Promise (so there is no job queue: `async` functions throw when
 *   called and nothing can outlive a call), WeakRef/FinalizationRegistry, performance, DOMException and
 *   atob/btoa. A trusted prelude, run before any policy code, deletes `eval`, `queueMicrotask`,
 *   `SharedArrayBuffer`, `Atomics` and `Math.random`; replaces every function constructor (`Function`,
 *   `(function*(){}).constructor`, ...) with one that throws; sets `Error.stackTraceLimit = 0` (no stacks: no
 *   file names or trusted frames, cheap errors) and deletes `Error.prepareStackTrace`/`captureStackTrace`;
 *   defines the frozen `__host`; installs the charging wrappers below; turns `Object.prototype`'s
 *   `constructor`/`toString`/`valueOf`/`toLocaleString` and the errors' `name`/`message`/`toString` into
 *   accessors whose setter defines an own property (so `o.toString = f` and `this.name = "E"` in an Error
 *   subclass still work); and deep-freezes every intrinsic reachable from the global object (which stays
 *   extensible for the policy's top-level declarations). The policy runs as a strict-mode script, so writing
 *   to a frozen intrinsic throws. `import` declarations are syntax errors in a script; `import()` is refused
 *   at compile time (`forbidden`, found with acorn).
 * - **Budget unit**: one QuickJS *interrupt poll*, plus charges for native walks. The interpreter polls at
 *   every function entry (`JS_CallInternal`, built-ins included), at every jump opcode (loop back-edges,
 *   conditional branches), in `instanceof` prototype walks and property-enumeration loops, and periodically
 *   in the regex engine: an empty loop iteration costs 2 units, a call 1 more. QuickJS normally calls the
 *   interrupt handler once per 10,000 polls; this engine writes the countdown itself
 *   (`JSContext.interrupt_counter`, located once per process by {@link findCounterOffset} and verified)
 *   before each call, so the handler fires on exactly the first poll past `limits.instructions`, and the
 *   count left afterwards gives the exact units used, identical across runs for the same source, limits and
 *   call sequence. The interrupt is uncatchable (not even `finally` runs). Built-ins that walk an array,
 *   string or typed array natively also cost one unit per 16 elements or characters once the size reaches
 *   64 (paid through the `$c` host call, which costs 1 unit itself): before the walk for searches, joins,
 *   sorts, slices, splices, shifts, reversals, spreads and for-of over arrays (the array iterator is wrapped,
 *   which also turns off QuickJS's unpolled spread fast path), `JSON.parse`, `Object.fromEntries`; after it for
 *   what allocates its result (`fill`, `concat`, `repeat`, `padStart`/`padEnd`, `split`, `flat`,
 *   `Array.from`, `Object.keys`/`values`/`entries`/`getOwnPropertyNames`, `Reflect.ownKeys`, typed-array and
 *   ArrayBuffer constructors), so that a result too large for the memory cap fails with `memory`. The
 *   policy's `JSON.stringify` visits every value through a replacer (a call, so a poll): QuickJS's own walk
 *   does not stop when its output runs out of memory, which makes a shared-subtree object exponential in time
 *   (an array replacer keeps its filter, but keys come out in the object's order, not the list's). Not
 *   charged, so bounded only by the memory cap: object spread and `Object.assign` (per property), string
 *   concatenation, BigInt arithmetic, `Map`/`Set` internals, `[].constructor` (the typed-array constructors
 *   are wrapped on the global bindings only: prototypes keep the originals). Top-level code at compile time
 *   has its own budget of `limits.instructions`; `stats()` reports calls only.
 * - **Memory**: `limits.memoryBytes` is the quickjs-wasi allocator limit for the whole QuickJS heap (the
 *   context itself takes a few hundred KB of it; 512 KB is about the smallest usable cap), applied after
 *   the prelude. Exhaustion throws an `InternalError: out of memory` that the policy may catch; if it escapes
 *   the call fails with `memory`, as do "invalid array length", "string too long" and the like. The native
 *   stack is capped at 128 KiB (about 540 nested calls), which keeps QuickJS's own check ahead of V8's stack
 *   limit; a stack overflow is a catchable RangeError, `stack` if it escapes.
 * - **Values in**: arguments cross as numbers in a shared `Float64Array` in the instance's memory plus an
 *   interned string table, and are rebuilt by a decoder generated per argument *shape* (object keys, array
 *   element shapes, scalar kinds) and compiled once inside the context: object literals are over 2x faster
 *   than QuickJS's `JSON.parse`, whose number parsing is slow. A shape that changes is generalised (a field
 *   that is a number or null becomes a tagged scalar, arrays of like elements have any length) or kept beside
 *   the previous ones; whatever does not fit goes as JSON text. The result is always what
 *   `JSON.parse(JSON.stringify(x))` gives, except that top-level `undefined` arguments stay `undefined`
 *   (non-JSON host values, BigInt or cycles: a TypeError from the host's `JSON.stringify`). Copying in runs
 *   outside the budget.
 * - **Values out**: numbers (-0 as 0), booleans and null are read directly; anything else is serialised inside
 *   the context with the original `JSON.stringify` and a checking replacer (cycles, depth >
 *   {@link MAX_RESULT_DEPTH}, size > {@link MAX_RESULT_CHARS}, functions, symbols, bigint, NaN/Infinity,
 *   Map/Set/Error objects: `return`), under the budget (getters, `toJSON` and Proxy traps are policy code).
 *   Errors are classified inside the context and only a string leaves it.
 * - **Host functions** are `__host` methods that coerce their arguments with `+x` and call a host trampoline; a
 *   host function that throws or returns a non-finite number makes the method throw a TypeError inside, with
 *   the host's message. A host function must not call back into the program (that call fails).
 * - **Failure**: after `budget`, `memory`, `stack` or `threw` the program stays usable. If the engine itself
 *   fails (V8's own stack overflows inside the WebAssembly code, or the instance traps), the instance's state
 *   is unknown: that call and every later one fail with `stack` (or `memory` for a trap).
 *
 * Performance (Node 20, once V8 has optimised the QuickJS interpreter, which takes a few seconds of use): a
 * `route(req, state)` call whose instances carry an id and 15 numbers, returning `{ target, reason }`, costs
 * about 28 / 38 / 48 us with 8 / 12 / 16 instances (about 20 / 29 / 37 us without the ids, returning an
 * index). Most of it is building the argument objects inside QuickJS (about 80 ns per property); through
 * JSON text the same call costs about 3x more. `BLIS_SANDBOX_BENCH=1 npx vitest run src/sandbox/strict.test.ts`
 * measures it; compiling a program takes about 12 ms.
 */
// The engine's own WebAssembly binary, read once per process: not I/O the policy can reach or observe.
// eslint-disable-next-line no-restricted-imports
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parse as acornParse } from 'acorn';
import { EvalFlags, Intrinsics, JSValueHandle, QuickJS } from 'quickjs-wasi';
import {
  DEFAULT_SANDBOX_LIMITS,
  MAX_RESULT_CHARS,
  MAX_RESULT_DEPTH,
  SandboxError,
  type HostFunction,
  type SandboxEngine,
  type SandboxErrorKind,
  type SandboxLimits,
  type SandboxOptions,
  type SandboxProgram,
  type SandboxStats,
} from './types.js';

/** Native stack QuickJS may use (bytes); see the module comment. */
const MAX_STACK_BYTES = 128 * 1024;
/** Longest thrown-value message kept in an error's detail. */
const MAX_DETAIL_CHARS = 200;
/** The interrupt countdown is an int32; longer budgets are spent in chunks of this size. */
const MAX_CHUNK = 2 ** 30;
/** Decoders compiled per program before new argument shapes fall back to JSON text. */
const MAX_DECODERS = 64;
/** Argument shapes remembered per entry point. */
const MAX_SHAPES_PER_ENTRY = 4;
/** The interned string table is rebuilt from scratch past these sizes. */
const MAX_INTERNED = 8192;
const MAX_INTERNED_CHARS = 1 << 20;
const FILE_NAME = 'policy.js';

const INTRINSICS =
  Intrinsics.ALL & ~Intrinsics.DATE & ~Intrinsics.PROMISE & ~Intrinsics.WEAK_REF & ~Intrinsics.PERFORMANCE & ~Intrinsics.DOM_EXCEPTION & ~Intrinsics.ATOB_BTOA;

// ---------------------------------------------------------------------------------------------------------
// Loading: one compiled module per process, synchronous instances.
// ---------------------------------------------------------------------------------------------------------

type Exports = ReturnType<QuickJS['_getExports']>;

// The project's TypeScript libs (ES2023 + Node 20 types) do not declare WebAssembly: the little we use.
/** A compiled WebAssembly module (opaque here). */
interface WasmModule {
  readonly __wasmModule?: never;
}
interface WasmMemory {
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

interface Vm {
  readonly vm: QuickJS;
  readonly exports: Exports;
  readonly memory: WasmMemory;
}

const QuickJSCtor = QuickJS as unknown as new (module: WasmModule) => QuickJS;

/** Name of the host function that charges budget units for native work (handled without quickjs-wasi's dispatch). */
const CHARGE_NAME = '$c';

/**
 * Instantiates the module and initialises a QuickJS runtime and context. `onInterrupt` returns 1 to stop;
 * `onCharge(units)` receives the prelude's charges for native work.
 */
function createVm(module: WasmModule, onInterrupt: () => number, onCharge: (units: number) => void): Vm {
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

interface Loaded {
  readonly module: WasmModule;
  readonly counterOffset: number;
}

let loading: Promise<Loaded> | null = null;

/** The compiled module and the counter offset, once per process. */
function loadModule(): Promise<Loaded> {
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

// ---------------------------------------------------------------------------------------------------------
// The prelude: trusted code run in each fresh context before the policy.
// ---------------------------------------------------------------------------------------------------------

/**
 * Evaluates to `setup(hostNamesJson, ...hostTrampolines)`, which locks the context down and returns the
 * private API `[prep, invoke, describe, grow, buffer]` (reachable from the host only).
 */
const PRELUDE = String.raw`(function () {
'use strict';
const G = globalThis;
const freeze = Object.freeze, getProto = Object.getPrototypeOf, gopd = Object.getOwnPropertyDescriptor, defProp = Object.defineProperty;
const ownKeys = Reflect.ownKeys, apply = Reflect.apply, construct = Reflect.construct, isArray = Array.isArray, setProto = Object.setPrototypeOf;
const parse = JSON.parse, stringify = JSON.stringify, isFiniteNum = Number.isFinite, Str = String;
const ErrorC = Error, TypeErrorC = TypeError, F64 = Float64Array, SetC = Set, NumberC = Number, clz32 = Math.clz32;
const ObjectProto = Object.prototype;
const NOT_PLAIN = [Map.prototype, Set.prototype, WeakMap.prototype, WeakSet.prototype, Error.prototype, Symbol.prototype, BigInt.prototype];
const MAX_CHARS = ${MAX_RESULT_CHARS}, MAX_DEPTH = ${MAX_RESULT_DEPTH}, MAX_DETAIL = ${MAX_DETAIL_CHARS};
const MEMORY_MESSAGES = ['out of memory', 'string too long', 'invalid string length', 'invalid array length', 'invalid array buffer length', 'BigInt is too large to allocate'];

return function setup(hostNamesJson, charge, ...trampolines) {
  // No stacks: no file names or trusted frames in any error, and cheap errors.
  try { ErrorC.stackTraceLimit = 0; } catch (e) {}
  for (const k of ['prepareStackTrace', 'stackTraceLimit', 'captureStackTrace']) delete ErrorC[k];
  // Time, scheduling, shared memory, code from strings, randomness (most are not even built).
  for (const k of ['eval', 'queueMicrotask', 'SharedArrayBuffer', 'Atomics', 'WebAssembly', 'Date', 'performance', 'console', 'print',
    'os', 'std', 'bjson', 'scriptArgs', 'gc', 'navigator', 'setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval',
    'fetch', 'process', 'require', 'module', 'exports', 'Buffer', 'WeakRef', 'FinalizationRegistry']) delete G[k];
  delete Math.random;
  // Every function constructor throws (the originals become unreachable).
  const tame = (sample) => {
    const proto = getProto(sample);
    if (proto === null) return;
    const d = gopd(proto, 'constructor');
    if (d === undefined || typeof d.value !== 'function') return;
    const original = d.value;
    const tamed = function () { throw new TypeErrorC('code generation from strings is disabled in the sandbox'); };
    defProp(tamed, 'prototype', { value: proto, writable: false, enumerable: false, configurable: false });
    defProp(proto, 'constructor', { value: tamed, writable: false, enumerable: false, configurable: false });
    if (G.Function === original) defProp(G, 'Function', { value: tamed, writable: true, enumerable: false, configurable: true });
  };
  tame(function () {}); tame(function* () {}); tame(async function () {}); tame(async function* () {});

  // __host: frozen methods coercing their arguments to numbers.
  const names = parse(hostNamesJson);
  const host = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i], raw = trampolines[i];
    const fn = { [name]() {
      const c = [];
      for (let j = 0; j < arguments.length; j++) c[j] = +arguments[j];
      const r = apply(raw, undefined, c);
      if (typeof r !== 'number') throw new TypeErrorC(r);
      return r;
    } }[name];
    defProp(host, name, { value: fn, writable: false, enumerable: true, configurable: false });
  }
  defProp(G, '__host', { value: freeze(host), writable: false, enumerable: false, configurable: false });

  // Native walks the interpreter does not poll for are charged one unit per 16 elements or characters (from 64).
  const lenOf = (x) => {
    if (typeof x === 'string') return x.length;
    if ((typeof x === 'object' && x !== null) || typeof x === 'function') { const n = x.length; return typeof n === 'number' && n > 0 ? n : 0; }
    return 0;
  };
  const CHARGE_FROM = 64;
  const pay = (n) => { if (n >= CHARGE_FROM) charge(n / 16); };
  const wrap = (obj, key, cost, post) => {
    const native = obj[key];
    if (typeof native !== 'function') return;
    const w = { [key]() {
      pay(cost(this, arguments));
      const r = apply(native, this, arguments);
      if (post) pay(lenOf(r));
      return r;
    } }[key];
    defProp(w, 'length', { value: native.length, writable: false, enumerable: false, configurable: true });
    defProp(obj, key, { value: w, writable: true, enumerable: false, configurable: true });
  };
  const self = (t) => lenOf(t);
  const none = () => 0;
  const first = (t, a) => lenOf(a[0]);
  const sorting = (t) => { const n = lenOf(t); return n * (32 - clz32(n)); };
  const AP = Array.prototype, SP = String.prototype, TAP = getProto(Int8Array.prototype);
  // Walks of what exists are charged before (a sparse array's length can be 2^32 - 1); allocations after
  // (so that a result too large for the memory cap fails with 'memory').
  for (const k of ['copyWithin', 'includes', 'indexOf', 'join', 'lastIndexOf', 'reverse', 'shift', 'slice', 'splice',
    'toLocaleString', 'toReversed', 'toSpliced', 'toString', 'unshift', 'with']) wrap(AP, k, self, false);
  wrap(AP, 'sort', sorting, false); wrap(AP, 'toSorted', sorting, false);
  wrap(AP, 'fill', none, true); wrap(AP, 'concat', none, true);
  wrap(AP, 'flat', self, true); wrap(AP, 'flatMap', self, true);
  // Also the iterator behind spreads and for-of (QuickJS's spread fast path copies without polling; with the
  // wrapper it iterates element by element, a poll each, after paying for the whole array).
  wrap(AP, 'values', self, false);
  defProp(AP, Symbol.iterator, { value: AP.values, writable: true, enumerable: false, configurable: true });
  for (const k of ['endsWith', 'includes', 'indexOf', 'lastIndexOf', 'localeCompare', 'normalize', 'replace', 'replaceAll', 'slice',
    'startsWith', 'substring', 'substr', 'toLowerCase', 'toUpperCase', 'toLocaleLowerCase', 'toLocaleUpperCase', 'trim', 'trimStart',
    'trimEnd', 'isWellFormed', 'toWellFormed']) wrap(SP, k, self, false);
  wrap(SP, 'split', self, true);
  for (const k of ['concat', 'repeat', 'padStart', 'padEnd']) wrap(SP, k, none, true);
  for (const k of ['copyWithin', 'includes', 'indexOf', 'join', 'lastIndexOf', 'reverse', 'slice', 'toLocaleString',
    'toReversed', 'toString', 'with']) wrap(TAP, k, self, false);
  wrap(TAP, 'set', (t, a) => lenOf(a[0]), false);
  wrap(TAP, 'fill', none, true);
  wrap(TAP, 'sort', sorting, false); wrap(TAP, 'toSorted', sorting, false);
  wrap(Array, 'from', none, true);
  // Allocating constructors (new Array(n) only sets a length), charged after the allocation: the global
  // bindings only (the prototypes' own 'constructor' stay the originals, so species lookups keep QuickJS's
  // fast paths).
  const wrapCtor = (name, count) => {
    const native = G[name];
    const w = { [name]: function () {
      const r = new.target === undefined ? apply(native, undefined, arguments) : construct(native, arguments, new.target === w ? native : new.target);
      pay(count(r));
      return r;
    } }[name];
    const keys = ownKeys(native);
    for (let i = 0; i < keys.length; i++) if (keys[i] !== 'prototype' && keys[i] !== 'name') defProp(w, keys[i], gopd(native, keys[i]));
    defProp(w, 'prototype', { value: native.prototype, writable: false, enumerable: false, configurable: false });
    setProto(w, getProto(native));
    defProp(G, name, { value: w, writable: true, enumerable: false, configurable: true });
  };
  for (const k of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float16Array',
    'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) if (typeof G[k] === 'function') wrapCtor(k, lenOf);
  wrapCtor('ArrayBuffer', (b) => b.byteLength / 8);
  for (const k of ['keys', 'values', 'entries', 'getOwnPropertyNames', 'getOwnPropertySymbols']) wrap(Object, k, none, true);
  wrap(Object, 'fromEntries', first, false);
  wrap(Reflect, 'ownKeys', none, true);
  wrap(JSON, 'parse', first, false);
  // JSON.stringify visits every value through a replacer (a call, hence a poll): QuickJS's native walk does not
  // stop when its output runs out of memory, which makes a shared-subtree bomb exponential in time.
  // An array replacer keeps its filter but keys come out in the object's order, not the list's.
  {
    const nativeStringify = JSON.stringify;
    const pass = function (k, v) { return v; };
    defProp(JSON, 'stringify', { value: { stringify(value, replacer, space) {
      let fn = pass;
      if (typeof replacer === 'function') fn = replacer;
      else if (isArray(replacer)) {
        const allow = new SetC();
        for (let i = 0; i < replacer.length; i++) {
          const k = replacer[i];
          if (typeof k === 'string' || typeof k === 'number') allow.add(Str(k));
          else if (typeof k === 'object' && k !== null && (k instanceof Str || k instanceof NumberC)) allow.add(Str(k));
        }
        let root = true;
        fn = function (k, v) { if (root) { root = false; return v; } return isArray(this) || allow.has(k) ? v : undefined; };
      }
      return apply(nativeStringify, undefined, [value, fn, space]);
    } }.stringify, writable: true, enumerable: false, configurable: true });
  }

  // Frozen prototypes make plain assignments such as 'obj.toString = f' or, in an Error subclass,
  // 'this.name = ...' throw (the "override mistake"): those few become accessors whose setter defines an own
  // property on the object assigned to.
  const enable = (obj, key) => {
    const d = gopd(obj, key);
    if (d === undefined || !('value' in d)) return;
    const value = d.value;
    defProp(obj, key, {
      get: { [key]() { return value; } }[key],
      set: { [key](v) {
        if (this === obj) throw new TypeErrorC('cannot assign to read only property \'' + Str(key) + '\'');
        defProp(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      } }[key],
      enumerable: d.enumerable, configurable: false,
    });
  };
  for (const k of ['constructor', 'toString', 'valueOf', 'toLocaleString']) enable(ObjectProto, k);
  for (const k of ['name', 'message', 'toString']) enable(ErrorC.prototype, k);
  for (const E of [EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, G.InternalError, AggregateError, G.SuppressedError]) {
    if (typeof E === 'function') { enable(E.prototype, 'name'); enable(E.prototype, 'message'); }
  }

  // Deep-freeze the intrinsics (everything reachable from the global object, which stays extensible).
  const seen = new SetC();
  const todo = [];
  const push = (v) => { if ((typeof v === 'object' && v !== null) || typeof v === 'function') todo.push(v); };
  const pushProps = (o) => {
    const keys = ownKeys(o);
    for (let i = 0; i < keys.length; i++) {
      const d = gopd(o, keys[i]);
      if ('value' in d) { if (d.value !== G) push(d.value); } else { push(d.get); push(d.set); }
    }
  };
  pushProps(G);
  push(getProto(G));
  for (const sample of [function* () {}, async function () {}, async function* () {}, (function* () {})(), [][Symbol.iterator](),
    new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ''[Symbol.iterator](), /a/[Symbol.matchAll]('')]) push(getProto(sample));
  try { push(getProto([].values().map((x) => x))); } catch (e) {}
  try { push(getProto(Iterator.from({ next() { return { done: true }; } }))); } catch (e) {}
  while (todo.length > 0) {
    const o = todo.pop();
    if (seen.has(o)) continue;
    seen.add(o);
    freeze(o);
    push(getProto(o));
    pushProps(o);
  }

  // ---- arguments: decoded from the shared buffer by a generated decoder ----
  let F = new F64(1024);
  const S = [];
  let pending;
  function prep(dec, payload) {
    let T = null;
    if (payload !== undefined) {
      const p = parse(payload);
      if (p[0] === 1) S.length = 0;
      const add = p[1];
      for (let i = 0; i < add.length; i++) S[S.length] = add[i];
      T = p[2];
    }
    pending = dec(F, S, T, parse);
    return 0;
  }
  function grow(n) { F = new F64(n); return F.buffer; }

  // ---- results ----
  const RETURN = freeze({});
  let retDetail = '';
  const stack = [];
  let chars = 0;
  function fail(d) { retDetail = d; throw RETURN; }
  function plain(v) {
    if (isArray(v)) return true;
    let p = getProto(v);
    for (let i = 0; p !== null && p !== ObjectProto && i < 1000; i++) {
      for (let k = 0; k < NOT_PLAIN.length; k++) if (NOT_PLAIN[k] === p) return false;
      p = getProto(p);
    }
    return true;
  }
  function replacer(key, value) {
    const holder = this;
    let n = stack.length;
    while (n > 0 && stack[n - 1] !== holder) n--;
    stack.length = n;
    chars += key.length + 2;
    switch (typeof value) {
      case 'string': chars += value.length + 2; break;
      case 'number': if (!isFiniteNum(value)) fail('a non-finite number (' + Str(value) + ')'); chars += 8; break;
      case 'boolean': case 'undefined': chars += 5; break;
      case 'object':
        if (value === null) { chars += 4; break; }
        for (let k = 0; k < n; k++) if (stack[k] === value) fail('a cyclic structure');
        if (n >= MAX_DEPTH) fail('nested deeper than ' + MAX_DEPTH + ' levels');
        if (!plain(value)) fail('an object that is not plain data');
        stack[n] = value; chars += 2; break;
      default: fail('a ' + typeof value);
    }
    if (chars > MAX_CHARS) fail('larger than ' + MAX_CHARS + ' characters of JSON');
    return value;
  }
  function outcome(k, d) { return { __proto__: null, k: k, d: d }; }
  function out(r) {
    switch (typeof r) {
      case 'undefined': return null;
      case 'boolean': return r;
      case 'number': return isFiniteNum(r) ? r : outcome('return', 'the result is a non-finite number (' + Str(r) + ')');
      case 'string': case 'object': break;
      default: return outcome('return', 'the result is a ' + typeof r);
    }
    if (r === null) return null;
    stack.length = 0; chars = 0;
    let text;
    try {
      text = stringify(r, replacer);
    } catch (e) {
      stack.length = 0;
      return e === RETURN ? outcome('return', 'the result is ' + retDetail) : describe(e);
    }
    stack.length = 0;
    if (text === undefined) return null;
    if (text.length > MAX_CHARS) return outcome('return', 'the result is larger than ' + MAX_CHARS + ' characters of JSON');
    return text;
  }
  function invoke(fn) {
    const args = pending;
    pending = undefined;
    let r;
    try { r = apply(fn, undefined, args); } catch (e) { return describe(e); }
    return out(r);
  }

  // ---- errors: classified here, only strings leave ----
  function describe(e) {
    let kind = 'threw', text;
    try {
      if (typeof e === 'object' && e !== null && e instanceof ErrorC) {
        const name = Str(e.name), message = Str(e.message);
        text = message === '' ? name : name + ': ' + message;
        if ((name === 'InternalError' || name === 'RangeError') && MEMORY_MESSAGES.includes(message)) kind = 'memory';
        else if ((name === 'RangeError' && message === 'Maximum call stack size exceeded') || (name === 'InternalError' && message === 'stack overflow')) kind = 'stack';
      } else if (typeof e === 'string') {
        text = e;
      } else if (typeof e === 'symbol') {
        text = e.toString();
      } else {
        text = Str(e);
      }
    } catch (e2) {
      text = 'a thrown value that cannot be printed';
    }
    if (text.length > MAX_DETAIL) text = text.slice(0, MAX_DETAIL) + '...';
    return outcome(kind, text);
  }
  return [prep, invoke, describe, grow, F.buffer];
};
})()`;

// ---------------------------------------------------------------------------------------------------------
// Argument shapes: host-side inference, conformance (filling the buffer) and decoder generation.
// ---------------------------------------------------------------------------------------------------------

/**
 * n number, s string, b boolean, z null, v any scalar (tagged), j JSON text, x never (elements of an empty
 * array), u undefined (a top-level argument only), t tuple, a variable-length array, o object with fixed keys.
 */
type Shape =
  | { readonly k: 'n' | 's' | 'b' | 'z' | 'v' | 'j' | 'x' | 'u'; readonly key: string }
  | { readonly k: 't'; readonly key: string; readonly items: readonly Shape[] }
  | { readonly k: 'a'; readonly key: string; readonly elem: Shape }
  | { readonly k: 'o'; readonly key: string; readonly keys: readonly string[]; readonly items: readonly Shape[] };

const LEAF = {
  n: { k: 'n', key: 'n' },
  s: { k: 's', key: 's' },
  b: { k: 'b', key: 'b' },
  z: { k: 'z', key: 'z' },
  v: { k: 'v', key: 'v' },
  j: { k: 'j', key: 'j' },
  x: { k: 'x', key: 'x' },
  u: { k: 'u', key: 'u' },
} as const satisfies Record<string, Shape>;

function tupleShape(items: readonly Shape[]): Shape {
  return { k: 't', key: `t(${items.map((s) => s.key).join(',')})`, items };
}
function arrayShape(elem: Shape): Shape {
  return { k: 'a', key: `a(${elem.key})`, elem };
}
function objectShape(keys: readonly string[], items: readonly Shape[]): Shape {
  return { k: 'o', key: `o(${keys.map((k, i) => `${JSON.stringify(k)}:${items[i]!.key}`).join(',')})`, keys, items };
}

/** Plain data as JSON sees it without calling anything (no toJSON, no exotic prototype). */
function isPlainObject(v: object): boolean {
  const p: unknown = Object.getPrototypeOf(v);
  return (p === Object.prototype || p === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** The shape of a value, or null when only JSON.stringify knows its meaning (the whole call then goes as JSON). */
function infer(v: unknown, depth: number): Shape | null {
  switch (typeof v) {
    case 'number': return Number.isFinite(v) ? LEAF.n : LEAF.z;
    case 'string': return LEAF.s;
    case 'boolean': return LEAF.b;
    case 'object': break;
    default: return null;
  }
  if (v === null) return LEAF.z;
  if (depth > MAX_RESULT_DEPTH) return null;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return null;
    const items: Shape[] = [];
    for (let i = 0; i < v.length; i++) {
      const s = infer(v[i], depth + 1);
      if (s === null) return null;
      items.push(s);
    }
    let elem: Shape = LEAF.x;
    for (const s of items) elem = merge(elem, s);
    return elem.k === 'j' && items.length > 1 ? tupleShape(items) : arrayShape(elem);
  }
  if (!isPlainObject(v)) return null;
  const keys = Object.keys(v);
  const items: Shape[] = [];
  for (const k of keys) {
    const s = infer((v as Record<string, unknown>)[k], depth + 1);
    if (s === null) return null;
    items.push(s);
  }
  return objectShape(keys, items);
}

/** How many parts of a shape go as JSON text. */
function countJson(s: Shape): number {
  switch (s.k) {
    case 'j': return 1;
    case 't': case 'o': return s.items.reduce((n, x) => n + countJson(x), 0);
    case 'a': return countJson(s.elem);
    default: return 0;
  }
}

function isScalar(s: Shape): boolean {
  return s.k === 'n' || s.k === 's' || s.k === 'b' || s.k === 'z' || s.k === 'v';
}

/** The least general shape that accepts what either accepts. */
function merge(a: Shape, b: Shape): Shape {
  if (a.key === b.key) return a;
  if (a.k === 'x') return b;
  if (b.k === 'x') return a;
  if (isScalar(a) && isScalar(b)) return LEAF.v;
  if (a.k === 'a' && b.k === 'a') return arrayShape(merge(a.elem, b.elem));
  if (a.k === 't' && b.k === 't' && a.items.length === b.items.length) return tupleShape(a.items.map((s, i) => merge(s, b.items[i]!)));
  if (a.k === 'o' && b.k === 'o' && a.keys.length === b.keys.length && a.keys.every((k, i) => k === b.keys[i])) {
    return objectShape(a.keys, a.items.map((s, i) => merge(s, b.items[i]!)));
  }
  return LEAF.j;
}

/** JavaScript source of a decoder `(n, S, T, P) => value` for a shape (`n` numbers, `S` strings, `T` texts). */
function decoderSource(shape: Shape): string {
  const helpers: string[] = [];
  const expr = (s: Shape): string => {
    switch (s.k) {
      case 'n': return 'n[k++]';
      case 's': return 'S[n[k++]]';
      case 'b': return '(n[k++] !== 0)';
      case 'z': return 'null';
      case 'u': return 'undefined';
      case 'v': return 'v()';
      case 'j': return 'P(T[n[k++]])';
      case 'x': return 'null';
      case 't': return `[${s.items.map(expr).join(', ')}]`;
      case 'o': return `{ ${s.keys.map((k, i) => `${k === '__proto__' ? '["__proto__"]' : JSON.stringify(k)}: ${expr(s.items[i]!)}`).join(', ')} }`;
      case 'a': {
        const id = helpers.length;
        helpers.push('');
        helpers[id] = `function a${id}() { const len = n[k++], r = []; for (let i = 0; i < len; i++) r[i] = ${expr(s.elem)}; return r; }`;
        return `a${id}()`;
      }
    }
  };
  const top = expr(shape);
  return `(function () {
let n, S, T, P, k = 0;
function v() { const t = n[k++]; return t === 0 ? null : t === 1 ? n[k++] : t === 2 ? S[n[k++]] : t === 3; }
${helpers.join('\n')}
return function (n_, S_, T_, P_) { n = n_; S = S_; T = T_; P = P_; k = 0; return ${top}; };
})()`;
}

/** Writes values into the number buffer and string tables, in the order a decoder reads them. */
class Filler {
  nums = new Float64Array(1024);
  count = 0;
  /** Interned strings (host side of the context's table). */
  private readonly interned = new Map<string, number>();
  private internedChars = 0;
  /** Strings to append to the table at the next call; `reset`: the table is rebuilt from empty. */
  added: string[] = [];
  reset = false;
  /** JSON texts of this call. */
  texts: string[] = [];

  begin(): void {
    this.count = 0;
    this.texts = [];
    if (this.interned.size > MAX_INTERNED || this.internedChars > MAX_INTERNED_CHARS) this.invalidate();
  }

  /** Forgets the interned strings: the next call rebuilds the context's table from empty. */
  invalidate(): void {
    this.interned.clear();
    this.internedChars = 0;
    this.added = [];
    this.reset = true;
  }

  /** Clears the per-call text list and number count after a failed attempt (interned strings are kept). */
  restart(): void {
    this.count = 0;
    this.texts = [];
  }

  private push(x: number): void {
    if (this.count === this.nums.length) {
      const bigger = new Float64Array(this.nums.length * 2);
      bigger.set(this.nums);
      this.nums = bigger;
    }
    this.nums[this.count++] = x;
  }

  private str(s: string): number {
    let i = this.interned.get(s);
    if (i === undefined) {
      i = this.interned.size;
      this.interned.set(s, i);
      this.internedChars += s.length;
      this.added.push(s);
    }
    return i;
  }

  private text(v: unknown): boolean {
    let t: string | undefined;
    try {
      t = JSON.stringify(v);
    } catch {
      return false;
    }
    if (t === undefined) return false;
    this.push(this.texts.length);
    this.texts.push(t);
    return true;
  }

  /** Whether `v` conforms to `s` (then written). */
  fill(v: unknown, s: Shape): boolean {
    switch (s.k) {
      case 'n':
        if (typeof v !== 'number' || !Number.isFinite(v)) return false;
        this.push(v === 0 ? 0 : v);
        return true;
      case 's':
        if (typeof v !== 'string') return false;
        this.push(this.str(v));
        return true;
      case 'b':
        if (typeof v !== 'boolean') return false;
        this.push(v ? 1 : 0);
        return true;
      case 'z':
        return v === null || (typeof v === 'number' && !Number.isFinite(v));
      case 'u':
        return v === undefined;
      case 'x':
        return false;
      case 'v':
        if (v === null || (typeof v === 'number' && !Number.isFinite(v))) this.push(0);
        else if (typeof v === 'number') {
          this.push(1);
          this.push(v === 0 ? 0 : v);
        } else if (typeof v === 'string') {
          this.push(2);
          this.push(this.str(v));
        } else if (typeof v === 'boolean') this.push(v ? 3 : 4);
        else return false;
        return true;
      case 'j':
        if (typeof v === 'object' && v !== null && !isPlainObject(v) && !(Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype)) return false;
        return this.text(v);
      case 't': {
        if (!Array.isArray(v) || v.length !== s.items.length || Object.getPrototypeOf(v) !== Array.prototype) return false;
        for (let i = 0; i < s.items.length; i++) if (!this.fill(v[i], s.items[i]!)) return false;
        return true;
      }
      case 'a': {
        if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
        this.push(v.length);
        for (let i = 0; i < v.length; i++) if (!this.fill(v[i], s.elem)) return false;
        return true;
      }
      case 'o': {
        if (typeof v !== 'object' || v === null || Array.isArray(v) || !isPlainObject(v)) return false;
        // for-in on a plain object: its own enumerable string keys, in Object.keys order (no array allocated).
        const keys = s.keys;
        let i = 0;
        for (const key in v) {
          if (i >= keys.length || key !== keys[i]) return false;
          if (!this.fill((v as Record<string, unknown>)[key], s.items[i]!)) return false;
          i++;
        }
        return i === keys.length;
      }
    }
  }

  /** Exact JSON semantics for anything: each top-level argument as JSON text (undefined stays undefined). */
  fillJson(args: readonly unknown[]): Shape {
    const items: Shape[] = [];
    for (const a of args) {
      if (a === undefined) {
        items.push(LEAF.u);
        continue;
      }
      const t = (JSON.stringify(a) as string | undefined) ?? 'null';
      this.push(this.texts.length);
      this.texts.push(t);
      items.push(LEAF.j);
    }
    return tupleShape(items);
  }

  /** The string-table update and JSON texts for the context, or null when there is nothing to send. */
  payload(): string | null {
    if (!this.reset && this.added.length === 0 && this.texts.length === 0) return null;
    const p = JSON.stringify([this.reset ? 1 : 0, this.added, this.texts]);
    this.reset = false;
    this.added = [];
    return p;
  }
}

/** Top-level arguments: like infer(), but undefined stays undefined. */
function inferArgs(args: readonly unknown[]): Shape | null {
  const items: Shape[] = [];
  for (const a of args) {
    const s = a === undefined ? LEAF.u : infer(a, 1);
    if (s === null) return null;
    items.push(s);
  }
  return tupleShape(items);
}

// ---------------------------------------------------------------------------------------------------------
// Programs.
// ---------------------------------------------------------------------------------------------------------

function isIdentifier(name: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
}

function oneLine(s: string): string {
  return s.replace(/\s*[\r\n\u2028\u2029]+\s*/g, ' ').trim();
}

/** Whether the source calls `import()` (a script cannot contain import declarations: those are syntax errors). */
function usesDynamicImport(source: string): boolean {
  let ast: unknown;
  try {
    ast = acornParse(source, { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true });
  } catch {
    // QuickJS accepted what acorn does not: be conservative.
    return /\bimport\s*\(/.test(source);
  }
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const x of node) stack.push(x);
      continue;
    }
    const n = node as Record<string, unknown>;
    if (n['type'] === 'ImportExpression' || (n['type'] === 'MetaProperty' && (n['meta'] as { name?: unknown } | undefined)?.name === 'import')) return true;
    for (const k in n) {
      const x = n[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
    }
  }
  return false;
}

/** What an evaluation gave: a value, or the exception it threw (both handles are ours to dispose). */
type Outcome = { readonly ok: true; readonly value: JSValueHandle } | { readonly ok: false; readonly exc: JSValueHandle };

/** A classified failure, as the prelude's describe() reports it. */
interface Failure {
  readonly kind: SandboxErrorKind;
  readonly detail: string;
}

class StrictProgram implements SandboxProgram {
  readonly engine = 'strict' as const;
  private readonly vm: QuickJS;
  private readonly exports: Exports;
  private readonly memory: WasmMemory;
  private readonly budget: number;
  private readonly counterIndex: number;
  private counterView: Int32Array;
  /** Budget state: armed while policy code may run; `used` counts the polls since arm(). */
  private armed = false;
  private limit = 0;
  private used = 0;
  private chunk = 0;
  private exceeded = false;

  private prepFn: JSValueHandle | null = null;
  private invokeFn: JSValueHandle | null = null;
  private describeFn: JSValueHandle | null = null;
  private growFn: JSValueHandle | null = null;
  private bufPtr = 0;
  private bufCap = 0;
  private bufView: Uint8Array | null = null;
  private readonly filler = new Filler();
  private readonly decoders = new Map<string, JSValueHandle>();
  private readonly shapes = new Map<string, readonly Shape[]>();
  private readonly entries = new Map<string, JSValueHandle>();
  private hostResult: JSValueHandle | null = null;

  private calls = 0;
  private lastUnits = 0;
  private totalUnits = 0;
  private disposed = false;
  private busy = false;
  /** Set when the engine itself failed: the instance state is unknown and every later call fails. */
  private broken: Failure | null = null;

  constructor(loaded: Loaded, source: string, options: SandboxOptions) {
    const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
    if (!(limits.instructions >= 1) || !(limits.memoryBytes >= 1)) throw new RangeError('strict sandbox: limits.instructions and limits.memoryBytes must be positive');
    this.budget = Math.floor(limits.instructions);
    for (const name of options.entrypoints) {
      if (!isIdentifier(name)) throw new SandboxError('entrypoint', 'strict', null, 0, `"${name}" is not an identifier`);
    }
    const v = createVm(
      loaded.module,
      () => this.onInterrupt(),
      (units) => this.charge(units),
    );
    this.vm = v.vm;
    this.exports = v.exports;
    this.memory = v.memory;
    this.counterIndex = (this.exports.qjs_get_context_ptr() + loaded.counterOffset) / 4;
    this.counterView = new Int32Array(this.memory.buffer);
    this.setCounter(MAX_CHUNK);
    try {
      this.boot(source, options, limits);
    } catch (e) {
      this.release();
      throw e;
    }
  }

  private boot(source: string, options: SandboxOptions, limits: SandboxLimits): void {
    // Syntax first, while errors still carry the engine's location (stacks are off once the prelude ran).
    const parsed = this.evalRaw(source, FILE_NAME, EvalFlags.COMPILE_ONLY | EvalFlags.STRICT, null);
    if (parsed.ok) parsed.value.dispose();
    else {
      const name = this.stringProp(parsed.exc, 'name');
      const message = this.stringProp(parsed.exc, 'message');
      const where = /policy\.js:(\d+):(\d+)/.exec(this.stringProp(parsed.exc, 'stack'));
      parsed.exc.dispose();
      const detail = `${name}: ${message}${where === null ? '' : ` (line ${where[1]}, column ${where[2]})`}`;
      throw new SandboxError('syntax', 'strict', null, 0, oneLine(detail).slice(0, 300));
    }
    if (usesDynamicImport(source)) throw new SandboxError('forbidden', 'strict', null, 0, 'import() is not available in the sandbox');

    // The prelude, with one trampoline per host function.
    const vm = this.vm;
    const hostFunctions = options.hostFunctions ?? {};
    const hostNames = Object.keys(hostFunctions);
    const trampolines = hostNames.map((name, i) => vm.newFunction(`__blis_host_${i}`, this.trampoline(name, hostFunctions[name]!)));
    const chargeFn = vm.newFunction(CHARGE_NAME, () => vm.undefined);
    const setupFn = this.value(this.evalRaw(PRELUDE, '<prelude>', 0, null), null);
    const namesJson = vm.newString(JSON.stringify(hostNames));
    const api = this.value(this.callRaw(setupFn, [namesJson, chargeFn, ...trampolines], null), null);
    setupFn.dispose();
    namesJson.dispose();
    chargeFn.dispose();
    for (const t of trampolines) t.dispose();
    this.prepFn = api.getProp('0');
    this.invokeFn = api.getProp('1');
    this.describeFn = api.getProp('2');
    this.growFn = api.getProp('3');
    const buffer = api.getProp('4');
    api.dispose();
    this.attachBuffer(buffer);
    this.exports.qjs_set_memory_limit(limits.memoryBytes);

    // Top-level code and the entry-point lookups, under one budget.
    this.arm(this.budget);
    try {
      this.value(this.evalRaw(source, FILE_NAME, EvalFlags.STRICT, null), null).dispose();
      for (const name of options.entrypoints) {
        const lookup = this.evalRaw(`typeof ${name} === 'function' ? ${name} : typeof ${name} === 'undefined' ? 0 : 1`, '<entry>', 0, null);
        if (!lookup.ok) {
          lookup.exc.dispose();
          throw new SandboxError('entrypoint', 'strict', null, 0, `${name} cannot be looked up`);
        }
        const h = lookup.value;
        if (!h.isFunction) {
          const what = h.isNumber && h.toNumber() === 1 ? 'is not a function' : 'is not defined';
          h.dispose();
          throw new SandboxError('entrypoint', 'strict', null, 0, `${name} ${what} at the top level of the source`);
        }
        this.entries.set(name, h);
      }
    } finally {
      this.disarm();
      this.hostResult?.dispose();
      this.hostResult = null;
    }
  }

  // ---- raw evaluation (quickjs-wasi's JSException would read the thrown value's properties host-side) ----

  private evalRaw(code: string, filename: string, flags: number, entry: string | null): Outcome {
    const vm = this.vm;
    const e = this.exports;
    const c = vm._writeString(code);
    const f = vm._writeString(filename);
    let ptr: number;
    try {
      ptr = e.qjs_eval(c.ptr, c.len, f.ptr, flags);
    } catch (err) {
      throw this.engineFailure(err, entry);
    } finally {
      e.wasm_free(c.ptr);
      e.wasm_free(f.ptr);
    }
    return this.outcomeOf(ptr);
  }

  private callRaw(fn: JSValueHandle, args: readonly JSValueHandle[], entry: string | null): Outcome {
    const e = this.exports;
    let argv = 0;
    if (args.length > 0) {
      argv = e.wasm_malloc(args.length * 4);
      const view = new DataView(this.memory.buffer);
      for (let i = 0; i < args.length; i++) view.setUint32(argv + i * 4, args[i]!.ptr, true);
    }
    let ptr: number;
    try {
      ptr = e.qjs_call(fn.ptr, this.vm.undefined.ptr, args.length, argv);
    } catch (err) {
      throw this.engineFailure(err, entry);
    } finally {
      if (argv !== 0) e.wasm_free(argv);
    }
    return this.outcomeOf(ptr);
  }

  private outcomeOf(ptr: number): Outcome {
    const e = this.exports;
    if (e.qjs_is_exception(ptr) === 0) return { ok: true, value: new JSValueHandle(this.vm, ptr) };
    e.qjs_free_value(ptr);
    return { ok: false, exc: new JSValueHandle(this.vm, e.qjs_get_exception()) };
  }

  /** The value of an evaluation, or the SandboxError its exception means. */
  private value(o: Outcome, entry: string | null): JSValueHandle {
    if (o.ok) return o.value;
    const f = this.classify(o.exc, entry);
    throw new SandboxError(f.kind, 'strict', entry, entry === null ? 0 : this.calls, f.detail);
  }

  /** Classifies (and disposes) an exception that escaped to the host; runs describe() under what is left of the budget. */
  private classify(exc: JSValueHandle, entry: string | null): Failure {
    try {
      if (this.exceeded) return this.budgetFailure();
      if (this.describeFn === null) return { kind: 'threw', detail: 'the program failed before it started' };
      const d = this.callRaw(this.describeFn, [exc], entry);
      if (d.ok) {
        const f = this.failure(d.value);
        d.value.dispose();
        return f;
      }
      d.exc.dispose();
      return this.exceeded ? this.budgetFailure() : { kind: 'threw', detail: 'a thrown value that cannot be printed' };
    } finally {
      exc.dispose();
    }
  }

  private budgetFailure(): Failure {
    return { kind: 'budget', detail: `more than ${this.budget} units` };
  }

  /** Reads a `{k, d}` outcome made by the prelude (a null-prototype object of two strings). */
  private failure(h: JSValueHandle): Failure {
    const kind = this.stringProp(h, 'k');
    return { kind: kind === '' ? 'threw' : (kind as SandboxErrorKind), detail: oneLine(this.stringProp(h, 'd')) };
  }

  /** A string-valued own property of an engine-made object ('' otherwise). */
  private stringProp(h: JSValueHandle, key: string): string {
    const p = h.getProp(key);
    const s = p.isString ? p.toString() : '';
    p.dispose();
    return s;
  }

  /** V8's stack overflowed inside the engine, or the instance trapped: nothing in it can be trusted now. */
  private engineFailure(e: unknown, entry: string | null): SandboxError {
    const stack = e instanceof RangeError;
    const what = stack ? "the host's stack overflowed inside the engine" : `the engine failed (${e instanceof Error ? e.message : String(e)})`;
    this.broken = { kind: stack ? 'stack' : 'memory', detail: oneLine(`${what} in an earlier call; the program can no longer be called`) };
    this.armed = false;
    return new SandboxError(this.broken.kind, 'strict', entry, entry === null ? 0 : this.calls, oneLine(what));
  }

  // ---- budget ----

  private setCounter(v: number): void {
    if (this.counterView.buffer !== this.memory.buffer) this.counterView = new Int32Array(this.memory.buffer);
    this.counterView[this.counterIndex] = v;
  }

  private getCounter(): number {
    if (this.counterView.buffer !== this.memory.buffer) this.counterView = new Int32Array(this.memory.buffer);
    return this.counterView[this.counterIndex]!;
  }

  // The countdown: QuickJS decrements it at each poll and calls the interrupt handler on the poll that brings it
  // to 0, so a chunk of `chunk` polls is written as chunk + 1 and the firing poll is the chunk's last one plus one.

  private arm(limit: number): void {
    this.armed = true;
    this.limit = limit;
    this.used = 0;
    this.exceeded = false;
    this.startChunk();
  }

  /** Starts a chunk of what is left of the budget (the next poll interrupts when nothing is left). */
  private startChunk(): void {
    this.chunk = Math.min(Math.max(0, this.limit - this.used), MAX_CHUNK);
    this.setCounter(this.chunk + 1);
  }

  /** Stops counting; returns the units used since arm(). */
  private disarm(): number {
    if (this.armed) {
      this.armed = false;
      if (this.exceeded) this.used = this.limit;
      else this.used += this.chunk + 1 - Math.max(1, this.getCounter());
      if (this.broken === null) this.setCounter(MAX_CHUNK);
    }
    this.exceeded = false;
    return this.used;
  }

  /** The interrupt import: QuickJS calls it when the countdown reaches 0 (having just reset it to 10,000). */
  private onInterrupt(): number {
    if (!this.armed) {
      this.setCounter(MAX_CHUNK);
      return 0;
    }
    if (this.exceeded) return 1;
    this.used += this.chunk + 1;
    if (this.used > this.limit) {
      this.exceeded = true;
      return 1;
    }
    this.startChunk();
    return 0;
  }

  /** Budget units for native work the interpreter does not poll for (the prelude's wrappers call `$c`). */
  private charge(units: number): void {
    if (!this.armed || this.exceeded || !(units > 0)) return;
    const n = Math.ceil(units);
    const c = this.getCounter();
    if (c - n >= 1) {
      this.setCounter(c - n);
      return;
    }
    // This chunk is spent, and more: fold it into `used` and start the next one.
    this.used += this.chunk + 1 - c + n;
    if (this.used > this.limit) {
      // The next poll (at the latest, entering the native call about to run) interrupts.
      this.exceeded = true;
      this.setCounter(1);
      return;
    }
    this.startChunk();
  }

  // ---- host functions ----

  /** The host side of a `__host` method: a finite number, or a string saying why not (thrown inside as a TypeError). */
  private trampoline(name: string, fn: HostFunction): (...args: JSValueHandle[]) => JSValueHandle {
    return (...args: JSValueHandle[]): JSValueHandle => {
      const nums = args.map((h) => h.toNumber());
      let r: unknown;
      let failure: string | null = null;
      try {
        r = fn(...nums);
        if (typeof r !== 'number' || !Number.isFinite(r)) failure = `host function ${name} returned ${typeof r === 'number' ? String(r) : `a ${typeof r}`}`;
      } catch (e) {
        failure = `host function ${name} failed: ${oneLine(e instanceof Error ? e.message : String(e)).slice(0, MAX_DETAIL_CHARS)}`;
      }
      // quickjs-wasi copies the returned value and leaves the handle to us: free the previous one.
      this.hostResult?.dispose();
      this.hostResult = failure === null ? this.vm.newNumber(r as number) : this.vm.newString(failure);
      return this.hostResult;
    };
  }

  // ---- arguments ----

  private attachBuffer(buffer: JSValueHandle): void {
    const e = this.exports;
    const lenPtr = e.wasm_malloc(4);
    this.bufPtr = e.qjs_get_array_buffer(buffer.ptr, lenPtr);
    this.bufCap = new DataView(this.memory.buffer).getUint32(lenPtr, true) / 8;
    e.wasm_free(lenPtr);
    buffer.dispose();
    if (this.bufPtr === 0) throw new Error('strict sandbox: cannot map the argument buffer');
    this.bufView = null;
  }

  private copyNumbers(count: number, entry: string): void {
    if (count > this.bufCap) {
      let cap = this.bufCap;
      while (cap < count) cap *= 2;
      const n = this.vm.newNumber(cap);
      const buffer = this.value(this.callRaw(this.growFn!, [n], entry), entry);
      n.dispose();
      this.attachBuffer(buffer);
    }
    if (this.bufView === null || this.bufView.buffer !== this.memory.buffer) this.bufView = new Uint8Array(this.memory.buffer, this.bufPtr, this.bufCap * 8);
    this.bufView.set(new Uint8Array(this.filler.nums.buffer, 0, count * 8));
  }

  /** The cached decoder for an argument shape (compiled on first use), or null when the cache is full. */
  private decoder(shape: Shape, entry: string): JSValueHandle | null {
    let d = this.decoders.get(shape.key);
    if (d === undefined) {
      if (this.decoders.size >= MAX_DECODERS) return null;
      d = this.value(this.evalRaw(decoderSource(shape), '<args>', 0, entry), entry);
      this.decoders.set(shape.key, d);
    }
    return d;
  }

  /**
   * Fills the number buffer and string tables for `args`; returns the decoder to run (`own`: dispose it
   * after). Each entry point keeps its last few argument shapes, most recent first; a new shape is merged
   * into the most recent one when that does not turn a part of either into JSON text, else kept beside it.
   */
  private marshal(entry: string, args: readonly unknown[]): { dec: JSValueHandle; own: boolean } {
    const f = this.filler;
    f.begin();
    const known = this.shapes.get(entry) ?? [];
    for (let i = 0; i < known.length; i++) {
      const s = known[i]!;
      if (f.fill(args, s)) {
        if (i > 0) this.shapes.set(entry, [s, ...known.filter((x) => x !== s)]);
        return { dec: this.decoder(s, entry)!, own: false };
      }
      f.restart();
    }
    const inferred = inferArgs(args);
    if (inferred !== null) {
      const latest = known[0];
      const merged = latest === undefined ? inferred : merge(latest, inferred);
      const clean = latest === undefined || countJson(merged) <= Math.max(countJson(latest), countJson(inferred));
      const shape = clean ? merged : inferred;
      const dec = this.decoder(shape, entry);
      if (dec !== null && f.fill(args, shape)) {
        this.shapes.set(entry, [shape, ...known.filter((x) => x !== latest || !clean)].slice(0, MAX_SHAPES_PER_ENTRY));
        return { dec, own: false };
      }
      f.restart();
    }
    const shape = f.fillJson(args);
    const dec = this.decoder(shape, entry);
    if (dec !== null) return { dec, own: false };
    return { dec: this.value(this.evalRaw(decoderSource(shape), '<args>', 0, entry), entry), own: true };
  }

  // ---- calls ----

  call(entry: string, args: readonly unknown[]): unknown {
    if (this.disposed) throw new Error('strict sandbox: the program was disposed');
    if (this.busy) throw new Error('strict sandbox: the program is not reentrant (a host function called back into it)');
    this.busy = true;
    try {
      return this.callOnce(entry, args);
    } finally {
      this.busy = false;
    }
  }

  private callOnce(entry: string, args: readonly unknown[]): unknown {
    const callNumber = ++this.calls;
    this.lastUnits = 0;
    if (this.broken !== null) throw new SandboxError(this.broken.kind, 'strict', entry, callNumber, this.broken.detail);
    const fn = this.entries.get(entry);
    if (fn === undefined) throw new SandboxError('entrypoint', 'strict', entry, callNumber, `${entry} is not a declared entry point of this program`);

    // Copy the arguments in, outside the budget: only running out of memory can fail here.
    try {
      const { dec, own } = this.marshal(entry, args);
      this.copyNumbers(this.filler.count, entry);
      const payload = this.filler.payload();
      const payloadH = payload === null ? this.vm.undefined : this.vm.newString(payload);
      const prepared = this.callRaw(this.prepFn!, [dec, payloadH], entry);
      payloadH.dispose();
      if (own) dec.dispose();
      this.value(prepared, entry).dispose();
    } catch (e) {
      // The context may have missed a string-table update: start the table afresh next time.
      this.filler.invalidate();
      if (e instanceof SandboxError && e.kind === 'threw') throw new SandboxError('memory', 'strict', entry, callNumber, `the arguments could not be copied in (${e.detail})`);
      throw e;
    }

    // The call and the copy-out, under the budget.
    this.arm(this.budget);
    let r: JSValueHandle;
    try {
      r = this.value(this.callRaw(this.invokeFn!, [fn], entry), entry);
    } finally {
      this.lastUnits = this.disarm();
      this.totalUnits += this.lastUnits;
      this.hostResult?.dispose();
      this.hostResult = null;
    }
    try {
      return this.read(r, entry, callNumber);
    } finally {
      r.dispose();
    }
  }

  /** The host value of an invoke() result: a number, boolean or null, JSON text, or a `{k, d}` failure. */
  private read(r: JSValueHandle, entry: string, callNumber: number): unknown {
    if (r.isNumber) {
      const x = r.toNumber();
      return x === 0 ? 0 : x;
    }
    if (r.isString) return JSON.parse(r.toString()) as unknown;
    if (r.isNull || r.isUndefined) return null;
    if (r.isBool) return this.exports.qjs_get_bool(r.ptr) !== 0;
    const f = this.failure(r);
    throw new SandboxError(f.kind, 'strict', entry, callNumber, f.detail);
  }

  stats(): SandboxStats {
    return { calls: this.calls, lastInstructions: this.lastUnits, totalInstructions: this.totalUnits };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.release();
  }

  /** Drops the instance (its memory goes with it; no guest code runs). */
  private release(): void {
    this.entries.clear();
    this.decoders.clear();
    this.shapes.clear();
    this.prepFn = this.invokeFn = this.describeFn = this.growFn = this.hostResult = null;
    this.bufView = null;
    this.vm.dispose();
  }
}

/** The strict engine: loads and compiles QuickJS once per process, then compiles programs synchronously. */
export async function strictEngine(): Promise<SandboxEngine> {
  const loaded = await loadModule();
  return {
    name: 'strict',
    compile: (source, options) => new StrictProgram(loaded, source, options),
  };
}
