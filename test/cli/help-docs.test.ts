/**
 * Help and docs agree (issue 29): --help groups the flags as docs/usage.md's sections do, every flag of a docs
 * flag table is in the --help of a command under that section's group, every flag --help shows is documented,
 * the examples after --help use only the command's own flags, and `blis completion` offers every flag.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { HELP_EXAMPLES } from '../../src/cli/help-examples.js';
import { ROOT } from '../io/processes.js';

const COMMANDS = ['run', 'replay', 'serve', 'observe', 'calibrate'] as const;
/** Sections about one command: their tables describe that command's flags only (observe's --warmup-requests is not calibrate's). */
const OWN_SECTION: Record<string, string> = { Replay: 'replay', Serve: 'serve', Observe: 'observe', Calibrate: 'calibrate', 'Fitting a latency profile (calibrate --fit)': 'calibrate' };

async function cli(args: string[]): Promise<string> {
  let out = '';
  const code = await main(args, { stdout: (t) => (out += t), warn: () => undefined, error: (m) => (out += `error: ${m}`) });
  expect(code, out).toBe(0);
  return out;
}

/** heading -> flags, in the order --help lists them. */
async function helpGroups(command: string): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  let heading = '';
  for (const line of (await cli([...command.split(' '), '--help'])).split('\n')) {
    const h = /^(\S.*):$/.exec(line);
    if (h !== null) heading = h[1] as string;
    const f = /^ {2}(?:-\w, )?--([a-z0-9-]+)/.exec(line);
    if (f !== null && heading !== '') groups.set(heading, [...(groups.get(heading) ?? []), f[1] as string]);
  }
  return groups;
}

/** docs/usage.md: section heading (as --help names its group) -> the flags of its tables' first column. */
function docTables(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  let section = '';
  for (const line of readFileSync(path.join(ROOT, 'docs/usage.md'), 'utf8').split('\n')) {
    const h = /^##+ (.*)/.exec(line);
    if (h !== null) section = (h[1] as string).replace(' (`run`)', '').replace(/`/g, '');
    if (!line.startsWith('| `--')) continue;
    const first = line.split('|')[1] ?? '';
    for (const m of first.matchAll(/--([a-z0-9-]+)/g)) {
      if (!out.has(section)) out.set(section, new Set());
      out.get(section)!.add(m[1] as string);
    }
  }
  return out;
}

const docsText = [path.join(ROOT, 'README.md'), ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(ROOT, 'docs', f))]
  .map((f) => readFileSync(f, 'utf8')).join('\n');

describe('--help and docs/usage.md', () => {
  it('every flag of a docs flag table is in --help, under the group of a section that lists it', async () => {
    const tables = docTables();
    const seen = new Set<string>();
    const misplaced: string[] = [];
    for (const command of COMMANDS) {
      for (const [group, flags] of await helpGroups(command)) {
        for (const flag of flags) {
          seen.add(flag);
          const sections = [...tables].filter(([s, fs]) => fs.has(flag) && (OWN_SECTION[s] ?? command) === command).map(([s]) => s);
          if (sections.length > 0 && !sections.includes(group)) misplaced.push(`${command} --${flag}: --help group "${group}", docs table in ${sections.map((s) => `"${s}"`).join(', ')}`);
        }
      }
    }
    expect(misplaced).toEqual([]);
    // Every flag a docs table names is a flag of some command.
    expect([...tables.values()].flatMap((fs) => [...fs]).filter((f) => !seen.has(f))).toEqual([]);
  });

  it('every flag --help shows is documented in README.md or docs/', async () => {
    const undocumented: string[] = [];
    for (const command of COMMANDS) {
      for (const flags of (await helpGroups(command)).values()) {
        for (const flag of flags) if (flag !== 'help' && !docsText.includes(`--${flag}`)) undocumented.push(`${command} --${flag}`);
      }
    }
    expect([...new Set(undocumented)]).toEqual([]);
  });

  it('groups run\'s flags in the docs\' order, with no flag left ungrouped', async () => {
    const groups = [...(await helpGroups('run')).keys()];
    expect(groups).toEqual(['Model, GPU, latency model', 'Engine', 'Cluster: admission, routing, flow control', 'Deployments, P/D disaggregation, autoscaling', 'LoRA adapters', 'Workload', 'Output', 'General']);
  });
});

describe('examples after --help', () => {
  it('every command has examples, and they use only its own flags', async () => {
    const bad: string[] = [];
    for (const [command, examples] of Object.entries(HELP_EXAMPLES)) {
      const help = await cli([...command.split(' '), '--help']);
      expect(help, command).toContain('Examples:');
      for (const [line] of examples) {
        for (const m of line.matchAll(/ --([a-z0-9-]+)/g)) if (!help.includes(`--${m[1]}`)) bad.push(`${command}: --${m[1]} in "${line}"`);
      }
    }
    expect(bad).toEqual([]);
    const top = await cli(['--help']);
    const commands = [...top.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1] as string).filter((c) => c !== 'help');
    expect(commands.filter((c) => HELP_EXAMPLES[c] === undefined)).toEqual([]);
  });
});

describe('blis completion', () => {
  it('bash, zsh and fish scripts offer every command and every flag of run', async () => {
    const runFlags = [...(await helpGroups('run')).values()].flat();
    for (const shell of ['bash', 'zsh', 'fish']) {
      const script = await cli(['completion', shell]);
      for (const c of ['run', 'replay', 'convert', 'preset', 'completion']) expect(script, shell).toContain(c);
      const missing = runFlags.filter((f) => !(shell === 'fish' ? script.includes(` -l ${f} `) : script.includes(`--${f}`)));
      expect(missing, shell).toEqual([]);
    }
  });

  it('an unknown shell is a usage error (exit 2)', async () => {
    const errors: string[] = [];
    expect(await main(['completion', 'tcsh'], { stdout: () => undefined, warn: () => undefined, error: (m) => errors.push(m) })).toBe(2);
    expect(errors.join('\n')).toMatch(/the shell must be one of bash, zsh, fish; got "tcsh"/);
  });
});
