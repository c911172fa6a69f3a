/**
 * Shapes and helpers shared by the two ServeGen conversion paths (language/multimodal periods and reasoning).
 */
import type { ArrivalSpec, CohortSpec, DistSpec } from '../spec/types.js';

/** One `chunk-<id>-trace.csv` of the directory and its dataset (null when the file is missing). */
export interface ServeGenChunkFiles {
  readonly id: string;
  readonly trace: string;
  readonly dataset: string | null;
}

export interface ServeGenOptions {
  /** The directory as the user named it (for messages). */
  readonly dir: string;
  readonly seed: bigint;
  /** Period length (s); <= 0 = 600. */
  readonly windowDurationSecs: number;
  /** Gap between periods (s); < 0 = 180. */
  readonly drainTimeoutSecs: number;
  readonly warn?: (message: string) => void;
  /**
   * --semantics corrected: a cohort whose windows are mostly Poisson (empty pattern) is converted as Poisson,
   * and a Gamma/Weibull cohort averages cv, shape and scale over the windows that give them (the reference
   * averages over every window and writes 0 for what none gives, an invalid spec).
   */
  readonly corrected?: boolean;
}

export const SLO_CLASSES = ['critical', 'standard', 'batch', 'sheddable', 'background'] as const;
/** The standard ServeGen trace window (s). */
export const WINDOW_SEC = 600;
export function traceFileName(id: string): string {
  return `chunk-${id}-trace.csv`;
}

export function datasetFileName(id: string): string {
  return `chunk-${id}-dataset.json`;
}

/** Go's sort.Strings order (UTF-8 bytes, i.e. code points), which differs from JS's UTF-16 order above U+FFFF. */
export function byteOrder(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

export function cohortOf(id: string, population: number, sloClass: string, arrival: ArrivalSpec, lengths: { input: DistSpec; output: DistSpec }, spike: CohortSpec['spike']): CohortSpec {
  return {
    id,
    population,
    tenantId: '',
    sloClass,
    model: '',
    adapter: '',
    rateFraction: 1,
    arrival,
    inputDist: lengths.input,
    outputDist: lengths.output,
    prefixGroup: '',
    prefixLength: 0,
    streaming: true,
    network: null,
    multimodal: null,
    reasoning: null,
    timeout: null,
    sloTargetUs: null,
    closedLoop: null,
    prefixSharing: '',
    diurnal: null,
    spike,
    drain: null,
  };
}
