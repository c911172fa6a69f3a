/**
 * The run memo of a long-lived evaluator: a cascade's stage 2 after its stage 1 simulates only the full suite,
 * and the results are the same bytes as without the memo.
 */
import { describe, expect, it } from 'vitest';
import { candidateFromCode } from './candidate.js';
import { evaluateCandidate, IN_THREAD, type ScenarioRunner } from './evaluate.js';
import { RunMemo } from './run-memo.js';
import { findSuite } from './suites.js';
import type { RunTask } from './run.js';
import type { Suite } from './types.js';

const suite = findSuite('routing-prefix-heavy') as Suite;
const ROUTE = 'function route(request, state) {\n  let best = state.instances[0];\n  for (const x of state.instances) if (x.load < best.load) best = x;\n  return best.id;\n}\n';

/** IN_THREAD, counting the runs it simulates. */
function counting(log: string[]): ScenarioRunner {
  return { runAll: (tasks: readonly RunTask[], onDone) => {
    for (const t of tasks) log.push(`${t.scenario.name}@${t.seed}`);
    return IN_THREAD.runAll(tasks, onDone);
  } };
}

describe('RunMemo', () => {
  it('stage 2 after stage 1 simulates only the full suite; results are byte-identical', async () => {
    const c = candidateFromCode('route.js', ROUTE, 'routing');
    const memo = new RunMemo();
    const ran: string[] = [];
    const one = await evaluateCandidate(c, suite, { stage: 1, baseline: false }, {}, memo.wrap(counting(ran)));
    const two = await evaluateCandidate(c, suite, { stage: 2, baseline: false }, {}, memo.wrap(counting(ran)));
    const stage1 = suite.stage1.flatMap((s) => s.seeds.map((seed) => `${s.name}@${seed}`));
    const stage2 = suite.stage2.flatMap((s) => s.seeds.map((seed) => `${s.name}@${seed}`));
    expect(ran).toEqual([...stage1, ...stage2]);
    expect(memo.stats).toMatchObject({ hits: stage1.length, misses: stage1.length + stage2.length });
    const plain1 = await evaluateCandidate(c, suite, { stage: 1, baseline: false });
    const plain2 = await evaluateCandidate(c, suite, { stage: 2, baseline: false });
    expect(JSON.stringify(one)).toBe(JSON.stringify(plain1));
    expect(JSON.stringify(two)).toBe(JSON.stringify(plain2));
    // Another candidate shares nothing.
    const other = candidateFromCode('route.js', `${ROUTE}// v2\n`, 'routing');
    await evaluateCandidate(other, suite, { stage: 1, baseline: false }, {}, memo.wrap(counting(ran)));
    expect(ran.slice(stage1.length + stage2.length)).toEqual(stage1);
  }, 60_000);

  it('keeps only successful runs', async () => {
    const memo = new RunMemo(1);
    const throws = candidateFromCode('t.js', 'function route() { throw new Error("no"); }', 'routing');
    const ran: string[] = [];
    const a = await evaluateCandidate(throws, suite, { stage: 1, baseline: false }, {}, memo.wrap(counting(ran)));
    const b = await evaluateCandidate(throws, suite, { stage: 1, baseline: false }, {}, memo.wrap(counting(ran)));
    expect(a.error?.code).toBe(b.error?.code);
    expect(ran).toHaveLength(2);
    expect(memo.stats.entries).toBe(0);
  }, 60_000);
});
