/**
 * `--help` of run, replay, serve, observe and calibrate lists the flags in groups named after the sections of
 * docs/usage.md that document them (test/cli/help-docs.test.ts checks every flag of a docs table against them).
 */
import type { CommandName } from './flags-io.js';

/** Group headings in the order --help shows them. */
export const HELP_GROUPS = [
  'Model, GPU, latency model',
  'Engine',
  'Cluster: admission, routing, flow control',
  'Deployments, P/D disaggregation, autoscaling',
  'LoRA adapters',
  'Workload',
  'Replay',
  'Serve',
  'Observe',
  'Calibrate',
  'Fitting a latency profile (calibrate --fit)',
  'Output',
  'General',
] as const;
export type HelpGroup = (typeof HELP_GROUPS)[number];

const list = (group: HelpGroup, names: string): [string, HelpGroup][] => names.trim().split(/\s+/).map((n) => [n, group]);

/** The group of a flag on every command that has it, unless {@link BY_COMMAND} says otherwise. */
const GROUP = new Map<string, HelpGroup>([
  ...list('Model, GPU, latency model', 'model hardware tp dp dp-placement latency-model latency-profile engine-profile alpha-coeffs beta-coeffs model-config-folder hardware-config moe-comm-backend enable-expert-parallel attention-layers gpus-per-node inter-node-bandwidth inter-node-latency'),
  ...list('Engine', `total-kv-blocks block-size-in-tokens gpu-memory-utilization kv-cache-dtype kv-cpu-blocks kv-offload-threshold kv-transfer-bandwidth
    kv-transfer-base-latency kv-storage-blocks kv-storage-bandwidth kv-storage-latency-us kv-thrash-window-us max-num-seqs max-num-batched-tokens
    long-prefill-token-threshold reserve-full-isl prefix-caching num-speculative-tokens speculative-acceptance-rate speculative-acceptance-rates speculative-method max-model-len scheduler scheduling-mode preemption-policy seed horizon num-instances admission-latency routing-latency`),
  ...list('Cluster: admission, routing, flow control', `policy-config policy-engine policy-wall-clock-s policy-call-wall-clock-s admission-policy token-bucket-capacity token-bucket-refill-rate
    routing-policy routing-scorers lora-scorer-weight snapshot-refresh-interval cache-signal-delay trace-level counterfactual-k summarize-trace
    flow-control saturation-detector dispatch-order max-gateway-queue-depth per-band-capacity usage-limit-threshold fairness-policy request-ttl
    queue-shedding dispatch-tick-interval in-flight-eviction slo-ttft slo-itl slo-e2e fitness-weights slo-targets queue-depth-threshold kv-cache-util-threshold`),
  ...list('Deployments, P/D disaggregation, autoscaling', `deployment prefill-instances decode-instances prefill-decode-instances pd-decider
    encode-instances encode-decider pd-prefix-threshold pd-transfer-bandwidth pd-transfer-base-latency pd-transfer-contention pd-kv-ownership
    pd-transfer-mode pd-transfer-granularity pd-transfer-chunk-blocks pd-backpressure-threshold pd-backpressure-retry-us prefill-routing-scorers
    decode-routing-scorers prefill-tp decode-tp prefill-hardware decode-hardware prefill-latency-model decode-latency-model prefill-max-model-len
    decode-max-model-len encode-tp encode-hardware model-autoscaler-interval-us autoscale-policy autoscale-min-replicas autoscale-max-replicas`),
  ...list('LoRA adapters', 'lora-config lora-adapter-capacity lora-load-base-latency-us lora-load-bandwidth-bytes-us lora-footprint-bytes-per-rank lora-placement-schedule'),
  ...list('Workload', `workload-spec workload rate num-requests concurrency think-time-ms max-concurrency prefix-tokens prompt-tokens prompt-tokens-stdev
    prompt-tokens-min prompt-tokens-max output-tokens output-tokens-stdev output-tokens-min output-tokens-max timeout concurrent-sessions`),
  ...list('Replay', 'session-mode think-time-dist total-sessions'),
  ...list('Serve', 'host port served-model-name default-max-tokens'),
  ...list('Observe', `server-url api-key server-type vllm-commit api-format warmup-requests no-streaming unconstrained-output rtt-ms measure-rtt
    record-itl prewarm-duration scrape-kv-metrics kv-metrics-url`),
  ...list('Calibrate', `sim-results network-rtt-us network-bandwidth-mbps itl-data sim-metrics hit-rate-tolerance-pp ttft-mape-threshold
    adapter-reference sim-metrics-blind adapter-mape-threshold`),
  ...list('Fitting a latency profile (calibrate --fit)', 'fit profile-out fit-params holdout-every'),
  ...list('Output', 'output-format metrics-path trace-output results-path timeseries-path timeseries-interval-us timeseries-format report-data report itl-output'),
  ...list('General', 'semantics defaults-filepath log quiet'),
]);

/** Where one command files a flag elsewhere: the trace a replay reads is its input; observe's workload is the usual one. */
const BY_COMMAND: Partial<Record<CommandName, ReadonlyMap<string, HelpGroup>>> = {
  replay: new Map(list('Replay', 'trace-header trace-data concurrent-sessions')),
  observe: new Map([...list('Output', 'trace-header trace-data'), ...list('Observe', 'max-concurrency timeout'), ...list('Workload', 'think-time-dist')]),
  calibrate: new Map([...list('Calibrate', 'trace-header trace-data warmup-requests report')]),
};

/** The --help group of `flag` on `command`; null for a flag no group names (the help test fails on one). */
export function helpGroupOf(command: CommandName, flag: string): HelpGroup | null {
  return BY_COMMAND[command]?.get(flag) ?? GROUP.get(flag) ?? null;
}

/** Commander's heading for a group. */
export const groupHeading = (g: HelpGroup): string => `${g}:`;
