/**
 * Locating the reference parity fixtures (../shared/parity beside the checkout) from tests, and reading a case's argv.
 *
 * The fixtures are data owned outside this repository: tests read them in place and skip, with a message
 * saying so, when the shared folder is absent.
 */
import { it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_DIR = path.resolve(PROJECT_ROOT, '../shared');
export const PARITY_DIR = path.join(SHARED_DIR, 'parity');
export const HAS_PARITY = existsSync(PARITY_DIR);
/** P/D disaggregation and the autoscaler; their argv name the model configs of PARITY_DIR. */
export const PARITY_PD_DIR = path.join(SHARED_DIR, 'parity-pd');
/** Sessions, closed-loop replay, LoRA, multimodal, the encode pool, compose and convert servegen. */
export const PARITY_MORE_DIR = path.join(SHARED_DIR, 'parity-more');
export const PARITY_SKIP_NOTE = HAS_PARITY ? '' : ` (skipped: parity fixtures not found at ${PARITY_DIR})`;

export interface ParityCase {
  readonly name: string;
  readonly dir: string;
  readonly argv: readonly string[];
  readonly replayArgv: readonly string[];
}

/** The cases of one fixture folder (default ../shared/parity), by name; none when the folder is absent. */
export function parityCases(root: string = PARITY_DIR): ParityCase[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(root, d.name, 'args.json')))
    .map((d) => {
      const dir = path.join(root, d.name);
      const args = JSON.parse(readFileSync(path.join(dir, 'args.json'), 'utf8')) as { argv: string[] };
      const replayPath = path.join(dir, 'replay_args.json');
      const replay = existsSync(replayPath) ? (JSON.parse(readFileSync(replayPath, 'utf8')) as { argv: string[] }) : { argv: [] };
      return { name: d.name, dir, argv: args.argv, replayArgv: replay.argv };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function readCaseFile(c: ParityCase, file: string): string {
  return readFileSync(path.join(c.dir, file), 'utf8');
}

/** The value of `--name v` or `--name=v` (last occurrence wins, as with cobra), or undefined. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  let v: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === `--${name}`) v = argv[i + 1];
    else if (a.startsWith(`--${name}=`)) v = a.slice(name.length + 3);
  }
  return v;
}

/**
 * Call first inside a `describe` whose tests are generated from the fixtures: without them the suite would be
 * empty, which vitest reports as a failure; this leaves one skipped test that says why.
 */
export function skipWhenNoFixtures(): void {
  if (!HAS_PARITY) it.skip(`parity fixtures not found at ${PARITY_DIR}`, () => undefined);
}
