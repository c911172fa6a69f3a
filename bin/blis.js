#!/usr/bin/env node
'use strict';
// CommonJS (bin/package.json), like bin/load-cli.js: an ES-module entry point costs every start ~5 ms of
// module-loader set-up before the first line runs.
const { loadCli, isNotBuilt, notBuiltLine, tuneJit } = require('./load-cli.js');

async function run() {
  // The CLI from its one-file bundle with the build's code cache, or from the ESM build (bin/load-cli.js); then
  // V8's inlining budget for short runs (bin/load-cli.js, tuneJit). An unbuilt checkout is a set-up error (one
  // `error:` line, exit 2) rather than Node's module-not-found stack and exit 1: the adapters of
  // integrations/ stop on exit 2 with that line.
  let cli;
  try {
    cli = await loadCli();
  } catch (e) {
    if (!isNotBuilt(e)) throw e;
    process.stderr.write(`${notBuiltLine()}\n`);
    process.exitCode = 2;
    return;
  }
  const { main, processIo, reportInternal } = cli;
  tuneJit();
  const argv = process.argv.slice(2);
  // A fault outside the awaited command (a server's request handler, a timer): still one `internal:` line and
  // exit 70, never a raw stack trace.
  const fatal = (e) => {
    process.exitCode = reportInternal(e, argv, processIo);
    process.exit();
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  process.exitCode = await main(argv);
}

run();
