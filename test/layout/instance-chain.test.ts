// Instance is one class chain, a file per part (issue 31 item 2): the chain instance-core.ts's opening comment
// describes is the chain the code builds, every file of it opens with a comment saying what it owns, and none
// outgrows the split (about 450 lines).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Instance } from '../../src/instance/instance.js';

const DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/instance');
const read = (file: string): string => readFileSync(resolve(DIR, file), 'utf8');

/** The files named in the chain `a.ts (...) -> b.ts (...) -> ...` of a file's opening comment, in order. */
function documentedChain(text: string): string[] {
  const opening = /^\/\*\*([\s\S]*?)\*\//.exec(text);
  if (opening === null) return [];
  const flat = (opening[1] as string).replace(/\n\s*\*\s?/g, ' ');
  const chain = /([\w-]+\.ts)\s*\([^)]*\)(?:\s*->\s*[\w-]+\.ts(?:\s*\([^)]*\))?)+/.exec(flat);
  return chain === null ? [] : [...chain[0].matchAll(/([\w-]+\.ts)/g)].map((m) => m[1] as string);
}

/** The file declaring `class Name` among `files`. */
function fileOf(name: string, files: readonly string[]): string | undefined {
  return files.find((f) => new RegExp(`\\bclass ${name}\\b`).test(read(f)));
}

describe("Instance's class chain", () => {
  const chain = documentedChain(read('instance-core.ts'));

  it('reads the chain from a comment (and finds none where there is none)', () => {
    expect(documentedChain('/** a.ts (x) -> b.ts (y, z) -> c.ts */')).toEqual(['a.ts', 'b.ts', 'c.ts']);
    expect(documentedChain('/** one file, no chain: a.ts (x) */')).toEqual([]);
  });

  it('is the chain instance-core.ts documents, bottom to top', () => {
    expect(chain).toEqual(['instance-core.ts', 'instance-intake.ts', 'step-execute.ts', 'step-complete.ts', 'instance.ts']);
    const classes: string[] = [];
    for (let p: unknown = Instance.prototype; p !== Object.prototype && p !== null; p = Object.getPrototypeOf(p)) {
      classes.push((p as { constructor: { name: string } }).constructor.name);
    }
    expect(classes.reverse().map((c) => fileOf(c, chain))).toEqual(chain);
  });

  it('opens every file with a comment saying what it owns, each at most 450 lines', () => {
    for (const f of chain) {
      const text = read(f);
      expect(text.startsWith('/**'), f).toBe(true);
      expect(/This file owns/.test(text.slice(0, text.indexOf('*/'))), f).toBe(true);
      expect(text.split('\n').length, f).toBeLessThanOrEqual(450);
    }
  });
});
