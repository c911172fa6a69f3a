/**
 * `blis run` generates a long distribution workload on a worker thread (workload/threaded-stream.ts); its output
 * must be the bytes of the one-thread run (BLIS_WORKLOAD_THREAD=0), whatever the run reads of the requests: the
 * prompts' block hashes (prefix-affinity routing, a non-default block size, a shared prefix), deadlines, and a
 * horizon that stops the run while the worker still has requests to hand out.
 */
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function run(args: string, threaded: boolean): Promise<string> {
  process.env['BLIS_WORKLOAD_THREAD'] = threaded ? '1' : '0';
  let out = '';
  const code = await main(args.split(' '), { stdout: (s) => (out += s), warn: () => undefined, error: (s) => (out += `error: ${s}`) });
  expect(code).toBe(0);
  return out;
}

const MODEL = '--model meta-llama/llama-3.1-8b-instruct --hardware H100 --tp 1 --log error';

describe('threaded workload generation', () => {
  beforeAll(() => {
    // `npm test` builds first; a bare `vitest run` on a fresh clone has no dist/ yet (the worker runs from it).
    if (!existsSync(path.join(ROOT, 'dist', 'workload', 'stream-worker.js'))) execSync('npm run build', { cwd: ROOT, stdio: 'ignore' });
  });
  afterEach(() => {
    delete process.env['BLIS_WORKLOAD_THREAD'];
  });

  it('a weighted prefix-affinity cluster with a shared prefix and 32-token blocks: the same bytes', async () => {
    const args = `run ${MODEL} --num-requests 5000 --rate 400 --num-instances 3 --routing-policy weighted --routing-scorers prefix-affinity:3,queue-depth:2 --prefix-tokens 96 --block-size-in-tokens 32 --prompt-tokens 120 --prompt-tokens-stdev 40 --output-tokens 30 --output-tokens-stdev 10 --timeout 2`;
    const one = await run(args, false);
    expect(one).toContain('"completed_requests"');
    expect(await run(args, true)).toBe(one);
  }, 60_000);

  it('a horizon that stops the run part-way through the workload: the same bytes', async () => {
    const args = `run ${MODEL} --num-requests 6000 --rate 300 --horizon 8000000 --prompt-tokens 100 --output-tokens 40 --output-format reference`;
    const one = await run(args, false);
    expect(await run(args, true)).toBe(one);
  }, 60_000);
});
