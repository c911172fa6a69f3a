/**
 * The flags of `blis evaluate`, `blis search` and `blis suites`. The work (and the evaluator, sandbox and
 * worker-pool libraries it needs) is loaded only when one of these commands runs, so the other commands
 * start as fast as before.
 */
import { Option, type Command } from 'commander';
import type { Io } from './io.js';
import { addQueueOptions } from './sweep-command.js';
import type { CheckFlags, EvaluateFlags } from './evaluate-run.js';
import type { SearchFlags } from './search-run.js';

export function registerEvaluateCommands(root: Command, io: Io): void {
  const sc = root
    .command('search')
    .description('search whole policies (admission, priority, routing, scheduler and the suite\'s other open control points: templates and decision trees) or one template, racing each proposal against the incumbent on common random numbers, then prove the best on the suite\'s held-out seeds; prints the best bundle as JSON')
    .requiredOption('--suite <name|file>', 'a built-in suite (blis suites) or a suite file')
    .option('--template <name>', 'search only this template\'s parameters (blis policies lists them); default: whole policies')
    .option('--points <list>', 'control points to search, comma-separated (default: every one the suite leaves to the candidate and its scenarios use)')
    .option('--no-trees', 'search templates only, no decision trees')
    .addOption(new Option('--budget <n>', 'candidates evaluated, the start included').default('30'))
    .addOption(new Option('--random-share <x>', 'share of the budget spent on random proposals before hill-climbing').default('0.4'))
    .addOption(new Option('--rungs <list>', 'racing: seeds per scenario, tried in turn while a comparison is undecided').default('2,4,8'))
    .addOption(new Option('--min-gain <x>', 'racing: a comparison whose 95% interval lies below this combined-score gain is decided (no gain worth more seeds)').default('0.002'))
    .addOption(new Option('--seed <n>', 'seed of the search\'s own draws').default('1'))
    .addOption(new Option('--start <k=v,...>', 'with --template: starting parameters (the others at their defaults)').default(''))
    .addOption(new Option('--workers <n>', 'worker threads for the scenario runs').default('1'))
    .option('--objective <spec>', 'score by this objective instead of the suite\'s (repeatable; as for blis evaluate)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--constraint <spec>', 'add a constraint (repeatable; as for blis evaluate)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--best <file>', 'also write the best bundle (JSON) to this file, ready for --policy-config or blis evaluate --candidate')
    .option('--holdout-offset <n>', 'prove on the suite\'s seeds + n instead of its held-out seeds (0 = no proof); default: the start, the best and the suite\'s baseline re-scored on the held-out seeds (--stage validate), compared in pairs with 95% intervals per objective')
    .option('--cache <dir>', 'content-addressed result cache')
    .option('--semantics <mode>', 'run every scenario under reference (bug-for-bug) or corrected semantics (docs/reference-differences.md); default: each scenario\'s own config')
    .option('--latency-profile <file>', 'simulate every scenario with this latency profile (blis calibrate --fit)')
    .option('--latency-model <model>', 'simulate every scenario with this latency backend (trained-physics, roofline, blackbox, corrected-physics): the suite under other physics')
    .option('--quiet', 'no progress bar');
  sc.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  sc.action(async (o: SearchFlags) => (await import('./search-run.js')).searchCommand(o, io));

  const c = root
    .command('evaluate')
    .description('score a policy candidate (bundle, .js code or GEPA components) on an evaluation suite: one JSON document with combined_score, objectives, features, per-scenario metrics and reflection artifacts')
    .option('--candidate <file>', 'policy bundle (YAML/JSON) or a .js file with one control point\'s code')
    .option('--components <file>', 'a JSON object of text components: {"bundle": ...} or control points (routing, admission, ...) holding code')
    .option('--population <dir>', 'evaluate every candidate file in the folder and rank them (Pareto fronts, crowding)')
    .addOption(new Option('--control-point <point>', 'control point of a .js candidate').default('routing'))
    .addOption(new Option('--engine <engine>', 'sandbox engine for code candidates: fast or strict').default('fast'))
    .requiredOption('--suite <name|file>', 'a built-in suite (blis suites) or a suite file')
    .addOption(new Option('--stage <n>', '1 = the smoke stage only; 2 = stage 1, then the full suite on its search seeds; validate = the full suite on its held-out seeds').default('2'))
    .option('--seeds <n>', 'seeds per scenario (the suite\'s own, cut or extended by a fixed rule; search and held-out seeds stay disjoint)')
    .option('--objective <spec>', 'score by this objective instead of the suite\'s (repeatable): METRIC[:weight=W,target=T | best=B,worst=W], e.g. ttft_p99_ms@critical:target=300 (docs/evaluate.md)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--constraint <spec>', 'add a constraint (repeatable): METRIC>=V or METRIC<=V, V ending in x = times the baseline\'s value, e.g. goodput_rps>=0.95x', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--only <scenario@seed>', 'evaluate only this run (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .addOption(new Option('--workers <n>', 'worker threads: the scenario runs of every candidate (a population\'s, and one candidate\'s scenarios x seeds) spread over them; 1 = in this thread').default('1'))
    .addOption(new Option('--timeout-s <s>', 'wall-clock budget per evaluation, from its first run\'s start, on worker threads (0 = none; the instruction budget is the real limit; each run with fast-engine code also has the --policy-wall-clock-s backstop, 600 s by default, which this sets)').default('0'))
    .option('--cache <dir>', 'content-addressed result cache (re-evaluating an unchanged candidate is free)')
    .option('--semantics <mode>', 'run every scenario under reference (bug-for-bug) or corrected semantics (docs/reference-differences.md); default: each scenario\'s own config')
    .option('--queue <url>', 'with --population: evaluate on the Redis job queue at redis://HOST:PORT (blis worker on any number of machines; docs/distributed.md)')
    .addOption(new Option('--worker-wait-s <s>', 'with --queue: fail when no worker has been connected for this long (0 = wait for ever)').default('300'))
    .option('--serve', 'serve GEPA\'s HTTP evaluation protocol (POST /evaluate, /evaluate_examples, /validate; GET /status, /task)')
    .option('--watch-stdin', 'with --serve: stop when stdin closes (the process that started the server and holds the pipe has ended)')
    .addOption(new Option('--host <host>', 'address to bind with --serve').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port with --serve (0 = any free port)').default('0'))
    .addOption(new Option('--budget <n>', 'evaluations the server grants before answering 429').default('1000'))
    .option('--latency-profile <file>', 'simulate every scenario with this latency profile (blis calibrate --fit): policies tuned on your server\'s measured latencies')
    .option('--latency-model <model>', 'simulate every scenario with this latency backend (trained-physics, roofline, blackbox, corrected-physics): check that a gain survives other physics')
    .option('--report <file>', 'also write an HTML report of the evaluation (scores, objectives, and each scenario run\'s latency CDFs and timelines); stdout is unchanged')
    .option('--quiet', 'no progress display on stderr (it shows only on a terminal, for evaluations longer than about a second)');
  addQueueOptions(c, '60', 'with --queue: fail once Redis has been unreachable this long (retrying with backoff until then)');
  c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  c.action(async (o: EvaluateFlags) => (await import('./evaluate-run.js')).evaluateCommand(o, io));
  const s = root.command('suites').description('list the built-in evaluation suites (scenarios, seeds, objectives, baseline and known policies) as JSON; suites check NAME|FILE: does a suite tell policies apart?');
  s.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  s.action(async () => (await import('./evaluate-run.js')).printSuites(io));
  const chk = s
    .command('check <suite>')
    .description('score a suite\'s baseline, known-good and known-bad policies on held-out seed sets: paired differences, and whether every bad one loses, every good one wins by >= 3 sd, and nothing saturates (JSON)')
    .addOption(new Option('--seed-sets <n>', 'held-out seed sets (each a whole evaluation\'s worth of seeds)').default('10'))
    .addOption(new Option('--workers <n>', 'worker threads').default('1'))
    .option('--semantics <mode>', 'run every scenario under reference or corrected semantics')
    .option('--quiet', 'no progress display on stderr');
  chk.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  chk.action(async (name: string, o: CheckFlags) => (await import('./evaluate-run.js')).checkSuiteCommand(name, o, io));
}
