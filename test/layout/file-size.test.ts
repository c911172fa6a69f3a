// No source file over about 500 lines (issue 31): a file that outgrows that is split along its seams, or its
// opening comment says why it is longer ("Longer than 500 lines because ..."). Every source file opens with a
// comment saying what it owns. Tests, fixtures and generated files are not source files here.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from './source-files.js';

const LIMIT = 500;

/** The file's opening comment (a leading block or run of line comments), or '' when it has none. */
export function openingComment(text: string): string {
  const t = text.replace(/^#![^\n]*\n/, '').trimStart();
  if (t.startsWith('/*')) return t.slice(0, t.indexOf('*/') + 2);
  const lines: string[] = [];
  for (const line of t.split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line);
  }
  return lines.join('\n');
}

export function oversized(files: readonly { path: string; text: string }[], limit = LIMIT): string[] {
  const bad: string[] = [];
  for (const f of files) {
    const lines = f.text.split('\n').length - (f.text.endsWith('\n') ? 1 : 0);
    if (lines > limit && !/Longer than \d+ lines because/.test(openingComment(f.text))) bad.push(`${f.path}: ${lines} lines`);
  }
  return bad;
}

describe('source files stay walkable', () => {
  const files = sourceFiles(SRC).map((p) => ({ path: relative(SRC, p), text: readFileSync(p, 'utf8') }));

  it(`no source file over ${LIMIT} lines unless its opening comment says why`, () => {
    expect(oversized(files)).toEqual([]);
  });

  it('the check fails on a long file without a reason, and passes one that gives it', () => {
    const body = 'x;\n'.repeat(LIMIT);
    expect(oversized([{ path: 'a.ts', text: `/** Owns a. */\n${body}` }])).toEqual([`a.ts: ${LIMIT + 1} lines`]);
    expect(oversized([{ path: 'b.ts', text: `/**\n * Owns b. Longer than 500 lines because it is one table.\n */\n${body}` }])).toEqual([]);
    expect(oversized([{ path: 'c.ts', text: `/** Owns c. */\n// Longer than 500 lines because (not the opening comment)\n${body}` }])).toEqual(['c.ts: 502 lines']);
  });

  it('every source file opens with a comment saying what it owns', () => {
    const bare = files.filter((f) => openingComment(f.text).trim() === '' && f.text.split('\n').length > 15).map((f) => f.path);
    expect(bare).toEqual([]);
  });
});
