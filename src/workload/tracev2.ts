/**
 * TraceV2 trace files (the reference's `sim/workload/tracev2.go`): types, byte-identical writers and strict
 * readers for the YAML header and the CSV data. Pure text in, text out: the CLI does the file I/O.
 */
export * from './tracev2-types.js';
export { formatTraceCsv, parseTraceCsv, TRACE_V2_BASE_COLUMNS } from './tracev2-csv.js';
export { formatTraceHeaderYaml } from './tracev2-yaml.js';
export { parseTraceHeaderYaml } from './tracev2-yaml-parse.js';
