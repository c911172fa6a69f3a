/**
 * The `fast` sandbox engine: untrusted policy JavaScript in a fresh V8 realm with an injected gas counter, at
 * near-native speed (a routing hook runs once per simulated request, millions of times per policy search).
 *
 * Design:
 * - **One realm per program**: `node:vm` `createContext` over a null-prototype object, with code generation
 *   from strings and WebAssembly disabled (so `eval`, `Function("...")` and every function constructor reached
 *   through `.constructor` throw natively). SES `lockdown()` is not used: it freezes the host's own
 *   primordials process-wide; a separate realm has fresh intrinsics that can be frozen without touching the
 *   host.
 * - **Prelude** (fast-prelude.ts, fast-prelude-builtins.ts), trusted code run in the realm before user code:
 *   keeps an allow-list of globals (no Date, Math.random, Promise, RegExp, Intl, typed arrays, ArrayBuffer,
 *   SharedArrayBuffer, Atomics, WebAssembly, console, timers, WeakRef, FinalizationRegistry, BigInt global,
 *   Symbol.for), replaces the regex-taking String methods with string-only ones, wraps the built-ins that
 *   allocate or walk in proportion to a size, pins locale-dependent conversions to en-US, sets
 *   `Error.stackTraceLimit = 0`, makes every global binding read-only and deep-freezes every intrinsic.
 * - **Rewrite** (fast-rewrite.ts, acorn): rejects import/export, `import()`, async functions, generators,
 *   `await`, regex literals, `with`, `debugger` and `__`-prefixed identifiers (other than `__host`); injects
 *   one gas check per loop iteration and per function entry; routes spreads through accounting helpers.
 *   User code runs in strict mode inside an arrow whose parameters are the helpers.
 * - **Budget**: one unit per loop iteration and per function entry, plus one unit per 16 elements or
 *   characters walked by an accounted built-in, one per 16 values of a JSON result, one per host-function
 *   call. `limits.instructions` is per call (and for the top level at compile time). Exhaustion throws inside
 *   the realm; user code may catch it, but every later check throws again and the call reports `budget` even
 *   if the policy then returns. User calls nest at most MAX_CALL_DEPTH (fast-rewrite.ts) deep, counted by
 *   the rewrite (the same on every thread) -> `stack`; every catch and finally block first checks for a stack
 *   end (the depth limit or V8's RangeError), so it cannot be caught or observed; a V8 stack overflow (native
 *   recursion: JSON of a deeply nested value, ...) also ends the program (later calls fail with `stack`).
 * - **Values**: arguments are rebuilt inside the realm by a prelude copier (object spread + fix-up) so no
 *   host object is ever reachable. JSON semantics: NaN/Infinity and functions/symbols/undefined inside arrays
 *   become null, functions and symbols in objects and every symbol-keyed property are dropped, BigInt or
 *   cycles (a host bug) throw a TypeError, `toJSON` of an argument is not called; the copy is not charged to
 *   the memory account. Results leave as primitives (-0 becomes 0) or as JSON text from the realm's own
 *   `JSON.stringify` with a checking replacer (cycles, depth, size, functions, symbols, bigint, NaN/Infinity,
 *   Map/Set/Error objects -> `return`); getters, toJSON and Proxy traps run as user code under the budget.
 *   Errors are classified inside the realm and only a primitive message string leaves it. `__host` methods
 *   are realm functions that coerce their arguments with `+x` and call a host trampoline that never throws
 *   into the realm (a failing host function fails the call with `threw`). Entry points are the functions the
 *   names held when the top level finished.
 *
 * Memory account (`limits.memoryBytes`, per call, reset at each call; about 8 bytes per array element, 2 per
 * string character, 16-80 per object property or map entry). It covers: `Array(n)`/`new Array(n)` (also as
 * `[].constructor`: Array.prototype.constructor is the accounted wrapper, which clears V8's species
 * protector - measured: no visible cost on a whole simulated run), strings longer than 64K characters built
 * by `+`, `+=`, template literals or `concat` (charged at their flattened size: the rewrite wraps each such
 * expression), `Object.create`/`Object.defineProperties` descriptor maps (256 bytes and one gas unit each),
 * `Array.from`, `Array.of`, array spread, call/new spread, object spread, destructuring with a top-level
 * rest element; `concat`, `slice`, `splice`, `fill`, `map`, `filter`, `flat`, `flatMap`, `join`, `toSorted`,
 * `toReversed`, `toSpliced`, `with`, `unshift`, `toLocaleString`; `String.prototype.repeat`, `padStart`,
 * `padEnd`, `split`, `replace`, `replaceAll`, `matchAll`, `toUpperCase`, `toLowerCase`, `normalize`,
 * `toWellFormed`; `Object.keys`/`values`/`entries`/`getOwnPropertyNames`/`getOwnPropertySymbols`/
 * `getOwnPropertyDescriptors`/`fromEntries`/`assign`, `Reflect.ownKeys`; `JSON.parse` (8 bytes per input
 * character), `JSON.stringify` (per value written); `new Map/Set/WeakMap/WeakSet(iterable)`; the URI
 * functions; on Node versions that have them, the Set algebra methods, `Object.groupBy`/`Map.groupBy` and
 * iterator `toArray` (`Array.fromAsync`, which returns a Promise, is removed). V8's own RangeErrors for
 * oversized strings, arrays and BigInts also report `memory`. Arguments copied in are not charged.
 *
 * It does NOT cover (bounded only by V8's limits and, under the evaluator, by the worker's heap limit):
 * - BigInt: unavailable (literals are refused by the rewrite, there is no BigInt global);
 * - object literals, properties added one by one, closures, `push` (each costs gas, so they are bounded by
 *   the budget times a constant);
 * - state a program keeps across calls (the account is per call);
 * - `Function.prototype.apply` with large arrays (bounded by the stack), the HTML string methods
 *   (`anchor`, ...), `JSON.stringify`'s indentation.
 * Time is bounded by the budget times the cost of one operation, and, from outside the realm, by the
 * wall-clock bounds (watchdog.ts): simulations with fast-engine code run under a node:vm watchdog armed once
 * per slice of about 100 ms (a watchdog per call would cost 110-140 us per call, 40x a routing call), for the
 * per-call limit plus the slice, within the run's budget; the call it stops fails with `budget`.
 *
 * Other differences from plain JavaScript: strict mode; intrinsics are frozen (assigning e.g. `obj.hasOwnProperty`
 * on a plain object throws, except for `constructor`/`toString`/`valueOf`/`toLocaleString` and `Error`'s
 * `name`/`message`/`toString`, which are accessors that create an own property); `Array` is a wrapper
 * (`[].constructor === Array`, `instanceof Array` and `Array.isArray` work; `Array[Symbol.species]` is absent); the String pattern methods
 * take their pattern literally (`"a.b".split(".")` works, `"aaa".match("a+")` looks for the text "a+");
 * `JSON.stringify` with an array replacer writes keys in the object's order, not the list's.
 *
 * Host isolation limits (same process, same V8 isolate): V8 keeps isolate-wide "protectors" that guard the
 * fast paths of array, iterator and concat built-ins. Realm code clears one by writing `constructor` or
 * `Symbol.iterator` on an array, or `next` on a built-in iterator, even when the write fails against a
 * frozen prototype (V8 updates the protector before checking writability). Results stay correct; the host
 * process's array built-ins may get up to 10x slower until it restarts, so a long policy search should run
 * candidates in workers that are recycled. `Symbol.isConcatSpreadable` is removed so it cannot be named.
 *
 * Array.prototype and Object.prototype are frozen like every intrinsic (fast-prelude.ts
 * FREEZE_CORE_PROTOTYPES); V8 then takes a slow path (about 50 ns instead of 2) for stores that append to an
 * array or fill a hole (`a[a.length] = x`, `new Array(n)` then `a[i] = x`); `push`, `map` and stores to
 * existing elements are unaffected. Sealing them instead costs about 8 ns per such store.
 *
 * Performance (Node 20, CPU time per call): compiling a program (realm, prelude, deep freeze) takes about
 * 10 ms; a call costs about 0.05 us plus the argument copy, which dominates: `route(req, state)` with 8/12/16
 * instances of 15 fields takes about 2/2.7/4 us (the same function outside the sandbox: 0.05-0.1 us); an
 * object result adds the JSON round trip (a few us for a few dozen values).
 */
import vm from 'node:vm';
import { PRELUDE_SOURCE, REALM_STATUS, type RealmApi, type RealmHostCall, type RealmSetup } from './fast-prelude.js';
import { isEntryName, rewriteSource, RewriteError, wrapProgram } from './fast-rewrite.js';
import { noteCharged } from './heap-guard.js';
import { callWatch, fastCallInFlight, HEAVY_CALL } from './watchdog.js';
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

const ENGINE = 'fast';

/** The fast engine (nothing to load: node:vm and acorn are synchronous). */
export function fastEngine(): Promise<SandboxEngine> {
  return Promise.resolve({ name: ENGINE, compile: compileFast });
}

const KIND_OF_STATUS: Readonly<Record<number, SandboxErrorKind>> = {
  [REALM_STATUS.budget]: 'budget',
  [REALM_STATUS.memory]: 'memory',
  [REALM_STATUS.stack]: 'stack',
  [REALM_STATUS.threw]: 'threw',
  [REALM_STATUS.return]: 'return',
};

function resolveLimits(partial: Partial<SandboxLimits> | undefined): SandboxLimits {
  const limits = { ...DEFAULT_SANDBOX_LIMITS, ...partial };
  for (const [k, v] of Object.entries(limits)) {
    if (typeof v !== 'number' || !(v > 0)) throw new RangeError(`fast sandbox: limits.${k} must be a positive number, got ${String(v)}`);
  }
  return { instructions: Math.floor(limits.instructions), memoryBytes: Math.floor(limits.memoryBytes) };
}

/** One line, bounded, no control characters. */
function oneLine(text: string): string {
  const head = text.length > 500 ? text.slice(0, 500) : text;
  return head.replace(/\s+/g, ' ').trim();
}

interface HostState {
  /** Set when a host function failed during the current call (it did not throw into the realm). */
  failure: string | null;
}

function makeHostCall(fns: readonly HostFunction[], names: readonly string[], state: HostState): RealmHostCall {
  return (index: number, ...args: number[]): number => {
    try {
      const r = fns[index]!(...args);
      if (typeof r === 'number' && Number.isFinite(r)) return r;
      state.failure ??= `__host.${names[index]!} returned ${typeof r === 'number' ? String(r) : `a ${typeof r}`}, not a finite number`;
      return NaN;
    } catch (e) {
      if (e instanceof RangeError && e.message === 'Maximum call stack size exceeded') return Infinity;
      state.failure ??= `__host.${names[index]!} threw: ${e instanceof Error ? e.message : String(e)}`;
      return NaN;
    }
  };
}

function compileFast(source: string, options: SandboxOptions): SandboxProgram {
  const limits = resolveLimits(options.limits);
  const compileError = (kind: SandboxErrorKind, detail: string) => new SandboxError(kind, ENGINE, null, 0, oneLine(detail));
  const entrypoints = [...options.entrypoints];
  for (const name of entrypoints) {
    if (!isEntryName(name)) throw compileError('entrypoint', `"${name}" cannot be an entry point (it must be a plain identifier)`);
  }
  let rewritten;
  try {
    rewritten = rewriteSource(source);
  } catch (e) {
    if (e instanceof RewriteError) throw compileError(e.kind, e.message);
    throw e;
  }
  for (const name of entrypoints) {
    if (!rewritten.declared.has(name)) throw compileError('entrypoint', `${name} is not declared at the top level of the source`);
  }

  let script: vm.Script;
  try {
    script = new vm.Script(wrapProgram(rewritten.code, entrypoints), { filename: 'policy.js' });
  } catch (e) {
    throw compileError('syntax', syntaxDetail(e));
  }

  const hostFns = options.hostFunctions ?? {};
  const label = options.label ?? null;
  const hostNames = Object.keys(hostFns);
  const hostState: HostState = { failure: null };
  const context = vm.createContext(Object.create(null) as object, { codeGeneration: { strings: false, wasm: false } });
  const setup = vm.runInContext(PRELUDE_SOURCE, context) as RealmSetup;
  const api: RealmApi = setup(
    makeHostCall(hostNames.map((n) => hostFns[n]!), hostNames, hostState),
    hostNames,
    limits.instructions,
    limits.memoryBytes,
    MAX_RESULT_CHARS,
    MAX_RESULT_DEPTH,
  );
  api.boot(script.runInContext(context));
  const bootStatus = api.status[0];
  if (hostState.failure !== null) throw compileError('threw', hostState.failure);
  if (bootStatus !== REALM_STATUS.ok) throw compileError(KIND_OF_STATUS[bootStatus] ?? 'threw', detailFor(bootStatus, api.status[2]));
  const entryIndex = new Map<string, number>();
  entrypoints.forEach((name, i) => {
    if (!api.entryIsFunction(i)) throw compileError('entrypoint', `${name} is not a function`);
    entryIndex.set(name, i);
  });
  /** The realm's entry into a call and its status array; null once disposed (the realm is then garbage). */
  let realm: { readonly invoke: RealmApi['invoke']; readonly status: RealmApi['status'] } | null = { invoke: api.invoke, status: api.status };

  let calls = 0;
  let lastInstructions = 0;
  let totalInstructions = 0;
  let busy = false;

  return {
    engine: ENGINE,
    call(entry: string, args: readonly unknown[]): unknown {
      if (realm === null) throw new Error('fast sandbox: the program was disposed');
      const { invoke, status } = realm;
      if (busy) throw new Error('fast sandbox: the program is not reentrant (a host function called back into it)');
      const callNumber = ++calls;
      const index = entryIndex.get(entry);
      const fail = (kind: SandboxErrorKind, detail: string) => new SandboxError(kind, ENGINE, entry, callNumber, oneLine(detail));
      if (index === undefined) throw fail('entrypoint', `${entry} is not one of the declared entry points (${entrypoints.join(', ')})`);
      busy = true;
      hostState.failure = null;
      // For the wall-clock backstop (watchdog.ts): the call it stops, if it fires now (left set if it does).
      fastCallInFlight.entry = entry;
      fastCallInFlight.callNumber = callNumber;
      fastCallInFlight.label = label;
      let result: unknown;
      try {
        result = invoke(index, args);
      } catch (e) {
        // The prelude catches everything the program throws; only a host-side stack overflow gets here.
        throw fail(e instanceof RangeError ? 'stack' : 'threw', 'the call could not run in the host');
      } finally {
        busy = false;
        fastCallInFlight.entry = null;
      }
      const code = status[0];
      if (code === REALM_STATUS.badArgs) {
        throw new TypeError(`fast sandbox: call #${callNumber} of ${entry}(): the arguments must be JSON-compatible plain data (acyclic, no BigInt)`);
      }
      lastInstructions = status[1];
      totalInstructions += lastInstructions;
      const noRoom = noteCharged(status[3], limits.memoryBytes);
      if (noRoom !== null) throw fail('memory', noRoom);
      // The per-call wall-clock bound's check (watchdog.ts): a counter per call, a clock read now and then.
      if (--callWatch.countdown <= 0 || lastInstructions > HEAVY_CALL) callWatch.check();
      if (hostState.failure !== null) throw fail('threw', hostState.failure);
      if (code === REALM_STATUS.ok) return result;
      if (code === REALM_STATUS.json) return JSON.parse(status[2]) as unknown;
      throw fail(KIND_OF_STATUS[code] ?? 'threw', detailFor(code, status[2]));
    },
    stats(): SandboxStats {
      return { calls, lastInstructions, totalInstructions };
    },
    dispose(): void {
      realm = null;
    },
  };
}

function detailFor(code: number, text: string): string {
  if (code === REALM_STATUS.threw) return text === '' ? 'the policy threw' : text;
  return text;
}

/** V8's compile error, with the line from its stack ("policy.js:LINE"). */
function syntaxDetail(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const line = /policy\.js:(\d+)/.exec(e.stack ?? '');
  return line === null ? e.message : `${e.message} (line ${line[1]!})`;
}
