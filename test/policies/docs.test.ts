/**
 * The bundles shown in docs/policies.md and the README run as documented (a code example that refers to a
 * file of its own is skipped): docs that drift from the code fail here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'blis-policy-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function yamlBlocks(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string).filter((b) => /\btype: /.test(b) && !/\bfile: /.test(b));
}

describe('documented bundles run', () => {
  for (const file of ['docs/policies.md', 'README.md']) {
    yamlBlocks(file).forEach((block, i) => {
      it(`${file} example ${i + 1}`, async () => {
        const p = path.join(dir, `${path.basename(file)}-${i}.yaml`);
        writeFileSync(p, block);
        let err = '';
        let out = '';
        // A P/D decider needs prefill and decode pools.
        const pools = /^disaggregation:/m.test(block) ? ['--prefill-instances', '2', '--decode-instances', '2'] : [];
        const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-instances', '4', ...pools, '--num-requests', '80', '--rate', '40', '--prefix-tokens', '256', '--policy-config', p, '--log', 'error'], {
          stdout: (t) => (out += t), warn: () => undefined, error: (t) => (err += t),
        });
        expect(code, err).toBe(0);
        expect((JSON.parse(out) as { simulation_metrics: { injected_requests: number } }).simulation_metrics.injected_requests).toBeGreaterThan(0);
      });
    });
  }
  it('the tree example prints its admission tree back as docs/policies.md shows', async () => {
    const doc = readFileSync(path.join(root, 'docs/policies.md'), 'utf8');
    const shown = /admission tree's:\n\n```\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(shown).toBeDefined();
    let out = '';
    const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-instances', '4', '--rate', '40', '--num-requests', '50', '--prefix-tokens', '512', '--policy-config', path.join(root, 'examples/tree.yaml'), '--trace-level', 'decisions', '--log', 'error'], {
      stdout: (t) => (out += t), warn: () => undefined, error: () => undefined,
    });
    expect(code).toBe(0);
    expect((JSON.parse(out) as { policy: { control_points: { admission: { text: string } } } }).policy.control_points.admission.text).toBe(shown);
  });

  it('finds the examples', () => {
    expect(yamlBlocks('docs/policies.md').length).toBeGreaterThanOrEqual(3);
  });
});
