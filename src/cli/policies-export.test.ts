import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.js';

const dir = mkdtempSync(`${tmpdir()}/blis-export-`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const put = (name: string, text: string): string => {
  writeFileSync(`${dir}/${name}`, text);
  return `${dir}/${name}`;
};

async function blis(args: string[]): Promise<{ code: number; out: string; warns: string[]; errs: string[] }> {
  let out = '';
  const warns: string[] = [];
  const errs: string[] = [];
  const code = await main(args, { stdout: (t) => (out += t), warn: (t) => warns.push(t), error: (t) => errs.push(t) });
  return { code, out, warns, errs };
}

describe('blis policies export (CLI)', () => {
  it('prints the EndpointPickerConfig, or writes it to --output; warnings on stderr', async () => {
    const b = put('best.json', JSON.stringify({ routing: { type: 'parameterized', template: 'weighted_affinity_routing', parameters: {} } }));
    const r = await blis(['policies', 'export', '--format', 'llm-d', '--policy-config', b]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('kind: EndpointPickerConfig\n');
    expect(r.out).toContain('  - pluginRef: precise-prefix-cache-scorer\n    weight: 2\n');
    expect(r.warns).toHaveLength(1);
    const o = `${dir}/epp.yaml`;
    const w = await blis(['policies', 'export', '--format', 'llm-d', '--policy-config', b, '--output', o]);
    expect(w.code).toBe(0);
    expect(w.out).toBe('');
    expect(readFileSync(o, 'utf8')).toBe(r.out);
  });

  it('refuses what cannot be exported with one error line and exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--format', 'envoy', '--policy-config', put('a.yaml', 'routing:\n  policy: weighted\n')], /--format "envoy" is not a router blis-ts exports to; use --format llm-d/],
      [['--format', 'llm-d', '--policy-config', put('b.yaml', 'routing:\n  policy: least-loaded\n')], /b\.yaml:2:11: routing policy "least-loaded" cannot be exported/],
      [['--format', 'llm-d', '--policy-config', put('c.yaml', 'routing:\n  type: decision_tree\n  tree:\n    route: {minimize: instance.load}\n')], /c\.yaml:\d+:\d+: a decision_tree routing policy cannot be exported/],
      [['--format', 'llm-d', '--policy-config', put('d.yaml', 'routing:\n  policy: weighted\n'), '--api-version', 'x/v2'], /--api-version "x\/v2"/],
      [['--format', 'llm-d', '--policy-config', put('e.yaml', 'routing:\n  policy: weighted\n'), '--snapshot-refresh-interval', '1.5'], /--snapshot-refresh-interval/],
      [['--format', 'llm-d', '--policy-config', `${dir}/absent.yaml`], /--policy-config: .*absent\.yaml: no such file/],
    ];
    for (const [args, want] of cases) {
      const r = await blis(['policies', 'export', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out, args.join(' ')).toBe('');
      expect(r.errs, args.join(' ')).toHaveLength(1);
      expect(r.errs[0], args.join(' ')).toMatch(want);
    }
  });

  it('blis policies alone still prints the catalog', async () => {
    const r = await blis(['policies']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toHaveProperty('control_points');
  });
});
