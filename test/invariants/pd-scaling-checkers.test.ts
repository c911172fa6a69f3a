/**
 * The P/D and scaling checkers can fail: a clean run passes, and each deliberate corruption of a finished run
 * (a phase time moved, a half on the wrong pool, a transfer counter off, a half leaking into the cluster's
 * per-request view, a scale bound crossed, an invalid lifecycle transition) is reported by the invariant it
 * breaks.
 */
import { describe, expect, it } from 'vitest';
import { PdPart } from '../../src/domain/request.js';
import { InstanceState } from '../../src/cluster/autoscaler/lifecycle.js';
import { runCli } from '../parity/harness.js';
import { collectViolations } from './checkers.js';
import { classify, type InvariantContext } from './context.js';

const ARGS = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware', 'H100', '--tp', '1', '--num-instances', '4', '--prefill-instances', '2', '--decode-instances', '2', '--pd-decider', 'always', '--rate', '10', '--num-requests', '30', '--seed', '2'];

async function fresh(extra: readonly string[] = []): Promise<InvariantContext> {
  const r = await runCli([...ARGS, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const s = r.sims[0];
  if (s === undefined) throw new Error('no simulation');
  return { cs: s.cs, requests: s.requests, setup: s.setup };
}

describe('P/D and scaling checkers detect what they check', () => {
  it('a clean P/D run with the autoscaler passes', async () => {
    expect(collectViolations(await fresh(['--model-autoscaler-interval-us', '500000']))).toEqual([]);
  });

  it('each corruption is reported by its invariant', async () => {
    const cases: [string, (c: InvariantContext) => void][] = [
      ['INV-PD-1', (c) => {
        const p = c.cs.pd?.parents[0];
        if (p) p.decodeEnqueueTime = p.transferCompleteTime - 1;
      }],
      ['INV-PD-2', (c) => {
        const p = c.cs.pd?.parents[0];
        if (p) p.prefillIndex = p.decodeIndex;
      }],
      ['INV-PD-3', (c) => {
        if (c.cs.pd) c.cs.pd.transfersCompleted--;
      }],
      ['INV-PD-4', (c) => {
        const p = c.cs.pd?.parents[1];
        if (p) p.transferStartTime = p.prefillCompleteTime - 10;
      }],
      ['INV-PD-6', (c) => {
        const p = c.cs.pd?.parents[2];
        if (p) p.req.pdPart = PdPart.Decode;
      }],
      ['INV-P2-2', (c) => {
        const p = c.cs.pd?.parents[3];
        if (p) p.transferCompleteTime += 7;
      }],
      ['ownership', (c) => {
        const p = c.cs.pd?.parents[4];
        if (p) p.heldOnPrefill = true;
      }],
    ];
    for (const [inv, corrupt] of cases) {
      const ctx = await fresh();
      corrupt(ctx);
      const v = collectViolations(ctx);
      expect(v.some((x) => x.includes(inv)), `${inv}: ${v.join('; ')}`).toBe(true);
    }
  });

  it('a horizon that cuts KV transfers of long prompts: each decode half in flight is counted as in transfer, its parent as running', async () => {
    // Slow link, 8000-token prompts: each transfer takes ~0.5 s, so the horizon falls inside several of them.
    const long = ['--num-instances', '3', '--prefill-instances', '1', '--decode-instances', '2', '--num-requests', '100', '--seed', '5', '--horizon', '1000000',
      '--prompt-tokens', '8000', '--prompt-tokens-max', '20000', '--output-tokens', '200', '--pd-transfer-bandwidth', '2'];
    const ctx = await fresh(long);
    const pd = ctx.cs.pd;
    if (pd === null) throw new Error('no P/D');
    const cut = pd.parents.filter((p) => p.decode !== null && p.transferStartTime > 0 && p.decodeEnqueueTime === 0);
    expect(cut.length).toBeGreaterThan(0);
    const cls = classify(ctx);
    for (const p of cut) {
      expect(cls.bucket.get(p.decode as never)).toBe('kv_transfer');
      expect(cls.bucket.get(p.req)).toBe('still_running');
    }
    expect(collectViolations(ctx)).toEqual([]);
    // Still able to fail: a half in transfer whose reservation vanished, and one that really got lost.
    const leaked = await fresh(long);
    const p0 = leaked.cs.pd?.parents.find((p) => p.decode !== null && p.decodeEnqueueTime === 0 && p.transferStartTime > 0);
    if (!p0 || !p0.decode) throw new Error('no transfer in flight');
    leaked.cs.instances[p0.decodeIndex]?.releaseReservedKV(p0.decode);
    expect(collectViolations(leaked).some((x) => x.includes(`${p0.decode?.id}`) && x.includes('reservation'))).toBe(true);
    const lost = await fresh(long);
    const p1 = lost.cs.pd?.parents.find((p) => p.decode !== null && p.decodeEnqueueTime === 0 && p.transferStartTime > 0);
    if (!p1) throw new Error('no transfer in flight');
    p1.transferCompleteTime = p1.transferStartTime + 1;
    expect(collectViolations(lost).some((x) => x.includes('lost request'))).toBe(true);
  });

  it('scale bounds and lifecycle transitions', async () => {
    const ctx = await fresh(['--model-autoscaler-interval-us', '500000']);
    const model = ctx.cs.facts[0]?.model ?? '';
    // The run scaled down below 4 replicas: a bound of at least 4 is crossed.
    expect(ctx.cs.autoscaler?.records.some((r) => r.action === 'down')).toBe(true);
    expect(collectViolations({ ...ctx, scalingBounds: { bounds: new Map([[model, [4, 4]]]) } }).some((x) => x.startsWith('scale_bounds'))).toBe(true);
    const lc = ctx.cs.lifecycle;
    if (lc === null) throw new Error('no lifecycle');
    lc.changes.push({ clock: ctx.cs.clock, index: 0, from: lc.state(0), to: InstanceState.Loading });
    expect(collectViolations(ctx).some((x) => x.includes('invalid transition'))).toBe(true);
  });
});
