/**
 * The trusted prelude of the `fast` engine: JavaScript source evaluated once in each fresh realm, before any
 * user code, as one function that the host calls with the program's limits (see fast.ts for the design).
 *
 * It runs in another realm and closes over nothing of the host, so it is text, not TypeScript. It:
 * 1. captures the intrinsics it needs (so later changes by user code cannot reach it), sets
 *    `Error.stackTraceLimit = 0` (no host frames or paths in stacks, cheap errors);
 * 2. deletes every global not on an allow-list (Date, Promise, RegExp, Intl, typed arrays and buffers,
 *    Atomics, WebAssembly, console, WeakRef, FinalizationRegistry, BigInt, ...), `Math.random`,
 *    `Symbol.for`/`Symbol.keyFor`;
 * 3. installs the accounted built-ins (fast-prelude-builtins.ts) and the frozen `__host` object;
 * 4. makes every remaining global binding read-only and deep-freezes every intrinsic reachable from the
 *    global object and the hidden ones (iterator, generator and async-function prototypes);
 * 5. returns the host API: `boot` (run the top level), `invoke` (one call: copy in, run, copy out) and a
 *    status array the host reads after each call.
 *
 * Status codes (`status[0]`) are {@link REALM_STATUS}; `status[1]` is the gas used, `status[2]` the detail
 * text (or the JSON text of an object result).
 */
import { PRELUDE_BUILTINS } from './fast-prelude-builtins.js';
import { MAX_CALL_DEPTH } from './fast-rewrite.js';
import { resultCheckSource } from './result-check.js';

export const REALM_STATUS = {
  ok: 0,
  json: 1,
  budget: 2,
  memory: 3,
  stack: 4,
  threw: 5,
  return: 6,
  badArgs: 7,
} as const;

/** What the prelude function returns to the host (a frozen realm object; every field is read once). */
export interface RealmApi {
  /** Runs the wrapped program's top level under the budget; sets the status. */
  readonly boot: (wrapper: unknown) => void;
  /** Whether entry point `i` is a function. */
  readonly entryIsFunction: (i: number) => boolean;
  /** One call of entry point `i`; returns the primitive result (status ok) or null. */
  readonly invoke: (i: number, args: readonly unknown[]) => unknown;
  /** [status code, gas used, detail or JSON text, bytes charged to the memory account]. */
  readonly status: { readonly 0: number; readonly 1: number; readonly 2: string; readonly 3: number };
}

/** The host side of `__host`: returns the result, NaN when the host function failed, +Infinity on stack overflow. */
export type RealmHostCall = (index: number, ...args: number[]) => number;

export type RealmSetup = (
  hostCall: RealmHostCall,
  hostNames: readonly string[],
  gasLimit: number,
  memoryLimit: number,
  maxResultChars: number,
  maxResultDepth: number,
) => RealmApi;

const PRELUDE_HEAD = String.raw`
const G = globalThis;
const O = Object;
const freeze = O.freeze, getProto = O.getPrototypeOf, gopd = O.getOwnPropertyDescriptor, dp = O.defineProperty;
const okeys = O.keys, gos = O.getOwnPropertySymbols, hasOwn = O.hasOwn;
const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
const isArray = Array.isArray;
const jsonStringify = JSON.stringify, jsonParse = JSON.parse;
const isFiniteNum = Number.isFinite;
const StringC = String;
const floor = Math.floor, trunc = Math.trunc, min = Math.min, max = Math.max, log2 = Math.log2, ceil = Math.ceil;
const ArrayC = Array, MapC = Map, SetC = Set, WeakMapC = WeakMap, WeakSetC = WeakSet;
const ErrorC = Error, RangeErrorC = RangeError, TypeErrorC = TypeError;
const ObjectProto = O.prototype, ArrayProto = ArrayC.prototype, StringProto = StringC.prototype;
const RangeErrorProto = RangeErrorC.prototype;
const arrayValues = ArrayProto.values, arrayPush = ArrayProto.push;
const mapSize = gopd(MapC.prototype, 'size').get, setSize = gopd(SetC.prototype, 'size').get;
const setHas = SetC.prototype.has, setAdd = SetC.prototype.add;
const wsHas = WeakSetC.prototype.has, wsAdd = WeakSetC.prototype.add;
const sIndexOf = StringProto.indexOf, sSlice = StringProto.slice;
const symToString = Symbol.prototype.toString;
const MAX_LEN = 9007199254740991;
const ST = { ok: 0, json: 1, budget: 2, memory: 3, stack: 4, threw: 5, return: 6, badArgs: 7 };
ErrorC.stackTraceLimit = 0;

// ---- gas and memory accounts (reset per call) ----
let gasGet = null, gasSet = null;
let gasCharge = function () {};
let mem = 0, memOver = false;
const BUDGET = freeze(new RangeErrorC('instruction budget exceeded'));
const MEMORY = freeze(new RangeErrorC('memory limit exceeded'));
const DEPTH = freeze(new RangeErrorC('call depth limit exceeded'));
const OVERFLOW = 'Maximum call stack size exceeded';
/** Set when the call hit the depth limit or overflowed the host stack: every later check rethrows, no user
 * handler or finally block runs. hostOverflow also ends the program (its state may hold a host-dependent
 * depth); the depth limit does not (it is counted, the same everywhere). */
let stackHit = false, hostOverflow = false, gasAtStack = 0;
function oog() { throw stackHit ? DEPTH : BUDGET; }
function stackEnd(host) {
  if (!stackHit) { stackHit = true; gasAtStack = gasGet(); }
  if (host) hostOverflow = true;
  gasSet(-1);
}
function tooDeep() { stackEnd(false); throw DEPTH; }
function isOverflow(e) { return rangeMessage(e) === OVERFLOW; }
/** First thing in every catch block: a stack end is not catchable. */
function seeCatch(e) {
  if (stackHit) throw e;
  if (e !== BUDGET && e !== MEMORY && isOverflow(e)) { stackEnd(true); throw e; }
}
/** First thing in every finally block. */
function seeFinally() { if (stackHit) throw DEPTH; }
function charge(bytes) {
  mem += bytes;
  if (!(mem <= MEM_LIMIT) || memOver) { memOver = true; throw MEMORY; }
}
/** A string built by concatenation (+, +=, template literal, String.prototype.concat): a long one is charged
 * at its full length, the memory it takes once flattened (V8 builds ropes: a few bytes each until a comparison,
 * sort, search or property lookup flattens them). Short strings are free, so building text is linear. */
const LONG_STRING = 65536;
function strCharge(v) {
  if (typeof v === 'string' && v.length > LONG_STRING) { charge(v.length * 2); work(v.length >>> 6); }
  return v;
}
/** Work proportional to a size: one gas unit per 16 elements or characters. */
function work(n) { if (n >= 16) gasCharge(floor(n / 16)); }
let depthReset = function () {};
function link(get, set, chargeGas, resetDepth) {
  if (gasGet !== null) return;
  gasGet = get; gasSet = set; gasCharge = chargeGas; depthReset = resetDepth;
  set(GAS_LIMIT);
}
function lenOf(o) {
  if (isArray(o)) return o.length;
  if (o === null || o === undefined) return 0;
  const l = +o.length;
  return l > 0 ? min(floor(l), MAX_LEN) : 0;
}
function sizeOfIterable(x) {
  if (isArray(x) || typeof x === 'string') return x.length;
  if (x === null || typeof x !== 'object') return 0;
  try { return apply(mapSize, x, []); } catch {}
  try { return apply(setSize, x, []); } catch {}
  return 0;
}
function toStr(x) {
  if (typeof x === 'string') return x;
  if (typeof x === 'symbol') throw new TypeErrorC('Cannot convert a Symbol value to a string');
  return StringC(x);
}
/** Accounts a spread or array rest: the copied elements. */
function spreadAcc(x) {
  const n = sizeOfIterable(x);
  charge(n * 8); work(n);
  return x;
}
/** Accounts an object spread or object rest: the copied properties. */
function spreadObjAcc(x) {
  let n = 0;
  if (typeof x === 'string' || isArray(x)) n = x.length;
  else if ((typeof x === 'object' && x !== null) || typeof x === 'function') n = okeys(x).length;
  charge(n * 16); work(n);
  return x;
}
`;

const PRELUDE_TAIL = String.raw`
// ---- __host: realm functions closing over the host trampoline ----
const hostObj = {};
for (let i = 0; i < hostNames.length; i++) {
  const name = hostNames[i];
  if (typeof name !== 'string') continue;
  const idx = i;
  const fn = { [name](...args) {
    gasCharge(1);
    const call = [idx];
    for (let k = 0; k < args.length; k++) apply(arrayPush, call, [+args[k]]);
    const r = apply(hostCall, undefined, call);
    if (typeof r !== 'number') throw new ErrorC('__host.' + name + ' failed');
    if (r === Infinity) throw new RangeErrorC('Maximum call stack size exceeded');
    if (r !== r) throw new ErrorC('__host.' + name + ' failed');
    return r;
  } }[name];
  dp(hostObj, name, { value: fn, enumerable: true });
}
freeze(hostObj);

// ---- copy in: arguments rebuilt as realm objects (JSON semantics, never a host object) ----
const BAD_ARGS = freeze({});
function copyValue(e) {
  switch (typeof e) {
    case 'number': return isFiniteNum(e) ? e : null;
    case 'string': case 'boolean': return e;
    case 'undefined': case 'function': case 'symbol': return null;
    case 'object': if (e === null) return null; throw BAD_ARGS;
    default: throw BAD_ARGS;
  }
}
function copyIn(v, d) {
  if (d > 1000) throw BAD_ARGS;
  if (isArray(v)) {
    const n = v.length, out = [];
    for (let k = 0; k < n; k++) { const e = v[k]; apply(arrayPush, out, [typeof e === 'object' && e !== null ? copyIn(e, d + 1) : copyValue(e)]); }
    return out;
  }
  const o = { ...v };
  for (const k in o) {
    const e = o[k];
    switch (typeof e) {
      case 'object': if (e !== null) o[k] = copyIn(e, d + 1); break;
      case 'number': if (!isFiniteNum(e)) o[k] = null; break;
      case 'string': case 'boolean': case 'undefined': break;
      case 'function': case 'symbol': delete o[k]; break;
      default: throw BAD_ARGS;
    }
  }
  const syms = gos(o);
  for (let k = 0; k < syms.length; k++) delete o[syms[k]];
  return o;
}
function copyArgs(h) {
  const n = h.length, a = [];
  for (let k = 0; k < n; k++) { const v = h[k]; apply(arrayPush, a, [typeof v === 'object' && v !== null ? copyIn(v, 0) : v === undefined ? undefined : copyValue(v)]); }
  return a;
}

// ---- copy out: JSON text through the realm's own stringify, checked by a replacer (result-check.ts) ----
const NOT_PLAIN = [MapC.prototype, SetC.prototype, WeakMapC.prototype, WeakSetC.prototype, ErrorC.prototype, Symbol.prototype, getProto(0n)];
` + resultCheckSource({ stringCtor: 'StringC', stringify: 'jsonStringify', onVisit: 'if ((++outCount & 15) === 0) gasCharge(1);', push: 'apply(arrayPush, outStack, [value])' }) + String.raw`
/** Sets the status to ok or json; returns the primitive to hand back (null for json). */
function copyOut(r) {
  switch (typeof r) {
    case 'undefined': S[0] = ST.ok; return null;
    case 'boolean': S[0] = ST.ok; return r;
    case 'number': if (!isFiniteNum(r)) retFail('a non-finite number (' + StringC(r) + ')'); S[0] = ST.ok; return r === 0 ? 0 : r;
    case 'string':
      if (r.length + 2 > MAX_CHARS || (r.length * 6 + 2 > MAX_CHARS && jsonStringify(r).length > MAX_CHARS)) retFail('larger than ' + MAX_CHARS + ' characters of JSON');
      S[0] = ST.ok; return r;
    case 'object': break;
    default: retFail('a ' + typeof r);
  }
  if (r === null) { S[0] = ST.ok; return null; }
  const text = checkedJson(r);
  if (text === undefined) { S[0] = ST.ok; return null; }
  S[0] = ST.json; S[2] = text;
  return null;
}

// ---- errors: classified inside the realm, only primitive strings leave it ----
const MEMORY_MESSAGES = ['Invalid string length', 'Invalid array length', 'Array buffer allocation failed', 'Maximum BigInt size exceeded'];
function describe(e) {
  try {
    if (typeof e === 'symbol') return apply(symToString, e, []);
    if ((typeof e === 'object' && e !== null) || typeof e === 'function') {
      let isErr = false;
      try { isErr = e instanceof ErrorC; } catch {}
      if (isErr) {
        const name = toStr(e.name), message = toStr(e.message);
        return message === '' ? name : name + ': ' + message;
      }
      return toStr(e);
    }
    return StringC(e);
  } catch {
    return 'a thrown value that cannot be printed';
  }
}
function rangeMessage(e) {
  try {
    if (typeof e === 'object' && e !== null && getProto(e) === RangeErrorProto) {
      const d = gopd(e, 'message');
      if (d !== undefined && typeof d.value === 'string') return d.value;
    }
  } catch {}
  return null;
}
function settle(failed, e) {
  if (failed && !stackHit && e !== BUDGET && e !== MEMORY && isOverflow(e)) stackEnd(true);
  if (stackHit) {
    S[0] = ST.stack;
    S[2] = hostOverflow ? OVERFLOW + ' (the host stack; the program cannot be called again)' : 'calls nested deeper than ' + CALL_DEPTH;
    return;
  }
  if (gasGet() < 0) { S[0] = ST.budget; S[2] = 'more than ' + GAS_LIMIT + ' units'; return; }
  if (memOver) { S[0] = ST.memory; S[2] = 'more than ' + MEM_LIMIT + ' bytes allocated'; return; }
  if (!failed) return;
  if (e === RETURN) { S[0] = ST.return; S[2] = 'the result is ' + retDetail; return; }
  const m = rangeMessage(e);
  if (m === 'Maximum call stack size exceeded') { S[0] = ST.stack; S[2] = m; return; }
  for (let k = 0; k < MEMORY_MESSAGES.length; k++) if (m === MEMORY_MESSAGES[k]) { S[0] = ST.memory; S[2] = m; return; }
  const text = describe(e);
  if (gasGet() < 0) { S[0] = ST.budget; S[2] = 'more than ' + GAS_LIMIT + ' units'; return; }
  S[0] = ST.threw;
  S[2] = text.length > 500 ? apply(sSlice, text, [0, 500]) : text;
}
function finish() {
  const left = stackHit ? gasAtStack : gasGet();
  S[1] = left < 0 ? GAS_LIMIT : GAS_LIMIT - left;
  gasSet(0);
  S[3] = mem;
  mem = 0;
}

// ---- the host API ----
const S = [0, 0, '', 0];
let entries = [];
function boot(wrapper) {
  mem = 0; memOver = false; S[2] = '';
  try {
    const res = wrapper(oog, spreadAcc, spreadObjAcc, hostObj, link, strCharge, tooDeep, seeCatch, seeFinally);
    if (isArray(res)) entries = res;
    S[0] = ST.ok;
    settle(false, undefined);
  } catch (e) {
    if (gasGet === null) { S[0] = ST.threw; S[2] = 'the program did not start'; return; }
    settle(true, e);
  }
  finish();
}
function entryIsFunction(i) { return typeof entries[i] === 'function'; }
function invoke(i, hostArgs) {
  let args;
  try { args = copyArgs(hostArgs); } catch { S[0] = ST.badArgs; S[1] = 0; S[2] = ''; return null; }
  if (hostOverflow) { S[0] = ST.stack; S[1] = 0; S[2] = 'the program overflowed the host stack in an earlier call'; return null; }
  mem = 0; memOver = false; S[2] = ''; stackHit = false;
  gasSet(GAS_LIMIT); depthReset();
  let out = null;
  try {
    out = copyOut(apply(entries[i], undefined, args));
    settle(false, undefined);
  } catch (e) {
    out = null;
    settle(true, e);
  }
  finish();
  return S[0] === ST.ok ? out : null;
}

// ---- lock the global bindings, deep-freeze every reachable intrinsic ----
for (const k of ownKeys(G)) {
  const d = gopd(G, k);
  if (d !== undefined && hasOwn(d, 'value')) dp(G, k, { value: d.value, writable: false, enumerable: d.enumerable, configurable: false });
}
const api = freeze({ boot, entryIsFunction, invoke, status: S });
const seen = new WeakSetC();
const todo = [];
function reach(v) {
  if (((typeof v === 'object' && v !== null) || typeof v === 'function') && v !== G && v !== S && !apply(wsHas, seen, [v])) {
    apply(wsAdd, seen, [v]);
    apply(arrayPush, todo, [v]);
  }
}
for (let k = 0; k < roots.length; k++) reach(roots[k]);
for (const k of ownKeys(G)) { const d = gopd(G, k); if (d !== undefined) { reach(d.value); reach(d.get); reach(d.set); } }
reach(getProto(G));
reach(getProto(apply(arrayValues, [], [])));
reach(getProto(apply(StringProto[Symbol.iterator], '', [])));
reach(getProto(apply(MapC.prototype.entries, new MapC(), [])));
reach(getProto(apply(SetC.prototype.values, new SetC(), [])));
reach(getProto(function* () {}));
reach(getProto(async function () {}));
reach(getProto(async function* () {}));
reach(getProto(0n));
reach(hostObj); reach(api); reach(BUDGET); reach(MEMORY);
while (todo.length > 0) {
  const o = todo.pop();
  if (!FREEZE_CORE_PROTOTYPES && (o === ArrayProto || o === ObjectProto)) O.seal(o);
  else freeze(o);
  reach(getProto(o));
  const ks = ownKeys(o);
  for (let k = 0; k < ks.length; k++) {
    const d = gopd(o, ks[k]);
    if (d !== undefined) { reach(d.value); reach(d.get); reach(d.set); }
  }
}
return api;
`;

/**
 * Whether Array.prototype and Object.prototype are frozen like every other intrinsic (true) or only sealed
 * (false: no new properties, existing ones stay writable within the program's own realm). V8 treats a frozen
 * prototype as possibly holding read-only elements, so every store that appends to an array or fills a hole
 * (`a[a.length] = x`, `new Array(n)` then `a[i] = x`, `o[3] = x`) takes a slow path: about 50 ns per store
 * instead of 2 (sealed: about 8). `push`, `map`, literals and stores to existing elements are unaffected.
 */
export const FREEZE_CORE_PROTOTYPES = true;

/** The prelude as one function expression, to be evaluated in a fresh realm and called with {@link RealmSetup}'s arguments. */
export const PRELUDE_SOURCE =
  "(function (hostCall, hostNames, GAS_LIMIT, MEM_LIMIT, MAX_CHARS, MAX_DEPTH) {'use strict';" +
  `const FREEZE_CORE_PROTOTYPES = ${String(FREEZE_CORE_PROTOTYPES)}, CALL_DEPTH = ${String(MAX_CALL_DEPTH)};` +
  PRELUDE_HEAD + PRELUDE_BUILTINS + PRELUDE_TAIL + '\n})';
