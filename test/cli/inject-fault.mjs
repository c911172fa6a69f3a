// `node --import ./test/cli/inject-fault.mjs bin/blis.js ...`: replaces one export of one built module with a
// function that throws a TypeError, as a bug in that dependency would. BLIS_FAULT = "dist/path/module.js#export" (or "#export@N": the first N calls pass).
import { register } from 'node:module';

register('./fault-hooks.mjs', import.meta.url, { data: process.env.BLIS_FAULT ?? '' });
