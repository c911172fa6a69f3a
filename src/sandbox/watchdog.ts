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
 */
import vm from 'node:vm';
import { SandboxError } from './types.js';

/** The fast-engine call in progress (set by fast.ts around each call; left set when a call is terminated). */
export const fastCallInFlight: { entry: string | null; callNumber: number } = { entry: null, callNumber: 0 };

/** The call in progress, as the fast engine left it. */
function inFlight(): { readonly entry: string | null; readonly callNumber: number } {
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
export class WallClockExceeded extends SandboxError {}

function isTimeout(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/**
 * Runs `fn` (synchronous) with at most `ms` of wall-clock time (`ms` <= 0 or not finite: no limit); past it,
 * `fn` is terminated and a SandboxError of kind `budget` is thrown. Nested inside another armed scope, `fn`
 * runs directly (the outer watchdog covers it).
 */
export function withWallClock<T>(ms: number, fn: () => T, budgetMs: number = ms): T {
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
    const { entry, callNumber } = inFlight();
    // (Entry points named $blis... are the policy adapters' wrappers: not names the policy's author wrote.)
    const what = entry === null ? 'the run' : entry.startsWith('$') ? `call #${callNumber} of the fast-engine policy` : `call #${callNumber} of ${entry}()`;
    throw new WallClockExceeded('budget', 'fast', entry, callNumber, `wall-clock backstop: ${what === 'the run' ? 'the run was stopped when it' : `${what} was stopped when the run`} passed its wall-clock budget of ${Math.ceil(budgetMs)} ms (work the instruction budget does not count, or a run too long for the budget)`);
  } finally {
    armed = false;
    r.slot.fn = null;
    r.slot.result = undefined;
    fastCallInFlight.entry = null;
  }
}

/** A wall-clock deadline shared by the synchronous stretches of one run. */
export class WallClock {
  private readonly deadline: number;
  constructor(readonly budgetMs: number) {
    // The wall clock only decides when the watchdog fires (a run then fails); it never feeds a result.
    // eslint-disable-next-line no-restricted-globals
    this.deadline = performance.now() + budgetMs;
  }

  /** Runs `fn` under the watchdog with the time left (at least 1 ms: a run already over its budget fails at once). */
  run<T>(fn: () => T): T {
    // eslint-disable-next-line no-restricted-globals
    return withWallClock(Math.max(1, this.deadline - performance.now()), fn, this.budgetMs);
  }
}
