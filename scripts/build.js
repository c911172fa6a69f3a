// `npm run build`: type-check and emit the declarations with tsc (library users get dist/**/*.d.ts), then bundle
// the JavaScript with esbuild. A bundle loads in a few file reads instead of ~200 module resolutions, and
// code splitting keeps every `await import()` lazy: `blis --help` and `blis run` load only what they use.
//
// Entry points (the paths other code and users name): dist/index.js (the library), dist/cli/main.js (the
// CLI), and the modules worker threads load by file name: dist/evaluate/worker.js (evaluation pool),
// dist/sweep/worker.js (sweep points on that pool), dist/serve/body-worker.js (serve's body parser). Shared code
// goes to dist/chunks/.
// piscina (spawns its own worker file) and quickjs-wasi (loads its .wasm beside itself) stay external.
//
// bin/blis.js runs a second build of the CLI: dist/cli.cjs, one CommonJS file, with the V8 code cache
// dist/cli.cjs.cache (scripts/cli-bundle.js; bin/load-cli.js says why).
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildCliBundle } from './cli-bundle.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const ENTRIES = [
  'src/index.ts', 'src/cli/main.ts', 'src/evaluate/worker.ts', 'src/sweep/worker.ts', 'src/serve/body-worker.ts',
  // Imported by path by scripts and benchmarks: scripts/gen-schema.js, bench/queue.js.
  'src/evaluate/result-schema.ts', 'src/queue/index.ts', 'src/sweep/index.ts',
];

// --no-types: bundle only (quick rebuilds while developing; the declarations and the type check are skipped).
// Type errors fail the build, after the bundle is written (as tsc itself still emits despite them).
// The declarations tsc writes this time (--listEmittedFiles): any other .d.ts under dist/ is left from an earlier
// build (a renamed module, a test helper once compiled) and is removed below, so the package ships none of them.
let typeErrors = false;
let declarations = null;
if (!process.argv.includes('--no-types')) {
  let out;
  try {
    out = execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--listEmittedFiles'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    typeErrors = true;
    out = typeof e.stdout === 'string' ? e.stdout : '';
  }
  declarations = new Set();
  for (const line of out.split('\n')) {
    const m = /^TSFILE: (.*)$/.exec(line.trimEnd());
    if (m) declarations.add(path.resolve(root, m[1]));
    else if (line.trim() !== '') console.error(line);
  }
  // tsc stopped before emitting anything (a broken tsconfig): keep what is there rather than strip every declaration.
  if (declarations.size === 0) declarations = null;
}

// commander loads node:child_process at start-up only to spawn executable subcommands, which blis does not
// have; loading that built-in costs ~20 ms of every CLI start. Its require() in commander gets a stand-in that
// loads the real module on first use.
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) => (/[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'lazy-child-process', namespace: 'blis-lazy' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'blis-lazy' }, () => ({
      contents: "let m; module.exports = new Proxy({}, { get: (_, k) => (m ??= require('node:child_process'))[k] });",
      loader: 'js',
    }));
  },
};

const result = await build({
  plugins: [lazyChildProcess],
  absWorkingDir: root,
  entryPoints: ENTRIES,
  outdir: 'dist',
  outbase: 'src',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['piscina', 'quickjs-wasi'],
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: false,
  metafile: true,
  logLevel: 'warning',
  // Bundled CommonJS dependencies (commander) call require() for Node built-ins; an ESM bundle has none.
  banner: { js: "import { createRequire as __blisCreateRequire } from 'node:module';\nconst require = __blisCreateRequire(import.meta.url);" },
});

// The CLI again as one CommonJS file with a V8 code cache, which bin/blis.js runs (scripts/cli-bundle.js).
if (!(await buildCliBundle(root, [lazyChildProcess]))) process.exitCode = 1;

// Remove JavaScript left by earlier builds (per-file tsc output, old chunks): nothing may import a stale file;
// and declarations tsc did not write this time (after a failed type check too: tsc still emits them all).
const outputs = new Set(Object.keys(result.metafile.outputs).map((f) => path.join(root, f)));
function sweep(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      sweep(p);
      if (readdirSync(p).length === 0) rmSync(p, { recursive: true });
    } else if (/\.js(\.map)?$/.test(e.name) && !outputs.has(p) && statSync(p).isFile()) {
      rmSync(p);
    } else if (declarations !== null && /\.d\.ts(\.map)?$/.test(e.name) && !declarations.has(p) && statSync(p).isFile()) {
      rmSync(p);
    }
  }
}
sweep(dist);
if (typeErrors) {
  console.error('build: tsc reported type errors (see above)');
  process.exitCode = 1;
}
