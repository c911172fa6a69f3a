/**
 * TraceV2 header YAML and data CSV, valid and damaged (values, columns, quoting, BOM, binary bytes), through
 * `blis replay` and `blis calibrate`: the outcome contract holds.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { applyMutations, expansionBomb, mutations, numberText, sometimes, weirdText, yamlScalar } from './gen.js';
import { CliWorker, caseDir, checkOutcome, cleanupSandbox, fuzzParams, fuzzTimeout, writeFiles } from './harness.js';

const worker = new CliWorker();
afterAll(async () => {
  await worker.close('traces');
  cleanupSandbox();
});

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
const COLUMNS = [
  'request_id', 'client_id', 'tenant_id', 'slo_class', 'session_id', 'round_index', 'prefix_group', 'prefix_length', 'streaming',
  'input_tokens', 'output_tokens', 'text_tokens', 'image_tokens', 'audio_tokens', 'video_tokens', 'reason_ratio', 'model',
  'deadline_us', 'server_input_tokens', 'arrival_time_us', 'send_time_us', 'first_chunk_time_us', 'last_chunk_time_us',
  'num_chunks', 'status', 'error_message', 'finish_reason',
];

/** `good`, or (hostile) sometimes `bad`. */
const either = <T>(hostile: boolean, good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  hostile ? fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: bad }) : good;

const header = (hostile: boolean): fc.Arbitrary<string> => fc
  .record({
    version: either(hostile, pick('3', '2'), yamlScalar),
    unit: either(hostile, pick('microseconds', 'us'), yamlScalar),
    mode: pick('generated', 'real', 'replayed', '~'),
    warmup: either(hostile, pick('0', '1'), numberText),
    extra: sometimes(either(hostile, pick('goodput_slo_targets:\n  critical: {ttft_ms: 100}\n', 'server: {type: vllm}\n', 'network: {measured_rtt_ms: 2}\n'), pick('bogus: 1\n', 'server: 5\n')), 3),
    bomb: hostile ? sometimes(expansionBomb, 8) : fc.constant(undefined),
    damage: hostile ? sometimes(mutations, 3).map((m) => m ?? []) : fc.constant([]),
  })
  .map((h) => applyMutations(`trace_version: ${h.version}\ntime_unit: ${h.unit}\nmode: ${h.mode}\nwarm_up_requests: ${h.warmup}\n${h.extra ?? ''}${h.bomb ?? ''}`, h.damage));

/** One row: sensible values, with (sometimes) one cell replaced by anything. */
const row = (id: number, hostile: boolean): fc.Arbitrary<string> =>
  fc
    .record({
      input: fc.integer({ min: 1, max: 300 }),
      output: fc.integer({ min: 1, max: 100 }),
      arrival: fc.integer({ min: 0, max: 2_000_000 }),
      status: pick('ok', 'ok', 'error', 'timeout', 'incomplete'),
      slo: pick('', 'critical', 'batch'),
      bad: hostile ? sometimes(fc.tuple(fc.integer({ min: 0, max: COLUMNS.length }), fc.oneof(weirdText, numberText)), 6) : fc.constant(undefined),
    })
    .map((r) => {
      const cells = [String(id), 'c', '', r.slo, '', '0', '', '0', 'false', String(r.input), String(r.output), '0', '0', '0', '0', '0', '', '0', '0', String(r.arrival), String(r.arrival), '0', '0', '0', r.status, '', ''];
      if (r.bad !== undefined) {
        const [at, text] = r.bad;
        const quoted = /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
        if (at === COLUMNS.length) cells.push(quoted);
        else cells[at] = quoted;
      }
      return cells.join(',');
    });

const csvText = (hostile: boolean): fc.Arbitrary<string> => fc
  .record({
    n: fc.integer({ min: hostile ? 0 : 1, max: 8 }),
    dupId: hostile ? fc.integer({ min: 0, max: 5 }).map((k) => k === 0) : fc.constant(false),
    cols: either(hostile, pick(COLUMNS.join(','), `\ufeff${COLUMNS.join(',')}`), pick(`${COLUMNS.join(',')},future`, COLUMNS.slice(0, 10).join(','), `${COLUMNS.join(',')},adapter,adapter`)),
    damage: hostile ? sometimes(mutations, 3).map((m) => m ?? []) : fc.constant([]),
  })
  .chain(({ n, dupId, cols, damage }) =>
    fc.tuple(...Array.from({ length: n }, (_, i) => row(dupId && i > 0 ? i - 1 : i, hostile))).map((rows) => applyMutations(`${cols}\n${rows.map((r) => `${r}\n`).join('')}`, damage)),
  );

/** A header and data pair, both clean or both possibly hostile (or binary data). */
const trace: fc.Arbitrary<[string, string | Uint8Array]> = fc.oneof(
  fc.tuple(header(false), csvText(false)),
  fc.tuple(header(true), fc.oneof({ weight: 6, arbitrary: csvText(true) }, { weight: 1, arbitrary: fc.uint8Array({ minLength: 0, maxLength: 64 }) })),
);

const simResults: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.record({ id: fc.integer({ min: 0, max: 8 }), ttft: fc.integer({ min: 1, max: 100_000 }), e2e: fc.integer({ min: 1, max: 1_000_000 }) }), { maxLength: 8 }).map((rs) => JSON.stringify(rs.map((r) => ({ request_id: r.id, ttft_us: r.ttft, e2e_us: r.e2e })))) },
  pick('[]', '[{"request_id": 0, "ttft_us": 1000, "e2e_us": 5000}]', '{}', '[{"request_id": "x"}]', '[1, 2]', 'not json', '[{"request_id": 0, "ttft_us": 1e400, "e2e_us": 1}]'),
  weirdText,
);

describe('fuzz: traces', () => {
  it('replay: every trace ends in a run or one error line naming the file and line', async () => {
    await fc.assert(
      fc.asyncProperty(trace, fc.boolean(), async ([h, data], withResults) => {
        const dir = caseDir();
        const files = writeFiles(dir, { 'trace.yaml': h, 'trace.csv': data });
        const out = `${dir}/out`;
        const argv = ['replay', ...M, '--trace-header', files['trace.yaml']!, '--trace-data', files['trace.csv']!, ...(withResults ? ['--results-path', `${out}.json`] : [])];
        checkOutcome(await worker.run(argv, dir), { 'trace.yaml': h, 'trace.csv': data });
      }),
      fuzzParams('trace replay', 100),
    );
  }, fuzzTimeout(120_000));

  it('calibrate: observed trace, sim results and ITL files', async () => {
    await fc.assert(
      fc.asyncProperty(trace, simResults, fc.option(fc.oneof(pick('request_id,chunk_index,timestamp_us\n0,0,10\n0,1,20\n', 'request_id,chunk_index\n', ''), weirdText), { nil: undefined }), async ([h, data], sim, itl) => {
        const dir = caseDir();
        const inputs: Record<string, string | Uint8Array> = { 'trace.yaml': h, 'trace.csv': data, 'sim.json': sim, ...(itl === undefined ? {} : { 'itl.csv': itl }) };
        const files = writeFiles(dir, inputs);
        const argv = ['calibrate', '--trace-header', files['trace.yaml']!, '--trace-data', files['trace.csv']!, '--sim-results', files['sim.json']!, '--report', `${dir}/report.json`, ...(itl === undefined ? [] : ['--itl-data', files['itl.csv']!])];
        checkOutcome(await worker.run(argv, dir), inputs);
      }),
      fuzzParams('calibrate inputs', 60),
    );
  }, fuzzTimeout(120_000));
});
