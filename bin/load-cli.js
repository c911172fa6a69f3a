'use strict';
// CommonJS (bin/package.json), as bin/blis.js says why.
//
// Loads the CLI for bin/blis.js: the one-file CommonJS bundle dist/cli.cjs compiled with the V8 code cache the
// build wrote beside it (dist/cli.cjs.cache), or else the ESM build (dist/cli/main.js).
//
// Why by hand: ~60 ms of a short `blis run` was resolving, linking and compiling ~58 ESM chunk files. One
// CommonJS file with a code cache skips all of it: V8 deserialises the bytecode of every function the build saw
// run instead of parsing and compiling them. Node 20 has no module.enableCompileCache() (Node 22.1+), and
// v8-compile-cache (and its fork v8-compile-cache-lib) write their cache at run time, into the temporary
// directory by default, and hook require() of separate files. Here the cache is made once by `npm run build` (scripts/cli-bundle.js, scripts/code-cache.js)
// and only read at run time: nothing is written into the package or anywhere else.
//
// When the cache cannot be used the ESM build is loaded (compiling the whole bundle from source would cost more
// than the ESM build's few chunks): when it is missing, damaged or made from another bundle (the cache file
// starts with the bundle's content hash, from its first line, and the CRC-32 of V8's data: V8 checks the
// source only by its length and, in release builds, no checksum, so a damaged cache would abort the process;
// CRC-32 catches damage, and zlib's costs ~3 ms less per start than loading node:crypto for a SHA-256),
// or when V8 would reject it because another Node or other V8 flags made it (NODE_OPTIONS=--max-old-space-size
// changes V8's flag hash). V8 says that only after compiling, so the loader asks it beforehand with a one-byte
// script's cache, whose header has the same version and flag hashes. Should V8 still reject the cache, the
// bundle compiles from source: slower, same behaviour.
//
// BLIS_NO_CODE_CACHE=1 loads the ESM build; BLIS_DEBUG_CODE_CACHE=1 prints one `debug: code cache ...` line on
// stderr saying what was loaded and why (for tests and diagnosis).
const { isAscii } = require('node:buffer');
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const v8 = require('node:v8');
const vm = require('node:vm');
const { crc32 } = require('node:zlib');

const DIST = path.join(__dirname, '..', 'dist');
const BUNDLE = path.join(DIST, 'cli.cjs');
const CACHE = `${BUNDLE}.cache`;

/**
 * The bundle's `import()`s call this parameter instead (the build rewrites them): a vm.Script has no import()
 * of its own, and Node's stand-in (vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) is lost when the script comes
 * from a code cache, and prints an ExperimentalWarning on Node 20 when it works.
 */
const IMPORT = '__blisEsmImport';

/** The bundle's first line, `"use strict"; // blis-cli-bundle <hash>`, written by scripts/cli-bundle.js. */
const ID = /^"use strict"; \/\/ blis-cli-bundle ([0-9a-f]{16})\n/;

const HEADER_BYTES = 16 + 1 + 8 + 1;

/** A cache file: the hash of the bundle it was made from, the CRC-32 of V8's data (8 hex digits) and a newline; then the data. */
function cacheFile(id, data) {
  return Buffer.concat([Buffer.from(`${id} ${digest(data)}\n`, 'latin1'), data]);
}

function digest(data) {
  return crc32(data).toString(16).padStart(8, '0');
}

function readOrNull(file) {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}

/** The bundle's text and content hash (null without the build's first line), or null when there is no bundle. */
function readBundle(file = BUNDLE) {
  const bytes = readOrNull(file);
  if (bytes === null) return null;
  // The build makes the bundle ASCII-only when it can: Latin-1 decodes it several times faster than UTF-8.
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  return { source, id: ID.exec(source.slice(0, 64))?.[1] ?? null };
}

/**
 * V8's header of a code cache starts with uint32s: magic number, version hash, source hash, flag hash. A cache
 * this process makes has this Node's magic, version and flag hashes; a cache with others would be rejected.
 */
function sameV8(data) {
  if (data.length < 16) return false;
  const probe = new vm.Script('0').createCachedData();
  return probe.length >= 16 && probe.compare(data, 0, 8, 0, 8) === 0 && probe.compare(data, 12, 16, 12, 16) === 0;
}

/** V8's data in the cache file `cache` of the bundle `id`, or why it cannot be used. */
function cachedDataOf(cache, id) {
  if (id === null || cache.length <= HEADER_BYTES || cache.toString('latin1', 0, id.length + 1) !== `${id} `) return { reason: 'unusable' };
  const data = cache.subarray(HEADER_BYTES);
  if (!sameV8(data)) return { reason: 'foreign' };
  if (cache.toString('latin1', id.length + 1, HEADER_BYTES) !== `${digest(data)}\n`) return { reason: 'unusable' };
  return { data };
}

// Module.wrap's layout (the source starts on line 1, so stack traces keep the bundle's line numbers), plus the
// import function.
const HEAD = `(function (exports, require, module, __filename, __dirname, ${IMPORT}) { `;
const TAIL = '\n});';

/**
 * Compiles (with V8's `cachedData` when given) and runs the bundle `source` of the file `file` as a CommonJS
 * module. Returns its exports, the compiled script (the build asks it for its cache) and whether V8 rejected
 * the data.
 */
function runBundle(file, source, cachedData) {
  const script = new vm.Script(HEAD + source + TAIL, { filename: file, cachedData });
  const base = pathToFileURL(file);
  // Bare names resolve from the package as they would from dist/; relative ones (none today) from the bundle.
  const importer = (specifier) => import(specifier.startsWith('.') ? new URL(specifier, base).href : specifier);
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file), importer);
  return { exports: module.exports, script, rejected: cachedData !== undefined && script.cachedDataRejected === true };
}

/**
 * The bundle and V8's data of its cache, or why they cannot be used: 'off' (BLIS_NO_CODE_CACHE=1), 'absent'
 * (either file missing), 'unusable' (damaged, or made from another bundle) or 'foreign' (another Node or
 * other V8 flags).
 */
function usableBundle() {
  if (process.env.BLIS_NO_CODE_CACHE === '1') return { reason: 'off' };
  const cache = readOrNull(CACHE);
  if (cache === null) return { reason: 'absent' };
  const bundle = readBundle();
  if (bundle === null) return { reason: 'absent' };
  const { data, reason } = cachedDataOf(cache, bundle.id);
  return data === undefined ? { reason } : { source: bundle.source, data };
}

/**
 * The line bin/blis.js prints on stderr (then exit 2, a set-up error) when the CLI cannot be loaded because the
 * checkout is not built: dist/ or the module loaded from it is missing, or a package it imports is not installed.
 * Anything else that fails while loading stays a crash with Node's stack trace.
 */
function notBuiltLine() {
  return `error: blis-ts is not built: run npm run build (or npm ci, then npm run build) in ${path.resolve(__dirname, '..')}`;
}

/** Whether `e`, thrown by loadCli(), is a module that could not be found (dist/ or node_modules/ incomplete). */
function isNotBuilt(e) {
  return e !== null && typeof e === 'object' && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND');
}

/** The CLI module's exports: `main`, `processIo`, `reportInternal` (src/cli/main.ts). */
async function loadCli() {
  const debug = process.env.BLIS_DEBUG_CODE_CACHE === '1';
  const usable = usableBundle();
  if (usable.data !== undefined) {
    const { exports, rejected } = runBundle(BUNDLE, usable.source, usable.data);
    if (debug) process.stderr.write(`debug: code cache ${rejected ? 'rejected by V8, compiled from source' : 'accepted'} (dist/cli.cjs)\n`);
    return exports;
  }
  if (debug) process.stderr.write(`debug: code cache ${usable.reason} (dist/cli/main.js)\n`);
  return import('../dist/cli/main.js');
}

/**
 * TurboFan's budget of inlined bytecode per optimised function, lowered from V8's 920 for the CLI's process.
 * A short run is mostly V8 warming up: on the 2-core benchmark machine the background compiler spent ~0.34 s of
 * CPU on a 0.55 s, 10,000-request run, competing with the simulation for the cores and leaving hot functions
 * in baseline code while their large optimised versions compiled. At 300 the compiles are a third smaller
 * and done sooner: that run, the 8-instance one and a 500-request evaluation are 5-7% faster, a 50,000-request
 * run 2% slower (docs/performance.md). Set after the CLI is loaded, so the code cache (checked against V8's
 * flags) still applies. Left alone when the user gave an inlining flag to node, or with BLIS_V8_DEFAULTS=1. The
 * library never changes V8's flags: they are the embedding process's.
 */
const INLINING_BUDGET = '--max-inlined-bytecode-size-cumulative=300';

function tuneJit() {
  if (process.env.BLIS_V8_DEFAULTS === '1') return false;
  // (Node refuses V8's inlining flags in NODE_OPTIONS: only its own command line can carry one.)
  if (process.execArgv.some((a) => /max[-_]inlined[-_]bytecode/.test(a))) return false;
  v8.setFlagsFromString(INLINING_BUDGET);
  return true;
}

module.exports = { BUNDLE, CACHE, IMPORT, cacheFile, readBundle, cachedDataOf, runBundle, loadCli, notBuiltLine, isNotBuilt, INLINING_BUDGET, tuneJit };
