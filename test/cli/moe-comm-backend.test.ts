/** `--moe-comm-backend` on the command line: an unknown backend is one error line naming the flag, exit 2. */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

describe('--moe-comm-backend', () => {
  it('refuses an unknown backend, naming the flag and the valid ones, with nothing on stdout', async () => {
    const errors: string[] = [];
    const out: string[] = [];
    const argv = ['run', '--latency-model', 'corrected-physics', '--model', 'qwen/qwen3-30b-a3b', '--hardware', 'H100', '--tp', '1', '--dp', '2',
      '--enable-expert-parallel', '--moe-comm-backend', 'deepep_lowlatency', '--num-requests', '5'];
    const code = await main(argv, { stdout: (t) => out.push(t), warn: () => {}, error: (t) => errors.push(t), info: () => {} });
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(errors).toEqual(['unknown --moe-comm-backend "deepep_lowlatency"; valid: naive, allgather_reducescatter, pplx, deepep_high_throughput, deepep_low_latency, mori, flashinfer_all2allv']);
  });
});
