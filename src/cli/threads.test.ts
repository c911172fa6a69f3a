import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { main } from './main.js';
import { maxWorkerThreads, threadCount } from './threads.js';

async function cli(argv: string[]): Promise<{ code: number; out: string; errs: string[] }> {
  let out = '';
  const errs: string[] = [];
  const code = await main(argv, { stdout: (t) => (out += t), warn: () => undefined, error: (t) => void errs.push(t) });
  return { code, out, errs };
}

describe('worker threads are bounded', () => {
  it('four per core, at least 8, at most 64', () => {
    expect([1, 2, 3, 16, 17, 128].map((c) => maxWorkerThreads(c))).toEqual([8, 8, 12, 64, 64, 64]);
    expect(threadCount('--workers', '8', 2)).toBe(8);
    expect(() => threadCount('--workers', '9', 2)).toThrow(/^--workers must be <= 8 on this machine \(it has 2 cores\), got 9$/);
    expect(() => threadCount('--workers', '0', 2)).toThrow(/^--workers must be an integer >= 1, got 0$/);
  });

  const max = maxWorkerThreads();
  const cores = availableParallelism();
  const msg = (flag: string): RegExp => new RegExp(`^${flag} must be <= ${max} on this machine \\(it has ${cores} cores?\\), got 100000$`);
  it.each([
    ['evaluate', ['evaluate', '--candidate', 'nope.yaml', '--suite', 'routing-prefix-heavy', '--workers', '100000'], '--workers'],
    ['suites check', ['suites', 'check', 'routing-prefix-heavy', '--workers', '100000'], '--workers'],
    ['sweep', ['sweep', 'nope.yaml', '--workers', '100000'], '--workers'],
    ['worker', ['worker', '--queue', 'redis://127.0.0.1:1', '--concurrency', '100000'], '--concurrency'],
  ])('%s: refused before any work, exit 2', async (_name, argv, flag) => {
    const r = await cli(argv);
    expect(r).toEqual({ code: 2, out: '', errs: [expect.stringMatching(msg(flag))] });
  });
});
