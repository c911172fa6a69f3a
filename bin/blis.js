#!/usr/bin/env node
import { main, processIo, reportInternal } from '../dist/cli/main.js';

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
