/**
 * Spec features the reference generates but this implementation does not yet: the ServeGen source and LoRA
 * adapters (requests have no adapter field yet). Such specs are rejected with the field named rather than
 * generated differently. (Sessions, concurrency clients and inference-perf are generated: sessions/ and
 * inference-perf.ts.)
 */
import { WorkloadSpecError, formatSpecPath } from './errors.js';
import type { SpecPath } from './errors.js';
import type { TrafficSource, WorkloadSpec } from './types.js';

export interface UnsupportedFeature {
  readonly path: SpecPath;
  readonly problem: string;
  readonly fix: string;
}

function sourceFeature(s: TrafficSource, path: SpecPath): UnsupportedFeature | null {
  if (s.adapter !== '') {
    return { path: [...path, 'adapter'], problem: 'LoRA adapters are not supported yet', fix: 'remove adapter' };
  }
  return null;
}

/** The first feature of `spec` that generation does not support, or null. */
export function findUnsupported(spec: WorkloadSpec): UnsupportedFeature | null {
  for (const [i, c] of spec.clients.entries()) {
    const f = sourceFeature(c, ['clients', i]);
    if (f !== null) return f;
  }
  for (const [i, c] of spec.cohorts.entries()) {
    const f = sourceFeature(c, ['cohorts', i]);
    if (f !== null) return f;
  }
  return null;
}

/** Throws WORKLOAD_SPEC_UNSUPPORTED (without a file position) when `spec` uses an unsupported feature. */
export function assertGeneratable(spec: WorkloadSpec, file = 'workload spec'): void {
  const f = findUnsupported(spec);
  if (f !== null) throw new WorkloadSpecError('WORKLOAD_SPEC_UNSUPPORTED', file, null, formatSpecPath(f.path), f.problem, f.fix);
}
