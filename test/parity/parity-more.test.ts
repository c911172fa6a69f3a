/**
 * Parity with the reference on ../shared/parity-more: multi-turn sessions and closed-loop replay, LoRA
 * adapters, multimodal specs, the encode pool, `blis compose` and `blis convert servegen`. Run and replay cases
 * are compared like ../shared/parity (stdout byte for byte in `--output-format reference`, trace export,
 * metrics file, per-request results; invariant checkers on every simulation); compose and convert cases by
 * their stdout bytes. Skips, saying so, when the fixtures are absent.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareJson } from './compare.js';
import { expectSameSections, resolveArgv, runCli } from './harness.js';
import { checkRun } from './invariant-hook.js';
import { PARITY_MORE_DIR, parityCases, type ParityCase } from './workload-fixtures.js';

const HAS_MORE = existsSync(PARITY_MORE_DIR);
const scratch = mkdtempSync(path.join(tmpdir(), 'blis-parity-more-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Cases whose feature is not built yet, with what is missing (the test is skipped and says so). */
const NOT_YET: Readonly<Record<string, string>> = {
};

const caseFile = (c: ParityCase, f: string): string => readFileSync(path.join(c.dir, f), 'utf8');

function outputsOf(c: ParityCase, file = 'args.json'): string[] {
  return (JSON.parse(caseFile(c, file)) as { outputs?: string[] }).outputs ?? [];
}

/** Every output file the case lists matches the reference's (JSON under the number rule, else bytes). */
function expectOutputs(c: ParityCase, out: string, names: readonly string[]): void {
  for (const f of names) {
    const actual = readFileSync(path.join(out, f), 'utf8');
    const expected = caseFile(c, f);
    if (f.endsWith('.json')) expect(compareJson(JSON.parse(actual), JSON.parse(expected), f)).toEqual([]);
    else expect(actual, f).toBe(expected);
  }
}

describe.skipIf(!HAS_MORE)(`reference parity: sessions, LoRA, multimodal, encode pool, compose, servegen${HAS_MORE ? '' : ` (skipped: fixtures not found at ${PARITY_MORE_DIR})`}`, () => {
  for (const c of parityCases(PARITY_MORE_DIR)) {
    const missing = NOT_YET[c.name];
    const test = missing === undefined ? it : it.skip;
    const note = missing === undefined ? '' : ` (skipped: ${missing} is not built yet)`;
    describe(c.name, () => {
      const out = path.join(scratch, c.name);
      mkdirSync(out, { recursive: true });
      // Commands run with the case folder's relative paths resolved; stdout compared byte for byte.
      const argv = (a: readonly string[]): string[] => resolveArgv(a, c, out);
      const command = c.argv[0];

      if (command === 'run' || command === 'replay') {
        test(`${command}: stdout, trace export and output files match the reference${note}`, async () => {
          const r = await runCli([...argv(c.argv), '--output-format', 'reference']);
          expect(r.code, r.stderr).toBe(0);
          expectSameSections(r.stdout, path.join(c.dir, 'stdout.txt'));
          expect(r.stdout).toBe(caseFile(c, 'stdout.txt'));
          expectOutputs(c, out, outputsOf(c));
          for (const s of r.sims) checkRun(s.cs, s.requests, s.setup, s.sessions);
        });
      } else {
        test(`${command}: stdout matches the reference byte for byte${note}`, async () => {
          const r = await runCli(argv(c.argv));
          expect(r.code, r.stderr).toBe(0);
          expect(r.stdout).toBe(caseFile(c, 'stdout.txt'));
          expectOutputs(c, out, outputsOf(c));
        });
      }
      if (c.replayArgv.length > 0) {
        test(`replay: stdout and per-request results match the reference${note}`, async () => {
          const r = await runCli([...argv(c.replayArgv), '--output-format', 'reference']);
          expect(r.code, r.stderr).toBe(0);
          expectSameSections(r.stdout, path.join(c.dir, 'replay_stdout.txt'));
          expect(r.stdout).toBe(caseFile(c, 'replay_stdout.txt'));
          expectOutputs(c, out, outputsOf(c, 'replay_args.json'));
          for (const s of r.sims) checkRun(s.cs, s.requests, s.setup, s.sessions);
        });
      }
    });
  }
});
