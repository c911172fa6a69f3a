/**
 * The fuzz harness itself: the contract catches what it should (a failure that prints on stdout, two error lines,
 * an internal error), and the worker enforces its time bound.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CliWorker, assertContract, caseDir, cleanupSandbox, runChild, type Outcome } from './harness.js';

const worker = new CliWorker(15_000);
afterAll(async () => {
  await worker.close();
  cleanupSandbox();
});

const base: Outcome = { argv: ['run'], code: 2, stdout: '', errors: ['bad'], warnings: [], ms: 1, newFiles: [] };

describe('fuzz harness', () => {
  it('accepts a clean failure and rejects broken ones', () => {
    expect(() => assertContract(base)).not.toThrow();
    expect(() => assertContract({ ...base, stdout: '{}' })).toThrow(/stdout/);
    expect(() => assertContract({ ...base, errors: ['a', 'b'] })).toThrow(/one error line/);
    expect(() => assertContract({ ...base, errors: ['internal: x'] })).toThrow(/internal/);
    expect(() => assertContract({ ...base, errors: ['bad \u0000 byte'] })).toThrow(/control/);
    expect(() => assertContract({ ...base, newFiles: ['m.json'] })).toThrow(/files written/);
    expect(() => assertContract({ ...base, code: 70 })).toThrow(/exit 70/);
    expect(() => assertContract({ ...base, fault: 'hang' })).toThrow(/hang/);
  });

  it('reports a case past its time bound as a fault and recovers for the next case', async () => {
    const hasty = new CliWorker(1);
    const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '50'];
    const o = await hasty.run(argv);
    expect(o.fault).toMatch(/no answer within 1 ms/);
    expect(() => assertContract(o)).toThrow(/no answer/);
    await hasty.close();
    assertContract(await worker.run(argv), [0]);
  });

  it('runs the CLI in a warm worker and as a child process with the same outcome', async () => {
    const dir = caseDir();
    const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--rate', 'abc'];
    const a = await worker.run(argv, dir);
    const b = await runChild(argv, dir);
    for (const o of [a, b]) {
      assertContract(o, [2]);
      expect(o.errors[0]).toMatch(/--rate/);
    }
  });
});
