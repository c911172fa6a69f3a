/** `--admission-policy` under `--flow-control` is ignored: the run says so once, on stderr, and its output is unchanged. */
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';

async function run(extra: string[]): Promise<{ code: number; out: string; warnings: string[] }> {
  let out = '';
  const warnings: string[] = [];
  const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-requests', '20', '--rate', '5', '--flow-control', '--saturation-detector', 'utilization', ...extra], { stdout: (s) => void (out += s), warn: (s) => void warnings.push(s), error: () => undefined });
  return { code, out, warnings };
}

describe('--admission-policy with --flow-control', () => {
  it('warns that the admission policy is ignored, and changes nothing else', async () => {
    const plain = await run([]);
    const withPolicy = await run(['--admission-policy', 'reject-all']);
    expect(withPolicy.code).toBe(0);
    expect(withPolicy.warnings.join('')).toMatch(/--flow-control replaces the admission policy: admission policy "reject-all" \(--admission-policy\) is ignored; drop it, or drop --flow-control/);
    expect(plain.warnings.join('')).not.toMatch(/replaces the admission policy/);
    expect(withPolicy.out).toBe(plain.out);
  });
});
