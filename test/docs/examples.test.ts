/**
 * Docs that are tested: every command and every input file shown in README.md and docs/*.md runs as written
 * (issue 29). For each page, in a scratch directory holding `examples/` (the repository's) and the page's named
 * files:
 *
 * - shell blocks (`sh`): each command (`node bin/blis.js ...`, `blis ...`, `npx blis ...`, `npm start`) runs
 *   in process through the CLI's `main()` and must exit 0; `> FILE` writes its stdout to FILE. `npm ci`,
 *   `npm test` and `npm run ...` set up or test the checkout this test runs in: they are listed as skipped.
 *   In plain blocks, lines starting with `$ ` are commands too (the lines after them are their output).
 * - YAML/JSON blocks are parsed and, being complete inputs, run by their kind: a workload spec with
 *   `blis run --workload-spec`, a policy bundle with `--policy-config`, a deployment with `--deployment`, a
 *   sweep with `blis sweep`, a suite with `blis evaluate --suite`, a LoRA file with `--lora-config`, a GPU
 *   file with `--hardware-config`. A block whose first line is `# NAME.yaml` (or `.json`) is that file: written
 *   into the scratch directory for the page's commands, or, for `# examples/NAME`, the shipped file, which must
 *   match it. A named file a command of the page uses is run by that command.
 * - a `js` block is one control point's code (its entry point names it) and runs inside a bundle; the `ts`
 *   block (the library example) runs with `blis-ts` pointing at src/index.ts.
 * - `<!-- doc-test: skip (why) -->` before a block skips it; the reasons are printed. Other plain and `text`
 *   blocks (synopses, output) are not run.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { main } from '../../src/cli/main.js';
import { docBlocks, shellCommands, type DocBlock, type ShellCommand } from './blocks.js';

const root = path.resolve(import.meta.dirname, '../..');
const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const MODEL = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const CONTROL_POINTS = ['admission', 'priority', 'routing', 'scheduler', 'autoscale', 'disaggregation', 'encode'];
/** A code block's entry point -> its control point. */
const ENTRY_POINTS: Record<string, string> = { admit: 'admission', prioritize: 'priority', route: 'routing', makeBatch: 'scheduler', evaluate: 'autoscale', decide: 'disaggregation', shouldEncode: 'encode' };

const ran: string[] = [];
const skipped: string[] = [];
const notRun: string[] = [];

afterAll(() => {
  const lines = [`doc examples: ${ran.length} run, ${skipped.length} skipped, ${notRun.length} synopsis/output blocks not run`, ...skipped.map((s) => `  skipped ${s}`)];
  console.info(lines.join('\n'));
});

/** Runs one blis command line in process in `cwd`; returns stdout. */
async function blis(argv: readonly string[], cwd: string, what: string): Promise<string> {
  let out = '';
  let err = '';
  const was = process.cwd();
  process.chdir(cwd);
  try {
    const code = await main(argv, { stdout: (t) => (out += t), warn: (t) => (err += `${t}\n`), error: (t) => (err += `error: ${t}\n`), info: () => undefined });
    expect(code, `${what}\n${err}`).toBe(0);
  } finally {
    process.chdir(was);
  }
  return out;
}

/** The blis arguments of a documented command, or a reason it is not run here; throws for a command this test does not know. */
function blisArgs(c: ShellCommand, where: string): string[] | { skip: string } {
  const w = c.words;
  if (w[0] === 'blis') return w.slice(1);
  if (w[0] === 'node' && w[1] === 'bin/blis.js') return w.slice(2);
  if (w[0] === 'npx' && w[1] === 'blis') return w.slice(2);
  if (w[0] === 'npm') {
    if (w[1] === 'start') {
      const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
      const start = shellCommands(scripts.start as string, false)[0] as ShellCommand;
      return blisArgs(start, `${where} (npm start)`);
    }
    return { skip: `\`${w.join(' ')}\`: sets up or tests the checkout this test runs in` };
  }
  throw new Error(`${where}: \`${c.source}\` is not a blis command; run it here, or put <!-- doc-test: skip (why) --> before the block`);
}

/** The file a block is (`# NAME.yaml` on its first line), or null. */
function blockName(b: DocBlock): string | null {
  const m = /^#\s*([\w./-]+\.(?:ya?ml|json))\b/.exec(b.text);
  return m === null ? null : (m[1] as string);
}

type Kind = 'spec' | 'deployment' | 'sweep' | 'suite' | 'lora' | 'hardware' | 'bundle';

function kindOf(v: unknown): Kind | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if ('version' in o && ('clients' in o || 'cohorts' in o || 'servegen_data' in o || 'inference_perf' in o)) return 'spec';
  if ('models' in o) return 'deployment';
  if ('base' in o) return 'sweep';
  if ('stage2' in o || 'stage1' in o) return 'suite';
  if ('lora' in o) return 'lora';
  const values = Object.values(o);
  if (values.length > 0 && values.every((x) => x !== null && typeof x === 'object' && 'TFlopsPeak' in x)) return 'hardware';
  if (CONTROL_POINTS.some((k) => k in o)) return 'bundle';
  return null;
}

/** The command that runs a complete input of `kind` saved as `file`. */
function argsFor(kind: Kind, file: string, value: Record<string, unknown>): string[] {
  switch (kind) {
    case 'spec':
      return ['run', ...MODEL, '--workload-spec', file];
    case 'deployment':
      return ['run', '--deployment', file, '--num-requests', '100', '--rate', '10'];
    case 'sweep':
      return ['sweep', file];
    case 'suite':
      return ['evaluate', '--candidate', 'examples/gate.yaml', '--suite', file];
    case 'lora':
      return ['run', ...MODEL, '--lora-config', file, '--num-requests', '50'];
    case 'hardware': {
      const [gpu, entry] = Object.entries(value)[0] as [string, Record<string, unknown>];
      const physics = 'interconnect' in entry || 'efficiency' in entry;
      return ['run', ...MODEL, '--hardware-config', file, '--hardware', gpu, '--tp', '1', '--latency-model', physics ? 'corrected-physics' : 'roofline', '--num-requests', '50'];
    }
    case 'bundle': {
      // A P/D decider needs prefill and decode pools; an encode decider an encode pool.
      const pools = 'disaggregation' in value || 'encode' in value ? ['--prefill-instances', '2', '--decode-instances', '2'] : [];
      const encode = 'encode' in value ? ['--encode-instances', '1'] : [];
      const n = pools.length + encode.length > 0 ? (encode.length > 0 ? '5' : '4') : '4';
      return ['run', ...MODEL, '--num-instances', n, ...pools, ...encode, '--num-requests', '80', '--rate', '40', '--prefix-tokens', '256', '--policy-config', file, '--log', 'error'];
    }
  }
}

function parseBlock(b: DocBlock): unknown {
  return b.lang === 'json' ? JSON.parse(b.text) : parseYaml(b.text);
}

for (const page of pages) {
  const blocks = docBlocks(root, page);
  const plain = (b: DocBlock): boolean => ['', 'text'].includes(b.lang) && b.skip === null && shellCommands(b.text, true).length === 0;
  if (blocks.every(plain)) {
    for (const b of blocks) notRun.push(`${page}:${b.line}`);
    continue;
  }
  describe(page, () => {
    let dir = '';
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'blis-doc-'));
      symlinkSync(path.join(root, 'examples'), path.join(dir, 'examples'));
      for (const b of blocks) {
        const name = blockName(b);
        if (b.skip !== null || name === null || name.startsWith('examples/')) continue;
        writeFileSync(path.join(dir, name), b.text);
      }
    });
    afterAll(() => {
      if (process.cwd() === dir) process.chdir(root);
      rmSync(dir, { recursive: true, force: true });
    });
    const commandText = blocks.filter((b) => b.skip === null && ['sh', ''].includes(b.lang)).map((b) => b.text).join('\n');

    for (const b of blocks) {
      const where = `${page}:${b.line}`;
      if (b.skip !== null) {
        skipped.push(`${where} (${b.skip})`);
        it.skip(`${where}: ${b.skip}`, () => undefined);
        continue;
      }
      if (b.lang === 'sh' || b.lang === 'bash' || b.lang === '' || b.lang === 'text') {
        const prompted = b.lang !== 'sh' && b.lang !== 'bash';
        const cmds = shellCommands(b.text, prompted);
        if (cmds.length === 0) {
          notRun.push(where);
          continue;
        }
        if (b.lang === 'text') throw new Error(`${where}: a text block with $ commands; make it a plain block`);
        for (const c of cmds) {
          let args: string[] | { skip: string };
          try {
            args = blisArgs(c, where);
          } catch (e) {
            it(`${where}: ${c.source}`, () => {
              throw e;
            });
            continue;
          }
          if (!Array.isArray(args)) {
            skipped.push(`${where} ${args.skip}`);
            it.skip(`${where}: ${args.skip}`, () => undefined);
            continue;
          }
          it(`${where}: ${c.source}`, async () => {
            const out = await blis(args, dir, `${where}: ${c.source}`);
            if (c.stdoutTo !== null) writeFileSync(path.join(dir, c.stdoutTo), out);
            ran.push(where);
          });
        }
        continue;
      }
      if (b.lang === 'yaml' || b.lang === 'json') {
        it(`${where}: ${b.lang} block`, async () => {
          const value = parseBlock(b) as Record<string, unknown>;
          const kind = kindOf(value);
          expect(kind, `${where}: neither a spec, bundle, deployment, sweep, suite, LoRA nor GPU file; mark it <!-- doc-test: skip (why) -->`).not.toBeNull();
          const name = blockName(b);
          if (name?.startsWith('examples/')) expect(b.text, `${where}: differs from the shipped ${name}`).toBe(readFileSync(path.join(root, name), 'utf8'));
          // A named file a command of the page uses is run by that command.
          if (name !== null && commandText.includes(name)) return;
          const file = name ?? `block-${b.line}.${b.lang}`;
          if (name === null) writeFileSync(path.join(dir, file), b.text);
          await blis(argsFor(kind as Kind, file, value), dir, `${where}: ${kind}`);
          ran.push(where);
        });
        continue;
      }
      if (b.lang === 'js') {
        it(`${where}: code block`, async () => {
          const entry = /function\s+(\w+)\s*\(/.exec(b.text)?.[1] ?? '';
          const cp = ENTRY_POINTS[entry];
          expect(cp, `${where}: no known entry point (${Object.keys(ENTRY_POINTS).join(', ')})`).toBeDefined();
          const file = `block-${b.line}.yaml`;
          const indented = b.text.split('\n').map((l) => `    ${l}`).join('\n');
          writeFileSync(path.join(dir, file), `${cp}:\n  type: code\n  source: |\n${indented}\n`);
          await blis(argsFor('bundle', file, { [cp as string]: {} }), dir, `${where}: code`);
          ran.push(where);
        });
        continue;
      }
      if (b.lang === 'ts') {
        it(`${where}: library example`, async () => {
          const src = b.text.replace(/from 'blis-ts'/g, `from '${pathToFileURL(path.join(root, 'src/index.ts')).href}'`);
          const file = path.join(dir, `block-${b.line}.ts`);
          writeFileSync(file, src);
          const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
          const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
          const was = process.cwd();
          process.chdir(dir);
          try {
            await import(pathToFileURL(file).href);
            expect(error.mock.calls.filter((c) => String(c[0]).includes(': ') && !/simulated/.test(String(c[0]))), where).toEqual([]);
            expect(log).toHaveBeenCalled();
          } finally {
            process.chdir(was);
            log.mockRestore();
            error.mockRestore();
          }
          ran.push(where);
        });
        continue;
      }
      throw new Error(`${where}: a \`${b.lang}\` block this test does not know; run it here or mark it <!-- doc-test: skip (why) -->`);
    }
  });
}
