/**
 * Checks specific to the `fast` engine (the shared contract is sandbox.contract.test.ts): the source rewrite
 * (gas injection in every kind of function and loop, forbidden constructs), the memory account of spreads and
 * accounted built-ins, value copying, host functions and the realm's hardening.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { fastEngine } from './fast.js';
import { GAS_CHECK, rewriteSource } from './fast-rewrite.js';
import { SandboxError, type SandboxEngine, type SandboxErrorKind, type SandboxOptions } from './types.js';

let engine: SandboxEngine;
beforeAll(async () => {
  engine = await fastEngine();
});

const LIMITS = { instructions: 100_000, memoryBytes: 1_000_000 };
const compile = (source: string, opts: Partial<SandboxOptions> = {}) => engine.compile(source, { entrypoints: ['f'], limits: LIMITS, ...opts });
const run = (body: string, ...args: unknown[]) => compile(`function f(x, y) { ${body} }`).call('f', args);
/** Result and gas of one call. */
const measure = (source: string, ...args: unknown[]) => {
  const p = compile(source);
  const value = p.call('f', args);
  return { value, gas: p.stats().lastInstructions };
};
function kindOf(fn: () => unknown): SandboxErrorKind {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SandboxError);
    return (e as SandboxError).kind;
  }
  throw new Error('expected a SandboxError');
}

describe('fast engine: rewrite', () => {
  it('keeps line numbers and charges every loop iteration and function entry', () => {
    const { code } = rewriteSource('function f() {\n  while (a) b();\n}\n');
    expect(code.split('\n')).toHaveLength(4);
    expect(code).toContain(`{${GAS_CHECK}`);
    expect(measure('function f(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }', 10)).toEqual({ value: 45, gas: 11 });
    expect(measure('function f() { return [1, 2, 3].map((v) => v * 2); }')).toEqual({ value: [2, 4, 6], gas: 4 });
  });
  it('non-block loop bodies, labels with continue, do-while, for-in and for-of', () => {
    expect(run('let n = x; while (n > 0) n--; return n;', 5)).toBe(0);
    expect(run('let n = 0; do n++; while (n < 3); return n;')).toBe(3);
    expect(run('let c = 0; outer: for (let i = 0; i < 10; i++) { for (let j = 0; j < 10; j++) { if (j === 2) continue outer; c++; } } return c;')).toBe(20);
    expect(run('let c = 0; a: for (const k in { p: 1, q: 2 }) b: for (const v of [1, 2, 3]) { if (v === 2) continue a; c++; } return c;')).toBe(2);
    expect(run('let s = ""; for (const k in x) s += k; for (const v of "ab") s += v; return s;', { p: 1, q: 2 })).toBe('pqab');
    expect(kindOf(() => run('a: for (;;) continue a;'))).toBe('budget');
    expect(kindOf(() => run('for (;;);'))).toBe('budget');
  });
  it('arrow expression bodies: object literals, nested arrows, sequences, trailing comments', () => {
    expect(run('const g = () => ({ a: 1 }); return g();')).toEqual({ a: 1 });
    expect(run('const add = (a) => (b) => a + b; return add(1)(2);')).toBe(3);
    expect(run('let k = 0; const g = () => (k++, k * 10); return g() + g();')).toBe(30);
    expect(compile('const g = (v) => v * 2 // trailing\nfunction f(x) { return g(x); } // end').call('f', [4])).toBe(8);
    expect(kindOf(() => run('const r = (n) => r(n + 1); return r(0);'))).toBe('stack');
  });
  it('getters, setters, class members, static blocks, default parameters, shorthand methods', () => {
    const src = `
      class A {
        #v = 1;
        static made = 0;
        static { A.made = 10; }
        constructor(v = 2) { this.#v = v; }
        get v() { return this.#v; }
        set v(n) { this.#v = n; }
        twice() { return this.#v * 2; }
        static of(n) { return new A(n); }
      }
      const o = { n: 1, inc() { return ++this.n; }, get dbl() { return this.n * 2; }, set dbl(v) { this.n = v / 2; } };
      function f(a = A.of(3), b = a.twice()) { o.inc(); o.dbl = 8; const x = new A(); x.v = 5; return [a.v, b, o.dbl, x.twice(), A.made]; }`;
    expect(compile(src).call('f', [])).toEqual([3, 6, 8, 10, 10]);
    expect(kindOf(() => run('const o = { set v(n) { for (;;) {} } }; o.v = 1;'))).toBe('budget');
    expect(kindOf(() => run('class C { static { } m() { while (true) {} } } new C().m();'))).toBe('budget');
    expect(kindOf(() => run('function g(a = g()) { return a; } return g();'))).toBe('stack');
  });
  it('spreads and rests keep their meaning', () => {
    expect(run('const a = [1, 2]; return [...a, ...[3], ...new Set([4]), ...new Map([[5, 6]]).keys()];')).toEqual([1, 2, 3, 4, 5]);
    expect(run('return Math.max(...x, ...[9]);', [1, 5])).toBe(9);
    expect(run('return { ...x, b: 2, ..."hi" };', { a: 1 })).toEqual({ a: 1, b: 2, 0: 'h', 1: 'i' });
    expect(run('const [a, ...r] = x; const { p, ...q } = { p: 1, q: 2 }; let s, t; [s, ...t] = r; return [a, r, p, q, s, t];', [1, 2, 3])).toEqual([1, [2, 3], 1, { q: 2 }, 2, [3]]);
    expect(run('const g = (...a) => a.length; return [g(...x), x?.at?.(...[0]), new Array(...[2]).length];', [1, 2])).toEqual([2, 1, 2]);
  });
});

describe('fast engine: forbidden constructs', () => {
  const cases: [string, readonly SandboxErrorKind[]][] = [
    ['async function f() {}', ['forbidden']],
    ['const g = async () => 1; function f() {}', ['forbidden']],
    ['const o = { async m() {} }; function f() {}', ['forbidden']],
    ['function* f() {}', ['forbidden']],
    ['class C { *m() {} } function f() {}', ['forbidden']],
    ['function f() { return await 1; }', ['syntax', 'forbidden']],
    ['function f() { return /a+/.test("a"); }', ['forbidden']],
    ['function f() { return import("fs"); }', ['forbidden']],
    ['function f() { return import.meta; }', ['syntax', 'forbidden']],
    ['function f(o) { with (o) { return a; } }', ['forbidden']],
    ['function f() { debugger; }', ['forbidden']],
    ['export function f() {}', ['syntax']],
    ['function f() { return __g; }', ['forbidden']],
    ['function f() { let __x = 1; return __x; }', ['forbidden']],
    ['function f() { const __o = 1; return { __o }; }', ['forbidden']],
    ['function f() { return 010; }', ['syntax']],
    ['function f() { delete f; }', ['syntax']],
    ['function f( {', ['syntax']],
  ];
  for (const [src, kinds] of cases) {
    it(src, () => expect(kinds).toContain(kindOf(() => compile(src))));
  }
  it('__ names that are not references, and __host, are allowed', () => {
    expect(compile('function f() { const o = { __x: 1, __proto__: null }; o.__y = 2; const __host = 3; return [o.__x, o.__y, __host]; }').call('f', [])).toEqual([1, 2, 3]);
  });
  it('reports where the construct is', () => {
    try {
      compile('function f() {\n  return /x/;\n}');
    } catch (e) {
      expect((e as SandboxError).detail).toContain('line 2');
    }
  });
  it('entry points must be plain identifiers declared at the top level', () => {
    expect(kindOf(() => compile('function f() {}', { entrypoints: ['f', 'no pe'] }))).toBe('entrypoint');
    expect(kindOf(() => compile('function f() {}', { entrypoints: ['Object'] }))).toBe('entrypoint');
    expect(kindOf(() => compile('{ function f() {} }'))).toBe('entrypoint');
    expect(compile('const f = (x) => x + 1;').call('f', [1])).toBe(2);
    expect(kindOf(() => compile('function f() {}').call('g', []))).toBe('entrypoint');
  });
});

describe('fast engine: memory account', () => {
  const SMALL = { instructions: 1_000_000, memoryBytes: 100_000 };
  const mem = (body: string) => () => compile(`function f() { ${body} }`, { limits: SMALL }).call('f', []);
  it('charges spreads, rests and copies against the per-call budget', () => {
    expect(mem('const a = new Array(5000).fill(0); return a.length;')()).toBe(5000);
    expect(kindOf(mem('const a = new Array(5000).fill(0); return [...a, ...a].length;'))).toBe('memory');
    expect(kindOf(mem('const a = new Array(5000).fill(0); const g = (...r) => r.length; return g(...a) + g(...a);'))).toBe('memory');
    expect(kindOf(mem('const a = new Array(6000).fill(0); const [h, ...r] = a; return r.length;'))).toBe('memory');
    expect(kindOf(mem('const o = Object.fromEntries(new Array(3000).fill(0).map((_, i) => [i, i])); return Object.keys({ ...o }).length;'))).toBe('memory');
    expect(kindOf(mem('return Array.from({ length: 20000 }).length;'))).toBe('memory');
    expect(kindOf(mem('return "ab".padStart(60000).length;'))).toBe('memory');
    expect(kindOf(mem('return "a,".repeat(10000).split(",").length;'))).toBe('memory');
    expect(kindOf(mem('return "a".repeat(20000).replaceAll("a", "bb").length;'))).toBe('memory');
    expect(kindOf(mem('return new Set(new Array(5000).fill(0).map((_, i) => i)).size;'))).toBe('memory');
    expect(kindOf(mem('return JSON.parse("[" + "0,".repeat(20000) + "0]").length;'))).toBe('memory');
  });
  it('the account is per call', () => {
    const p = compile('let keep = []; function f() { keep = new Array(5000).fill(0); return keep.length; }', { limits: SMALL });
    for (let i = 0; i < 3; i++) expect(p.call('f', [])).toBe(5000);
  });
  it('accounted built-ins charge gas for the elements they walk', () => {
    const a = measure('function f(n) { return new Array(n).fill(1).indexOf(2); }', 1600);
    expect(a.value).toBe(-1);
    expect(a.gas).toBeGreaterThan(100);
  });
});

describe('fast engine: values and host functions', () => {
  it('copies arguments with JSON semantics and never hands in a host object', () => {
    const sym = Symbol('s');
    const input = { n: NaN, i: Infinity, f: () => 1, u: undefined, [sym]: { secret: true }, nested: [1, () => 2, undefined], '__proto__': 1 };
    Object.defineProperty(input, '__proto__', { value: { p: 1 }, enumerable: true });
    expect(run('return [Object.getOwnPropertySymbols(x).length, x.n, x.i, "f" in x, x.nested, Object.getPrototypeOf(x) === Object.prototype, x.__proto__];', input)).toEqual([0, null, null, false, [1, null, null], true, { p: 1 }]);
    expect(() => run('return 1;', { b: 10n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => run('return 1;', cyclic)).toThrow(TypeError);
  });
  it('results: toJSON runs, non-plain objects and bad numbers are refused', () => {
    expect(run('return { toJSON() { return [1, 2]; } };')).toEqual([1, 2]);
    expect(run('return { a: undefined, b: [undefined] };')).toEqual({ b: [null] });
    expect(run('return new (class P { constructor() { this.q = 1; } })();')).toEqual({ q: 1 });
    expect(kindOf(() => run('return new Set([1]);'))).toBe('return');
    expect(kindOf(() => run('return { e: new Error("x") };'))).toBe('return');
    expect(kindOf(() => run('return Infinity;'))).toBe('return');
    expect(run('let v = 1; for (let i = 0; i < 63; i++) v = [v]; return 1;')).toBe(1);
  });
  it('a budget error stays a budget error even when the policy catches it', () => {
    expect(kindOf(() => run('try { for (;;) {} } catch (e) { return "caught"; }'))).toBe('budget');
    expect(kindOf(() => run('try { new Array(1e7).fill(0); } catch (e) { return "caught"; }'))).toBe('memory');
    expect(kindOf(() => run('let s = "x"; try { for (;;) s += s; } catch (e) { return e instanceof RangeError; }'))).toBe('memory');
  });
  it('host functions: coerced arguments, failures reported, no reentrancy', () => {
    const calls: number[][] = [];
    const hostFunctions = {
      add: (...a: number[]) => (calls.push(a), a.reduce((s, v) => s + v, 0)),
      bad: () => NaN,
      boom: (): number => {
        throw new Error('host broke');
      },
    };
    const p = compile('function f(k) { return __host[k]("2", true, { valueOf() { return 5; } }); }', { hostFunctions });
    expect(p.call('f', ['add'])).toBe(8);
    expect(calls).toEqual([[2, 1, 5]]);
    expect(() => p.call('f', ['bad'])).toThrow(/returned NaN/);
    expect(() => p.call('f', ['boom'])).toThrow(/host broke/);
    expect(kindOf(() => p.call('f', ['missing']))).toBe('threw');
    expect(kindOf(() => compile('function f() { return __host.add.constructor("return process")(); }', { hostFunctions }).call('f', []))).toBe('threw');
    let reentered: ReturnType<typeof compile> | null = null;
    const q = compile('function f() { return __host.again(); }', { hostFunctions: { again: () => Number(reentered?.call('f', [])) } });
    reentered = q;
    expect(() => q.call('f', [])).toThrow(/not reentrant/);
  });
  it('stats and dispose', () => {
    const p = compile('function f(n) { for (let i = 0; i < n; i++); return n; }');
    p.call('f', [3]);
    expect(() => p.call('f', [1e9])).toThrow(SandboxError);
    expect(p.stats()).toEqual({ calls: 2, lastInstructions: LIMITS.instructions, totalInstructions: 4 + LIMITS.instructions });
    p.dispose();
    p.dispose();
    expect(() => p.call('f', [1])).toThrow(/disposed/);
  });
});

describe('fast engine: hardened realm', () => {
  it('intrinsics are frozen but ordinary objects can still override toString/constructor, errors their name', () => {
    expect(kindOf(() => run('Array.prototype.x = 1;'))).toBe('threw');
    expect(kindOf(() => run('Math.abs = null;'))).toBe('threw');
    expect(run('const o = {}; o.toString = () => "o"; o.constructor = 1; class E extends Error { constructor(m) { super(m); this.name = "E"; } } return [String(o), o.constructor, new E("m").name, new E("m").message];')).toEqual(['o', 1, 'E', 'm']);
    expect(run('return [typeof Date, typeof Math.random, typeof Promise, typeof RegExp, typeof Intl, typeof Symbol.for, typeof WeakRef, typeof BigInt, typeof Uint8Array];')).toEqual(Array(9).fill('undefined'));
  });
  it('string pattern methods take their pattern literally', () => {
    expect(run('const m = "a+b".match("+"); return ["a.b.c".split("."), "aaa".match("a+"), m.index, "x.y".replace(".", "$&$&"), "abab".replaceAll("b", (s) => s.toUpperCase()), "a*b".search("*"), [..."aXbX".matchAll("X")].map((r) => r.index)];')).toEqual([
      ['a', 'b', 'c'],
      null,
      1,
      'x..y',
      'aBaB',
      1,
      [1, 3],
    ]);
  });
  it('locale-dependent conversions are pinned', () => {
    expect(run('return [(1234.5).toLocaleString(), ["b", "a", "C"].sort((p, q) => p.localeCompare(q)), "i".toLocaleUpperCase()];')).toEqual(['1,234.5', ['a', 'b', 'C'], 'I']);
  });
  it('errors carry no host path and stacks are empty', () => {
    expect(run('try { null.x; } catch (e) { return String(e.stack).includes("/") ; }')).toBe(false);
  });
});

/** Issue 27: attacks measured against the fast engine; each must end quickly with a sandbox error under the default limits. */
describe('fast engine: containment (default limits)', () => {
  const compileDefault = (source: string) => engine.compile(source, { entrypoints: ['f'] });
  /** The call fails with `kind` within `ms`, and the same host then runs a normal program. */
  const contained = (source: string, kinds: SandboxErrorKind[], ms = 3000) => {
    const t0 = performance.now();
    let kind: SandboxErrorKind | 'none' = 'none';
    try {
      compileDefault(source).call('f', []);
    } catch (e) {
      if (!(e instanceof SandboxError)) throw e;
      kind = e.kind;
    }
    expect(kinds).toContain(kind);
    expect(performance.now() - t0).toBeLessThan(ms);
    expect(compileDefault('function f() { return [1, 2, 3].map((v) => v * 2).join(","); }').call('f', [])).toBe('2,4,6');
  };
  it('the intrinsic Array constructor is the accounted one, however it is reached', () => {
    expect(run('return [].constructor === Array && Object.getPrototypeOf([]).constructor === Array;')).toBe(true);
    for (const expr of ['new ([].constructor)(3.2e7)', '[].constructor(3.2e7)', 'Reflect.construct(Object.getPrototypeOf([]).constructor, [3.2e7])',
      'Reflect.apply([].constructor, null, [3.2e7])', 'new (class extends [].constructor {})(3.2e7)', 'Object.getOwnPropertyDescriptor(Array.prototype, "constructor").value(3.2e7)',
      'Array.from({ length: 3.2e7 })', 'new Array(3.2e7).fill(0)']) {
      contained(`function f() { return ${expr}.length; }`, ['memory']);
    }
  });
  it('a program that keeps huge arrays across calls fails every call instead of exhausting the host', () => {
    const p = compileDefault('const kept = []; function f() { kept.push(new ([].constructor)(3.2e7)); return kept.length; }');
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) expect(kindOf(() => p.call('f', []))).toBe('memory');
    expect(performance.now() - t0).toBeLessThan(3000);
  });
  it('BigInt is unavailable: literals are refused at compile time', () => {
    for (const src of ['function f() { return String(1n << 200000000n).length; }', 'function f() { let x = 3n; for (let i = 0; i < 40; i++) x = x * x; return 1; }']) {
      expect(kindOf(() => compileDefault(src))).toBe('forbidden');
    }
    expect(run('return typeof BigInt;')).toBe('undefined');
  });
  it('long strings built by +, +=, templates and concat are charged (ropes cannot be flattened for free)', () => {
    contained('function f() { let s = "x"; for (let i = 0; i < 29; i++) s += s; return s.length; }', ['memory']);
    contained('function f() { let s = "x"; for (let i = 0; i < 29; i++) s = s + s; return s.indexOf("y"); }', ['memory']);
    contained('function f() { let s = "x"; for (let i = 0; i < 29; i++) s = `${s}${s}`; return s.length; }', ['memory']);
    contained('function f() { let s = "x"; for (let i = 0; i < 29; i++) s = s.concat(s); return s.length; }', ['memory']);
    contained('function f() { let a = "ab", b = "ba", c = "ca"; for (let i = 0; i < 28; i++) { a = a + a; b = b + b; c = c + c; } return [a, b, c].sort().length; }', ['memory']);
    expect(run('let s = ""; for (let i = 0; i < 1000; i++) s += "ab"; return s.length;')).toBe(2000);
  });
  it('property descriptor maps are charged', () => {
    contained('function f() { const d = new Array(500000).fill({ value: 1 }); return Object.keys(Object.create(null, d)).length; }', ['memory', 'budget']);
    contained('function f() { const d = new Array(500000).fill({ value: 1 }); Object.defineProperties({}, d); return 1; }', ['memory', 'budget']);
    expect(run('return Object.keys(Object.create(null, { a: { value: 1, enumerable: true } }));')).toEqual(['a']);
  });
  it('stack depth is counted, identical whatever the host stack left, and not catchable', () => {
    const src = 'let m = 0; function r(n) { m = n; r(n + 1); } function f() { try { r(1); } catch (e) { return "caught"; } } function g() { return m; }';
    /** Runs the program with `frames` host frames below the call (a different thread has a different stack). */
    const atHostDepth = (frames: number): unknown[] => {
      const p = engine.compile(src, { entrypoints: ['f', 'g'] });
      const go = (k: number): unknown[] => {
        if (k > 0) return go(k - 1);
        let kind = 'none';
        try {
          p.call('f', []);
        } catch (e) {
          kind = (e as SandboxError).kind;
        }
        return [kind, p.call('g', [])];
      };
      return go(frames);
    };
    const base = atHostDepth(0);
    expect(base[0]).toBe('stack');
    expect(typeof base[1]).toBe('number');
    for (const frames of [500, 2000]) expect(atHostDepth(frames)).toEqual(base);
    // finally blocks do not run user code once the depth limit is hit
    const fin = compile('let m = 0; function r(n) { try { r(n + 1); } finally { m = n; } } function f() { r(1); } function g() { return m; }', { entrypoints: ['f', 'g'] });
    expect(kindOf(() => fin.call('f', []))).toBe('stack');
    expect(fin.call('g', [])).toBe(0);
  });
  it('a host stack overflow in a native recursion is not catchable and ends the program', () => {
    for (const expr of ['JSON.stringify(v)', 'String(v)', 'v.flat(Infinity)']) {
      const p = compileDefault(`let n = 0; function f() { let v = []; for (let i = 0; i < 200000; i++) v = [v]; try { ${expr}; } catch (e) { n++; return "caught"; } finally { n++; } }`);
      expect(kindOf(() => p.call('f', []))).toBe('stack');
      expect(kindOf(() => p.call('f', []))).toBe('stack');
    }
  });
});
