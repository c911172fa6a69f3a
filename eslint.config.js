// Type-aware lint plus the layering rule of docs/architecture.md: imports point down only, and siblings on
// one level do not import each other.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Layers each source folder may import (besides itself). */
const ALLOWED = {
  // How blis-ts matches the reference bit for bit: Go's math, math/rand, sort, strconv, time.ParseDuration,
  // number, JSON, CSV and YAML text. The bottom layer: imports nothing of the simulator.
  gocompat: [],
  engine: ['gocompat'],
  // Untrusted policy code: engines behind one contract; imports nothing of the simulator.
  sandbox: [],
  domain: ['gocompat'],
  // Bounded parsing of text formats (YAML, JSON): the one loader every input file goes through.
  format: ['domain', 'gocompat'],
  config: ['format', 'domain', 'gocompat'],
  latency: ['engine', 'format', 'domain', 'config', 'gocompat'],
  kv: ['engine', 'format', 'domain', 'config', 'gocompat'],
  routing: ['engine', 'format', 'domain', 'gocompat'],
  instance: ['kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  cluster: ['instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  policy: ['sandbox', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  trace: ['routing', 'engine', 'format', 'domain', 'config', 'gocompat'],
  workload: ['engine', 'format', 'domain', 'config', 'gocompat'],
  // The deployment model: deployment files (models x configurations x pools), parsed and checked.
  deploy: ['format', 'domain', 'gocompat'],
  metrics: ['instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  sim: ['deploy', 'cluster', 'policy', 'sandbox', 'trace', 'workload', 'metrics', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  // Pure comparison of real and simulated per-request records.
  calibrate: ['workload', 'metrics', 'engine', 'format', 'domain', 'config', 'gocompat'],
  // Latency-model fitting: simulate, linearise in the coefficients, robust least squares (through sim).
  fit: ['sim', 'cluster', 'instance', 'kv', 'latency', 'workload', 'metrics', 'engine', 'format', 'domain', 'config', 'gocompat'],
  // Policy search: candidates x suites -> scores, features and reflection text, through sim.
  evaluate: ['sim', 'cluster', 'policy', 'sandbox', 'workload', 'metrics', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  // Sweeps: points of a configuration grid or sample -> jobs (simulations, evaluations) -> rows and a summary.
  sweep: ['evaluate', 'sim', 'cluster', 'policy', 'sandbox', 'workload', 'metrics', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  // The job queue on Redis (BullMQ): an I/O edge (sockets, the wall clock) that runs sweep jobs.
  queue: ['sweep', 'evaluate', 'sim', 'format', 'domain', 'config', 'gocompat'],
  // HTML reports of runs, evaluations and comparisons (charts rendered to SVG at build time), above sim.
  report: ['evaluate', 'sim', 'cluster', 'workload', 'metrics', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  // Network edges (HTTP client and server): like cli, allowed the wall clock; they drive sim/workload.
  observe: ['calibrate', 'sim', 'workload', 'metrics', 'engine', 'format', 'domain', 'config', 'gocompat'],
  serve: ['sim', 'cluster', 'workload', 'metrics', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
  cli: ['fit', 'queue', 'sweep', 'report', 'deploy', 'evaluate', 'serve', 'observe', 'calibrate', 'sim', 'cluster', 'policy', 'sandbox', 'trace', 'workload', 'metrics', 'instance', 'routing', 'kv', 'latency', 'engine', 'format', 'domain', 'config', 'gocompat'],
};
const LAYERS = Object.keys(ALLOWED);

const layerRules = LAYERS.map((layer) => {
  const banned = LAYERS.filter((l) => l !== layer && !ALLOWED[layer].includes(l));
  return {
    files: [`src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          ...(banned.length > 0 ? [{
            regex: `^\\.\\./(${banned.join('|')})/`,
            message: `src/${layer} may import only ${ALLOWED[layer].join(', ') || 'nothing outside itself'} (docs/architecture.md: imports point down, siblings do not import each other).`,
          }] : []),
          ...(['cli', 'observe', 'serve', 'queue'].includes(layer) ? [] : [{ regex: '^node:(fs|process|child_process|http|net)', message: 'Only the I/O edges (src/cli, src/observe, src/serve, src/queue) touch files, sockets and the process.' }]),
        ],
      }],
    },
  };
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/**', 'bin/**', 'scripts/**', 'integrations/**', '*.config.js', 'test/**/*.mjs', 'examples/**'] /* sandboxed policy code: scripts, not modules */ },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      'no-restricted-globals': ['error', { name: 'Date', message: 'No wall clock in the simulator (determinism).' }, { name: 'performance', message: 'No wall clock in the simulator (determinism); only the I/O edges and the library edge (src/sim/simulate.ts) read it.' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Use the PartitionedRng (determinism).' }],
    },
  },
  { files: ['src/cli/**/*.ts', 'src/observe/**/*.ts', 'src/serve/**/*.ts', 'src/queue/**/*.ts', 'test/**/*.ts', 'src/**/*.test.ts'], rules: { 'no-restricted-globals': 'off' } },
  ...layerRules,
  // Tests read fixtures from disk; the Go tables keep Go's literal spellings (exact after rounding).
  { files: ['test/**/*.ts', 'src/**/*.test.ts'], rules: { 'no-restricted-imports': 'off' } },
  { files: ['src/gocompat/go-rand-tables.ts', 'src/gocompat/go-rand.test.ts'], rules: { 'no-loss-of-precision': 'off' } },
);
