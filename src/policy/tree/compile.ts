/**
 * Closures compiled once at parse: feature readers (a dotted path already split, its declared type fixed) and
 * predicate tests. They follow `readFeature`'s rules exactly — a missing value, or a value of another type,
 * reads as 0 / '' / false — but do no string splitting and allocate nothing per call.
 */
import type { FeatureEnv } from '../features.js';
import type { CompareOp, FeatureRef, Operand, Predicate, PredicateTest, Scalar } from './types.js';

type Obj = Record<string, unknown>;
type Reader<T> = (env: FeatureEnv) => T;

function rawReader(path: readonly string[]): Reader<unknown> {
  const segs = path.slice();
  if (segs.length === 1) {
    const a = segs[0]!;
    return (e) => e[a];
  }
  if (segs.length === 2) {
    const a = segs[0]!;
    const b = segs[1]!;
    return (e) => {
      const o = e[a];
      return o !== null && typeof o === 'object' ? (o as Obj)[b] : undefined;
    };
  }
  return (e) => {
    let v: unknown = e;
    for (let i = 0; i < segs.length; i++) {
      if (v === null || typeof v !== 'object') return undefined;
      v = (v as Obj)[segs[i]!];
    }
    return v;
  };
}

export function numberReader(path: readonly string[]): Reader<number> {
  if (path.length === 2) {
    const a = path[0]!;
    const b = path[1]!;
    return (e) => {
      const o = e[a];
      if (o === null || typeof o !== 'object') return 0;
      const v = (o as Obj)[b];
      return typeof v === 'number' ? v : 0;
    };
  }
  const r = rawReader(path);
  return (e) => {
    const v = r(e);
    return typeof v === 'number' ? v : 0;
  };
}

function stringReader(path: readonly string[]): Reader<string> {
  const r = rawReader(path);
  return (e) => {
    const v = r(e);
    return typeof v === 'string' ? v : '';
  };
}

function booleanReader(path: readonly string[]): Reader<boolean> {
  const r = rawReader(path);
  return (e) => r(e) === true;
}

/** A reader of any feature, by its declared type. */
export function scalarReader(f: FeatureRef): Reader<Scalar> {
  if (f.type === 'number') return numberReader(f.path);
  if (f.type === 'string') return stringReader(f.path);
  return booleanReader(f.path);
}

/** Lists longer than this are tested through a Set. */
const SET_THRESHOLD = 8;

function membership(read: Reader<Scalar>, values: readonly Scalar[], negate: boolean): PredicateTest {
  if (values.length > SET_THRESHOLD) {
    // Values are finite numbers, strings or booleans, so SameValueZero is `===` here.
    const set = new Set<Scalar>(values);
    return negate ? (e) => !set.has(read(e)) : (e) => set.has(read(e));
  }
  const vs = values.slice();
  const n = vs.length;
  const has = (v: Scalar): boolean => {
    for (let i = 0; i < n; i++) if (vs[i] === v) return true;
    return false;
  };
  return negate ? (e) => !has(read(e)) : (e) => has(read(e));
}

function numericConst(g: Reader<number>, op: CompareOp, c: number): PredicateTest {
  switch (op) {
    case '<': return (e) => g(e) < c;
    case '<=': return (e) => g(e) <= c;
    case '>': return (e) => g(e) > c;
    case '>=': return (e) => g(e) >= c;
    case '==': return (e) => g(e) === c;
    default: return (e) => g(e) !== c;
  }
}

function numericPair(g: Reader<number>, op: CompareOp, h: Reader<number>): PredicateTest {
  switch (op) {
    case '<': return (e) => g(e) < h(e);
    case '<=': return (e) => g(e) <= h(e);
    case '>': return (e) => g(e) > h(e);
    case '>=': return (e) => g(e) >= h(e);
    case '==': return (e) => g(e) === h(e);
    default: return (e) => g(e) !== h(e);
  }
}

/** The test of a comparison whose operator and operand were already checked against the feature's type. */
export function compileCompare(feature: FeatureRef, op: CompareOp, value: Operand): PredicateTest {
  if (value.kind === 'list') return membership(scalarReader(feature), value.values, op === 'not_in');
  if (feature.type === 'number') {
    const g = numberReader(feature.path);
    return value.kind === 'feature' ? numericPair(g, op, numberReader(value.feature.path)) : numericConst(g, op, value.value as number);
  }
  const g = scalarReader(feature);
  if (value.kind === 'feature') {
    const h = scalarReader(value.feature);
    return op === '==' ? (e) => g(e) === h(e) : (e) => g(e) !== h(e);
  }
  const c = value.value;
  return op === '==' ? (e) => g(e) === c : (e) => g(e) !== c;
}

export function compileAll(terms: readonly Predicate[]): PredicateTest {
  const ts = terms.map((t) => t.test);
  const n = ts.length;
  if (n === 1) return ts[0]!;
  if (n === 2) {
    const x = ts[0]!;
    const y = ts[1]!;
    return (e) => x(e) && y(e);
  }
  return (e) => {
    for (let i = 0; i < n; i++) if (!ts[i]!(e)) return false;
    return true;
  };
}

export function compileAny(terms: readonly Predicate[]): PredicateTest {
  const ts = terms.map((t) => t.test);
  const n = ts.length;
  if (n === 1) return ts[0]!;
  if (n === 2) {
    const x = ts[0]!;
    const y = ts[1]!;
    return (e) => x(e) || y(e);
  }
  return (e) => {
    for (let i = 0; i < n; i++) if (ts[i]!(e)) return true;
    return false;
  };
}

export function compileNot(term: Predicate): PredicateTest {
  const t = term.test;
  return (e) => !t(e);
}
