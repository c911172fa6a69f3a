/**
 * The wall-clock backstop of the `fast` engine: synchronous work (a whole simulation between its awaits, every
 * policy call inside it) run under a watchdog enforced from outside the realm. When the watchdog fires, V8
 * terminates whatever JavaScript is running — a policy call stuck in a native operation the gas accounting does
 * not count, or the host code around it — and the work fails with `SANDBOX_BUDGET`, naming the policy call in
 * progress, if any. It can only turn a run into a failure: it never changes what a run that finishes computes.
 *
 * Mechanism: node:vm's `timeout` (a watchdog thread that calls V8's TerminateExecution). It costs about
 * 100-125 us per armed scope (measured on Node 20: it starts a thread), so it is armed once per synchronous
 * stretch of a run, never per policy call (a routing call costs 2-4 us; a watchdog per call would multiply it by
 * 30). Inside an armed scope a nested scope runs directly under the outer one.
 *
 * After the watchdog fires, the state the terminated code was updating (the simulator's, the program's realm)
 * is left mid-operation: callers discard the run, and a fast program that was in a call stays unusable.
 *
 * The per-call bound ({@link WallClock} with `callMs` > 0): the run's synchronous work is cut into slices of
 * about {@link SLICE_MS} at event boundaries (sim/engine-setup.ts; cutting between events changes nothing), and
 * each slice arms the watchdog for `callMs` + the slice (or the run's time left, if less). A call that starts in
 * a slice therefore runs at most `callMs` + one slice before it is stopped. A slice ends when its time is up,
 * checked by the driver after each chunk of events and by the fast engine after a policy call ({@link callWatch}:
 * a counter per call, a clock read every {@link CHECK_EVERY} calls or after a call of more than
 * {@link HEAVY_CALL} instructions), which asks the cluster to pause before its next event. A re-arm costs
 * about 110-140 us, once per slice: about 0.1% of a run. The clock only decides when to re-arm, never a result.
 */
import vm from 'node:vm';
import { SandboxError } from './types.js';

/** The fast-engine call in progress (set by fast.ts around each call; left set when a call is terminated). */
export const fastCallInFlight: { entry: string | null; callNumber: number; label: string | null } = { entry: null, callNumber: 0, label: null };

/** The call in progress, as the fast engine left it. */
function inFlight(): { readonly entry: string | null; readonly callNumber: number; readonly label: string | null } {
  return fastCallInFlight;
}

let realm: { readonly context: vm.Context; readonly script: vm.Script; slot: { fn: (() => unknown) | null; result: unknown } } | null = null;
let armed = false;

function watchdogRealm(): NonNullable<typeof realm> {
  if (realm !== null) return realm;
  const slot: { fn: (() => unknown) | null; result: unknown } = { fn: null, result: undefined };
  // The context's only global is the host's runner: it calls the host function staged in `slot` (host code).
  const context = vm.createContext({ run: () => { slot.result = slot.fn?.(); } }, { codeGeneration: { strings: false, wasm: false } });
  realm = { context, script: new vm.Script('run()', { filename: 'blis-watchdog.js' }), slot };
  return realm;
}

/** A SANDBOX_BUDGET failure from the wall-clock backstop (not deterministic: callers never cache it). */
export class WallClockExceeded extends SandboxError {
  /** Stopped by the per-call limit (not the run's budget). */
  perCall = false;
}

function isTimeout(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/** Slice of a run between two arms of the watchdog under the per-call bound (ms of wall clock). */
export const SLICE_MS = 100;
/** The fast engine reads the clock after this many policy calls (or after one heavy call). */
export const CHECK_EVERY = 64;
/** A call of more instructions than this (tens of microseconds or more) reads the clock after it. */
export const HEAVY_CALL = 2000;

function idleCheck(): void {
  callWatch.countdown = CHECK_EVERY;
}

/**
 * The fast engine's per-call hook (fast.ts, after each call): `if (--countdown <= 0 || instructions > HEAVY_CALL)
 * check()`. Outside a slice `check` only resets the countdown; inside one it reads the clock and, when the slice
 * has run its time, asks the cluster to pause (the driver then ends the slice and re-arms).
 */
export const callWatch: { countdown: number; check: () => void } = { countdown: CHECK_EVERY, check: idleCheck };

function now(): number {
  // The wall clock only decides when the watchdog is re-armed or fires; it never feeds a result.
  // eslint-disable-next-line no-restricted-globals
  return performance.now();
}

/**
 * Runs `fn` (synchronous) with at most `ms` of wall-clock time (`ms` <= 0 or not finite: no limit); past it,
 * `fn` is terminated and a SandboxError of kind `budget` is thrown. Nested inside another armed scope, `fn`
 * runs directly (the outer watchdog covers it). `callMs` (not null): the scope was armed for the per-call
 * bound of that many ms, which is what the error then names.
 */
export function withWallClock<T>(ms: number, fn: () => T, budgetMs: number = ms, callMs: number | null = null): T {
  if (armed || !(ms > 0) || !Number.isFinite(ms)) return fn();
  const r = watchdogRealm();
  r.slot.fn = fn;
  r.slot.result = undefined;
  armed = true;
  fastCallInFlight.entry = null;
  fastCallInFlight.callNumber = 0;
  try {
    r.script.runInContext(r.context, { timeout: Math.max(1, Math.ceil(ms)) });
    return r.slot.result as T;
  } catch (e) {
    if (!isTimeout(e)) throw e;
    // (Read through a function: TypeScript would narrow the fields to the values set above.)
    const { entry, callNumber, label } = inFlight();
    // (Entry points named $blis... are the policy adapters' wrappers: not names the policy's author wrote.)
    const what = entry === null ? 'the run' : entry.startsWith('$') ? `call #${callNumber} of ${label ?? 'the fast-engine policy'}` : `call #${callNumber} of ${entry}()`;
    if (callMs !== null) {
      const head = what === 'the run' ? 'the run was stopped when host work between two policy calls' : `${what} was stopped when it`;
      const err = new WallClockExceeded('budget', 'fast', entry, callNumber, `per-call wall-clock bound: ${head} ran past the per-call limit of ${Math.ceil(callMs)} ms (work the instruction budget does not count)`);
      err.perCall = true;
      throw err;
    }
    throw new WallClockExceeded('budget', 'fast', entry, callNumber, `wall-clock backstop: ${what === 'the run' ? 'the run was stopped when it' : `${what} was stopped when the run`} passed its wall-clock budget of ${Math.ceil(budgetMs)} ms (work the instruction budget does not count, or a run too long for the budget)`);
  } finally {
    armed = false;
    r.slot.fn = null;
    r.slot.result = undefined;
    fastCallInFlight.entry = null;
  }
}

/**
 * A wall-clock deadline shared by the synchronous stretches of one run, and (`callMs` > 0) the per-call bound:
 * then {@link WallClock.run} runs one slice, armed for `callMs` + `sliceMs` (or the run's time left, if less).
 */
export class WallClock {
  private readonly deadline: number;
  private sliceStart = 0;
  constructor(readonly budgetMs: number, readonly callMs = 0, readonly sliceMs = SLICE_MS) {
    this.deadline = budgetMs > 0 ? now() + budgetMs : Infinity;
  }

  /** Whether runs are cut into slices (the per-call bound is on). */
  get sliced(): boolean {
    return this.callMs > 0;
  }

  /**
   * Runs `fn` under the watchdog with the time left (at least 1 ms: a run already over its budget fails at once).
   * With the per-call bound, `fn` is one slice: at most `callMs` + `sliceMs` of it, and a policy call that
   * finds the slice over its time calls `pause` (the driver's way to end the slice at the next event).
   */
  run<T>(fn: () => T, pause: (() => void) | null = null): T {
    const left = Math.max(1, this.deadline - now());
    if (!this.sliced) return withWallClock(left, fn, this.budgetMs);
    const perCall = this.callMs + this.sliceMs;
    const start = now();
    this.sliceStart = start;
    const sliceMs = this.sliceMs;
    const outer = armed;
    if (!outer) {
      callWatch.countdown = CHECK_EVERY;
      callWatch.check = () => {
        callWatch.countdown = CHECK_EVERY;
        if (pause !== null && now() - start >= sliceMs) pause();
      };
    }
    try {
      return perCall < left ? withWallClock(perCall, fn, this.budgetMs, this.callMs) : withWallClock(left, fn, this.budgetMs);
    } finally {
      if (!outer) callWatch.check = idleCheck;
    }
  }

  /** Whether the current slice has run its time (a clock read; the driver ends the slice at the next event). */
  sliceOver(): boolean {
    return now() - this.sliceStart >= this.sliceMs;
  }
}
