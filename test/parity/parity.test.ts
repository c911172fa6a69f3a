/**
 * Parity with the reference implementation: every case in ../shared/parity and ../shared/parity-pd is run through the CLI (in
 * process) with the case's exact argv, and compared with the reference's outputs — stdout (byte for byte in
 * `--output-format reference`, field by field under the fixture's tolerance rule), the TraceV2 export, the
 * metrics file, and the replay's stdout and per-request results. The invariant checkers run on every
 * simulation. Skips, saying so, when the fixtures are absent (a user's clone has none).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import type { SessionLog } from '../../src/workload/sessions/manager.js';
import { compareJson, splitSections } from './compare.js';
import { HAS_PARITY, PARITY_DIR, PARITY_SKIP_NOTE, parityCases, pdParityCases, type ParityCase } from './workload-fixtures.js';
import { checkRun } from './invariant-hook.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'blis-parity-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CASE_INPUTS = new Set(['--workload-spec', '--policy-config', '--trace-header', '--trace-data']);
const OUTPUTS = new Set(['--trace-output', '--metrics-path', '--results-path']);

/** The case's argv with its relative paths resolved: configs to the parity root, inputs to the case, outputs to `out`. */
function resolveArgv(argv: readonly string[], c: ParityCase, out: string): string[] {
  const res: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    res.push(a);
    const next = argv[i + 1];
    if (next === undefined) continue;
    if (a === '--model-config-folder' || a === '--hardware-config') res.push(path.join(PARITY_DIR, next));
    else if (CASE_INPUTS.has(a)) res.push(path.join(c.dir, next));
    else if (OUTPUTS.has(a)) res.push(path.join(out, next));
    else continue;
    i++;
  }
  return res;
}

/** argv without the given value flags (and their values). */
function withoutFlags(argv: readonly string[], drop: readonly string[]): string[] {
  const res: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (drop.includes(argv[i] as string)) i++;
    else res.push(argv[i] as string);
  }
  return res;
}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  sims: { cs: ClusterSimulator; requests: readonly Request[]; setup: EngineSetup; sessions: SessionLog | null }[];
}

async function runCli(argv: readonly string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const sims: CliRun['sims'] = [];
  const code = await main(argv, { stdout: (t) => (stdout += t), warn: (t) => (stderr += `${t}\n`), error: (t) => (stderr += `${t}\n`) }, (cs, requests, setup, sessions) => sims.push({ cs, requests, setup, sessions }));
  return { code, stdout, stderr, sims };
}

function expectSameSections(actual: string, expectedFile: string): void {
  const exp = splitSections(readFileSync(expectedFile, 'utf8'));
  const act = splitSections(actual);
  expect(act.map((s) => s.header)).toEqual(exp.map((s) => s.header));
  exp.forEach((e, i) => {
    const a = act[i] as { header: string; body: string };
    if (e.body.startsWith('{')) expect(compareJson(JSON.parse(a.body), JSON.parse(e.body), e.header)).toEqual([]);
    else expect(a.body).toBe(e.body);
  });
}

describe.skipIf(!HAS_PARITY)(`reference parity${PARITY_SKIP_NOTE}`, () => {
  for (const c of [...parityCases(), ...pdParityCases()]) {
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

      // The reference refuses to replay autoscaler cases: they have no replay fixtures.
      it.skipIf(c.replayArgv.length === 0)('replay: stdout and per-request results match the reference', async () => {
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
