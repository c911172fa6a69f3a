/**
 * The library as a consumer gets it: `npm pack` the project, unpack the tarball into a temporary project's
 * node_modules (its runtime dependencies linked from this checkout's, so no network is needed), then compile
 * with this repository's TypeScript, strict, (1) every TypeScript example of the docs' library section and
 * (2) a consumer with typed options and results plus `@ts-expect-error` lines for misspelled keys, wrong types
 * and unknown enum values (an expect-error line that compiles fails the build). Finally the compiled consumer
 * runs against the packed package.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../io/processes.js';

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The ```ts blocks of a markdown section (from its heading to the next `## `). */
function tsBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/\n## /);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

const CONSUMER = `import { simulate, BlisError, type SimulationConfig, type RunConfig, type SimulationMetrics, type SimulationResult } from 'blis-ts';

const run: RunConfig = { mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numRequests: 40, rate: 10, seed: 7n, routingPolicy: 'least-loaded', scheduler: 'priority-fcfs', gpuMemoryUtilization: 0.85, semantics: 'corrected' };
const replay: SimulationConfig = { mode: 'replay', model: 'm', traceHeader: 'h.yaml', traceData: 'd.csv', outputs: { results: true } };
void replay;

// @ts-expect-error -- misspelled key
const typo: SimulationConfig = { mode: 'run', numRequest: 5 };
// @ts-expect-error -- misspelled key, caught inline too (and rejected at run time)
await simulate({ mode: 'run', model: 'm', routingPolicies: 'weighted' }).catch((e: unknown) => e);
// @ts-expect-error -- unknown enum value
const badEnum: SimulationConfig = { mode: 'run', scheduler: 'lifo' };
// @ts-expect-error -- semantics is reference or corrected
const badSemantics: SimulationConfig = { mode: 'run', semantics: 'fixed' };
// @ts-expect-error -- wrong type: numbers are numbers
const badType: SimulationConfig = { mode: 'run', numRequests: '5' };
// @ts-expect-error -- a replay option in run mode
const wrongMode: SimulationConfig = { mode: 'run', traceHeader: 'h.yaml' };
// @ts-expect-error -- file-writing options are not library keys (ask for the content with outputs)
const writes: SimulationConfig = { mode: 'run', metricsPath: 'm.json' };
void [typo, badEnum, badSemantics, badType, wrongMode, writes];

const r: SimulationResult = await simulate(run, { onProgress: (p) => void p.requestsDone });
const m: SimulationMetrics = r.metrics;
const completed: number = m.completed_requests;
const p99: number = r.report.simulation_metrics.ttft_p99_ms;
// @ts-expect-error -- result metrics are typed: no such field
void m.ttft_p99;
// @ts-expect-error -- and typed by value
const asText: string = m.e2e_mean_ms;
void asText;
// Every section of the JSON report is typed: a consumer reads each one without a cast (no \`unknown\`).
const rep = r.report;
const fromSections: number[] = [
  rep.instances?.[0]?.completed_requests ?? 0,
  rep.anomaly_counters?.timed_out_requests ?? 0,
  rep.kv_cache_metrics?.cache_hit_rate ?? 0,
  rep.per_slo_metrics?.['default']?.ttft_p99_ms ?? 0,
  rep.per_model_metrics?.['meta-llama/llama-3.1-8b-instruct']?.tokens_per_sec ?? 0,
  rep.per_tenant_metrics?.jain_fairness_index ?? 0,
  rep.session_metrics?.ttft_warm_p50_ms ?? 0,
  rep.pd_metrics?.kv_transfer_p99_ms ?? 0,
  rep.autoscaler?.failed_actions ?? 0,
  rep.fitness?.score ?? 0,
  rep.trace_summary?.mean_regret ?? 0,
  Object.keys(rep.policy?.control_points ?? {}).length,
  rep.admission_delays?.delays ?? 0,
  rep.kv_tiers?.cluster.storage.hit_rate ?? 0,
  rep.policy_anomalies?.shadow_divergences ?? 0,
  rep.trace?.routings[0]?.regret ?? 0,
  rep.report_data?.version ?? 0,
];
void fromSections;
// @ts-expect-error -- no catch-all: a section that does not exist is an error
void rep.no_such_section;
try {
  // eslint-disable-next-line
  await simulate({ mode: 'run', model: 'meta-llama/llama-3.1-8b-instruct', numInstances: 0 });
} catch (e) {
  if (!(e instanceof BlisError)) throw e;
  console.log(JSON.stringify({ completed, p99: p99 > 0, code: e.code, message: e.message }));
}
`;

describe.skipIf(process.env['BLIS_SKIP_PACK'] === '1')('the packed package, as a TypeScript consumer sees it', () => {
  let dir = '';
  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'blis-consumer-'));
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    const tarball = join(dir, (JSON.parse(out) as { filename: string }[])[0]!.filename);
    const pkgDir = join(dir, 'node_modules', 'blis-ts');
    mkdirSync(pkgDir, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dep of [...Object.keys(pkg.dependencies ?? {}), '@types/node']) {
      const target = join(dir, 'node_modules', dep);
      mkdirSync(join(target, '..'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', dep), target, 'dir');
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, types: ['node'], outDir: 'out', skipLibCheck: false },
      include: ['*.ts'],
    }));
  }, 240_000);
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  function tsc(skipLibCheck = false): { code: number | null; output: string } {
    const r = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json'), ...(skipLibCheck ? ['--skipLibCheck'] : [])], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
    return { code: r.status, output: `${r.stdout}${r.stderr}` };
  }

  it('compiles the docs examples and a typed consumer whose misspellings fail tsc; the consumer runs', () => {
    const examples = tsBlocks(readFileSync(join(ROOT, 'docs', 'usage.md'), 'utf8'), '## Library API');
    expect(examples.length).toBeGreaterThan(0);
    examples.forEach((code, i) => writeFileSync(join(dir, `docs-example-${i}.ts`), `${code}\nexport {};\n`));
    writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
    const ok = tsc();
    expect(ok.output).toBe('');
    expect(ok.code).toBe(0);
    const run = spawnSync(process.execPath, [join(dir, 'out', 'consumer.js')], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ completed: 40, p99: true, code: 'bad-flag', message: 'numInstances must be > 0, got 0' });
  }, 240_000);

  it('fails tsc on a misspelled key (the check above can fail)', () => {
    for (const f of readdirSync(dir)) if (f.endsWith('.ts')) rmSync(join(dir, f));
    writeFileSync(join(dir, 'consumer.ts'), `import { simulate } from 'blis-ts';\nvoid simulate({ mode: 'run', numRequest: 5 });\n`);
    const bad = tsc(true);
    expect(bad.code).not.toBe(0);
    expect(bad.output).toMatch(/consumer\.ts.*'numRequest' does not exist in type/);
  }, 240_000);
});
