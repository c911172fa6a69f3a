import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    // Vitest runs availableParallelism() - 1 files at once by default: one at a time on a 2-core machine, where
    // most files spend part of their time waiting on child processes, sockets or a worker pool. Two at once keeps
    // both cores busy (npm test: 14.3 min -> see docs/testing or the closing note for the measured time).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
