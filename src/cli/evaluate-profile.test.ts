import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './main.js';

async function cli(args: string[]): Promise<{ code: number; stdout: string; errors: string[] }> {
  let stdout = '';
  const errors: string[] = [];
  const code = await main(args, { stdout: (t) => void (stdout += t), warn: () => undefined, error: (t) => void errors.push(t), info: () => undefined });
  return { code, stdout, errors };
}

describe('evaluate --latency-profile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'blis-eval-profile-'));
  const p = (f: string): string => join(dir, f);
  writeFileSync(p('policy.yaml'), 'routing: {type: parameterized, template: weighted_affinity_routing, parameters: {}}\n');
  // A slow server: every step costs 20 ms more than the physics says.
  writeFileSync(p('slow.yaml'), 'kind: latency-profile\nversion: 1\nlatency_model: corrected-physics\ncoefficients: {step_us: 20000}\n');
  const base = ['evaluate', '--candidate', p('policy.yaml'), '--suite', 'routing-prefix-heavy', '--stage', '1'];

  it('simulates the suite with the fitted latencies', async () => {
    const plain = await cli(base);
    const slow = await cli([...base, '--latency-profile', p('slow.yaml')]);
    expect(plain.code).toBe(0);
    expect(slow.code, slow.errors.join('\n')).toBe(0);
    const ttft = (out: string): number => (JSON.parse(out) as { scenarios: { metrics: Record<string, number> }[] }).scenarios[0]!.metrics['ttft_mean_ms']!;
    expect(ttft(slow.stdout)).toBeGreaterThan(ttft(plain.stdout) + 20);
  });

  it('a bad profile is one located error, exit 2', async () => {
    writeFileSync(p('bad.yaml'), 'kind: latency-profile\nlatency_model: corrected-physics\ncoefficients: {step_us: fast}\n');
    const r = await cli([...base, '--latency-profile', p('bad.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/bad\.yaml:3:25: coefficients\.step_us: must be a finite number >= 0, got "fast"/);
  });
});
