import { describe, expect, it } from 'vitest';
import {
  TraceFormatError,
  emptyTraceHeader,
  emptyTraceRecord,
  formatTraceCsv,
  formatTraceHeaderYaml,
  parseTraceCsv,
  parseTraceHeaderYaml,
  TRACE_V2_BASE_COLUMNS,
} from './tracev2.js';
import type { TraceHeader, TraceRecord } from './tracev2.js';
import { formatFloatF, formatFloatG } from '../gocompat/go-float-format.js';
import { sortYamlKeys, yamlString } from '../gocompat/go-yaml-emit.js';
import { goCsvField, goTrimSpace } from '../gocompat/go-csv.js';
import { PARITY_SKIP_NOTE, parityCases, readCaseFile, skipWhenNoFixtures } from '../../test/parity/workload-fixtures.js';

const HEADER_ROW = TRACE_V2_BASE_COLUMNS.join(',');

function catchTraceError(fn: () => unknown): TraceFormatError {
  try {
    fn();
  } catch (e) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
  throw new Error('expected a TraceFormatError');
}

describe(`TraceV2 round-trips every reference trace byte for byte${PARITY_SKIP_NOTE}`, () => {
  skipWhenNoFixtures();
  for (const c of parityCases()) {
    it(c.name, () => {
      const yamlText = readCaseFile(c, 'trace.yaml');
      const csvText = readCaseFile(c, 'trace.csv');
      const header = parseTraceHeaderYaml(yamlText, 'trace.yaml');
      expect(formatTraceHeaderYaml(header)).toBe(yamlText);
      const records = parseTraceCsv(csvText, 'trace.csv');
      expect(records.length).toBe(csvText.trimEnd().split('\n').length - 1);
      expect(formatTraceCsv(records, header.mode)).toBe(csvText);
    });
  }
});

describe('Go number and string formatting', () => {
  it('formats floats like strconv.FormatFloat', () => {
    expect(formatFloatF(0)).toBe('0');
    expect(formatFloatF(0.25)).toBe('0.25');
    expect(formatFloatF(1e-7)).toBe('0.0000001');
    expect(formatFloatF(1.5e21)).toBe('1500000000000000000000');
    expect(formatFloatF(-0)).toBe('-0');
    expect(formatFloatG(200)).toBe('200');
    expect(formatFloatG(60000)).toBe('60000');
    expect(formatFloatG(1e6)).toBe('1e+06');
    expect(formatFloatG(1234567)).toBe('1.234567e+06');
    expect(formatFloatG(0.0001)).toBe('0.0001');
    expect(formatFloatG(0.00001)).toBe('1e-05');
    expect(formatFloatG(0.9)).toBe('0.9');
    expect(formatFloatG(1e100)).toBe('1e+100');
  });

  it('quotes YAML strings like yaml.v3', () => {
    expect(yamlString('critical')).toBe('critical');
    expect(yamlString('')).toBe('""');
    expect(yamlString('true')).toBe('"true"');
    expect(yamlString('yes')).toBe('"yes"');
    expect(yamlString('123')).toBe('"123"');
    expect(yamlString('1.5')).toBe('"1.5"');
    expect(yamlString('null')).toBe('"null"');
    expect(yamlString('a: b')).toBe("'a: b'");
    expect(yamlString('#x')).toBe("'#x'");
    expect(yamlString('- x')).toBe("'- x'");
    expect(yamlString("it's")).toBe("it's");
    expect(yamlString(' lead')).toBe("' lead'");
    expect(yamlString('a\tb')).toBe('"a\\tb"');
    expect(yamlString('a,b')).toBe('a,b');
    expect(yamlString('préfix')).toBe('préfix');
  });

  it('orders map keys naturally like yaml.v3', () => {
    expect(sortYamlKeys(['critical', 'batch', 'standard'])).toEqual(['batch', 'critical', 'standard']);
    expect(sortYamlKeys(['c10', 'c9', 'c1'])).toEqual(['c1', 'c9', 'c10']);
    expect(sortYamlKeys(['b', 'B', 'a'])).toEqual(['B', 'a', 'b']);
  });

  it('quotes CSV fields like encoding/csv and trims like strings.TrimSpace', () => {
    expect(goCsvField('')).toBe('');
    expect(goCsvField('plain')).toBe('plain');
    expect(goCsvField('a,b')).toBe('"a,b"');
    expect(goCsvField('say "hi"')).toBe('"say ""hi"""');
    expect(goCsvField(' lead')).toBe('" lead"');
    expect(goCsvField('\\.')).toBe('"\\."');
    expect(goTrimSpace('\u0085 x \t')).toBe('x');
    expect(goTrimSpace('\ufeffx')).toBe('\ufeffx');
  });
});

describe('TraceV2 header YAML', () => {
  it('writes optional sections in struct order with omitempty and nested indentation', () => {
    const h: TraceHeader = emptyTraceHeader();
    h.traceVersion = 3;
    h.timeUnit = 'us';
    h.mode = 'real';
    h.workloadSeed = 0n;
    h.workloadSpec = 'preset:chatbot';
    h.server = { type: 'vllm', model: 'm', tensorParallel: 2, maxNumSeqs: 0, blockSize: 16, gpuMemoryUtilization: 0.9, maxModelLen: 0 };
    h.network = { measuredRttMs: 0 };
    h.goodputSloTargets = new Map([
      ['standard', { ttftMs: 0, itlMs: 0, e2eMs: 0 }],
      ['critical', { ttftMs: 200, itlMs: 1.5, e2eMs: 0 }],
    ]);
    h.kvOffload = {
      cpuBytesToUse: 1000, perBlockBytes: 10, blockSize: 16, blocksPerChunk: 1, tokensPerHash: 16, evictionPolicy: 'lru',
      offloadPromptOnly: false, selfDescribingKvEvents: true,
      secondaryTiers: [
        {
          type: 'fs', rootDir: '/tmp/kv', nReadThreads: 4, nWriteThreads: 2, locality: '', enableKvEvents: false, directIo: true,
          deviceClass: 'nvme', readBandwidth: 2500, writeBandwidth: 1e6, baseLatency: 0, saturationQueueDepth: 1,
          singleTransferFraction: 1, latencyJitterStddev: 0,
        },
      ],
    };
    const text = formatTraceHeaderYaml(h);
    expect(text).toBe(
      [
        'trace_version: 3', 'time_unit: us', 'mode: real', 'warm_up_requests: 0', 'workload_seed: 0',
        'workload_spec: preset:chatbot', 'server:', '    type: vllm', '    model: m', '    tensor_parallel: 2',
        '    block_size: 16', '    gpu_memory_utilization: 0.9', 'network: {}', 'goodput_slo_targets:',
        '    critical:', '        ttft_ms: 200', '        itl_ms: 1.5', '    standard: {}', 'kv_offload:',
        '    cpu_bytes_to_use: 1000', '    per_block_bytes: 10', '    block_size: 16', '    blocks_per_chunk: 1',
        '    tokens_per_hash: 16', '    eviction_policy: lru', '    offload_prompt_only: false',
        '    self_describing_kv_events: true', '    secondary_tiers:', '        - type: fs', '          root_dir: /tmp/kv',
        '          n_read_threads: 4', '          n_write_threads: 2', '          enable_kv_events: false',
        '          direct_io: true', '          device_class: nvme', '          read_bandwidth: 2500',
        '          write_bandwidth: 1e+06', '          base_latency: 0', '          saturation_queue_depth: 1',
        '          single_transfer_fraction: 1', '          latency_jitter_stddev: 0', '',
      ].join('\n'),
    );
    const back = parseTraceHeaderYaml(text, 'h.yaml');
    expect(back).toEqual(h);
    expect(formatTraceHeaderYaml(back)).toBe(text);
  });

  it('reads nulls as zero values and seeds as 64-bit integers', () => {
    const h = parseTraceHeaderYaml('trace_version: 3\nmode: ~\nworkload_seed: -9223372036854775808\nserver:\n', 'h.yaml');
    expect(h.mode).toBe('');
    expect(h.workloadSeed).toBe(-(2n ** 63n));
    expect(h.server).toBeNull();
  });

  it.each([
    ['trace_version: 3\nbogus: 1\n', 'TRACE_HEADER_UNKNOWN_KEY', 2, /h\.yaml:2: bogus: unknown key in trace header; remove it/],
    ['trace_version: 3\nserver:\n  typo: x\n', 'TRACE_HEADER_UNKNOWN_KEY', 3, /server\.typo: unknown key in server/],
    ['trace_version: three\n', 'TRACE_HEADER_TYPE', 1, /trace_version: "three" is not an integer/],
    ['trace_version: "3"\n', 'TRACE_HEADER_TYPE', 1, /is not an integer; write an unquoted/],
    ['trace_version: 3\nwarm_up_requests: 1.5\n', 'TRACE_HEADER_TYPE', 2, /warm_up_requests/],
    ['server: 5\n', 'TRACE_HEADER_TYPE', 1, /server: expected a mapping/],
    ['mode: [a]\n', 'TRACE_HEADER_TYPE', 1, /mode: expected a single string/],
    ['goodput_slo_targets:\n  critical:\n    ttft_ms: fast\n', 'TRACE_HEADER_TYPE', 3, /goodput_slo_targets\.critical\.ttft_ms: "fast" is not a number/],
    ['kv_offload:\n  offload_prompt_only: maybe\n', 'TRACE_HEADER_TYPE', 2, /is not a boolean/],
    ['mode: a\nmode: b\n', 'TRACE_HEADER_SYNTAX', 2, /h\.yaml:2: mode: duplicate key \(first defined on line 1\)/],
    ['goodput_slo_targets:\n  a: {}\n  a: {}\n', 'TRACE_HEADER_SYNTAX', 3, /goodput_slo_targets\.a: duplicate key/],
    ['mode: real\ntime_unit: us\n', 'TRACE_HEADER_VALUE', 1, /trace_version: is missing \(or 0\); write trace_version: 3/],
    ['time_unit: us\ntrace_version: 7\n', 'TRACE_HEADER_VALUE', 2, /h\.yaml:2: trace_version: 7 is not a version this reader knows/],
    ['trace_version: 3\ntime_unit: us\nwarm_up_requests: -1\n', 'TRACE_HEADER_VALUE', 3, /h\.yaml:3: warm_up_requests: must be >= 0 .*got -1; write warm_up_requests: 0/],
    ['trace_version: 3\ntime_unit: milliseconds\n', 'TRACE_HEADER_VALUE', 2, /h\.yaml:2: time_unit: unknown time unit "milliseconds": every time in a TraceV2 trace is in microseconds/],
    ['trace_version: 3\n"bad\\u0007key": 1\n', 'TRACE_HEADER_UNKNOWN_KEY', 2, /h\.yaml:2: "bad\\x07key": unknown key/],
    ['trace_version: 3\nmode: \u0000\n', 'TRACE_INPUT', 2, /h\.yaml:2:7: the file holds binary data/],
    ['a0: &a0 [1,2,3,4,5,6,7,8,9,10]\n' + Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(',')}]\n`).join(''), 'TRACE_INPUT', -1, /expands to more than 2,000,000 values/],
    ['mode: [a\n', 'TRACE_HEADER_SYNTAX', -1, /invalid YAML/],
    ['# nothing\n', 'TRACE_HEADER_EMPTY', 0, /h\.yaml: trace header is empty/],
    ['- a\n', 'TRACE_HEADER_TYPE', 1, /expected a mapping of trace header keys/],
  ] as const)('rejects %j', (text, code, line, msg) => {
    const e = catchTraceError(() => parseTraceHeaderYaml(text, 'h.yaml'));
    expect(e.code).toBe(code);
    if (line >= 0) expect(e.line).toBe(line);
    expect(e.file).toBe('h.yaml');
    expect(e.message).toMatch(msg);
  });
});

function rec(over: Partial<TraceRecord>): TraceRecord {
  return { ...emptyTraceRecord(), status: 'ok', ...over };
}

describe('TraceV2 CSV', () => {
  it('adds optional columns only when needed and round-trips them', () => {
    const plain = formatTraceCsv([rec({})]);
    expect(plain.split('\n')[0]).toBe(HEADER_ROW);
    const records = [
      rec({ requestId: 0, sloClass: 'critical', vllmPriority: 0, sloTargetUs: 5000, xRequestId: 'u-1', adapter: 'lora-a', thinkTimeUs: 7, reasonRatio: 0.125 }),
      rec({ requestId: 1, errorMessage: 'boom, "bad"', clientId: ' spaced' }),
    ];
    const real = formatTraceCsv(records, 'real');
    const cols = real.split('\n')[0]?.split(',') ?? [];
    expect(cols[4]).toBe('vllm_priority');
    expect(cols[cols.indexOf('deadline_us') + 1]).toBe('slo_target_us');
    expect(cols.slice(-3)).toEqual(['x_request_id', 'adapter', 'think_time_us']);
    expect(real).toContain('"boom, ""bad"""');
    expect(parseTraceCsv(real, 't.csv')).toEqual(records);
    // Outside real mode neither x_request_id nor a class-implied vllm_priority is written.
    const generated = formatTraceCsv(records, 'generated').split('\n')[0] ?? '';
    expect(generated).not.toContain('x_request_id');
    expect(generated).not.toContain('vllm_priority');
  });

  it('accepts CRLF, blank lines, quoted multi-line fields and a leading byte-order mark', () => {
    const row = '0,c,,,,0,,0,true,5,6,0,0,0,0,0.5,,0,0,10,10,0,0,0,ok,"line1\nline2",stop';
    const text = `\ufeff${HEADER_ROW}\r\n\r\n${row}\r\n1,c,,,,0,,0,0,5,6,0,0,0,0,0,,0,0,10,10,0,0,0,ok,, done \n`;
    const got = parseTraceCsv(text, 't.csv');
    expect(got).toHaveLength(2);
    expect(got[0]?.errorMessage).toBe('line1\nline2');
    expect(got[0]?.streaming).toBe(true);
    expect(got[1]?.finishReason).toBe('done');
    expect(got[1]?.requestId).toBe(1);
  });

  const good = '0,c,,,,0,,0,false,5,6,0,0,0,0,0,,0,0,10,10,0,0,0,ok,,';
  const withCell = (col: string, value: string): string => {
    const cells = good.split(',');
    cells[0] = '1';
    cells[TRACE_V2_BASE_COLUMNS.indexOf(col)] = value;
    return `${HEADER_ROW}\n${good}\n${cells.join(',')}\n`;
  };
  it.each([
    [withCell('input_tokens', 'abc'), 'TRACE_CSV_VALUE', 3, 'input_tokens', /t\.csv:3: column "input_tokens": "abc" is not an integer/],
    [withCell('output_tokens', '-1'), 'TRACE_CSV_VALUE', 3, 'output_tokens', /negative value -1 not allowed/],
    [withCell('streaming', 'yes'), 'TRACE_CSV_VALUE', 3, 'streaming', /not a boolean; write true or false/],
    [withCell('reason_ratio', '1.5'), 'TRACE_CSV_VALUE', 3, 'reason_ratio', /outside \[0\.0, 1\.0\]/],
    [withCell('deadline_us', '5'), 'TRACE_CSV_VALUE', 3, 'deadline_us', /precedes arrival_time_us 10/],
    [withCell('arrival_time_us', '9007199254740993'), 'TRACE_CSV_VALUE', 3, 'arrival_time_us', /exceeds 2\^53/],
    [`${HEADER_ROW}\n0,c,,\n`, 'TRACE_CSV_COLUMNS', 2, '', /row has 4 columns, expected 27 as in the header/],
    [`${HEADER_ROW}\n${good},extra\n`, 'TRACE_CSV_COLUMNS', 2, '', /row has 28 columns, expected 27 as in the header \(the first extra value is "extra"\)/],
    [`${HEADER_ROW},future\n${good},1\n`, 'TRACE_CSV_HEADER', 1, 'future', /header column 28 "future" is not a TraceV2 column; its values would be ignored/],
    [`${HEADER_ROW},adapter,adapter\n${good},a,b\n`, 'TRACE_CSV_HEADER', 1, 'adapter', /"adapter" appears twice/],
    [`${HEADER_ROW}\n${good}\n${good}\n`, 'TRACE_CSV_VALUE', 3, 'request_id', /request_id 0 appears again \(first on line 2\)/],
    [withCell('arrival_time_us', '-5'), 'TRACE_CSV_VALUE', 3, 'arrival_time_us', /negative value -5 not allowed/],
    [withCell('first_chunk_time_us', '-1'), 'TRACE_CSV_VALUE', 3, 'first_chunk_time_us', /negative value -1 not allowed/],
    [withCell('status', 'okay'), 'TRACE_CSV_VALUE', 3, 'status', /unknown status "okay"; use one of ok, error, timeout, incomplete/],
    [`\ufeffrequest_id,client\n`, 'TRACE_CSV_HEADER', 1, 'client_id', /header column 2 is "client"/],
    [`${HEADER_ROW.replace('client_id', 'client_id\u200b')}\n`, 'TRACE_CSV_HEADER', 1, 'client_id', /header column 2 is "client_id\\u200b"/],
    [`${HEADER_ROW}\n\u0000\u0001\u0002binary\n`, 'TRACE_INPUT', 2, '', /t\.csv:2: the file holds binary data \(a NUL byte\), not text \(column 1\)/],
    [`${HEADER_ROW}\n0,c"x,,\n`, 'TRACE_CSV_SYNTAX', 2, '', /bare " in non-quoted field/],
    [`${HEADER_ROW}\n0,"c"x,,\n`, 'TRACE_CSV_SYNTAX', 2, '', /extraneous character after a quoted field/],
    [`${HEADER_ROW}\n0,"c,,\n`, 'TRACE_CSV_SYNTAX', 2, '', /never closed/],
    ['', 'TRACE_CSV_EMPTY', 0, '', /no header row/],
    [`request_id,client\n`, 'TRACE_CSV_HEADER', 1, 'client_id', /header column 2 is "client" but the TraceV2 layout has "client_id"/],
  ] as const)('rejects bad input %#', (text, code, line, field, msg) => {
    const e = catchTraceError(() => parseTraceCsv(text, 't.csv'));
    // eslint-disable-next-line no-control-regex
    expect(e.message).not.toMatch(/[\u0000-\u001f\u200b\ufeff]/);
    expect(e.code).toBe(code);
    expect(e.line).toBe(line);
    expect(e.field).toBe(field);
    expect(e.message).toMatch(msg);
  });
});
