/**
 * The `strict` sandbox engine: untrusted policy JavaScript in QuickJS compiled to WebAssembly (quickjs-wasi
 * 3.6.2, QuickJS-NG 0.17), one WebAssembly instance per program. The policy's heap is the instance's own
 * linear memory: no host object is ever reachable from it, and the engine's allocator caps it.
 *
 * Design:
 * - **Loading** (strict-vm.ts): the module is compiled once per process; `compile()` instantiates it
 *   synchronously (~12 ms with the prelude) with our own WASI and host imports. Evaluations go through the raw
 *   `qjs_eval`/`qjs_call` exports, never through quickjs-wasi's `JSException` (whose constructor reads the
 *   thrown value's `message`/`toString` on the host side, i.e. runs policy code outside any budget). No
 *   quickjs-wasi extension is loaded.
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
 * - **Values in** (strict-marshal.ts): arguments cross as numbers in a shared `Float64Array` plus an interned
 *   string table, rebuilt by a decoder generated per argument *shape* and compiled once inside the context
 *   (over 2x faster than QuickJS's `JSON.parse`). The result is always what `JSON.parse(JSON.stringify(x))`
 *   gives, except that top-level `undefined` arguments stay `undefined`. Copying in runs outside the budget.
 * - **Values out**: numbers (-0 as 0), booleans and null are read directly; anything else is serialised inside
 *   the context with the original `JSON.stringify` and the checking replacer both engines share (result-check.ts) (cycles, depth >
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
 *
 * Longer than 500 lines because of this comment: it is the engine's security argument (what is reachable,
 * charged and refused), kept beside the code it describes; the code is about 420 lines, its parts already in
 * strict-vm, strict-prelude, strict-marshal, strict-budget and strict-source.
 */
import { EvalFlags, JSValueHandle, QuickJS } from 'quickjs-wasi';
import {
  DEFAULT_SANDBOX_LIMITS,
  SandboxError,
  type HostFunction,
  type SandboxEngine,
  type SandboxErrorKind,
  type SandboxLimits,
  type SandboxOptions,
  type SandboxProgram,
  type SandboxStats,
} from './types.js';
import { CHARGE_NAME, createVm, loadModule, type Exports, type Loaded, type WasmMemory } from './strict-vm.js';
import { MAX_DETAIL_CHARS, PRELUDE } from './strict-prelude.js';
import { InterruptMeter } from './strict-budget.js';
import { isIdentifier, oneLine, usesDynamicImport } from './strict-source.js';
import { Filler, countJson, decoderSource, inferArgs, merge, type Shape } from './strict-marshal.js';

/** Decoders compiled per program before new argument shapes fall back to JSON text. */
const MAX_DECODERS = 64;
/** Argument shapes remembered per entry point. */
const MAX_SHAPES_PER_ENTRY = 4;
const FILE_NAME = 'policy.js';


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
  /** Counts budget units through QuickJS's interrupt countdown (strict-budget.ts). */
  private readonly meter: InterruptMeter;

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
      () => this.meter.onInterrupt(),
      (units) => this.meter.charge(units),
    );
    this.vm = v.vm;
    this.exports = v.exports;
    this.memory = v.memory;
    this.meter = new InterruptMeter(this.memory, (this.exports.qjs_get_context_ptr() + loaded.counterOffset) / 4);
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
    this.meter.arm(this.budget);
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
      this.meter.disarm(this.broken === null);
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
      if (this.meter.exceeded) return this.budgetFailure();
      if (this.describeFn === null) return { kind: 'threw', detail: 'the program failed before it started' };
      const d = this.callRaw(this.describeFn, [exc], entry);
      if (d.ok) {
        const f = this.failure(d.value);
        d.value.dispose();
        return f;
      }
      d.exc.dispose();
      return this.meter.exceeded ? this.budgetFailure() : { kind: 'threw', detail: 'a thrown value that cannot be printed' };
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
    this.meter.abandon();
    return new SandboxError(this.broken.kind, 'strict', entry, entry === null ? 0 : this.calls, oneLine(what));
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
    this.meter.arm(this.budget);
    let r: JSValueHandle;
    try {
      r = this.value(this.callRaw(this.invokeFn!, [fn], entry), entry);
    } finally {
      this.lastUnits = this.meter.disarm(this.broken === null);
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

