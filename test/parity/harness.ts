/**
 * Running reference parity cases through the CLI in process: argv path resolution (configs to the parity
 * root, inputs to the case folder, outputs to a scratch folder), capturing stdout/stderr and the simulations
 * for the invariant checkers, and section-by-section stdout comparison.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { ClusterSimulator } from '../../src/cluster/cluster.js';
import type { Request } from '../../src/domain/request.js';
import type { EngineSetup } from '../../src/sim/engine-setup.js';
import type { SessionLog } from '../../src/workload/sessions/manager.js';
import { compareJson, splitSections } from './compare.js';
import { PARITY_DIR, type ParityCase } from './workload-fixtures.js';

const CASE_INPUTS = new Set(['--workload-spec', '--policy-config', '--trace-header', '--trace-data', '--lora-config', '--from', '--path', '--spec']);
const OUTPUTS = new Set(['--trace-output', '--metrics-path', '--results-path']);

/** The case's argv with its relative paths resolved: configs to the parity root, inputs to the case, outputs to `out`. */
export function resolveArgv(argv: readonly string[], c: ParityCase, out: string): string[] {
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
export function withoutFlags(argv: readonly string[], drop: readonly string[]): string[] {
  const res: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (drop.includes(argv[i] as string)) i++;
    else res.push(argv[i] as string);
  }
  return res;
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  sims: { cs: ClusterSimulator; requests: readonly Request[]; setup: EngineSetup; sessions: SessionLog | null }[];
}

export async function runCli(argv: readonly string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const sims: CliRun['sims'] = [];
  const code = await main(argv, { stdout: (t) => (stdout += t), warn: (t) => (stderr += `${t}\n`), error: (t) => (stderr += `${t}\n`) }, (cs, requests, setup, sessions) => sims.push({ cs, requests, setup, sessions }));
  return { code, stdout, stderr, sims };
}

export function expectSameSections(actual: string, expectedFile: string): void {
  const exp = splitSections(readFileSync(expectedFile, 'utf8'));
  const act = splitSections(actual);
  expect(act.map((s) => s.header)).toEqual(exp.map((s) => s.header));
  exp.forEach((e, i) => {
    const a = act[i] as { header: string; body: string };
    if (e.body.startsWith('{')) expect(compareJson(JSON.parse(a.body), JSON.parse(e.body), e.header)).toEqual([]);
    else expect(a.body).toBe(e.body);
  });
}

