/**
 * `npm run bench` includes the large run (bench/large.js): it completes and prints its cluster metrics and peak
 * RSS. Run here at 2,000 requests (the bench runs 2,000,000; docs/performance.md has the figures).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../io/processes.js';

describe('bench/large.js', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('is part of npm run bench, and defaults to 2,000,000 requests', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['bench']).toMatch(/node bench\/large\.js(\s|$)/);
    expect(readFileSync(path.join(ROOT, 'bench/large.js'), 'utf8')).toMatch(/arg\('--requests', '2000000'\)/);
  });

  it('completes and prints the run\'s metrics and its peak RSS', () => {
    const env = { ...process.env };
    delete env['BENCH_SKIP_LARGE'];
    const r = spawnSync(process.execPath, ['bench/large.js', '--requests', '2000'], { cwd: ROOT, encoding: 'utf8', env });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\(L\) 2,000 requests, 8 instances/);
    expect(lines[1]).toMatch(/^ {4}wall \d+\.\d s \| [\d,]+ simulated requests\/s \| peak RSS \d+ MiB$/);
    expect(lines[2]).toMatch(/^ {4}completed 2000 of 2000 \| simulated [\d.]+ s \| TTFT mean [\d.]+ ms, p99 [\d.]+ ms \| E2E mean [\d.]+ ms, p99 [\d.]+ ms \| \d+ tokens\/s$/);
    const rec = JSON.parse(lines[3] as string) as { requests: number; rssMiB: number; metrics: { completed_requests: number; injected_requests: number } };
    expect(rec.requests).toBe(2000);
    expect(rec.metrics.injected_requests).toBe(2000);
    expect(rec.metrics.completed_requests).toBe(2000);
    // A real peak, from the measured process: Node alone takes tens of MiB.
    expect(rec.rssMiB).toBeGreaterThan(20);
  }, 120_000);
});
