/**
 * TraceV2 trace files (the reference's `sim/workload/tracev2.go`): types, byte-identical writers and strict
 * readers for the YAML header and the CSV data.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { formatTraceCsv, parseTraceCsv } from './tracev2-csv.js';
import { formatTraceHeaderYaml, parseTraceHeaderYaml } from './tracev2-yaml.js';
import type { TraceV2 } from './tracev2-types.js';

export * from './tracev2-types.js';
export { formatTraceCsv, parseTraceCsv, TRACE_V2_BASE_COLUMNS } from './tracev2-csv.js';
export { formatTraceHeaderYaml, parseTraceHeaderYaml } from './tracev2-yaml.js';

/** Reads and parses a header/data file pair (as `blis replay --trace-header/--trace-data` do). */
export function readTraceV2Files(headerPath: string, dataPath: string): TraceV2 {
  const header = parseTraceHeaderYaml(readFileSync(headerPath, 'utf8'), headerPath);
  const records = parseTraceCsv(readFileSync(dataPath, 'utf8'), dataPath);
  return { header, records };
}

/** Writes `<prefix>.yaml` and `<prefix>.csv` as `--trace-output <prefix>` does (header first, like the reference). */
export function writeTraceV2Files(prefix: string, trace: TraceV2): void {
  writeFileSync(`${prefix}.yaml`, formatTraceHeaderYaml(trace.header));
  writeFileSync(`${prefix}.csv`, formatTraceCsv(trace.records, trace.header.mode));
}
