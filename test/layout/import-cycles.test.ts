// No import cycle between source files (issue 31, docs/architecture.md): the layering lint keeps folders
// pointing down; this keeps the files of one folder pointing one way too. Every edge counts — value, `import
// type`, re-export and dynamic `import()` — so a shared type belongs in a lower file that both sides import.
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from './source-files.js';

const STATIC = /(?:^|\n)[ \t]*(?:import|export)\s[^'"`;]*?['"](\.{1,2}\/[^'"]+)\.js['"]/g;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)\.js['"]\s*\)/g;

/** File -> the source files it imports (relative specifiers only; everything else is outside src/). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const deps = new Set<string>();
    for (const re of [STATIC, DYNAMIC]) {
      for (const m of text.matchAll(re)) {
        const target = resolve(dirname(f), `${m[1] as string}.ts`);
        if (known.has(target)) deps.add(target);
      }
    }
    graph.set(f, [...deps]);
  }
  return graph;
}

/** The strongly connected components with more than one file (Tarjan), as sorted lists of paths under src/. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.map((f) => relative(SRC, f).split('\\').join('/')).sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

describe('import cycles', () => {
  it('finds a cycle when there is one (the checker itself)', () => {
    const g = new Map([['/a', ['/b']], ['/b', ['/c']], ['/c', ['/a']], ['/d', ['/a']]]);
    expect(cycles(g)).toHaveLength(1);
    expect(cycles(g)[0]).toHaveLength(3);
  });

  it('no source file takes part in an import cycle', () => {
    const unexpected = cycles(importGraph(sourceFiles(SRC)));
    expect(unexpected, `import cycles (move the shared types into a lower file):\n${unexpected.map((c) => c.join(' <-> ')).join('\n')}`).toEqual([]);
  });
});
