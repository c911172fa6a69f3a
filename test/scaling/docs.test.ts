/**
 * The worked examples of docs/deployments.md run as documented and print what the page shows: docs that drift
 * from the code fail here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDeployment } from '../../src/deploy/parse.js';
import { runCli } from '../parity/harness.js';
import { assertInvariants } from '../invariants/checkers.js';

const root = path.resolve(import.meta.dirname, '../..');
const doc = readFileSync(path.join(root, 'docs/deployments.md'), 'utf8');
const dir = mkdtempSync(path.join(tmpdir(), 'blis-deploy-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The page's fenced blocks in order: language and text. */
function fences(): { lang: string; text: string; at: number }[] {
  const out: { lang: string; text: string; at: number }[] = [];
  let open: { lang: string; lines: string[]; at: number } | null = null;
  let offset = 0;
  for (const line of doc.split('\n')) {
    if (line.startsWith('```')) {
      if (open === null) open = { lang: line.slice(3).trim(), lines: [], at: offset };
      else {
        out.push({ lang: open.lang, text: `${open.lines.join('\n')}\n`, at: open.at });
        open = null;
      }
    } else open?.lines.push(line);
    offset += line.length + 1;
  }
  return out;
}
const blocks = fences();
const yamls = blocks.filter((b) => b.lang === 'yaml').map((b) => b.text);
const texts = blocks.filter((b) => b.lang === '').map((b) => b.text);

/** The block following `title` in the page (`${name}`: the yaml block right after its mention). */
function yamlAfter(marker: string): string {
  const at = doc.indexOf(marker);
  expect(at, marker).toBeGreaterThanOrEqual(0);
  const b = blocks.find((x) => x.lang === 'yaml' && x.at > at);
  if (b === undefined) throw new Error(`no yaml block after ${marker}`);
  return b.text;
}

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** The lines of a documented output block from its first line matching `start`, through `count` lines. */
function documented(start: string, count: number): string {
  const block = texts.find((t) => t.includes(start));
  if (block === undefined) throw new Error(`no output block with ${start}`);
  const lines = block.split('\n');
  const k = lines.findIndex((l) => l.includes(start));
  return lines.slice(k, k + count).join('\n');
}

async function run(args: string[]): Promise<{ stdout: string; sims: Awaited<ReturnType<typeof runCli>>['sims'] }> {
  const r = await runCli(args);
  expect(r.code, r.stderr).toBe(0);
  for (const s of r.sims) assertInvariants({ cs: s.cs, requests: s.requests, setup: s.setup });
  return r;
}

describe('docs/deployments.md examples', () => {
  it('the annotated reference file is a valid deployment', () => {
    const spec = parseDeployment(yamls[0] as string, 'reference.yaml');
    expect(spec.models.map((m) => m.configs.map((c) => c.name))).toEqual([['llama-h100'], ['qwen-pd']]);
    expect(spec.autoscaler?.policy).toBe('target-utilization');
  });

  it('example 1: two models, per-model metrics as shown', async () => {
    const dep = file('two-models.yaml', yamlAfter('`examples/two-models.yaml`:'));
    const wl = file('two-models-workload.yaml', yamlAfter('`examples/two-models-workload.yaml`'));
    const r = await run(['run', '--deployment', dep, '--workload-spec', wl, '--output-format', 'reference']);
    expect(r.stdout).toContain(documented('=== Per-Model Metrics ===', 9));
  });

  it('example 2: P/D by flags and by a deployment file print the PD Metrics shown', async () => {
    const want = documented('=== PD Metrics ===', 8);
    const flags = await run(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-instances', '6', '--prefill-instances', '2', '--decode-instances', '4',
      '--decode-tp', '2', '--pd-decider', 'always', '--rate', '20', '--num-requests', '400', '--prompt-tokens', '2048', '--output-tokens', '256', '--output-format', 'reference']);
    expect(flags.stdout).toContain(want);
    const dep = file('pd.yaml', yamlAfter('(`examples/pd.yaml`)'));
    const byFile = await run(['run', '--deployment', dep, '--pd-decider', 'always', '--rate', '20', '--num-requests', '400', '--prompt-tokens', '2048', '--output-tokens', '256', '--output-format', 'reference']);
    expect(byFile.stdout).toContain(want);
  });

  it('example 3: the diurnal load, the replica timeline, GPU-hours and cost as shown', async () => {
    const dep = file('diurnal-deploy.yaml', yamlAfter('`examples/diurnal-deploy.yaml`:'));
    const wl = file('diurnal.yaml', yamlAfter('`examples/diurnal.yaml`:'));
    const r = await run(['run', '--deployment', dep, '--workload-spec', wl]);
    const a = (JSON.parse(r.stdout) as { autoscaler: { replica_timeline: { time_us: number; replicas: number; routable: number }[]; gpu_hours: number; cost: number } }).autoscaler;
    const entries = a.replica_timeline.map((e) => `${Number((e.time_us / 1e6).toFixed(1))}s: ${e.replicas}/${e.routable}`);
    const shown = documented('0s: 2/2', 2).split(/\s{2,}|\n/).map((s) => s.trim()).filter((s) => s !== '' && s !== '...');
    // Every entry shown is in the timeline, in that order; the first and last are its ends.
    let k = -1;
    for (const s of shown) {
      const at = entries.indexOf(s, k + 1);
      expect(at, `${s} in ${entries.join(', ')}`).toBeGreaterThan(k);
      k = at;
    }
    expect(entries[0]).toBe(shown[0]);
    expect(entries[entries.length - 1]).toBe(shown[shown.length - 1]);
    expect(a.replica_timeline.every((e) => e.replicas >= 1 && e.replicas <= 10)).toBe(true);
    expect(doc).toContain(`\`gpu_hours\` (${a.gpu_hours.toFixed(3)} here)`);
    expect(doc).toContain(`\`cost\` (${a.cost.toFixed(2)} dollars`);
  });
});
