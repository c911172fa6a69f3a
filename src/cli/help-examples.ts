/**
 * Two or three examples per command, printed after its --help (from README.md and docs/; test/cli/help-docs.test.ts
 * checks that every flag they use is one of the command's).
 */
const M = 'meta-llama/llama-3.1-8b-instruct';

/** Command path ("run", "convert preset", "queue status") -> [command line, what it does]. */
export const HELP_EXAMPLES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  run: [
    [`blis run --model ${M} --num-instances 4 --rate 20 --num-requests 400`, 'the distribution workload on 4 replicas (JSON on stdout)'],
    [`blis run --model ${M} --num-instances 6 --prefill-instances 2 --decode-instances 4 --pd-decider always --rate 20 --num-requests 400`, 'P/D disaggregation, every request split'],
    ['blis run --deployment examples/deployment.yaml --workload-spec examples/workload.yaml --report run.html', 'a deployment file and a workload spec, with an HTML report'],
  ],
  replay: [
    [`blis replay --model ${M} --trace-header t.yaml --trace-data t.csv --results-path r.json`, 'replay a TraceV2 trace, per-request results for calibrate'],
    [`blis replay --model ${M} --trace-header t.yaml --trace-data t.csv --session-mode closed-loop`, 'regenerate the follow-up rounds of sessions'],
  ],
  serve: [
    [`blis serve --model ${M} --port 8000`, 'a simulated vLLM on http://127.0.0.1:8000'],
    [`blis serve --model ${M} --port 0 --max-num-seqs 64`, 'any free port (the listening line on stdout names it)'],
  ],
  observe: [
    [`blis observe --server-url http://127.0.0.1:8000 --model ${M} --rate 10 --num-requests 200 --trace-header t.yaml --trace-data t.csv`, 'the default workload against a server'],
    [`blis observe --server-url URL --model ${M} --workload-spec examples/workload.yaml --record-itl --trace-header t.yaml --trace-data t.csv`, 'a spec workload, recording every chunk'],
  ],
  calibrate: [
    ['blis calibrate --trace-header t.yaml --trace-data t.csv --sim-results r.json --report cal.json', 'compare an observed trace with its replay'],
    [`blis calibrate --fit --model ${M} --hardware H100 --tp 1 --trace-header t.yaml --trace-data t.csv --profile-out my-server.yaml`, 'fit a latency profile to the trace'],
  ],
  convert: [
    ['blis convert preset --name chatbot --rate 5 --num-requests 200', 'a preset as a workload spec'],
    ['blis convert servegen --path DIR --time morning', 'a ServeGen data directory as cohorts'],
    ['blis convert otel --input spans.json --trace-output agent', 'OTel LLM-call spans as a TraceV2 pair of sessions'],
  ],
  'convert preset': [
    ['blis convert preset --name chatbot --rate 5 --num-requests 200 > chat.yaml', 'the spec that generates `blis run --workload chatbot`'],
    ['blis convert preset --name distribution --prefix-tokens 512', 'with a shared prefix'],
  ],
  'convert inference-perf': [['blis convert inference-perf --spec ip.yaml > spec.yaml', 'expand an inference_perf block into clients']],
  'convert servegen': [
    ['blis convert servegen --path DIR > day.yaml', 'every period of a ServeGen directory'],
    ['blis convert servegen --path DIR --time afternoon --window-duration-seconds 300', 'one period, 5-minute windows'],
  ],
  'convert otel': [
    ['blis convert otel --input export.jsonl --trace-output agent', 'an OTLP JSON-lines export: agent.yaml + agent.csv'],
    [`blis replay --trace-header agent.yaml --trace-data agent.csv --model ${M} --session-mode fixed-accumulate`, 'replay it at the recorded times with growing prompts'],
  ],
  'convert weka': [
    ['blis convert weka --input sessions.jsonl --trace-output weka --max-think-time 60s', 'WekaTrace sessions, think times capped at a minute'],
    [`blis replay --trace-header weka.yaml --trace-data weka.csv --model ${M} --concurrent-sessions 8`, 'replay them 8 sessions at a time'],
  ],
  compose: [
    ['blis compose --from examples/workload.yaml --from examples/two-models-workload.yaml > both.yaml', 'both specs\' clients at their absolute rates'],
    ['blis compose --from a.yaml --from b.yaml --semantics corrected', 'also keep cohorts, goodput targets, seed and bounds'],
  ],
  policies: [
    ['blis policies', 'every control point, template, parameter range and decision-tree feature, as JSON'],
    ['blis policies export --format llm-d --policy-config best.json --output epp.yaml', 'a found routing as llm-d\'s endpoint picker configuration'],
  ],
  'policies export': [
    ['blis policies export --format llm-d --policy-config best.json --output epp.yaml', 'the best bundle of blis search --best as an EndpointPickerConfig'],
    ['blis policies export --format llm-d --policy-config bundle.yaml --api-version llm-d.ai/v1', 'for an llm-d router that reads llm-d.ai/v1'],
  ],
  search: [
    ['blis search --suite scheduling-slo-mix --budget 6 --best best.json > search.json', 'whole policies, raced and proved on held-out seeds'],
    ['blis search --template weighted_affinity_routing --suite routing-prefix-heavy --budget 4', 'one template\'s parameters'],
  ],
  evaluate: [
    ['blis evaluate --candidate examples/policy.yaml --suite routing-prefix-heavy', 'score a policy bundle'],
    ['blis evaluate --candidate examples/route.js --control-point routing --suite routing-prefix-heavy --stage 1', 'a routing program, cheap stage'],
    ['blis evaluate --population examples/candidates/ --suite scheduling-slo-mix --workers 2', 'rank a directory of candidates'],
  ],
  suites: [['blis suites', 'the built-in suites as JSON'], ['blis suites check routing-prefix-heavy', 'does the suite tell policies apart?']],
  'suites check': [['blis suites check routing-prefix-heavy', 'baseline, known-good and cheating policies scored apart']],
  report: [['blis report rr.json -o rr.html', 'draw a saved run (blis run ... --report-data > rr.json)'], ['blis report eval.json', 'an evaluation result, next to it as eval.html']],
  compare: [
    ['blis compare rr.json ll.json', 'every shared metric with deltas against the first (table)'],
    ['blis compare rr.json ll.json --report cmp.html', 'plus overlaid CDFs and timelines'],
  ],
  sweep: [
    ['blis sweep examples/capacity.yaml', 'rows as JSON lines on stdout, summary on stderr'],
    ['blis sweep examples/capacity.yaml --output rows.csv --workers 2', 'rows to a file, summary on stdout'],
    ['blis sweep examples/capacity.yaml --queue redis://HOST:6379', 'on a Redis job queue (docs/distributed.md)'],
  ],
  worker: [['blis worker --queue redis://HOST:6379 --concurrency 8', 'on each machine, until Ctrl-C']],
  queue: [['blis queue status --queue redis://HOST:6379', 'counts by state, connected workers']],
  'queue status': [['blis queue status --queue redis://HOST:6379', 'counts by state, connected workers']],
  'queue clean': [['blis queue clean --queue redis://HOST:6379 --state waiting,delayed', 'drop the jobs not started']],
  completion: [
    ['blis completion bash > ~/.local/share/bash-completion/completions/blis', 'bash'],
    ['blis completion zsh > "${fpath[1]}/_blis"', 'zsh'],
    ['blis completion fish > ~/.config/fish/completions/blis.fish', 'fish'],
  ],
};

/** The examples block of a command's --help ('' when it has none). */
export function examplesText(path: string): string {
  const ex = HELP_EXAMPLES[path];
  if (ex === undefined || ex.length === 0) return '';
  return `\nExamples:\n${ex.map(([cmd, what]) => `  # ${what}\n  ${cmd}`).join('\n')}\n`;
}
