/**
 * The in-sandbox result checker, one fragment of trusted JavaScript source shared by both engines' preludes
 * (fast-prelude.ts, strict-prelude.ts). It runs inside the policy's realm, after a call returns, and decides
 * whether the value may leave as JSON text: plain data only (arrays and objects whose prototype chain holds no
 * Map, Set, WeakMap, WeakSet, Error, Symbol or BigInt prototype), no cycle, at most MAX_DEPTH levels, finite
 * numbers, no function/symbol/bigint, and at most MAX_CHARS characters of JSON — counted while the value is
 * walked, so an exponential shared-subtree object is refused before its text is built.
 *
 * It is text because it runs in another realm and closes over nothing of the host. The enclosing prelude
 * provides, captured before any policy code ran: `freeze`, `getProto`, `isArray`, `isFiniteNum`, `ObjectProto`,
 * `NOT_PLAIN` (the prototypes that are not plain data, as that realm reaches them), `MAX_CHARS`, `MAX_DEPTH`.
 * The engine names its String and JSON.stringify bindings and gives two hooks: `onVisit` (source run at every
 * visited value: the fast engine charges one gas unit per 16, the strict engine's interpreter already polls at
 * each replacer call) and `push` (how a value is appended to the walk's stack: the fast engine's frozen
 * Array.prototype makes an indexed append slow, so it calls a captured `push`).
 *
 * It defines `RETURN` (the sentinel thrown for a refused result), `retDetail` (why, to be prefixed with
 * "the result is "), `retFail(detail)`, `plain(v)`, `replacer(key, value)` and `checkedJson(value)` (the JSON
 * text of an object or string result, or undefined; throws RETURN when refused). The escape and result tests of
 * test/policies and src/sandbox/sandbox.contract.test.ts run against both engines.
 */
export interface ResultCheckHooks {
  /** The realm's String constructor, as the prelude captured it. */
  readonly stringCtor: string;
  /** The realm's JSON.stringify, as the prelude captured it. */
  readonly stringify: string;
  /** Statement(s) run at each visited value (may charge the budget). */
  readonly onVisit: string;
  /** An expression appending `value` to the array `outStack`. */
  readonly push: string;
}

export function resultCheckSource(h: ResultCheckHooks): string {
  return String.raw`
const RETURN = freeze({});
let retDetail = '';
const outStack = [];
let outCount = 0, outChars = 0;
function retFail(d) { retDetail = d; throw RETURN; }
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
  let n = outStack.length;
  while (n > 0 && outStack[n - 1] !== holder) n--;
  outStack.length = n;
  ${h.onVisit}
  outChars += key.length + 2;
  switch (typeof value) {
    case 'string': outChars += value.length + 2; break;
    case 'number': if (!isFiniteNum(value)) retFail('a non-finite number (' + ${h.stringCtor}(value) + ')'); outChars += 8; break;
    case 'boolean': case 'undefined': outChars += 5; break;
    case 'object':
      if (value === null) { outChars += 4; break; }
      for (let k = 0; k < n; k++) if (outStack[k] === value) retFail('a cyclic structure');
      if (n >= MAX_DEPTH) retFail('nested deeper than ' + MAX_DEPTH + ' levels');
      if (!plain(value)) retFail('an object that is not plain data');
      ${h.push}; outChars += 2; break;
    default: retFail('a ' + typeof value);
  }
  if (outChars > MAX_CHARS) retFail('larger than ' + MAX_CHARS + ' characters of JSON');
  return value;
}
function checkedJson(r) {
  outStack.length = 0; outCount = 0; outChars = 0;
  let text;
  try { text = ${h.stringify}(r, replacer); } finally { outStack.length = 0; }
  if (text !== undefined && text.length > MAX_CHARS) retFail('larger than ' + MAX_CHARS + ' characters of JSON');
  return text;
}
`;
}
