// Evaluations per minute through the Python integrations, as OpenEvolve and GEPA drive them (python3 running
// integrations/openevolve/evaluator.py and integrations/gepa/adapter.py; bench/frameworks.py is the driver):
// - OpenEvolve: one cascade per distinct program (stage 1, then stage 2 when stage 1 reaches the example config's
//   0.3 threshold) on the built-in suite routing-prefix-heavy; target: a cascade within 1.5 s on an idle 2-core
//   machine (the median, warm server);
// - GEPA: one example (one simulation run) per distinct candidate, as GEPA's evaluate calls come.
// Each through the warm evaluation server (the default) and, for comparison, one CLI process per evaluation
// (BLIS_WARM=0, fewer candidates). Skipped, with the reason, without python3. Last line: a JSON summary.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, argValue, fmtS, verdict } from './lib.js';

const N = Number(argValue('framework-candidates', '20'));
const COLD = Number(argValue('framework-cli-candidates', '3'));

const py = spawnSync('python3', ['--version'], { encoding: 'utf8' });
if (py.error !== undefined || py.status !== 0) {
  console.log('\n## Frameworks (OpenEvolve evaluator, GEPA adapter)\n\nskipped: python3 is not installed (the integrations are Python)');
  console.log(JSON.stringify({ skipped: 'python3 is not installed' }));
  process.exit(0);
}
const r = spawnSync('python3', [path.join(ROOT, 'bench', 'frameworks.py'), String(N), String(COLD)], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, maxBuffer: 1 << 26 });
if (r.status !== 0) throw new Error(`bench/frameworks.py failed (exit ${r.status ?? r.signal}): ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`);
const doc = JSON.parse(r.stdout.trim().split('\n').pop());
const cascadeOk = doc.openevolve_warm.median_s <= 1.5;
doc.target = { cascade: 'median cascade (stage 1 + stage 2) <= 1.5 s, warm', verdict: verdict(doc.openevolve_warm.median_s, cascadeOk) };
const rows = [
  ['OpenEvolve cascade, warm server', doc.openevolve_warm],
  ['OpenEvolve cascade, CLI per evaluation', doc.openevolve_cli],
  ['GEPA one example, warm server', doc.gepa_warm],
  ['GEPA one example, CLI per evaluation', doc.gepa_cli],
];
console.log(`\n## Frameworks: evaluations per minute through the Python integrations (routing-prefix-heavy, distinct candidates)\n`);
console.log('| path | candidates | wall | evaluations/min | median per evaluation | first (cold) |');
console.log('|---|---|---|---|---|---|');
for (const [name, x] of rows) console.log(`| ${name} | ${x.candidates} | ${fmtS(x.wall_s)} | ${Math.round(x.per_minute).toLocaleString('en-US')} | ${fmtS(x.median_s)} | ${fmtS(x.first_s)} |`);
console.log(`\nmedian warm cascade ${fmtS(doc.openevolve_warm.median_s)} (target <= 1.5 s: ${doc.target.verdict})`);
console.log(JSON.stringify(doc));
