/**
 * The trusted prelude of the `strict` engine: JavaScript source evaluated in each fresh QuickJS context before
 * any policy code (what it locks down and charges: strict.ts's module comment). It returns the private API
 * `[prep, invoke, describe, grow, buffer]` that only the host reaches: argument decoding (strict-marshal.ts
 * writes what `prep` reads), the call, the result check (result-check.ts, shared with the fast engine) and
 * error classification (only strings leave the context).
 */
import { MAX_RESULT_CHARS, MAX_RESULT_DEPTH } from './types.js';
import { resultCheckSource } from './result-check.js';

/** Longest thrown-value message kept in an error's detail. */
export const MAX_DETAIL_CHARS = 200;


/**
 * Evaluates to `setup(hostNamesJson, ...hostTrampolines)`, which locks the context down and returns the
 * private API `[prep, invoke, describe, grow, buffer]` (reachable from the host only).
 */
export const PRELUDE = String.raw`(function () {
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

  // ---- results (result-check.ts, shared with the fast engine) ----
  ${resultCheckSource({ stringCtor: 'Str', stringify: 'stringify', onVisit: '', push: 'outStack[n] = value' })}
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
    let text;
    try {
      text = checkedJson(r);
    } catch (e) {
      return e === RETURN ? outcome('return', 'the result is ' + retDetail) : describe(e);
    }
    return text === undefined ? null : text;
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

