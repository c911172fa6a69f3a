// Part of `npm run build`: the CLI as one CommonJS file, dist/cli.cjs, and its V8 code cache,
// dist/cli.cjs.cache, which bin/blis.js loads (bin/load-cli.js says why and how).
//
// One file, no chunks: one read, one compile, one cache. The CLI's `import()`s of its own modules become lazy
// initialisers inside the file, so a command's code still runs only when it is used. import.meta.url becomes the
// bundle's URL: the modules that locate files from it search the path for /dist/, which dist/cli.cjs is in.
//
// External: packages loaded on demand and too large to ship twice (vega, vega-lite: ESM-only, reached through
// import(); BullMQ and ioredis: their CommonJS builds) and piscina (it spawns its own worker file).
// quickjs-wasi is bundled: it is ESM-only and the strict sandbox imports it statically, which here would be a
// require() of an ES module (silent only since Node 20.19, refused under --no-experimental-require-module); it
// loads nothing beside itself (the sandbox compiles quickjs.wasm itself).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'acorn';
import { build } from 'esbuild';
import { IMPORT } from '../bin/load-cli.js';

/** Builds dist/cli.cjs and its code cache; false (after saying why on stderr) when the cache could not be made. */
export async function buildCliBundle(root, plugins) {
  const result = await build({
    plugins,
    absWorkingDir: root,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.cjs',
    write: false,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: ['piscina', 'vega', 'vega-lite', 'bullmq', 'ioredis'],
    define: { 'import.meta.url': '__blisImportMetaUrl' },
    banner: { js: "const __blisImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    sourcemap: false,
    logLevel: 'warning',
  });
  const text = rewrite(result.outputFiles[0].text);
  // The first line: strict mode, as the ESM build is (a directive must come first), and the content hash the
  // code cache is matched with.
  const id = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const file = path.join(root, 'dist', 'cli.cjs');
  const cache = `${file}.cache`;
  rmSync(cache, { force: true });
  writeFileSync(`${file}.tmp`, `"use strict"; // blis-cli-bundle ${id}\n${text}`);
  renameSync(`${file}.tmp`, file);

  // The cache is made in a fresh Node without NODE_OPTIONS: V8 accepts a cache only under the flags it was made
  // with, and a plain `node` is what runs blis.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const made = spawnSync(process.execPath, [path.join(root, 'scripts', 'code-cache.js')], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 120_000 });
  if (made.status === 0) return true;
  rmSync(cache, { force: true });
  console.error(`build: making the CLI's code cache failed (exit ${made.status ?? made.signal}); blis runs the ESM build without it\n${made.stderr}`);
  return false;
}

/**
 * Two edits, placed by acorn's tokens:
 * - Every `import(...)` calls the loader's import function instead (bin/load-cli.js passes it in): V8 needs a
 *   host callback for import() in a vm.Script, and Node's (vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) is
 *   lost when the script comes from a code cache and prints an ExperimentalWarning when it works.
 * - esbuild escapes non-ASCII characters in strings and identifiers but keeps them in comments and regular
 *   expression literals. An ASCII-only file decodes as Latin-1 in a fraction of UTF-8's time (several ms of a
 *   start) and stays a one-byte string for V8, so those characters become \u escapes (the same character in a
 *   regular expression, inert in a comment) — when every one of them is in such a place; else they stay.
 */
function rewrite(text) {
  if (new RegExp(`\\b${IMPORT}\\b`).test(text)) throw new Error(`build: the CLI bundle already uses the name ${IMPORT}`);
  const escapable = [];
  const imports = [];
  let previous = null;
  parse(text, {
    ecmaVersion: 'latest',
    sourceType: 'script',
    onComment: (_block, _text, start, end) => escapable.push([start, end]),
    onToken: (t) => {
      if (t.type.label === 'regexp') escapable.push([t.start, t.end]);
      if (t.type.label === '(' && previous?.type.keyword === 'import') imports.push(previous.start);
      previous = t;
    },
  });
  escapable.sort((a, b) => a[0] - b[0]);
  const edits = imports.map((at) => [at, at + 'import'.length, IMPORT]);
  const wide = [];
  let k = 0;
  let ascii = true;
  for (const m of text.matchAll(/[^\x00-\x7f]/g)) {
    while (k < escapable.length && escapable[k][1] <= m.index) k++;
    if (k === escapable.length || escapable[k][0] > m.index) ascii = false;
    wide.push([m.index, m.index + 1, `\\u${m[0].charCodeAt(0).toString(16).padStart(4, '0')}`]);
  }
  if (ascii) edits.push(...wide);
  edits.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [start, end, by] of edits) {
    out += text.slice(at, start) + by;
    at = end;
  }
  return out + text.slice(at);
}
