/**
 * Part of the `fast` engine's prelude (fast-prelude.ts): removes the globals the sandbox does not provide and
 * replaces the built-ins whose allocation or running time is proportional to a size with accounted wrappers.
 * It is spliced into the prelude function and uses its captured intrinsics (`apply`, `charge`, `work`, ...).
 *
 * Accounting: `charge(bytes)` adds to the call's memory account (about 8 bytes per array element, 2 per
 * string character, more per object property or map entry); `work(n)` charges one gas unit per 16 elements
 * or characters a built-in walks. Sizes are computed before the work where they are known (so the call
 * fails before the allocation), after it where only the result tells (filter, flat, split with a function,
 * Object.keys, ...). fast.ts's module comment lists what is and is not covered.
 *
 * `Array.prototype.constructor` is replaced by the accounted Array (so no realm object reaches the intrinsic
 * one). That clears V8's isolate-wide species protector, which slows species-creating array built-ins
 * (map, filter, slice, concat) on small arrays about 10x in the whole process; a policy could always clear
 * it with a failing write, and a whole simulated run shows no visible cost. Deliberately NOT replaced, for
 * the same protectors: the `Symbol.iterator` methods, the iterators' `next` methods and the `Symbol.species`
 * getters.
 */
export const PRELUDE_BUILTINS = String.raw`
// ---- globals: keep an allow-list, remember everything for the deep freeze ----
const roots = [];
const KEEP = ['Object', 'Function', 'Array', 'Number', 'parseFloat', 'parseInt', 'Infinity', 'NaN', 'undefined', 'Boolean',
  'String', 'Symbol', 'Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError', 'globalThis',
  'JSON', 'Math', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Proxy', 'Reflect', 'decodeURI', 'decodeURIComponent', 'encodeURI',
  'encodeURIComponent', 'eval', 'isFinite', 'isNaN'];
for (const k of ownKeys(G)) {
  const d = gopd(G, k);
  if (d !== undefined) { roots[roots.length] = d.value; roots[roots.length] = d.get; roots[roots.length] = d.set; }
  let keep = false;
  for (let j = 0; j < KEEP.length; j++) if (KEEP[j] === k) keep = true;
  if (!keep) {
    Reflect.deleteProperty(G, k);
    // A non-configurable global (e.g. gc under --expose-gc) is made undefined instead, or the realm is refused.
    if (hasOwn(G, k)) dp(G, k, { value: undefined, writable: false });
    if (G[k] !== undefined) throw new ErrorC('cannot remove the global ' + StringC(k));
  }
}
delete Math.random;
if (hasOwn(Math, 'random')) throw new ErrorC('cannot remove Math.random');
/** The global Symbol without Symbol.for/keyFor (a registry shared by the whole process) and without
 * Symbol.isConcatSpreadable (setting it on any object, even failing, clears a V8 protector process-wide). */
{
  const SymbolC = Symbol;
  const SymbolW = { Symbol(description) { return description === undefined ? SymbolC() : SymbolC(toStr(description)); } }.Symbol;
  for (const k of ownKeys(SymbolC)) {
    if (k === 'for' || k === 'keyFor' || k === 'isConcatSpreadable' || k === 'length' || k === 'name') continue;
    dp(SymbolW, k, gopd(SymbolC, k));
  }
  dp(SymbolC.prototype, 'constructor', { value: SymbolW });
  dp(G, 'Symbol', { value: SymbolW });
}

// ---- helpers to replace a method in place (same name and length, not constructible) ----
function wrapM(obj, name, impl) {
  const orig = obj[name];
  if (typeof orig !== 'function') return;
  const f = { [name](...a) { return impl(this, a, orig); } }[name];
  dp(f, 'length', { value: orig.length });
  dp(obj, name, { value: f });
}
function rel(x, len, dflt) {
  if (x === undefined) return dflt;
  let v = trunc(+x);
  if (v !== v) v = 0;
  return v < 0 ? max(len + v, 0) : min(v, len);
}
function strSelf(self, name) {
  if (self === null || self === undefined) throw new TypeErrorC('String.prototype.' + name + ' called on null or undefined');
  return toStr(self);
}

// ---- Array ----
const AP = ArrayProto;
for (const name of ['forEach', 'every', 'some', 'find', 'findIndex', 'findLast', 'findLastIndex', 'reduce', 'reduceRight',
  'indexOf', 'lastIndexOf', 'includes', 'reverse', 'copyWithin', 'shift']) {
  wrapM(AP, name, (self, a, orig) => { work(lenOf(self)); return apply(orig, self, a); });
}
wrapM(AP, 'map', (self, a, orig) => { const n = lenOf(self); charge(n * 8); work(n); return apply(orig, self, a); });
for (const name of ['filter', 'flat', 'flatMap']) {
  wrapM(AP, name, (self, a, orig) => { work(lenOf(self)); const r = apply(orig, self, a); charge(r.length * 8); work(r.length); return r; });
}
wrapM(AP, 'slice', (self, a, orig) => {
  const n = lenOf(self), c = max(0, rel(a[1], n, n) - rel(a[0], n, 0));
  charge(c * 8); work(c);
  return apply(orig, self, a);
});
wrapM(AP, 'fill', (self, a, orig) => {
  const n = lenOf(self), c = max(0, rel(a[2], n, n) - rel(a[1], n, 0));
  charge(c * 8); work(c);
  return apply(orig, self, a);
});
wrapM(AP, 'splice', (self, a, orig) => {
  work(lenOf(self)); charge(max(0, a.length - 2) * 8);
  const r = apply(orig, self, a);
  charge(r.length * 8);
  return r;
});
wrapM(AP, 'unshift', (self, a, orig) => { work(lenOf(self)); charge(a.length * 8); return apply(orig, self, a); });
wrapM(AP, 'concat', (self, a, orig) => {
  let n = lenOf(self);
  for (let k = 0; k < a.length; k++) { const it = a[k]; n += isArray(it) ? it.length : 1; }
  charge(n * 8); work(n);
  return apply(orig, self, a);
});
wrapM(AP, 'join', (self, a, orig) => {
  const n = lenOf(self), sep = a.length === 0 || a[0] === undefined ? ',' : toStr(a[0]);
  charge(max(0, n - 1) * sep.length * 2); work(n);
  const r = apply(orig, self, [sep]);
  charge(r.length * 2);
  return r;
});
wrapM(AP, 'toLocaleString', (self, a, orig) => {
  work(lenOf(self));
  const r = apply(orig, self, []);
  charge(r.length * 2);
  return r;
});
for (const name of ['sort', 'toSorted']) {
  wrapM(AP, name, (self, a, orig) => {
    const n = lenOf(self);
    work(n * max(1, ceil(log2(n + 1))));
    if (name === 'toSorted') charge(n * 8);
    return apply(orig, self, a);
  });
}
for (const name of ['toReversed', 'toSpliced', 'with']) {
  wrapM(AP, name, (self, a, orig) => { const n = lenOf(self) + a.length; charge(n * 8); work(n); return apply(orig, self, a); });
}
wrapM(ArrayC, 'from', (self, a, orig) => {
  const items = a[0];
  let n = sizeOfIterable(items);
  if (n === 0 && items !== null && typeof items === 'object') n = lenOf(items);
  charge(n * 8); work(n);
  return apply(orig, self === ArrayW ? ArrayC : self, a);
});
wrapM(ArrayC, 'of', (self, a, orig) => { charge(a.length * 8); return apply(orig, self === ArrayW ? ArrayC : self, a); });
/** The global Array: accounts Array(n); Array.prototype.constructor stays the intrinsic (see above). */
const ArrayW = function Array(...a) {
  const n = a.length === 1 && typeof a[0] === 'number' ? a[0] : a.length;
  if (n >= 0 && n <= 4294967295) { charge(n * 8); work(n); }
  if (new.target === undefined || new.target === ArrayW) return apply(ArrayC, undefined, a);
  return construct(ArrayC, a, new.target);
};
dp(ArrayW, 'length', { value: 1 });
dp(ArrayW, 'prototype', { value: ArrayProto, writable: false });
for (const name of ['isArray', 'from', 'of']) dp(ArrayW, name, { value: ArrayC[name], writable: true, configurable: true });
dp(G, 'Array', { value: ArrayW });
// Literal-reached arrays see the accounted constructor too ([].constructor, Object.getPrototypeOf(x).constructor,
// Reflect.construct on either): the intrinsic Array is then reachable from no realm object. This clears V8's
// isolate-wide Array species protector (a policy could always clear it with a failing write); measured: no
// visible cost on a whole simulated run (the host's hot paths do not use species-creating array built-ins).
dp(ArrayProto, 'constructor', { value: ArrayW });

// ---- built-ins of newer V8 versions (Node 22+), when present ----
Reflect.deleteProperty(ArrayC, 'fromAsync'); // returns a Promise: work that would outlive the call
if (hasOwn(ArrayC, 'fromAsync')) throw new ErrorC('cannot remove Array.fromAsync');
for (const name of ['union', 'intersection', 'difference', 'symmetricDifference']) {
  wrapM(SetC.prototype, name, (self, a, orig) => { const r = apply(orig, self, a); const n = apply(setSize, r, []); charge(n * 32); work(n); return r; });
}
for (const [obj, name] of [[O, 'groupBy'], [MapC, 'groupBy']]) {
  wrapM(obj, name, (self, a, orig) => { const n = sizeOfIterable(a[0]); charge(n * 48); work(n); return apply(orig, self, a); });
}
wrapM(getProto(getProto(apply(arrayValues, [], []))), 'toArray', (self, a, orig) => { const r = apply(orig, self, a); charge(r.length * 8); work(r.length); return r; });

// ---- Map, Set, WeakMap, WeakSet: constructors from iterables ----
function collection(C, name) {
  const W = function (iterable) {
    if (new.target === undefined) throw new TypeErrorC('Constructor ' + name + " requires 'new'");
    const n = iterable === undefined || iterable === null ? 0 : sizeOfIterable(iterable);
    charge(n * 32); work(n);
    return construct(C, iterable === undefined ? [] : [iterable], new.target === W ? C : new.target);
  };
  for (const k of ownKeys(C)) if (k !== 'length' && k !== 'name' && k !== 'prototype') dp(W, k, gopd(C, k));
  dp(W, 'name', { value: name });
  dp(W, 'length', { value: 0 });
  dp(W, 'prototype', { value: C.prototype, writable: false });
  dp(C.prototype, 'constructor', { value: W });
  dp(G, name, { value: W });
}
collection(MapC, 'Map');
collection(SetC, 'Set');
collection(WeakMapC, 'WeakMap');
collection(WeakSetC, 'WeakSet');

// ---- Object and Reflect: results sized by a property count ----
for (const [obj, name, per] of [[O, 'keys', 24], [O, 'values', 8], [O, 'entries', 56], [O, 'getOwnPropertyNames', 24],
  [O, 'getOwnPropertySymbols', 8], [Reflect, 'ownKeys', 24]]) {
  wrapM(obj, name, (self, a, orig) => { const r = apply(orig, self, a); charge(r.length * per); work(r.length); return r; });
}
wrapM(O, 'getOwnPropertyDescriptors', (self, a, orig) => { const r = apply(orig, self, a); const n = ownKeys(r).length; charge(n * 80); work(n); return r; });
/** Property descriptors: Object.create(p, ds) and Object.defineProperties(o, ds) walk and allocate per key. */
function descriptorCount(ds) {
  if (ds === undefined || ds === null || (typeof ds !== 'object' && typeof ds !== 'function')) return 0;
  return ownKeys(ds).length;
}
// About 2 us per descriptor in V8 (a dictionary-mode object): charged 256 bytes and one gas unit each.
wrapM(O, 'create', (self, a, orig) => { const n = descriptorCount(a[1]); charge(n * 256); gasCharge(n); return apply(orig, self, a); });
wrapM(O, 'defineProperties', (self, a, orig) => { const n = descriptorCount(a[1]); charge(n * 256); gasCharge(n); return apply(orig, self, a); });
wrapM(O, 'fromEntries', (self, a, orig) => { const n = sizeOfIterable(a[0]); charge(n * 32); work(n); return apply(orig, self, a); });
wrapM(O, 'assign', (self, a, orig) => {
  let n = 0;
  for (let k = 1; k < a.length; k++) {
    const s = a[k];
    if (typeof s === 'string' || isArray(s)) n += s.length;
    else if ((typeof s === 'object' && s !== null) || typeof s === 'function') n += okeys(s).length;
  }
  charge(n * 16); work(n);
  return apply(orig, self, a);
});

// ---- JSON ----
wrapM(JSON, 'parse', (self, a, orig) => {
  const s = toStr(a[0]);
  charge(s.length * 8); work(s.length);
  return apply(orig, self, a.length > 1 ? [s, a[1]] : [s]);
});
wrapM(JSON, 'stringify', (self, a, orig) => {
  const replacer = a[1];
  let userFn = null, allow = null;
  if (typeof replacer === 'function') userFn = replacer;
  else if (isArray(replacer)) {
    allow = new SetC();
    const n = replacer.length;
    work(n);
    for (let k = 0; k < n; k++) {
      const it = replacer[k];
      if (typeof it === 'string' || typeof it === 'number' || (typeof it === 'object' && it !== null)) apply(setAdd, allow, [toStr(it)]);
    }
  }
  let count = 0;
  const rep = function (key, val) {
    if (allow !== null && key !== '' && !isArray(this) && !apply(setHas, allow, [key])) return undefined;
    if (userFn !== null) val = apply(userFn, this, [key, val]);
    if ((++count & 15) === 0) gasCharge(1);
    charge((key.length + (typeof val === 'string' ? val.length : 8)) * 2);
    return val;
  };
  return apply(orig, self, [a[0], rep, a[2]]);
});

// ---- String: string-only pattern methods (no RegExp anywhere), accounted copies ----
const SP = StringProto;
for (const name of ['indexOf', 'lastIndexOf', 'includes', 'trim', 'trimStart', 'trimEnd', 'isWellFormed']) {
  wrapM(SP, name, (self, a, orig) => { const s = strSelf(self, name); work(s.length); return apply(orig, s, a); });
}
for (const name of ['toUpperCase', 'toLowerCase', 'normalize', 'toWellFormed']) {
  wrapM(SP, name, (self, a, orig) => { const s = strSelf(self, name); charge(s.length * 2); work(s.length); return apply(orig, s, a); });
}
const sUpper = SP.toUpperCase, sLower = SP.toLowerCase;
wrapM(SP, 'toLocaleUpperCase', (self) => apply(sUpper, strSelf(self, 'toLocaleUpperCase'), []));
wrapM(SP, 'toLocaleLowerCase', (self) => apply(sLower, strSelf(self, 'toLocaleLowerCase'), []));
wrapM(SP, 'localeCompare', (self, a, orig) => {
  const s = strSelf(self, 'localeCompare'), t = toStr(a[0]);
  work(s.length + t.length);
  return apply(orig, s, [t, 'en-US']);
});
for (const name of ['padStart', 'padEnd']) {
  wrapM(SP, name, (self, a, orig) => {
    const s = strSelf(self, name);
    let m = +a[0];
    if (!(m > 0)) m = 0;
    charge(max(0, m - s.length) * 2); work(m);
    return apply(orig, s, [m, a[1]]);
  });
}
wrapM(SP, 'concat', (self, a, orig) => {
  const r = apply(orig, strSelf(self, 'concat'), a);
  strCharge(r);
  return r;
});
wrapM(SP, 'repeat', (self, a, orig) => {
  const s = strSelf(self, 'repeat');
  let c = trunc(+a[0]);
  if (c !== c) c = 0;
  if (c >= 0 && c !== Infinity) { charge(s.length * c * 2); work(s.length * c); }
  return apply(orig, s, [c]);
});
wrapM(SP, 'split', (self, a, orig) => {
  const s = strSelf(self, 'split');
  work(s.length);
  if (a[0] === undefined) { charge(8); return apply(orig, s, [undefined, a[1]]); }
  const q = toStr(a[0]);
  let bound = q.length === 0 ? s.length : floor(s.length / q.length) + 1;
  if (a[1] !== undefined) bound = min(bound, a[1] >>> 0);
  charge(bound * 8 + s.length * 2);
  return apply(orig, s, [q, a[1]]);
});
function countOf(s, q) {
  if (q.length === 0) return s.length + 1;
  let n = 0;
  for (let i = apply(sIndexOf, s, [q]); i >= 0; i = apply(sIndexOf, s, [q, i + q.length])) n++;
  return n;
}
for (const name of ['replace', 'replaceAll']) {
  wrapM(SP, name, (self, a, orig) => {
    const s = strSelf(self, name), q = toStr(a[0]);
    work(s.length);
    let rep = a[1];
    if (typeof rep === 'function') {
      const r = apply(orig, s, [q, rep]);
      charge(r.length * 2);
      return r;
    }
    rep = toStr(rep);
    const n = name === 'replaceAll' ? countOf(s, q) : apply(sIndexOf, s, [q]) >= 0 ? 1 : 0;
    const per = apply(sIndexOf, rep, ['$']) >= 0 ? rep.length * (s.length + q.length + 1) : rep.length;
    charge((s.length + n * per) * 2); work(n * rep.length);
    return apply(orig, s, [q, rep]);
  });
}
function literalMatch(s, q, i) {
  const m = [q];
  m.index = i; m.input = s; m.groups = undefined;
  return m;
}
wrapM(SP, 'match', (self, a) => {
  const s = strSelf(self, 'match'), q = a[0] === undefined ? '' : toStr(a[0]);
  work(s.length);
  const i = apply(sIndexOf, s, [q]);
  return i < 0 ? null : literalMatch(s, q, i);
});
wrapM(SP, 'matchAll', (self, a) => {
  const s = strSelf(self, 'matchAll'), q = a[0] === undefined ? '' : toStr(a[0]);
  work(s.length);
  const out = [];
  for (let i = apply(sIndexOf, s, [q]); i >= 0; i = apply(sIndexOf, s, [q, i + max(1, q.length)])) {
    charge(64);
    apply(arrayPush, out, [literalMatch(s, q, i)]);
    if (i >= s.length) break;
  }
  return apply(arrayValues, out, []);
});
wrapM(SP, 'search', (self, a) => {
  const s = strSelf(self, 'search');
  work(s.length);
  return apply(sIndexOf, s, [a[0] === undefined ? '' : toStr(a[0])]);
});

// ---- locale-dependent conversions pinned to one locale (the host's default locale must not leak in) ----
wrapM(Number.prototype, 'toLocaleString', (self, a, orig) => apply(orig, self, ['en-US']));
wrapM(getProto(0n), 'toLocaleString', (self, a, orig) => apply(orig, self, ['en-US']));

// ---- URI coding: output up to 9x its input ----
for (const name of ['encodeURI', 'encodeURIComponent', 'decodeURI', 'decodeURIComponent']) {
  const orig = G[name];
  const f = { [name](x) { const s = toStr(x); work(s.length); const r = orig(s); charge(r.length * 2); return r; } }[name];
  dp(G, name, { value: f });
}

// ---- the override mistake: assigning e.g. obj.toString or err.name must still create an own property
// on an ordinary object even though the prototype's property is frozen; these become accessors ----
function enable(obj, name) {
  const d = gopd(obj, name);
  if (d === undefined || !hasOwn(d, 'value')) return;
  const value = d.value;
  dp(obj, name, {
    get: { [name]() { return value; } }[name],
    set: { [name](v) {
      if (this === obj) throw new TypeErrorC("Cannot assign to read only property '" + name + "' of a frozen prototype");
      dp(this, name, { value: v, writable: true, enumerable: true, configurable: true });
    } }[name],
    enumerable: d.enumerable,
    configurable: true,
  });
}
for (const name of ['constructor', 'toString', 'valueOf', 'toLocaleString']) enable(ObjectProto, name);
for (const name of ['name', 'message', 'toString']) enable(ErrorC.prototype, name);
`;
