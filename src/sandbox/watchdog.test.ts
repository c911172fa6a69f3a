import { describe, expect, it } from 'vitest';
import { fastEngine } from './fast.js';
import { SandboxError } from './types.js';
import { WallClock, WallClockExceeded, withWallClock } from './watchdog.js';

const spin = (ms: number): number => {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) n++;
  return n > 0 ? 1 : 0;
};

describe('the fast engine wall-clock backstop', () => {
  it('stops a call stuck outside the gas accounting with SANDBOX_BUDGET naming the call, in about its budget', async () => {
    const engine = await fastEngine();
    // A host function is not counted by the gas: it stands in for a native operation that escapes it.
    const p = engine.compile('function route(x) { return __host.stall(x); }', { entrypoints: ['route'], hostFunctions: { stall: (ms) => spin(ms) } });
    expect(withWallClock(5000, () => p.call('route', [1]))).toBe(1);
    const t0 = performance.now();
    let err: unknown;
    try {
      withWallClock(200, () => {
        p.call('route', [1]);
        return p.call('route', [60_000]);
      });
    } catch (e) {
      err = e;
    }
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(err).toBeInstanceOf(WallClockExceeded);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as SandboxError).code).toBe('SANDBOX_BUDGET');
    expect((err as SandboxError).message).toMatch(/call #3 of route\(\).*wall-clock budget of 200 ms/);
    // The host goes on: a new program runs normally.
    const q = engine.compile('function route(x) { return x + 1; }', { entrypoints: ['route'] });
    expect(q.call('route', [1])).toBe(2);
  });

  it('stops host work too, names no call then, and nests (the outer scope governs)', () => {
    expect(() => withWallClock(100, () => spin(30_000))).toThrow(/SANDBOX_BUDGET|the run was stopped/);
    const clock = new WallClock(150);
    expect(clock.run(() => withWallClock(60_000, () => 7))).toBe(7);
    expect(() => clock.run(() => withWallClock(60_000, () => spin(30_000)))).toThrow(/wall-clock budget of 150 ms/);
  });

  it('passes results and errors through unchanged, and costs nothing per call', async () => {
    expect(withWallClock(1000, () => 'x')).toBe('x');
    expect(() => withWallClock(1000, () => { throw new RangeError('mine'); })).toThrow(RangeError);
    expect(withWallClock(0, () => 3)).toBe(3);
    const engine = await fastEngine();
    const p = engine.compile('function route(req, state) { let best = 0; for (let i = 1; i < state.instances.length; i++) if (state.instances[i].queue < state.instances[best].queue) best = i; return best; }', { entrypoints: ['route'] });
    const state = { instances: Array.from({ length: 8 }, (_, i) => ({ id: `i${i}`, queue: (i * 7) % 5, running: i, kv: 0.5 })) };
    const n = 20_000;
    const time = (f: () => void): number => { const t0 = performance.now(); f(); return performance.now() - t0; };
    const bare = Math.min(...[0, 1, 2].map(() => time(() => { for (let i = 0; i < n; i++) p.call('route', [{ id: i }, state]); })));
    const guarded = Math.min(...[0, 1, 2].map(() => time(() => withWallClock(60_000, () => { for (let i = 0; i < n; i++) p.call('route', [{ id: i }, state]); }))));
    // One watchdog per stretch of calls: the per-call cost is the call's own (noise allowed).
    expect(guarded / n).toBeLessThan((bare / n) * 1.5 + 0.5);
  });
});
