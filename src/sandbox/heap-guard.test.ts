/**
 * The heap guard (heap-guard.ts): the headroom rule by hand, and the case it exists for — fast-engine code that
 * keeps big arrays across calls in a pool thread whose heap already holds other candidates' garbage made the
 * next large allocation abort the whole process (FATAL ERROR: Reached heap limit, nodejs/node#47224) instead of
 * ending the thread; with the guard the thread exits first, the job is EVAL_WORKER_DIED and the pool goes on.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BLIS, ROOT, ensureBuilt } from '../../test/io/processes.js';
import { simulationJob } from '../sweep/jobs.js';
import { LocalRunner } from '../sweep/local.js';
import { HEAP_GUARD_STEP_BYTES, hasHeadroom } from './heap-guard.js';

const MB = 1024 * 1024;

describe('heap guard: the headroom rule', () => {
  it('room for one step plus twice the per-call cap, the reserve at most a quarter of the heap', () => {
    expect(HEAP_GUARD_STEP_BYTES).toBe(8 * MB);
    // 2048 MB heap, 64 MiB cap: 8 + 128 = 136 MB must stay free, so 1912 MB used is the most.
    expect(hasHeadroom(1912 * MB, 2048 * MB, 64 * MB)).toBe(true);
    expect(hasHeadroom(1912 * MB + 1, 2048 * MB, 64 * MB)).toBe(false);
    // 160 MB heap, 64 MiB cap: the reserve is capped at 40 MB (a quarter), so 8 + 40 = 48 MB free: 112 MB used.
    expect(hasHeadroom(112 * MB, 160 * MB, 64 * MB)).toBe(true);
    expect(hasHeadroom(113 * MB, 160 * MB, 64 * MB)).toBe(false);
    // A tiny cap: 8 + 2 = 10 MB free.
    expect(hasHeadroom(150 * MB, 160 * MB, 1 * MB)).toBe(true);
    expect(hasHeadroom(151 * MB, 160 * MB, 1 * MB)).toBe(false);
  });
});

describe('heap guard: a pool thread with other candidates\' garbage, then big arrays kept across calls', () => {
  it('the job is EVAL_WORKER_DIED, the process survives, the next job runs', async () => {
    ensureBuilt();
    const MODEL = 'meta-llama/llama-3.1-8b-instruct';
    const bundle = (alloc: string): string =>
      `routing:\n  type: code\n  engine: fast\n  source: |\n    const keep = [];\n    function route(request, state) { keep.push(${alloc}); return state.instances[0].id; }\n`;
    const job = (alloc: string, seed: number) => simulationJob({ mode: 'run', model: MODEL, numRequests: 30, rate: 20, numInstances: 2, seed, policyConfig: 'p.yaml', files: { 'p.yaml': bundle(alloc) } });
    // One thread, so every job runs where the earlier ones left their heap.
    const runner = new LocalRunner({ workers: 1, timeoutMs: 0, threads: true, heapMb: 160 });
    try {
      const outs = await runner.runAll([
        job('Array.from({ length: 100000 }, (_, i) => i)', 1),
        job('new ([].constructor)(3000000).fill(1.5)', 2),
        job('Array.from({ length: 100000 }, (_, i) => i)', 3),
        job('new ([].constructor)(3000000).fill(1.5)', 4),
        simulationJob({ mode: 'run', model: MODEL, numRequests: 30, rate: 20, numInstances: 2, seed: 5 }),
      ]);
      expect(outs.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['ok', 'EVAL_WORKER_DIED', 'ok', 'EVAL_WORKER_DIED', 'ok']);
      const died = outs[1]!;
      expect(died.ok ? '' : died.error.message).toBe('the worker stopped at its memory limit: fast-engine policy code kept more memory across calls than the thread\'s heap (160 MB) leaves room for');
    } finally {
      await runner.close();
    }
  }, 120_000);
});

describe('heap guard on the main thread: blis run with big arrays kept across calls', () => {
  it('ends the run with one SANDBOX_MEMORY error line (exit 2), not V8\'s heap abort (exit 134)', () => {
    ensureBuilt();
    const dir = mkdtempSync(path.join(tmpdir(), 'blis-heap-guard-'));
    try {
      const policy = path.join(dir, 'p.yaml');
      writeFileSync(policy, 'routing:\n  type: code\n  engine: fast\n  source: |\n    const keep = [];\n    function route(request, state) { keep.push(new Array(3000000).fill(1)); return state.instances[0].id; }\n');
      // A 256 MB heap: each call keeps 24 MB (within its 64 MiB per-call account), so the tenth or so has no room.
      const r = spawnSync(process.execPath, ['--max-old-space-size=256', BLIS, 'run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '200', '--num-instances', '2', '--policy-config', policy], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('error:'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/routing policy code \(fast engine\) at .*p\.yaml.*the process heap has no room left for this program's next calls .*SANDBOX_MEMORY/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
