/**
 * The sandbox contract for code policies (policy-search-design §8 "Sandbox Requirements"): untrusted
 * JavaScript compiled once, then called many times with plain data, under a deterministic instruction budget
 * and a memory cap, with no I/O, no time, no randomness but what the host hands in, and no reference to any
 * host object. Two engines implement it:
 *
 * - `strict`: QuickJS compiled to WebAssembly (quickjs-wasi): a separate heap with a hard memory limit and an
 *   interrupt-counted instruction budget; the strongest isolation, slower calls.
 * - `fast`: a fresh V8 realm (node:vm, code generation from strings disabled, every intrinsic frozen) running
 *   source rewritten with an injected gas counter; per-request hooks at near-native speed.
 *
 * Both are deterministic on their own: the same source, limits and call sequence give the same results and
 * the same budget counts. Their budget units differ (QuickJS interrupt ticks vs injected gas checks) and so may
 * the last bits of Math.exp/pow/sin/log between QuickJS and V8.
 *
 * Value passing: arguments and results are JSON-compatible plain data (objects, arrays, strings, finite
 * numbers, booleans, null). Arguments are copied into the sandbox; results are copied out (depth, size and
 * cycle checked). Nothing the policy does to its copy reaches the host.
 */

export type SandboxEngineName = 'strict' | 'fast';

export const SANDBOX_ENGINE_NAMES: readonly SandboxEngineName[] = ['fast', 'strict'];

export interface SandboxLimits {
  /** Deterministic budget per call, in the engine's own units (see each engine). */
  readonly instructions: number;
  /** Memory cap in bytes (strict: the QuickJS heap limit; fast: accounted allocations per call). */
  readonly memoryBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  instructions: 1_000_000,
  memoryBytes: 64 * 1024 * 1024,
};

/** Largest result accepted from a call, as JSON text length. */
export const MAX_RESULT_CHARS = 1_000_000;
/** Deepest nesting accepted in a result. */
export const MAX_RESULT_DEPTH = 64;

/**
 * Why a sandboxed program failed:
 * - `syntax`: the source does not parse (or uses a construct the engine forbids, e.g. `async` in `fast`);
 * - `entrypoint`: a declared entry point is not a function defined by the source;
 * - `budget`: a call ran out of its instruction budget (infinite loop, runaway recursion counted as work);
 * - `memory`: a call exceeded the memory cap;
 * - `stack`: the call stack overflowed (deep recursion);
 * - `threw`: the policy threw (its message is kept, truncated);
 * - `return`: the result is not plain data (function, symbol, bigint, cyclic, too deep, too large, NaN/Inf);
 * - `forbidden`: the source reached for something the sandbox does not provide at compile time
 *   (e.g. `import`); at run time such attempts surface as `threw` (ReferenceError/TypeError).
 */
export type SandboxErrorKind = 'syntax' | 'entrypoint' | 'budget' | 'memory' | 'stack' | 'threw' | 'return' | 'forbidden';

export class SandboxError extends Error {
  /** `SANDBOX_SYNTAX`, `SANDBOX_BUDGET`, ... */
  readonly code: string;
  constructor(
    readonly kind: SandboxErrorKind,
    readonly engine: SandboxEngineName,
    /** The entry point called, or null for a compile-time error. */
    readonly entry: string | null,
    /** 1-based number of the call that failed (0 = at compile time). */
    readonly callNumber: number,
    /** One line, what went wrong (no stack, no host paths). */
    readonly detail: string,
  ) {
    super(`${engine} sandbox: ${entry === null ? 'compile' : `call #${callNumber} of ${entry}()`}: ${kindText(kind)}: ${detail}`);
    this.name = 'SandboxError';
    this.code = `SANDBOX_${kind.toUpperCase()}`;
  }
}

/** A short human label of an error kind ("instruction budget exceeded", ...). */
export function kindText(kind: SandboxErrorKind): string {
  switch (kind) {
    case 'syntax': return 'syntax error';
    case 'entrypoint': return 'missing entry point';
    case 'budget': return 'instruction budget exceeded';
    case 'memory': return 'memory limit exceeded';
    case 'stack': return 'stack overflow';
    case 'threw': return 'the policy threw';
    case 'return': return 'invalid result';
    case 'forbidden': return 'forbidden construct';
  }
}

/** A host capability callable from inside the sandbox: numbers in, one number out; it must not throw. */
export type HostFunction = (...args: number[]) => number;

export interface SandboxOptions {
  /** Functions the source must define at top level (e.g. `route`). Checked at compile time. */
  readonly entrypoints: readonly string[];
  readonly limits?: Partial<SandboxLimits>;
  /**
   * Host capabilities, visible inside as methods of a frozen global object `__host` (e.g. `__host.rngIntn(4)`).
   * Arguments are coerced to numbers; the result must be a finite number.
   */
  readonly hostFunctions?: Readonly<Record<string, HostFunction>>;
  /** What the program is, for errors that name a call by its wrapper (`$blis...` entry points), e.g. "the routing policy (p.yaml:3)". */
  readonly label?: string;
}

export interface SandboxStats {
  /** Calls made so far. */
  readonly calls: number;
  /** Budget units used by the last call, and in total: identical across runs for the same call sequence. */
  readonly lastInstructions: number;
  readonly totalInstructions: number;
}

/** A compiled program. Not reentrant: a host function must not call back into the program. */
export interface SandboxProgram {
  readonly engine: SandboxEngineName;
  /**
   * Calls `entry(...args)` with copies of `args` and returns a copy of its result (`undefined` becomes null).
   * Throws {@link SandboxError}; after a `budget`, `memory`, `stack` or `threw` error the program stays usable
   * for the next call (its own top-level state may be partly updated, as in any JS program), except that in
   * the `fast` engine a host stack overflow (native recursion, not the counted call depth) ends the program:
   * every later call fails with `stack`.
   */
  call(entry: string, args: readonly unknown[]): unknown;
  stats(): SandboxStats;
  /** Frees the engine's resources; the program cannot be called afterwards. Idempotent. */
  dispose(): void;
}

export type SandboxCompiler = (source: string, options: SandboxOptions) => SandboxProgram;

/** One engine, loaded once (the strict engine instantiates WebAssembly), then compiling synchronously. */
export interface SandboxEngine {
  readonly name: SandboxEngineName;
  readonly compile: SandboxCompiler;
}
