/** `blis calibrate`: real (observed) vs simulated latencies. Pure: the CLI does the file I/O. */
export * from './stats.js';
export * from './pairs.js';
export * from './report.js';
export * from './io.js';
export * from './run.js';
export * from './adapter-reference.js';
