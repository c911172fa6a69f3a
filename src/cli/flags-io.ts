/**
 * Flags of the I/O commands (`serve`, `observe`, `calibrate`), in the style of the simulation option table
 * (src/sim/options.ts) and with the reference's names and defaults where it has the command. `serve` takes the
 * engine subset of the simulation table; observe and calibrate borrow a few of its entries by name.
 */
import { FLAGS, type FlagSpec } from '../sim/options.js';

export type CommandName = 'run' | 'replay' | 'serve' | 'observe' | 'calibrate';

/** One flag as registered with commander. */
export interface CliFlag {
  readonly name: string;
  readonly kind: FlagSpec['kind'];
  readonly def: FlagSpec['def'];
  readonly help: string;
  /** What --help shows as the default instead of `def` (FlagSpec.helpDefault). */
  readonly helpDefault?: string;
  readonly aliases?: readonly string[];
  /** Registered but left out of --help (accepted only with its default value). */
  readonly hidden?: boolean;
}

/** Engine flags `serve` takes from the simulation table: one instance, no cluster policies, no workload. */
const SERVE_ENGINE = new Set([
  'model', 'hardware', 'tp', 'dp', 'latency-model', 'alpha-coeffs', 'beta-coeffs', 'model-config-folder', 'hardware-config',
  'defaults-filepath', 'moe-comm-backend', 'enable-expert-parallel', 'gpus-per-node', 'inter-node-bandwidth', 'inter-node-latency', 'total-kv-blocks', 'block-size-in-tokens',
  'gpu-memory-utilization', 'kv-cpu-blocks', 'kv-offload-threshold', 'kv-transfer-bandwidth', 'kv-transfer-base-latency',
  'kv-storage-blocks', 'kv-storage-bandwidth', 'kv-storage-latency-us', 'kv-thrash-window-us',
  'max-num-seqs', 'max-num-batched-tokens', 'long-prefill-token-threshold', 'reserve-full-isl', 'prefix-caching', 'max-model-len', 'scheduler',
  'preemption-policy', 'seed', 'log', 'latency-profile', 'engine-profile', 'scheduling-mode', 'lora-config', 'lora-adapter-capacity',
  'lora-load-base-latency-us', 'lora-load-bandwidth-bytes-us', 'lora-footprint-bytes-per-rank',
  'kv-cache-dtype', 'num-speculative-tokens', 'speculative-acceptance-rate', 'speculative-acceptance-rates', 'speculative-method',
]);
/** Read by the engine resolution but fixed for a single served instance. */
const SERVE_FIXED = new Set(['num-instances', 'admission-latency', 'routing-latency']);

const SERVE: readonly CliFlag[] = [
  { name: 'host', kind: 'string', def: '127.0.0.1', help: 'address to listen on' },
  { name: 'port', kind: 'int', def: 8000, help: 'TCP port to listen on (0 = any free port; the listening line on stdout names it)' },
  { name: 'served-model-name', kind: 'string', def: '', help: 'model name the API reports and accepts (default: --model)' },
  { name: 'default-max-tokens', kind: 'int', def: 16, help: 'output length of a request that gives neither max_tokens nor min_tokens (vLLM completions default)' },
];

const OBSERVE: readonly CliFlag[] = [
  { name: 'server-url', kind: 'string', def: '', help: 'OpenAI-compatible server base URL, e.g. http://127.0.0.1:8000 (required)' },
  { name: 'model', kind: 'string', def: '', help: 'model name sent in each request (required)' },
  { name: 'trace-header', kind: 'string', def: '', help: 'output path of the TraceV2 header YAML (required)' },
  { name: 'trace-data', kind: 'string', def: '', help: 'output path of the TraceV2 data CSV (required)' },
  { name: 'workload-spec', kind: 'string', def: '', help: 'workload spec v2 YAML (alternative to --rate)' },
  { name: 'workload', kind: 'string', def: '', help: 'preset: chatbot, contentgen, summarization, multidoc (requires --rate)' },
  { name: 'defaults-filepath', kind: 'string', def: 'defaults.yaml', help: 'accepted for compatibility; blis-ts embeds the presets' },
  { name: 'rate', kind: 'float', def: 0, help: 'requests per second of the distribution (or preset) workload' },
  { name: 'num-requests', kind: 'int', def: 0, help: 'requests to send (0 = from the spec, or bounded by --horizon)' },
  { name: 'seed', kind: 'string', def: '42', help: 'workload seed (int64)' },
  { name: 'horizon', kind: 'string', def: '0', help: 'last arrival time in µs (0 = from the spec or unlimited)' },
  { name: 'concurrency', kind: 'int', def: 0, help: 'closed loop: this many virtual users, each sending its next request when the previous one ends (excludes --rate)' },
  { name: 'think-time-ms', kind: 'int', def: 0, help: 'closed loop: pause between a response and the user\'s next request (ms); excludes --think-time-dist' },
  { name: 'think-time-dist', kind: 'string', def: '', help: 'closed loop (--concurrency): think time drawn per round from lognormal:mu=<log-s>,sigma=<s>[,min=<t>,max=<t>] or constant:value=<t> (t: us, ms or s; bare = ms)' },
  { name: 'prefix-tokens', kind: 'int', def: 0, help: 'shared prefix length (distribution workload)' },
  { name: 'api-format', kind: 'string', def: 'completions', help: 'completions (/v1/completions, "prompt") or chat (/v1/chat/completions, "messages")' },
  { name: 'api-key', kind: 'string', def: '', help: 'bearer token sent as Authorization' },
  { name: 'server-type', kind: 'string', def: 'vllm', help: 'server type recorded in the trace header' },
  { name: 'max-concurrency', kind: 'int', def: 256, help: 'most requests in flight at once (default: --concurrency in closed loop)' },
  { name: 'warmup-requests', kind: 'int', def: 0, help: 'leave the first N dispatched requests out of the trace' },
  { name: 'no-streaming', kind: 'bool', def: false, help: 'send every request without streaming' },
  { name: 'unconstrained-output', kind: 'bool', def: false, help: 'let the server choose output lengths (no min_tokens; max_tokens MaxInt32 for completions, omitted for chat)' },
  { name: 'rtt-ms', kind: 'float', def: 0, help: 'network round trip in ms recorded in the trace header (calibrate adds it to simulated latencies)' },
  { name: 'measure-rtt', kind: 'bool', def: false, help: 'measure the round trip (median of 20 GET /health) and record it instead of --rtt-ms; 0 against a server that starts requests at their x-request-start (blis serve): its latencies contain none' },
  { name: 'timeout', kind: 'int', def: 300, help: 'per-request timeout in seconds (1..86400), covering the whole response' },
  { name: 'record-itl', kind: 'bool', def: false, help: 'stream every request and write per-chunk times (request_id,chunk_index,timestamp_us)' },
  { name: 'itl-output', kind: 'string', def: '', help: 'ITL CSV path (default: <trace-data without .csv>.itl.csv)' },
  { name: 'prewarm-duration', kind: 'string', def: '0', help: 'send small warm-up requests (4 at a time) for this long before the workload, e.g. 10s' },
  { name: 'scrape-kv-metrics', kind: 'bool', def: false, help: 'scrape /metrics before and after the workload and record the observed prefix-cache hit rate in the header' },
  { name: 'kv-metrics-url', kind: 'string', def: '', help: 'metrics URL for --scrape-kv-metrics (default: <server-url>/metrics)' },
  { name: 'vllm-commit', kind: 'string', def: '', help: 'server commit recorded with the observed KV metrics' },
];
/** Taken unchanged from the simulation table. */
const OBSERVE_BORROWED = new Set([
  'prompt-tokens', 'prompt-tokens-stdev', 'prompt-tokens-min', 'prompt-tokens-max', 'output-tokens', 'output-tokens-stdev',
  'output-tokens-min', 'output-tokens-max', 'slo-ttft', 'slo-itl', 'slo-e2e', 'log',
]);

const CALIBRATE: readonly CliFlag[] = [
  { name: 'trace-header', kind: 'string', def: '', help: 'TraceV2 header YAML from blis observe (required unless --adapter-reference; with --fit a comma-separated list, one per trace)' },
  { name: 'trace-data', kind: 'string', def: '', help: 'TraceV2 data CSV from blis observe (required unless --adapter-reference; with --fit a comma-separated list, in --trace-header order)' },
  { name: 'sim-results', kind: 'string', def: '', help: 'SimResult JSON from blis replay --results-path (required without --fit or --adapter-reference)' },
  { name: 'report', kind: 'string', def: '', help: 'output path of the calibration report JSON (required without --fit)' },
  { name: 'fit', kind: 'bool', def: false, help: 'fit corrected-physics coefficients to the traces (engine flags below describe the server) and write a latency profile; prints the fit report JSON' },
  { name: 'profile-out', kind: 'string', def: '', help: 'with --fit: output path of the latency profile YAML (required; use it with --latency-profile)' },
  { name: 'fit-params', kind: 'string', def: '', help: 'with --fit: coefficients to fit, comma-separated (compute, weight_read, kv_read, comm, step_us, request_us, frontend_us); default all but weight_read (on one deployment it moves latencies like step_us), comm only with tp > 1 or dp > 1' },
  { name: 'holdout-every', kind: 'int', def: 5, help: 'with --fit: hold out every n-th usable request (predicted, never fitted; its errors are reported); 0 = none' },
  { name: 'warmup-requests', kind: 'int', def: -1, help: 'leave out rows with request_id below this (-1 = the header\'s warm_up_requests)' },
  { name: 'network-rtt-us', kind: 'int', def: -1, help: 'round trip added to simulated latencies in µs (-1 = the header\'s network.measured_rtt_ms)' },
  { name: 'network-bandwidth-mbps', kind: 'float', def: 0, help: 'adds token transfer times at this bandwidth (0 = none)' },
  { name: 'itl-data', kind: 'string', def: '', help: 'ITL CSV from blis observe --record-itl (adds the itl metric)' },
  { name: 'sim-metrics', kind: 'string', def: '', help: 'metrics JSON from blis replay --metrics-path (its cache_hit_rate is compared with the observed one)' },
  { name: 'hit-rate-tolerance-pp', kind: 'float', def: 5, help: 'KV hit-rate tolerance in percentage points' },
  { name: 'ttft-mape-threshold', kind: 'float', def: 0.15, help: 'TTFT MAPE threshold of the ttft_tolerance verdict (fraction)' },
  { name: 'adapter-reference', kind: 'string', def: '', help: 'LoRA fidelity mode: a Digital Twin reference JSON (adapter_aware / adapter_blind mean TTFT and output throughput) compared with --sim-metrics (and --sim-metrics-blind); the trace flags are not used' },
  { name: 'sim-metrics-blind', kind: 'string', def: '', help: 'with --adapter-reference: metrics JSON of the same run without adapters (adds the aware/blind ratio error)' },
  { name: 'adapter-mape-threshold', kind: 'float', def: 0.2, help: 'with --adapter-reference: MAPE bound of each metric (fraction)' },
];
const CALIBRATE_BORROWED = new Set(['slo-ttft', 'slo-itl', 'slo-e2e', 'log', 'semantics', 'horizon']);

/** CLI-only flags of run and replay (the library returns data; these name what the CLI does with it). */
const SIM_CLI: readonly CliFlag[] = [
  { name: 'report', kind: 'string', def: '', help: 'write a self-contained HTML report of the run (latency CDFs, per-instance and cluster timelines, routing, events) to this file' },
  { name: 'quiet', kind: 'bool', def: false, help: 'no progress display on stderr (it shows only on a terminal, for runs longer than about a second)' },
];

/** Every flag `command` registers, in help order. */
export function commandFlags(command: CommandName): readonly CliFlag[] {
  switch (command) {
    case 'run':
    case 'replay':
      return [...FLAGS.filter((f) => f.scope === 'shared' || f.scope === command), ...SIM_CLI];
    case 'serve':
      return [
        ...FLAGS.filter((f) => SERVE_ENGINE.has(f.name)),
        ...FLAGS.filter((f) => SERVE_FIXED.has(f.name)).map((f) => ({ ...f, hidden: true })),
        ...SERVE,
      ];
    case 'observe':
      return [...OBSERVE, ...FLAGS.filter((f) => OBSERVE_BORROWED.has(f.name))];
    case 'calibrate':
      // The engine flags describe the observed server for --fit (the plain comparison ignores them).
      return [
        ...CALIBRATE,
        ...FLAGS.filter((f) => CALIBRATE_BORROWED.has(f.name)),
        ...FLAGS.filter((f) => SERVE_ENGINE.has(f.name) && !CALIBRATE_BORROWED.has(f.name)).map((f) => ({ ...f, help: `with --fit: ${f.help}` })),
        ...FLAGS.filter((f) => SERVE_FIXED.has(f.name)).map((f) => ({ ...f, hidden: true })),
      ];
  }
}
