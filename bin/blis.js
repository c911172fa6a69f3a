#!/usr/bin/env node
import { loadCli } from './load-cli.js';

// The CLI from its one-file bundle with the build's code cache, or from the ESM build (bin/load-cli.js).
const { main, processIo, reportInternal } = await loadCli();
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
