// `npm run fuzz`: the long fuzz campaign. Runs test/fuzz with FUZZ_RUNS=25 (every suite's base case count x 25)
// and a fresh random seed, both overridable (FUZZ_RUNS=100 FUZZ_SEED=123 npm run fuzz), and prints them first so
// a failure can be repeated. Extra arguments go to vitest: files (a single suite) replace test/fuzz; options
// alone (--reporter=verbose, --maxWorkers=1) still run test/fuzz only, never the whole test suite.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';

const env = { ...process.env };
env.FUZZ_RUNS ||= '25';
env.FUZZ_SEED ||= String(randomInt(1, 2 ** 31 - 1));
console.log(`fuzz campaign: FUZZ_RUNS=${env.FUZZ_RUNS} FUZZ_SEED=${env.FUZZ_SEED}`);
const extra = process.argv.slice(2);
// A name is an argument that is neither an option nor the value of the option before it (`--reporter verbose`).
const names = extra.some((a, i) => !a.startsWith('-') && (i === 0 || !extra[i - 1].startsWith('-') || extra[i - 1].includes('=')));
const args = ['vitest', 'run', ...(names ? [] : ['test/fuzz']), ...extra];
const r = spawnSync('npx', args, { stdio: 'inherit', env });
process.exitCode = r.status ?? 1;
