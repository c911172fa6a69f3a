/**
 * Issue 27's low findings that had no test at the command line (the acceptance audit): each is one clear
 * `error:` line naming the field or flag and the fix, exit 2, empty stdout, before any work.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../io/processes.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1'];
let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(tmpdir(), 'blis-i27-'));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refused(args: string[], pattern: RegExp): Promise<void> {
  const r = await runCli(args, 60_000);
  expect(r.stderr).toMatch(pattern);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('issue 27: nonsense values refused at the command line', () => {
  it('a trace header with warm_up_requests: -1 (was accepted)', async () => {
    const h = path.join(dir, 'h.yaml');
    const d = path.join(dir, 'd.csv');
    writeFileSync(h, 'trace_version: 2\ntime_unit: us\nmode: generated\nwarm_up_requests: -1\n');
    writeFileSync(d, 'request_id,client_id,tenant_id,slo_class,session_id,round_index,prefix_group,streaming,input_tokens,output_tokens,text_tokens,image_tokens,audio_tokens,video_tokens,reason_ratio,model,deadline_us,server_input_tokens,arrival_time_us,send_time_us,first_chunk_time_us,last_chunk_time_us,num_chunks,status,error_message\n');
    await refused(['replay', ...M, '--trace-header', h, '--trace-data', d], /^error: .*h\.yaml:4: warm_up_requests: must be >= 0 .*got -1; write warm_up_requests: 0 when there are none\n$/);
  });

  it('a seed above int64, as a flag and in a spec (was wrapped)', async () => {
    await refused(['run', ...M, '--num-requests', '5', '--seed', '18446744073709551616'], /^error: --seed: 18446744073709551616 does not fit in int64/);
    const s = path.join(dir, 's.yaml');
    writeFileSync(s, 'version: "2"\nseed: 18446744073709551616\naggregate_rate: 10\nnum_requests: 5\nclients:\n  - {id: c, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 10}}, output_distribution: {type: constant, params: {value: 10}}}\n');
    await refused(['run', ...M, '--workload-spec', s], /^error: .*s\.yaml:2:7: seed: must fit in int64 \(-9223372036854775808 to 9223372036854775807\)/);
  });

  it('sweep --workers 1000 on a 2-point sweep (did not finish in 60 s): the bound names the cores', async () => {
    const sw = path.join(dir, 'sw.yaml');
    writeFileSync(sw, 'base: {model: meta-llama/llama-3.1-8b-instruct, numRequests: 5}\naxes:\n  seed: [1, 2]\n');
    await refused(['sweep', sw, '--workers', '1000'], /^error: --workers must be <= \d+ on this machine \(it has \d+ cores?\), got 1000\n$/);
  });
});
