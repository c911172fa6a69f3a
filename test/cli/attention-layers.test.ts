/** `--attention-layers` on the command line: a bad value is one error line naming the flag, exit 2. */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

describe('--attention-layers', () => {
  it('refuses a value other than full or config', async () => {
    const errors: string[] = [];
    const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--attention-layers', 'hybrid', '--num-requests', '5'];
    const code = await main(argv, { stdout: () => {}, warn: () => {}, error: (t) => errors.push(t), info: () => {} });
    expect(code).toBe(2);
    expect(errors).toEqual(['--attention-layers must be full or config, got "hybrid"']);
  });
});
