/**
 * The sandbox contract, run against every engine: plain data in and out, deterministic budgets, and the
 * escape suite (each attempt is contained with its typed error, the host survives, and the next call on the
 * same program — and a fresh program — still works).
 */
import { describe, expect, it } from 'vitest';
import { loadSandboxEngine, SANDBOX_ENGINE_NAMES, SandboxError, type SandboxEngine, type SandboxErrorKind, type SandboxOptions } from './index.js';

const SMALL = { instructions: 200_000, memoryBytes: 16 * 1024 * 1024 };

function expectKind(fn: () => unknown, kinds: readonly SandboxErrorKind[]): SandboxError {
  let caught: unknown = null;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a SandboxError').toBeInstanceOf(SandboxError);
  const err = caught as SandboxError;
  expect(kinds, `${err.kind}: ${err.message}`).toContain(err.kind);
  expect(err.code).toBe(`SANDBOX_${err.kind.toUpperCase()}`);
  expect(err.message).not.toMatch(/\n/);
  return err;
}

for (const name of SANDBOX_ENGINE_NAMES) {
  describe(`sandbox engine: ${name}`, () => {
    let engine: SandboxEngine;
    const compile = (source: string, opts: Partial<SandboxOptions> = {}) =>
      engine.compile(source, { entrypoints: ['f'], limits: SMALL, ...opts });
    /** Compiles `body` as the body of f(x), calls it once with `arg`. */
    const run = (body: string, arg: unknown = null, opts: Partial<SandboxOptions> = {}) => compile(`function f(x) { ${body} }`, opts).call('f', [arg]);
    /** After an escape attempt the same program and a fresh one keep working. */
    const stillWorks = (src: string) => {
      const p = compile(`${src}\nfunction ok(a) { return a + 1; }`, { entrypoints: ['f', 'ok'] });
      try {
        p.call('f', [null]);
      } catch {
        /* the attempt itself */
      }
      expect(p.call('ok', [41])).toBe(42);
      expect(compile('function f(x) { return x * 2; }').call('f', [21])).toBe(42);
    };

    it('loads', async () => {
      engine = await loadSandboxEngine(name);
      expect(engine.name).toBe(name);
    });

    describe('plain data in and out', () => {
      it('passes arguments as copies and returns copies', () => {
        const input = { a: [1, 2, { b: 'x' }], n: null, t: true, s: 'é€' };
        const p = compile('function f(x) { x.a.push(9); x.extra = 1; return x; }');
        const out = p.call('f', [input]) as Record<string, unknown>;
        expect(out).toEqual({ a: [1, 2, { b: 'x' }, 9], n: null, t: true, s: 'é€', extra: 1 });
        expect(input).toEqual({ a: [1, 2, { b: 'x' }], n: null, t: true, s: 'é€' });
      });
      it('undefined becomes null; several arguments; top-level state persists between calls', () => {
        const p = compile('let n = 0; function f(a, b) { n += a + b; return n; } function g() {}', { entrypoints: ['f', 'g'] });
        expect(p.call('f', [1, 2])).toBe(3);
        expect(p.call('f', [1, 2])).toBe(6);
        expect(p.call('g', [])).toBe(null);
        expect(p.stats().calls).toBe(3);
      });
      it('host functions are callable and only take numbers', () => {
        let k = 0;
        const p = compile('function f(n) { return [__host.next(n), __host.next(n)]; }', { hostFunctions: { next: (n) => n * 10 + k++ } });
        expect(p.call('f', [3])).toEqual([30, 31]);
        expect(Object.isFrozen(compile('function f() { return Object.isFrozen(__host); }', { hostFunctions: { next: () => 1 } }).call('f', []))).toBe(true);
      });
    });

    describe('compile-time errors', () => {
      it('syntax error', () => expectKind(() => compile('function f( {'), ['syntax']));
      it('missing entry point', () => expectKind(() => compile('function g() {}'), ['entrypoint']));
      it('entry point that is not a function', () => expectKind(() => compile('var f = 3;'), ['entrypoint']));
      it('import declarations and dynamic import()', () => {
        expectKind(() => compile('import fs from "fs"; function f() {}'), ['syntax', 'forbidden']);
        expectKind(() => run('return import("fs");'), ['syntax', 'forbidden', 'threw']);
      });
      it('top-level infinite loop is bounded', () => expectKind(() => compile('while (true) {} function f() {}'), ['budget']));
    });

    describe('escape suite', () => {
      it('infinite loop', () => {
        expectKind(() => run('while (true) {}'), ['budget']);
        expectKind(() => run('for (;;) { let a = 1; }'), ['budget']);
        expectKind(() => run('do {} while (1);'), ['budget']);
        stillWorks('function f() { for (;;) {} }');
      });
      it('infinite loop hidden in callbacks, getters and sort comparators', () => {
        expectKind(() => run('[1, 2, 3].forEach(function g() { while (true) {} });'), ['budget']);
        expectKind(() => run('const o = { get v() { for (;;) {} } }; return o.v;'), ['budget']);
        expectKind(() => run('return [3, 1, 2].sort(() => { for (;;) {} });'), ['budget']);
        expectKind(() => run('const o = { toJSON() { while (1) {} } }; return o;'), ['budget']);
      });
      it('deep recursion', () => {
        expectKind(() => run('function r(n) { return r(n + 1) + 1; } return r(0);'), ['stack', 'budget']);
        stillWorks('function f() { const r = (n) => r(n + 1); return r(0); }');
      });
      it('memory bombs', () => {
        expectKind(() => run('let s = "x"; for (let i = 0; i < 40; i++) s = s + s; return s.length;'), ['memory', 'threw']);
        expectKind(() => run('const a = []; for (;;) a.push(new Array(1000).fill(1));'), ['memory', 'budget']);
        expectKind(() => run('return new Array(2 ** 31).fill(0).length;'), ['memory', 'threw']);
        expectKind(() => run('return "x".repeat(2 ** 30).length;'), ['memory', 'threw']);
        expectKind(() => run('let a = [1]; for (let i = 0; i < 40; i++) a = a.concat(a); return a.length;'), ['memory', 'threw', 'budget']);
        expectKind(() => run('let a = [1]; for (let i = 0; i < 40; i++) a = [...a, ...a]; return a.length;'), ['memory', 'threw', 'budget']);
        expectKind(() => run('const t = new Float64Array(2 ** 28); return t.length;'), ['memory', 'threw']);
        expectKind(() => run('const b = new ArrayBuffer(2 ** 30); return b.byteLength;'), ['memory', 'threw']);
        expectKind(() => run('let o = {}; for (let i = 0; i < 25; i++) o = { a: o, b: o }; return JSON.stringify(o).length;'), ['memory', 'threw', 'budget']);
        stillWorks('function f() { let s = "y"; for (;;) s += s; }');
      });
      it('prototype pollution does not reach the host or the next program', () => {
        try {
          run('Object.prototype.polluted = 1; Array.prototype.push = null; JSON.parse = null; return 1;');
        } catch (e) {
          expect(e).toBeInstanceOf(SandboxError);
        }
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
        expect(typeof Array.prototype.push).toBe('function');
        expect(compile('function f() { return [({}).polluted ?? null, typeof [].push]; }').call('f', [])).toEqual([null, 'function']);
      });
      it('the arguments cannot reach host objects', () => {
        const probe = 'const out = []; for (const v of [x, x.o, x.a]) { try { out.push(typeof v.constructor.constructor("return process")()); } catch (e) { out.push("blocked"); } } return out;';
        let res: unknown;
        try {
          res = run(probe, { o: {}, a: [] });
        } catch (e) {
          res = (e as SandboxError).kind;
        }
        expect(JSON.stringify(res)).not.toContain('object');
      });
      it('globals: globalThis, process, require, module, Function, eval, Date, Math.random, performance, timers, SharedArrayBuffer, Atomics, WebAssembly', () => {
        const names = ['process', 'require', 'module', 'exports', 'Date', 'performance', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'SharedArrayBuffer', 'Atomics', 'WebAssembly', 'fetch', 'Buffer', 'console', 'os', 'std'];
        const res = run(`return ${JSON.stringify(names)}.filter((n) => typeof globalThis[n] !== 'undefined');`);
        expect(res).toEqual([]);
        expect(run('return typeof Math.random;')).not.toBe('function');
        expectKind(() => run('return eval("1+1");'), ['threw', 'forbidden', 'syntax']);
        expectKind(() => run('return Function("return 1")();'), ['threw', 'forbidden']);
        expectKind(() => run('return (function(){}).constructor("return this")();'), ['threw', 'forbidden']);
        expectKind(() => run('return (async function(){}).constructor("return 1");'), ['threw', 'forbidden', 'syntax']);
        expectKind(() => run('return (function*(){}).constructor("yield 1");'), ['threw', 'forbidden', 'syntax']);
      });
      it('async work and promises cannot outlive the call', () => {
        let calls = 0;
        const host = { hostFunctions: { tick: () => ++calls } };
        try {
          run('Promise.resolve().then(() => { __host.tick(); for (;;) {} }); return 1;', null, host);
        } catch (e) {
          expect(e).toBeInstanceOf(SandboxError);
        }
        try {
          run('(async () => { await 0; __host.tick(); })(); return 1;', null, host);
        } catch (e) {
          expect(e).toBeInstanceOf(SandboxError);
        }
        const p = compile('function f() { return 7; }');
        expect(p.call('f', [])).toBe(7);
        expect(calls).toBe(0);
      });
      it('Proxy and getter tricks on the result', () => {
        expectKind(() => run('return new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } });'), ['budget', 'return', 'threw']);
        expectKind(() => run('return { get target() { throw new Error("boom"); } };'), ['threw', 'return']);
      });
      it('huge, cyclic and non-plain results', () => {
        expectKind(() => run('const a = {}; a.self = a; return a;'), ['return']);
        expectKind(() => run('return () => 1;'), ['return']);
        expectKind(() => run('return Symbol("s");'), ['return']);
        expectKind(() => run('return 10n;'), ['return', 'forbidden']);
        expectKind(() => run('return [NaN];'), ['return']);
        expectKind(() => run('return "x".repeat(2000000);'), ['return', 'memory']);
        expectKind(() => run('let v = 1; for (let i = 0; i < 200; i++) v = [v]; return v;'), ['return']);
      });
      it('results are refused for the same reason, in the same words, by the checker both engines share', () => {
        const detail = (body: string): string => expectKind(() => run(body), ['return']).detail;
        expect(detail('const a = { b: {} }; a.b.up = a; return a;')).toContain('the result is a cyclic structure');
        expect(detail('let v = 1; for (let i = 0; i < 80; i++) v = { v }; return v;')).toContain('the result is nested deeper than 64 levels');
        expect(detail('return { m: new Map() };')).toContain('the result is an object that is not plain data');
        expect(detail('return { n: [1, -Infinity] };')).toContain('the result is a non-finite number (-Infinity)');
        expect(detail('return { f() {} };')).toContain('the result is a function');
        expect(detail('return [Symbol.iterator];')).toContain('the result is a symbol');
        // A shared subtree doubles the text per level: refused while walking, long before 2^40 characters exist.
        expect(detail('let v = ["x".repeat(10000)]; for (let i = 0; i < 40; i++) v = [v, v]; return v;')).toContain('the result is larger than 1000000 characters of JSON');
        // Plain data whose prototype is a plain object is still data.
        expect(run('const o = Object.create({ inherited: 1 }); o.own = 2; return o;')).toEqual({ own: 2 });
      });
      it('a thrown value is reported with its message', () => {
        const e = expectKind(() => run('throw new RangeError("bad target " + x);', 7), ['threw']);
        expect(e.detail).toContain('bad target 7');
        expectKind(() => run('throw { toString() { for (;;) {} } };'), ['threw', 'budget']);
      });
    });

    describe('determinism', () => {
      it('the same call sequence gives the same results and budget counts', () => {
        const src = 'let st = 1; function f(n) { let s = 0; for (let i = 0; i < n; i++) { st = (st * 48271) % 2147483647; s += st % 7; } return s; }';
        const trace = () => {
          const p = compile(src);
          const out = [p.call('f', [10]), p.call('f', [1000]), p.call('f', [3])];
          return { out, stats: p.stats() };
        };
        const a = trace();
        const b = trace();
        expect(a).toEqual(b);
        expect(a.stats.totalInstructions).toBeGreaterThan(0);
        const c = () => {
          try {
            run('for (;;) {}');
          } catch (e) {
            return (e as SandboxError).message;
          }
          return '';
        };
        expect(c()).toBe(c());
      });
      it('a budget big enough for the work and too small for it', () => {
        const src = 'function f(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }';
        expect(compile(src).call('f', [1000])).toBe(499500);
        expectKind(() => compile(src, { limits: { instructions: 1000, memoryBytes: SMALL.memoryBytes } }).call('f', [10_000_000]), ['budget']);
      });
    });
  });
}
