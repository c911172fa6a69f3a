/**
 * No silent surprises (issue 29): a pool whose instances received no requests is warned about on stderr with
 * the option that changes it; stdout (the result) is exactly what it was without the warning.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

async function run(args: string[]): Promise<{ code: number; out: string; warnings: string[] }> {
  let out = '';
  const warnings: string[] = [];
  const code = await main(['run', '--model', 'meta-llama/llama-3.1-8b-instruct', ...args], { stdout: (t) => (out += t), warn: (m) => warnings.push(m), error: (m) => warnings.push(`error: ${m}`) });
  return { code, out, warnings: warnings.filter((w) => !w.startsWith('using default')) };
}

const PD = ['--num-instances', '6', '--prefill-instances', '2', '--decode-instances', '4', '--pd-decider', 'always', '--rate', '20', '--num-requests', '60'];

describe('idle pools', () => {
  it('the documented 2-prefill/4-decode example: the shared round-robin counter (D5) is named with its fix', async () => {
    const r = await run(PD);
    expect(r.code).toBe(0);
    expect(r.warnings).toEqual([
      expect.stringMatching(/^1 of 2 prefill pods received no requests \(instance_0\) while the others received 60: .*D5.*--semantics corrected/),
      expect.stringMatching(/^2 of 4 decode pods received no requests \(instance_3, instance_5\) while the others received 60: .*--semantics corrected/),
    ]);
    const routed = (JSON.parse(r.out) as { instances: { injected_requests: number }[] }).instances.map((i) => i.injected_requests);
    expect(routed).toEqual([0, 60, 30, 0, 30, 0]);
  });

  it('no warning when every pod is used (corrected semantics, or least-loaded)', async () => {
    expect((await run([...PD, '--semantics', 'corrected'])).warnings).toEqual([]);
    expect((await run([...PD, '--routing-policy', 'least-loaded'])).warnings).toEqual([]);
  });

  it('instances outside every P/D pool, a prefill pool the decider never uses, a policy that favours one instance', async () => {
    const roleless = await run(['--num-instances', '8', ...PD.slice(2)]);
    expect(roleless.warnings).toContainEqual(expect.stringMatching(/^2 of 8 instances have no P\/D role and are never routed \(instance_6, instance_7\): .*lower --num-instances/));
    const never = await run([...PD.slice(0, 6), '--pd-decider', 'never', '--num-requests', '20']);
    expect(never.warnings).toEqual([expect.stringMatching(/^the prefill pool \(instance_0, instance_1\) received no requests: the P\/D decider \(never\) split none.*--pd-decider always/)]);
    const busiest = await run(['--num-instances', '4', '--routing-policy', 'always-busiest', '--num-requests', '20']);
    expect(busiest.warnings).toEqual([expect.stringMatching(/^3 of 4 instances received no requests \(instance_1, instance_2, instance_3\) while the others received 20: the routing policy \(always-busiest\)/)]);
  });

  it('few requests for many instances: no warning (idle by chance, not by policy)', async () => {
    expect((await run(['--num-instances', '8', '--num-requests', '10'])).warnings).toEqual([]);
  });
});
