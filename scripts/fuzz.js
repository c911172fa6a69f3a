// `npm run fuzz`: the long fuzz campaign. Runs test/fuzz with FUZZ_RUNS=25 (every suite's base case count x 25)
// and a fresh random seed, both overridable (FUZZ_RUNS=100 FUZZ_SEED=123 npm run fuzz), and prints them first so
// a failure can be repeated. Extra arguments go to vitest (e.g. a single file).
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';

const env = { ...process.env };
env.FUZZ_RUNS ||= '25';
env.FUZZ_SEED ||= String(randomInt(1, 2 ** 31 - 1));
console.log(`fuzz campaign: FUZZ_RUNS=${env.FUZZ_RUNS} FUZZ_SEED=${env.FUZZ_SEED}`);
const args = ['vitest', 'run', ...(process.argv.length > 2 ? process.argv.slice(2) : ['test/fuzz'])];
const r = spawnSync('npx', args, { stdio: 'inherit', env });
process.exitCode = r.status ?? 1;
