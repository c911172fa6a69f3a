/**
 * ServeGen data → spec v2 cohorts (`blis convert servegen`, a spec's `servegen_data`). Pure: callers read the
 * directory and pass its chunk files as text.
 */
export { convertServeGenChunks } from './convert.js';
export type { ServeGenConversion } from './convert.js';
export { byteOrder, datasetFileName, traceFileName, type ServeGenChunkFiles, type ServeGenOptions } from './common.js';
export { ServeGenError } from './parse.js';
