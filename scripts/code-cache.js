// Run by scripts/cli-bundle.js in a fresh Node: loads dist/cli.cjs as bin/blis.js does, runs the commands a user
// and a policy search start most often (help, a one-request run, a short weighted multi-instance run, a usage
// error), then writes V8's code cache of every function compiled so far to dist/cli.cjs.cache, behind the
// bundle's content hash and the data's checksum. Those functions then start from bytecode instead of being
// parsed and compiled on every start. The commands' output goes to this process's stdout and stderr, which the
// build discards (stderr is shown if this fails).
import { renameSync, writeFileSync } from 'node:fs';
import { BUNDLE, CACHE, cacheFile, readBundle, runBundle } from '../bin/load-cli.js';

const M = ['--model', 'meta-llama/llama-3.1-8b-instruct'];
const WEIGHTED = ['--rate', '60', '--num-instances', '4', '--routing-policy', 'weighted', '--routing-scorers', 'prefix-affinity:3,queue-depth:2,kv-utilization:2', '--prefix-tokens', '256'];
/** [argv, expected exit code]: a different code means the exercise broke, and the build says so. */
const EXERCISES = [
  [['--help'], 0],
  [['--version'], 0],
  [['run', '--help'], 0],
  [['evaluate', '--help'], 0],
  [['run', ...M, '--num-requests', '1', '--log', 'error'], 0],
  [['run', ...M, '--num-requests', '40', '--log', 'error', '--output-format', 'reference'], 0],
  [['run', ...M, '--num-requests', '40', ...WEIGHTED], 0],
  [['run', ...M, '--no-such-flag'], 2],
];

const bundle = readBundle();
if (bundle?.id == null) {
  console.error('code cache: dist/cli.cjs is missing or has no content hash in its first line');
  process.exit(1);
}
const { exports: cli, script } = runBundle(BUNDLE, bundle.source, undefined);
for (const [argv, expected] of EXERCISES) {
  const code = await cli.main(argv, cli.processIo);
  if (code !== expected) {
    console.error(`code cache: \`blis ${argv.join(' ')}\` exited ${code}, expected ${expected}`);
    process.exit(1);
  }
}
writeFileSync(`${CACHE}.tmp`, cacheFile(bundle.id, script.createCachedData()));
renameSync(`${CACHE}.tmp`, CACHE);
