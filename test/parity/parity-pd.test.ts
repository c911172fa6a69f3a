/**
 * Parity with the reference on ../shared/parity-pd: P/D disaggregation (pools, deciders, KV transfer, per-pool
 * overrides, PD Metrics, parent projection) and the autoscaler. Each run is compared like ../shared/parity —
 * stdout byte for byte in `--output-format reference`, the trace export, the metrics file, the default JSON's
 * cluster metrics — and each replay (the autoscaler cases have none: the reference refuses them) by its stdout
 * and per-request results. The invariant checkers (P/D and lifecycle ones included) run on every simulation.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareJson } from './compare.js';
import { expectSameSections, resolveArgv, runCli, withoutFlags } from './harness.js';
import { checkRun } from './invariant-hook.js';
import { PARITY_PD_DIR, parityCases } from './workload-fixtures.js';

const HAS_PD = existsSync(PARITY_PD_DIR);
const scratch = mkdtempSync(path.join(tmpdir(), 'blis-parity-pd-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!HAS_PD)(`reference parity: P/D and autoscaler${HAS_PD ? '' : ` (skipped: fixtures not found at ${PARITY_PD_DIR})`}`, () => {
  for (const c of parityCases(PARITY_PD_DIR)) {
    describe(c.name, () => {
      const out = path.join(scratch, c.name);
      mkdirSync(out, { recursive: true });

      it('run: stdout, trace export and metrics file match the reference', async () => {
        const r = await runCli([...resolveArgv(c.argv, c, out), '--output-format', 'reference']);
        expect(r.code, r.stderr).toBe(0);
        expectSameSections(r.stdout, path.join(c.dir, 'stdout.txt'));
        expect(r.stdout).toBe(readFileSync(path.join(c.dir, 'stdout.txt'), 'utf8'));
        for (const f of ['trace.yaml', 'trace.csv']) {
          expect(readFileSync(path.join(out, f), 'utf8'), f).toBe(readFileSync(path.join(c.dir, f), 'utf8'));
        }
        const metrics = JSON.parse(readFileSync(path.join(out, 'metrics.json'), 'utf8')) as unknown;
        expect(compareJson(metrics, JSON.parse(readFileSync(path.join(c.dir, 'metrics.json'), 'utf8')))).toEqual([]);
        expect(r.sims.length).toBe(1);
        for (const s of r.sims) checkRun(s.cs, s.requests, s.setup, s.sessions);
      });

      it('run: default JSON output carries the same metrics', async () => {
        const r = await runCli(withoutFlags(resolveArgv(c.argv, c, out), ['--trace-output', '--metrics-path']));
        expect(r.code, r.stderr).toBe(0);
        const doc = JSON.parse(r.stdout) as Record<string, unknown>;
        const expected = JSON.parse(readFileSync(path.join(c.dir, 'stdout.json'), 'utf8')) as { sections: Record<string, unknown> };
        expect(compareJson(doc['simulation_metrics'], expected.sections['Simulation Metrics'])).toEqual([]);
      });

      if (c.replayArgv.length > 0) {
        it('replay: stdout and per-request results match the reference', async () => {
          const r = await runCli([...resolveArgv(c.replayArgv, c, out), '--output-format', 'reference']);
          expect(r.code, r.stderr).toBe(0);
          expectSameSections(r.stdout, path.join(c.dir, 'replay_stdout.txt'));
          expect(r.stdout).toBe(readFileSync(path.join(c.dir, 'replay_stdout.txt'), 'utf8'));
          const results = path.join(out, 'results.json');
          expect(readFileSync(results, 'utf8')).toBe(readFileSync(path.join(c.dir, 'results.json'), 'utf8'));
          for (const s of r.sims) checkRun(s.cs, s.requests, s.setup, s.sessions);
        });
      } else {
        it('replay: refused, as the reference refuses the autoscaler', async () => {
          const replayArgv = ['replay', ...withoutFlags(resolveArgv(c.argv.slice(1), c, out), ['--trace-output', '--metrics-path', '--rate', '--num-requests']), '--trace-header', path.join(c.dir, 'trace.yaml'), '--trace-data', path.join(c.dir, 'trace.csv')];
          const r = await runCli(replayArgv);
          expect(r.code).toBe(2);
          expect(r.stdout).toBe('');
          expect(r.stderr).toMatch(/not supported in blis replay/);
        });
      }
    });
  }
});
