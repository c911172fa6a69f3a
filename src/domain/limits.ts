/**
 * What one simulation can hold. Each limit is far above any realistic deployment and far below what would
 * exhaust a workstation's memory or spin for hours; a value past one is refused with a {@link LimitError}
 * before any work starts (docs/usage.md, "Limits").
 */
import { BlisError, type ErrorWhere } from './errors.js';

export const LIMITS = {
  /** Instances in one cluster (each holds its own KV cache, queues and metrics: ~0.1-1 MB). */
  instances: 10_000,
  /** GPU or CPU KV blocks of one instance (the block tables are typed arrays of 30-75 bytes per block). */
  kvBlocksPerInstance: 2 ** 26,
  /** KV blocks (GPU + CPU) over every instance of the cluster. */
  kvBlocksPerCluster: 2 ** 28,
  /** Requests in one workload (each costs ~1-2 KB while simulated). */
  requests: 20_000_000,
  /** Prompt or output tokens of one request (token ids are held as int32 arrays). */
  tokensPerRequest: 10_000_000,
  /** Token ids of a whole workload generated or replayed at once (4 bytes each). */
  workloadTokens: 1_000_000_000,
  /**
   * Session rounds the generator must draw only to keep the random streams aligned with the reference (the
   * rounds of a session after the horizon are drawn when another session of the same client follows it).
   */
  drawnSessionRounds: 10_000_000,
  /** Shortest autoscaler tick (µs): a shorter one ticks millions of times per simulated minute for nothing. */
  autoscalerMinIntervalUs: 1_000,
} as const;

/** A value beyond one of the {@link LIMITS}. */
export class LimitError extends BlisError {
  constructor(message: string, where: ErrorWhere = {}) {
    super('LIMIT', message, where);
    this.name = 'LimitError';
  }
}

/** Thousands separators, for messages. */
export function grouped(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n);
}

/** Throws a {@link LimitError} naming `what` when `value` exceeds `limit`; `fix` says what to do instead. */
export function checkLimit(value: number, limit: number, what: string, fix: string, where: ErrorWhere = {}): void {
  if (value > limit) throw new LimitError(`${what} is ${grouped(value)}, above the limit of ${grouped(limit)} (docs/usage.md, Limits); ${fix}`, where);
}

/**
 * What one input file (YAML or JSON: specs, bundles, deployments, sweep files, model and hardware configs,
 * ServeGen datasets, calibration inputs) may hold. Checked by a linear pre-scan of the text before any parser
 * builds a tree, so a hostile file fails in milliseconds and a few MB (docs/usage.md, "Limits").
 */
export const INPUT_LIMITS = {
  /** Bytes of one input file (CSV traces and ServeGen files have their own caps). */
  bytes: 64 * 1024 * 1024,
  /**
   * YAML structure indicators (`:` `-` `,` `[` `{` `?`, counted everywhere, also inside strings and comments):
   * a sound upper bound of the values a YAML file can hold (each value needs one), ~0.3 KB each while parsed. A
   * workload spec of 10,000 flow-style clients holds about 270,000 (test/cli/scale.test.ts).
   */
  yamlIndicators: 1_500_000,
  /** `:` characters of a YAML file (an upper bound of its mapping keys; 10,000 flow-style clients hold 120,000). */
  yamlKeys: 600_000,
  /** Values (objects, arrays, strings, numbers, literals) of one JSON file. */
  jsonValues: 4_000_000,
  /** Keys of one JSON object. */
  jsonKeysPerObject: 100_000,
  /** Nesting of objects and arrays (YAML: estimated from brackets, indentation and indicators). */
  depth: 128,
  /** Characters of one JSON string. */
  scalarChars: 16 * 1024 * 1024,
  /**
   * Characters inside double-quoted YAML strings, in all: the YAML parser builds each such string one character
   * at a time (~37 bytes per character until it is used: a 40 MB spec of quoted ids took 1.5 GB and 23 s).
   */
  yamlDoubleQuotedChars: 4_000_000,
  /** Values of a YAML document with every alias and merge key expanded (measured on the syntax tree). */
  expandedValues: 2_000_000,
} as const;
