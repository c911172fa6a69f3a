import { describe, expect, it } from 'vitest';
import { fastEngine } from './fast.js';
import { SandboxError } from './types.js';
import { CHECK_EVERY, HEAVY_CALL, WallClock, WallClockExceeded, withWallClock } from './watchdog.js';

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

  it('the per-call bound: a slice is armed for the limit + the slice, within the run budget; calls ask for a pause once the slice is over', async () => {
    const engine = await fastEngine();
    const p = engine.compile('function route(x) { return __host.stall(x); }', { entrypoints: ['route'], hostFunctions: { stall: (ms) => spin(ms) } });
    // A call past the per-call limit (200 ms + a 50 ms slice), long before the run's budget (60 s).
    const clock = new WallClock(60_000, 200, 50);
    expect(clock.sliced).toBe(true);
    const t0 = performance.now();
    let err: unknown;
    try {
      clock.run(() => p.call('route', [60_000]));
    } catch (e) {
      err = e;
    }
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(WallClockExceeded);
    expect((err as WallClockExceeded).perCall).toBe(true);
    expect((err as SandboxError).message).toMatch(/per-call wall-clock bound: call #1 of route\(\) was stopped when it ran past the per-call limit of 200 ms/);
    // The run's budget, when less is left than the limit + a slice, is what fires, and what the error names.
    let late: unknown;
    try {
      // (A fresh program: one stopped mid-call stays unusable.)
      const p2 = engine.compile('function route(x) { return __host.stall(x); }', { entrypoints: ['route'], hostFunctions: { stall: (ms) => spin(ms) } });
      new WallClock(150, 10_000).run(() => p2.call('route', [60_000]));
    } catch (e) {
      late = e;
    }
    expect((late as WallClockExceeded).perCall).toBe(false);
    expect((late as SandboxError).message).toMatch(/wall-clock backstop: .*budget of 150 ms/);
    // Pauses: none while the slice has time; with a used-up slice, one per CHECK_EVERY light calls and one per heavy call.
    const q = engine.compile('function light() { return 1; } function heavy() { let s = 0; for (let i = 0; i < ' + String(HEAVY_CALL + 10) + '; i++) s += i; return s; }', { entrypoints: ['light', 'heavy'] });
    const pausesOf = (sliceMs: number, entry: string, n: number): number => {
      let pauses = 0;
      new WallClock(0, 10_000, sliceMs).run(() => { for (let i = 0; i < n; i++) q.call(entry, []); }, () => void pauses++);
      return pauses;
    };
    expect(pausesOf(60_000, 'light', 3 * CHECK_EVERY)).toBe(0);
    expect(pausesOf(0, 'light', 3 * CHECK_EVERY)).toBe(3);
    expect(pausesOf(0, 'heavy', 5)).toBe(5);
  });
});
