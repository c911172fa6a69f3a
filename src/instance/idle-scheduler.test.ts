/**
 * A policy scheduler that admits nothing while nothing runs is asked again with a backoff (a tenth of the time it
 * has been idle), not at every 1 us empty step (which ran 300 s of simulated time in 1 us steps, 25 minutes, for
 * two requests that never start); a policy that waits on the clock is still asked in time.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main.js';

async function run(source: string, extra: string[] = []): Promise<{ code: number; report: Record<string, number> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'blis-idle-'));
  const file = path.join(dir, 'policy.yaml');
  writeFileSync(file, `scheduler:\n  type: code\n  engine: fast\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`);
  let out = '';
  const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '1', '--num-requests', '2', '--rate', '20', '--output-format', 'json', '--policy-config', file, ...extra], { stdout: (s) => void (out += s), warn: () => undefined, error: () => undefined });
  return { code, report: code === 0 ? (JSON.parse(out) as { simulation_metrics: Record<string, number> }).simulation_metrics : {} };
}

describe('a scheduler that admits nothing', () => {
  it('never admitting: the run ends at once, its requests timing out', async () => {
    const t0 = Date.now();
    const { code, report } = await run('function makeBatch(ctx) { return []; }');
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(code).toBe(0);
    expect(report['completed_requests']).toBe(0);
    expect(report['timed_out_requests']).toBe(2);
  });

  it('waiting on the clock (admit after 20 ms of waiting): admitted at most 10% late, both complete', async () => {
    const { code, report } = await run('function makeBatch(ctx) { return ctx.waiting.filter((r) => r.waitUs >= 20000).map((r) => r.id); }');
    expect(code).toBe(0);
    expect(report['completed_requests']).toBe(2);
  });

  it('waiting for a second request: asked again, then both complete', async () => {
    const { code, report } = await run('function makeBatch(ctx) { return ctx.waiting.length >= 2 ? ctx.waiting.map((r) => r.id) : []; }');
    expect(code).toBe(0);
    expect(report['completed_requests']).toBe(2);
  });
});
