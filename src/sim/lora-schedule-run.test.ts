import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';
import { simulate, type SimulationResult } from './simulate.js';

const MODEL = 'meta-llama/llama-3.1-8b-instruct';
const LORA = 'lora:\n  adapter_capacity: 1\n  adapters:\n    - {id: sql, rank: 8}\n    - {id: legal, rank: 32}\n';
const HEADER = 'trace_version: 3\ntime_unit: microseconds\nmode: generated\nwarm_up_requests: 0\nworkload_seed: 3\n';
const COLUMNS = 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,prefix_length,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message,finish_reason,adapter';
/** Round robin over 2 instances: request 0 (no adapter) goes to instance 0, request 1 (adapter `sql`) to instance 1. */
const trace = (at1: number): string => [
  COLUMNS,
  '0,c0,,,,0,,0,false,200,20,0,0,0,0,0,,0,0,100000,100000,0,0,0,ok,,,',
  `1,c0,,,,0,,0,false,200,20,0,0,0,0,0,,0,0,${at1},${at1},0,0,0,ok,,,sql`,
].join('\n') + '\n';

async function replay(at1: number, schedule: string | null): Promise<SimulationResult> {
  return simulate({
    mode: 'replay', model: MODEL, numInstances: 2, loraConfig: 'l.yaml', traceHeader: 't.yaml', traceData: 't.csv', horizon: '9223372036854775807',
    ...(schedule === null ? {} : { loraPlacementSchedule: 's.txt' }),
    files: { 'l.yaml': LORA, 't.yaml': HEADER, 't.csv': trace(at1), ...(schedule === null ? {} : { 's.txt': schedule }) },
    outputs: { metrics: true },
  });
}
const ttftOf = (r: SimulationResult, id: number): number =>
  ((JSON.parse(r.files.metrics!) as { requests: { requestID: string; ttft_ms: number }[] }).requests.find((x) => x.requestID === `request_${id}`)!).ttft_ms;

describe('--lora-placement-schedule (upstream\'s scheduled creation policy)', () => {
  // Hand calculation of the cold load of `sql` (rank 8) with the reference's default coefficients:
  //   load = load_base_latency_us + ceil(footprint_bytes_per_rank x rank / load_bandwidth_bytes_us)
  //        = 1500 + ceil(2e6 x 8 / 2e6) = 1500 + 8 = 1508 µs = 1.508 ms.
  const COLD_LOAD_MS = 1.508;

  it('an adapter scheduled onto instance 1 at t = 1 s is resident for a request after t (no cold load) and not before it', async () => {
    const schedule = '# sql onto instance 1 from t = 1 s\n1000000 1=sql\n';
    const after = { on: await replay(2_000_000, schedule), off: await replay(2_000_000, null) };
    // After t: the request finds sql resident; without the schedule it waits for its own load.
    expect(ttftOf(after.off, 1) - ttftOf(after.on, 1)).toBeCloseTo(COLD_LOAD_MS, 6);
    // Before t: the request pays the cold load either way (the same TTFT as without the schedule)...
    const before = { on: await replay(500_000, schedule), off: await replay(500_000, null) };
    expect(ttftOf(before.on, 1)).toBe(ttftOf(before.off, 1));
    expect(ttftOf(before.on, 1)).toBeCloseTo(ttftOf(after.off, 1), 6);
    // ...and at t the schedule finds sql already resident: one load in all, as without the schedule.
    expect(before.on.metrics.adapters!['sql']!.load_count).toBe(1);
    // The scheduled load is a charged load: counted as one.
    expect(after.on.metrics.adapters!['sql']!.load_count).toBe(1);
  });

  it('a later entry moves the placement: the slot\'s adapter is evicted for the new one (one slot)', async () => {
    const r = await replay(2_000_000, '1000000 1=legal\n1500000 1=sql\n');
    // legal loaded at 1 s, then evicted for sql at 1.5 s: sql is resident when request 1 comes.
    expect(r.metrics.adapters!['legal']!.load_count).toBe(1);
    expect(r.metrics.adapters!['legal']!.eviction_count).toBe(1);
    expect(ttftOf(r, 1)).toBeCloseTo(ttftOf(await replay(2_000_000, '1000000 1=sql\n'), 1), 6);
  });

  it('an entry placing nothing on an instance leaves it alone (instance 0 here): instance 1 still pays', async () => {
    const r = await replay(2_000_000, '1000000 0=sql\n');
    expect(ttftOf(r, 1)).toBeCloseTo(ttftOf(await replay(2_000_000, null), 1), 6);
  });
});

describe('--lora-placement-schedule validation (CLI: one error line naming the flag or file:line:col)', () => {
  it('refuses bad files and bad combinations with exit 2', async () => {
    const dir = mkdtempSync(`${tmpdir()}/blis-lora-schedule-`);
    try {
      const put = (name: string, text: string): string => {
        writeFileSync(`${dir}/${name}`, text);
        return `${dir}/${name}`;
      };
      const lora = put('l.yaml', LORA);
      const cases: [string[], RegExp][] = [
        [['--lora-placement-schedule', put('a.txt', '0 0=sql\n')], /--lora-placement-schedule needs LoRA on: pass --lora-config/],
        [['--lora-config', lora, '--lora-placement-schedule', put('b.txt', '# nothing\n')], /b\.txt:1:1: the schedule has no entries/],
        [['--lora-config', lora, '--lora-placement-schedule', put('c.txt', '0 0=sql\n\n  0 1=sql\n')], /c\.txt:3:3: time 0 does not increase past line 1's 0/],
        [['--lora-config', lora, '--lora-placement-schedule', put('d.txt', '1.5 0=sql\n')], /d\.txt:1:1: time "1\.5" is not a whole number of microseconds/],
        [['--lora-config', lora, '--lora-placement-schedule', put('e.txt', '10 0=sql;2=sql\n')], /e\.txt:1:1: instance index 2 is out of range \(the run starts 2 instance\(s\)/],
        [['--lora-config', lora, '--lora-placement-schedule', put('f.txt', '10 1=nope\n')], /f\.txt:1:1: adapter "nope" is not declared in --lora-config \(declared: legal, sql\)/],
        [['--lora-config', lora, '--lora-placement-schedule', put('g.txt', '10 1=sql,legal\n')], /g\.txt:1:1: instance 1 is given 2 adapters but holds 1 \(adapter_capacity\)/],
        [['--lora-config', lora, '--lora-placement-schedule', put('h.txt', '10 0=sql;x=legal\n')], /h\.txt:1:10: instance index "x" is not a whole number/],
        [['--lora-config', lora, '--lora-placement-schedule', `${dir}/absent.txt`], /--lora-placement-schedule/],
      ];
      for (const [args, want] of cases) {
        let out = '';
        const errs: string[] = [];
        const code = await main(['run', '--model', MODEL, '--num-instances', '2', '--num-requests', '5', ...args], { stdout: (t) => (out += t), warn: () => undefined, error: (t) => errs.push(t) });
        expect(code, args.join(' ')).toBe(2);
        expect(out).toBe('');
        expect(errs, args.join(' ')).toHaveLength(1);
        expect(errs[0], args.join(' ')).toMatch(want);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
