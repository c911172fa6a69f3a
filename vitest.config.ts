import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files (minutes of the suite on a 2-core machine), started first so that the rest runs beside them
 * instead of after them: without a duration cache (a fresh clone, CI) Vitest would start the 4-7 minute
 * built-in-suites acceptance test near the end, alone.
 */
const SLOW_FIRST = [
  'src/evaluate/builtin-suites.test.ts',
  'test/docs/examples.test.ts',
  'src/evaluate/search/search.test.ts',
  'test/queue/faults.test.ts',
  'src/evaluate/search/ranges.test.ts',
  'src/observe/e2e.test.ts',
  'src/fit/serve-fit.test.ts',
  'test/integrations/python.test.ts',
];

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = SLOW_FIRST.findIndex((s) => f.moduleId.endsWith(s));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    // Vitest runs availableParallelism() - 1 files at once by default: one at a time on a 2-core machine, where
    // most files spend part of their time waiting on child processes, sockets or a worker pool. Two at once keeps
    // both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: SlowFirst },
    // Every scratch folder of the run under one temporary root, removed at the end (test/support/tmp-root.ts).
    globalSetup: ['test/support/tmp-root.ts'],
  },
});
