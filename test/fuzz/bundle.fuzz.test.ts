/**
 * Policy bundles — the reference's keys and the evolvable sections (templates, decision trees, sandboxed code),
 * valid and hostile, in YAML or JSON — through `blis run --policy-config`: the outcome contract holds.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { applyMutations, expansionBomb, mutations, sometimes, yamlScalar } from './gen.js';
import { CliWorker, caseDir, checkOutcome, cleanupSandbox, fuzzParams, fuzzTimeout, writeFiles } from './harness.js';

const worker = new CliWorker();
afterAll(async () => {
  await worker.close('policy bundles');
  cleanupSandbox();
});

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
const either = <T>(hostile: boolean, good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  hostile ? fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: bad }) : good;

function bundleText(hostile: boolean): fc.Arbitrary<string> {
  const num = (good: string[]): fc.Arbitrary<string> => either(hostile, pick(...good), yamlScalar);
  const admission = fc.oneof(
    fc.tuple(either(hostile, pick('always-admit', 'token-bucket', 'tier-shed', 'reject-all'), pick('bogus', '', '5')), num(['100', '5000']), num(['10', '1000'])).map(
      ([p, cap, rate]) => `admission:\n  policy: ${p}\n  token_bucket_capacity: ${cap}\n  token_bucket_refill_rate: ${rate}\n`,
    ),
    num(['3', '-1', '0']).map((v) => `admission:\n  slo_priorities: {critical: ${v}, batch: -1}\n`),
    pick(
      'admission:\n  type: decision_tree\n  tree:\n    if: {feature: request.inputTokens, op: ">", value: 400}\n    then: {action: reject, reason: long}\n    else: {action: admit}\n',
      'admission:\n  type: decision_tree\n  tree:\n    if: {feature: tenant.burstDetected, op: "==", value: true}\n    then: {action: delay, delay_us: 1000}\n    else: {action: admit}\n',
      'admission:\n  type: code\n  source: |\n    function admit(request, state) { return { action: "admit" }; }\n',
    ),
    ...(hostile
      ? [pick(
          'admission:\n  type: decision_tree\n  tree: {action: explode}\n',
          'admission:\n  type: code\n  source: |\n    function admit(r) { while (true) {} }\n',
          'admission:\n  type: code\n  source: "function admit( {"\n',
          'admission:\n  type: code\n  source: |\n    function admit() { const a = []; for (;;) a.push(new Array(1e6)); }\n',
          'admission:\n  type: code\n  file: /dev/zero\n',
          'admission:\n  type: code\n  file: missing.js\n',
          'admission:\n  policy: always-admit\n  type: code\n',
        )]
      : []),
  );
  const routing = fc.oneof(
    either(hostile, pick('round-robin', 'least-loaded', 'weighted'), pick('nope', '{}')).map((p) => `routing:\n  policy: ${p}\n`),
    fc.tuple(either(hostile, pick('queue-depth', 'kv-utilization', 'prefix-affinity'), pick('sorcery', '')), num(['1', '2.5'])).map(
      ([n, w]) => `routing:\n  policy: weighted\n  scorers:\n    - {name: ${n}, weight: ${w}}\n    - {name: load-balance, weight: 1}\n`,
    ),
    num(['0.7', '3']).map((w) => `routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {cache_affinity_weight: ${w}}\n`),
    pick(
      'routing:\n  type: decision_tree\n  tree:\n    route: {minimize: instance.load}\n',
      'routing:\n  type: code\n  source: |\n    function route(request, state) { return { target: state.instances[0].id }; }\n',
    ),
    ...(hostile
      ? [pick(
          'routing:\n  type: parameterized\n  template: no_such_template\n',
          'routing:\n  type: decision_tree\n  tree:\n    route: {minimize: instance.lode}\n',
          'routing:\n  type: code\n  source: |\n    function route(request, state) { return { target: "nowhere" }; }\n',
          'routing:\n  type: code\n  engine: strict\n  source: |\n    function route() { return f(); } function f() { return f(); }\n',
        )]
      : []),
  );
  const rest = fc.oneof(
    either(hostile, pick('fcfs', 'priority-fcfs', 'sjf'), pick('lifo', '[]')).map((s) => `scheduler: ${s}\n`),
    num(['0.5', '1']).map((b) => `tenant_budgets: {t1: ${b}}\n`),
    pick('priority: {policy: constant}\n', 'preemption: {policy: fcfs}\n', 'metadata: {id: c1, generation: 2}\n'),
    ...(hostile ? [pick('bogus: 1\n', 'scheduler: {type: code, source: "x"}\n', 'metadata: {generation: -1}\n', '---\nadmission: {policy: x}\n')] : []),
  );
  return fc
    .record({
      parts: fc.subarray([0, 1, 2]).chain((which) => fc.tuple(...which.map((i) => [admission, routing, rest][i]!))),
      bomb: hostile ? sometimes(expansionBomb.map((b) => `admission:\n  slo_priorities:\n${b.replace(/^/gm, '    ').trimEnd()}\n`), 8) : fc.constant(undefined),
      damage: hostile ? sometimes(mutations, 3).map((m) => m ?? []) : fc.constant([]),
    })
    .map(({ parts, bomb, damage }) => applyMutations(bomb ?? parts.join(''), damage));
}

describe('fuzz: policy bundles', () => {
  it('every bundle ends in a run or one located error line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(bundleText(false), bundleText(true)), fc.constantFrom('bundle.yaml', 'bundle.json'), pick('', 'strict'), async (text, name, engine) => {
        const dir = caseDir();
        const files = writeFiles(dir, { [name]: text });
        const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-instances', '2', '--num-requests', '12', '--rate', '20', '--policy-config', files[name]!, ...(engine === '' ? [] : ['--policy-engine', engine])];
        checkOutcome(await worker.run(argv, dir), { [name]: text });
      }),
      fuzzParams('policy bundles', 100),
    );
  }, fuzzTimeout(120_000));
});
