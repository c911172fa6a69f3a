// Start-up costs, each as a fresh process through the real entry point bin/blis.js (median wall and minimum CPU
// of --startup-reps runs, default 11, the cases interleaved so that load changes hit them alike): bare Node,
// `blis --help`, `blis run` for a single request (start-up to the first simulated event and out), each both as
// shipped (the one-file bundle dist/cli.cjs with its code cache) and from the ESM build (BLIS_NO_CODE_CACHE=1),
// and `import('blis-ts')`. Target: `blis --help` <= 0.15 s. Last line: a JSON summary.
import { spawnSync } from 'node:child_process';
import { BLIS, ROOT, argValue, fmtS, median, timedRun, verdict } from './lib.js';

const reps = Number(argValue('startup-reps', '11'));
const esm = { ...process.env, BLIS_NO_CODE_CACHE: '1' };
const RUN1 = [BLIS, 'run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '1', '--log', 'error'];
const CASES = [
  { id: 'node', what: 'bare Node (`node -e 0`), for reference', args: ['-e', '0'] },
  { id: 'help', what: '`blis --help`', args: [BLIS, '--help'], maxWallS: 0.15 },
  { id: 'help-esm', what: '`blis --help`, ESM build (BLIS_NO_CODE_CACHE=1)', args: [BLIS, '--help'], env: esm },
  { id: 'run1', what: '`blis run` of one request (start-up, first event, output)', args: RUN1 },
  { id: 'run1-esm', what: '`blis run` of one request, ESM build', args: RUN1, env: esm },
  // Run from the package root, the package resolves itself by name through its "exports".
  { id: 'import', what: "`import('blis-ts')`", args: ['--input-type=module', '-e', "await import('blis-ts')"] },
];

// What bin/blis.js loads here: the code cache is used only under the Node and V8 flags that made it.
const probe = spawnSync(process.execPath, [BLIS, '--version'], { cwd: ROOT, env: { ...process.env, BLIS_DEBUG_CODE_CACHE: '1' }, encoding: 'utf8' });
const loaded = (/^debug: code cache (.*)$/m.exec(probe.stderr)?.[1] ?? `unknown (exit ${probe.status})`).trim();

const runs = CASES.map(() => []);
for (let i = 0; i < reps; i++) {
  CASES.forEach((c, k) => runs[k].push(timedRun(process.execPath, c.args, { cwd: ROOT, label: c.id, env: c.env ?? process.env })));
}
const rows = CASES.map((c, k) => {
  const wallS = median(runs[k].map((r) => r.wallS));
  const cpu = runs[k].map((r) => r.cpuS).filter((x) => x !== null);
  const cpuS = cpu.length > 0 ? Math.min(...cpu) : null;
  return { id: c.id, what: c.what, wallS, minWallS: Math.min(...runs[k].map((r) => r.wallS)), cpuS, target: c.maxWallS === undefined ? null : `<= ${c.maxWallS} s`, verdict: c.maxWallS === undefined ? null : verdict(wallS, wallS <= c.maxWallS) };
});

console.log(`\n## Start-up (${reps} runs each; bin/blis.js here: code cache ${loaded})\n`);
console.log('| what | median wall | min wall | min CPU | target |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.what} | ${fmtS(r.wallS)} | ${fmtS(r.minWallS)} | ${fmtS(r.cpuS)} | ${r.target === null ? '' : `${r.target}: ${r.verdict}`} |`);
console.log(JSON.stringify({ codeCache: loaded, rows }));
