/**
 * Hostile policy code for both sandbox engines: programs composed of the operations that escaped the fast
 * engine's accounting before issue 27 (BigInt, long strings and ropes, property descriptors, sorts, array
 * constructors reached by any route, JSON, state kept across calls), run in this process under the default
 * limits. The contract of every call: a result or a SandboxError of a sandbox kind, within the time bound,
 * with the accounting (not the wall-clock backstop, which is armed here only so that an escape fails the case
 * instead of hanging it) ending it; and the host keeps running programs normally.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadSandboxEngine } from '../../src/sandbox/index.js';
import { SandboxError, type SandboxEngineName } from '../../src/sandbox/types.js';
import { WallClockExceeded, withWallClock } from '../../src/sandbox/watchdog.js';
import { fuzzParams, fuzzTimeout } from './harness.js';

/** Per call: generous on a shared 2-core machine; an escape runs for tens of seconds. */
const CALL_BOUND_MS = 5_000;

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
const size = pick('10', '1e3', '65537', '1e6', '3.2e7', '2**29', '2**31', '1e9');

/** One statement of a hostile `route` body (each may throw; the program catches nothing unless told to). */
const statement: fc.Arbitrary<string> = fc.oneof(
  size.map((n) => `keep.push(new ([].constructor)(${n}));`),
  size.map((n) => `keep.push(Reflect.construct(Object.getPrototypeOf([]).constructor, [${n}]));`),
  size.map((n) => `keep.push(Array.from({ length: ${n} }, (_, i) => i));`),
  size.map((n) => `keep.push("ab".repeat(${n}));`),
  size.map((n) => `{ let s = "x".repeat(1024); for (let i = 0; i < 40; i++) s = s + s; keep.push(s.length > ${n}); }`),
  size.map((n) => `{ let s = "y"; for (let i = 0; i < 31; i++) s += s; keep.push([s, s + "a", "b" + s].sort().length + ${n}); }`),
  size.map((n) => `{ const d = {}; for (let i = 0; i < ${n}; i++) d["k" + i] = { value: i, enumerable: true }; keep.push(Object.create(null, d)); }`),
  size.map((n) => `keep.push(JSON.stringify(new Array(${n}).fill({ a: [1, 2, 3] })).length);`),
  size.map((n) => `keep.push(JSON.parse("[" + "1,".repeat(${n}) + "1]").length);`),
  size.map((n) => `keep.push(new Array(${n}).fill(0).map((x, i) => -i).sort((a, b) => a - b)[0]);`),
  size.map((n) => `keep.push([...new Array(${n}).keys()].toSorted().length);`),
  size.map((n) => `keep.push(Object.keys(Object.fromEntries(new Array(${n}).fill(0).map((_, i) => ["k" + i, i]))).length);`),
  size.map((n) => `keep.push(new Map(new Array(${n}).fill(0).map((_, i) => [i, i])).size);`),
  pick(
    'keep.push(10n ** 100000n);',
    'keep.push(String(1n << 200000000n));',
    'keep.push(typeof BigInt);',
    'keep.push(BigInt(2) ** BigInt(1e9));',
    'function deep(n) { return n === 0 ? 0 : 1 + deep(n - 1); } try { keep.push(deep(1e6)); } catch (e) { keep.push(String(e)); }',
    'let d = 0; function probe() { d++; probe(); } try { probe(); } catch (e) { keep.push(d); }',
    'while (true) {}',
    'keep.push(JSON.stringify(new Array(200000).fill(0).reduce((a) => [a], [])).length);',
    'keep.push(Function("return 1")());',
    'keep.push(new Function("return globalThis")());',
    'keep.push([].constructor.constructor("return process")());',
    'keep.length = 0;',
  ),
);

const program: fc.Arbitrary<string> = fc
  .record({ body: fc.array(statement, { minLength: 1, maxLength: 4 }), guarded: fc.boolean() })
  .map(({ body, guarded }) => {
    const code = body.join('\n    ');
    return `const keep = [];\nfunction route(request, state) {\n  ${guarded ? `try {\n    ${code}\n  } catch (e) { keep.push(String(e)); }` : code}\n  return keep.length;\n}\n`;
  });

describe('fuzz: hostile policy code in both engines', () => {
  it('every call ends with a result or a sandbox error, within its bound, by the accounting', async () => {
    const engines = new Map<SandboxEngineName, Awaited<ReturnType<typeof loadSandboxEngine>>>();
    for (const name of ['fast', 'strict'] as const) engines.set(name, await loadSandboxEngine(name));
    fc.assert(
      fc.property(program, pick<SandboxEngineName>('fast', 'strict'), fc.integer({ min: 1, max: 3 }), (source, name, calls) => {
        const engine = engines.get(name)!;
        let p;
        try {
          p = engine.compile(source, { entrypoints: ['route'] });
        } catch (e) {
          expect(e, `${name} compile of:\n${source}`).toBeInstanceOf(SandboxError);
          return;
        }
        try {
          for (let i = 0; i < calls; i++) {
            const t0 = performance.now();
            let err: unknown = null;
            try {
              withWallClock(30_000, () => p.call('route', [{ id: `r${i}` }, { instances: [{ id: 'a' }] }]));
            } catch (e) {
              err = e;
            }
            const ms = performance.now() - t0;
            expect(err instanceof WallClockExceeded, `${name}: the wall-clock backstop had to end call #${i + 1} of:\n${source}`).toBe(false);
            if (err !== null) expect(err, `${name}: call #${i + 1} of:\n${source}\nthrew a non-sandbox error`).toBeInstanceOf(SandboxError);
            expect(ms, `${name}: call #${i + 1} took ${Math.round(ms)} ms:\n${source}`).toBeLessThan(CALL_BOUND_MS);
          }
        } finally {
          p.dispose();
        }
        // The host still runs a program normally.
        const ok = engine.compile('function route(r) { return 1 + 1; }', { entrypoints: ['route'] });
        expect(ok.call('route', [{}])).toBe(2);
        ok.dispose();
      }),
      fuzzParams('hostile policy code', 40),
    );
  }, fuzzTimeout(600_000));
});
