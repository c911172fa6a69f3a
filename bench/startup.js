// Start-up costs, each as a fresh process (median wall and minimum CPU of --startup-reps runs, default 11):
// bare Node, `blis --help`, `blis run` for a single request (start-up to the first simulated event and out),
// and `import('blis-ts')`. Target: `blis --help` <= 0.15 s. Last line: a JSON summary.
import { BLIS, ROOT, argValue, fmtS, median, timedRun, verdict } from './lib.js';

const reps = Number(argValue('startup-reps', '11'));
const CASES = [
  { id: 'node', what: 'bare Node (`node -e 0`), for reference', args: ['-e', '0'] },
  { id: 'help', what: '`blis --help`', args: [BLIS, '--help'], maxWallS: 0.15 },
  { id: 'run1', what: '`blis run` of one request (start-up, first event, output)', args: [BLIS, 'run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '1', '--log', 'error'] },
  // Run from the package root, the package resolves itself by name through its "exports".
  { id: 'import', what: "`import('blis-ts')`", args: ['--input-type=module', '-e', "await import('blis-ts')"] },
];

const rows = [];
for (const c of CASES) {
  const runs = [];
  for (let i = 0; i < reps; i++) runs.push(timedRun(process.execPath, c.args, { cwd: ROOT, label: c.id }));
  const wallS = median(runs.map((r) => r.wallS));
  const cpu = runs.map((r) => r.cpuS).filter((x) => x !== null);
  const cpuS = cpu.length > 0 ? Math.min(...cpu) : null;
  rows.push({ id: c.id, what: c.what, wallS, minWallS: Math.min(...runs.map((r) => r.wallS)), cpuS, target: c.maxWallS === undefined ? null : `<= ${c.maxWallS} s`, verdict: c.maxWallS === undefined ? null : verdict(wallS, wallS <= c.maxWallS) });
}

console.log(`\n## Start-up (${reps} runs each)\n`);
console.log('| what | median wall | min wall | min CPU | target |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | ${fmtS(r.wallS)} | ${fmtS(r.minWallS)} | ${fmtS(r.cpuS)} | ${r.target === null ? '' : `${r.target}: ${r.verdict}`} |`);
console.log(JSON.stringify(rows));
