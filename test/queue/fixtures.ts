/** Sweep files and candidates for the queue tests, written to a fresh temporary folder. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const MODEL = 'meta-llama/llama-3.1-8b-instruct';

const SPEC = `version: "2"
seed: 5
aggregate_rate: 30
num_requests: 120
clients:
  - {id: chat, rate_fraction: 1, arrival: {process: poisson}, input_distribution: {type: gaussian, params: {mean: 300, std_dev: 80, min: 50, max: 800}}, output_distribution: {type: gaussian, params: {mean: 120, std_dev: 40, min: 10, max: 400}}}
`;

/**
 * A folder with `short.yaml` (8 quick points: a workload spec file, two axes, two seeds) and `long.yaml`
 * (points of about 1–2 s each, to interrupt mid-job: 8,000 requests, since 1,500 took 0.3 s once the simulator got faster).
 */
export function sweepFolder(longPoints = 4): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blis-sweep-'));
  writeFileSync(path.join(dir, 'spec.yaml'), SPEC);
  writeFileSync(path.join(dir, 'short.yaml'), `# two axes, two seeds, a workload spec file beside this one
base: {model: ${MODEL}, workloadSpec: spec.yaml}
axes:
  numInstances: [1, 2]
  routingPolicy: [round-robin, least-loaded]
seeds: [1, 2]
objectives: {ttft_p99_ms: minimize, responses_per_sec: maximize}
`);
  writeFileSync(path.join(dir, 'long.yaml'), `base: {model: ${MODEL}, numRequests: 8000, rate: 40, numInstances: 2}
axes:
  seed: [${Array.from({ length: longPoints }, (_, i) => i + 1).join(', ')}]
`);
  mkdirSync(path.join(dir, 'pop'));
  writeFileSync(path.join(dir, 'pop', 'a.yaml'), 'routing: {type: parameterized, template: least_loaded_routing, parameters: {}}\n');
  writeFileSync(path.join(dir, 'pop', 'b.js'), 'function route() { while (true) {} }\n');
  return dir;
}
