/**
 * Parity with the reference implementation: every case in ../shared/parity is run through the CLI (in
 * process) with the case's exact argv, and compared with the reference's outputs — stdout (byte for byte in
 * `--output-format reference`, field by field under the fixture's tolerance rule), the TraceV2 export, the
 * metrics file, and the replay's stdout and per-request results. The invariant checkers run on every
 * simulation. Skips, saying so, when the fixtures are absent (a user's clone has none).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareJson } from './compare.js';
import { expectSameSections, resolveArgv, runCli, withoutFlags } from './harness.js';
import { HAS_PARITY, PARITY_SKIP_NOTE, parityCases } from './workload-fixtures.js';
import { checkRun } from './invariant-hook.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'blis-parity-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!HAS_PARITY)(`reference parity${PARITY_SKIP_NOTE}`, () => {
  for (const c of parityCases()) {
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
        for (const s of r.sims) checkRun(s.cs, s.requests, s.setup, s.sessions);
      });

      it('run: default JSON output carries the same metrics', async () => {
        const r = await runCli(withoutFlags(resolveArgv(c.argv, c, out), ['--trace-output', '--metrics-path']));
        expect(r.code, r.stderr).toBe(0);
        const doc = JSON.parse(r.stdout) as Record<string, unknown>;
        const expected = JSON.parse(readFileSync(path.join(c.dir, 'stdout.json'), 'utf8')) as { sections: Record<string, unknown> };
        expect(compareJson(doc['simulation_metrics'], expected.sections['Simulation Metrics'])).toEqual([]);
      });

      it('replay: stdout and per-request results match the reference', async () => {
        const r = await runCli([...resolveArgv(c.replayArgv, c, out), '--output-format', 'reference']);
        expect(r.code, r.stderr).toBe(0);
        expectSameSections(r.stdout, path.join(c.dir, 'replay_stdout.txt'));
        expect(r.stdout).toBe(readFileSync(path.join(c.dir, 'replay_stdout.txt'), 'utf8'));
        const results = path.join(out, 'results.json');
        expect(existsSync(results)).toBe(true);
        expect(compareJson(JSON.parse(readFileSync(results, 'utf8')), JSON.parse(readFileSync(path.join(c.dir, 'results.json'), 'utf8')))).toEqual([]);
        expect(readFileSync(results, 'utf8')).toBe(readFileSync(path.join(c.dir, 'results.json'), 'utf8'));
        for (const s of r.sims) checkRun(s.cs, s.requests, s.setup, s.sessions);
      });
    });
  }
});
