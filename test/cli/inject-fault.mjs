// `node --import ./test/cli/inject-fault.mjs bin/blis.js ...`: replaces one export of one built module with a
// function that throws a TypeError, as a bug in that dependency would. BLIS_FAULT = "dist/path/module.js#export" (or "#export@N": the first N calls pass).
// The ESM build is edited by loader hooks (fault-hooks.mjs); the one-file CLI bundle, which bin/load-cli.js reads
// with fs.readFileSync, gets the same edit as it is read (its code cache then no longer fits and is not used).
import fs from 'node:fs';
import path from 'node:path';
import { register, syncBuiltinESMExports } from 'node:module';
import { injectFault, parseFault } from './fault-hooks.mjs';

const fault = process.env.BLIS_FAULT ?? '';
register('./fault-hooks.mjs', import.meta.url, { data: fault });

const { modulePath, exportName, passThrough } = parseFault(fault);
if (modulePath.startsWith('dist/')) {
  const read = fs.readFileSync;
  const bundle = `${path.sep}dist${path.sep}cli.cjs`;
  fs.readFileSync = function readFileSync(file, ...rest) {
    const r = read.call(this, file, ...rest);
    if (typeof file !== 'string' || !file.endsWith(bundle)) return r;
    const text = injectFault(Buffer.isBuffer(r) ? r.toString('latin1') : r, exportName, passThrough);
    return Buffer.isBuffer(r) ? Buffer.from(text, 'latin1') : text;
  };
  syncBuiltinESMExports();
}
