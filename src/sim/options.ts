/**
 * The simulation options: one table of every `blis run` / `blis replay` option with the reference's names and
 * defaults (blis-core.md §9, blis-cluster.md §12). It drives the CLI's flags, the library API's config schema
 * and defaults, and strict value parsing (a malformed number is an error naming the option).
 */
import { GPU_NAMES } from '../config/catalog/hardware.js';
import { SEMANTICS } from '../domain/semantics.js';
import { FAIRNESS_POLICY_NAMES } from '../cluster/flow-control/bands.js';
import { DISPATCH_ORDERS } from '../cluster/flow-control/gateway-queue.js';
import { SATURATION_DETECTOR_NAMES } from '../cluster/flow-control/saturation.js';
import { SCHEDULING_MODES } from '../instance/batch-formation.js';
import { PD_KV_OWNERSHIPS, PD_TRANSFER_GRANULARITIES, PD_TRANSFER_MODES } from '../cluster/pd/beyond.js';
import { PREEMPTION_POLICIES, SCHEDULERS } from '../instance/scheduler.js';
import { MOE_COMM_BACKENDS } from '../latency/moe-comm.js';
import { ATTENTION_LAYER_MODES } from '../latency/attention-layout.js';
import { ENGINE_PROFILE_NAMES } from '../latency/engine-profiles.js';
import { AUTOSCALE_POLICIES } from '../routing/autoscale-policies.js';
import { SCORER_NAMES } from '../routing/scorer-registry.js';
import { ENCODE_DECIDERS } from '../routing/encode-decider.js';
import { DISAGGREGATION_DECIDERS } from '../routing/disaggregation.js';
import { ADMISSION_POLICIES, ROUTING_POLICIES } from '../routing/registry.js';
import { PRESET_NAMES } from '../workload/presets.js';
import { ConfigError } from './config-error.js';
import { showValue } from '../domain/errors.js';
import { MAX_REQUEST_TOKENS } from '../domain/units.js';
import { LATENCY_BACKENDS } from './latency-backends.js';
import { KV_CACHE_DTYPES } from '../latency/kv-capacity.js';
import { SPECULATIVE_METHODS } from '../instance/speculative.js';
import { TRACE_LEVELS } from './trace-levels.js';

export type OptionKind = 'string' | 'int' | 'float' | 'bool' | 'floats';

export interface FlagSpec {
  readonly name: string;
  readonly kind: OptionKind;
  readonly def: string | number | boolean | readonly number[];
  readonly help: string;
  /** What `--help` shows as the default when the stored one would mislead (an auto-sized or unlimited value). */
  readonly helpDefault?: string;
  readonly aliases?: readonly string[];
  readonly scope: 'shared' | 'run' | 'replay';
  /** Largest value accepted (a value no machine could simulate is refused before any work starts). */
  readonly max?: number;
  /** The accepted values of an enumerated string option (the library's config type and schema use them). */
  readonly choices?: readonly string[];
  /** A signed 64-bit integer given as text (seeds, horizons): the library also takes a number or a bigint. */
  readonly int64?: true;
  /**
   * The option names a file to write. The library writes no files: it rejects the key and returns the content
   * in its result when `outputs` asks for it.
   */
  readonly writesFile?: 'metrics' | 'trace' | 'results';
}

/** The keys of a registry object, typed as its literal names. */
function namesOf<T extends object>(registry: T): readonly (keyof T & string)[] {
  return Object.keys(registry) as (keyof T & string)[];
}


const MAX_INT64_TEXT = '9223372036854775807';

export const FLAGS = [
  // model / hardware / latency
  { name: 'model', kind: 'string', def: '', help: 'model name, e.g. meta-llama/llama-3.1-8b-instruct (required)', scope: 'shared' },
  { name: 'hardware', kind: 'string', def: '', help: `GPU type (${GPU_NAMES.join(', ')}, or one from --hardware-config); default from the model defaults`, scope: 'shared' },
  { name: 'tp', kind: 'int', def: 0, max: 1024, help: 'tensor parallelism; default from the model defaults', scope: 'shared' },
  { name: 'dp', kind: 'int', def: 1, max: 1024, help: 'data parallelism: MoE models with trained-physics; any model with corrected-physics (DP ranks as engines: a MoE model\'s step in lockstep, as vLLM\'s do; a dense model\'s independently)', scope: 'shared' },
  { name: 'dp-placement', kind: 'string', def: 'combined', choices: ['combined', 'replicas'], help: 'how trained-physics runs a MoE model\'s --dp ranks: combined (the reference: one engine, one scheduler over the combined batch, step time divided over the ranks) or replicas (upstream #1555/#1664/#1683: --dp engines per instance, each at DP 1 with its own scheduler and a per-rank KV cache, behind the router; with --enable-expert-parallel whole experts per GPU of the tp·dp group and dispatch/combine instead of the MoE all-reduce)', scope: 'shared' },
  { name: 'latency-model', kind: 'string', def: 'trained-physics', choices: namesOf(LATENCY_BACKENDS), help: 'latency backend: trained-physics (the reference\'s), roofline, blackbox, or corrected-physics (interconnect, head_dim, per-GPU efficiencies, vLLM overheads; docs/fidelity.md)', scope: 'shared' },
  { name: 'latency-profile', kind: 'string', def: '', help: 'latency profile YAML from blis calibrate --fit: corrected-physics with coefficients fitted on your server', scope: 'shared' },
  { name: 'engine-profile', kind: 'string', def: '', choices: ENGINE_PROFILE_NAMES, helpDefault: 'vllm-v1', help: 'serving-engine generation (corrected-physics): vllm-v1 (async scheduling, chunked prefill, the shipped overheads) or vllm-v0 (2024 vLLM: prefill-only steps, 4 ms per step + 80 µs per sequence of CPU work); sets --scheduling-mode and the software overheads unless given (docs/fidelity.md)', scope: 'shared' },
  { name: 'alpha-coeffs', kind: 'floats', def: [0, 0, 0], help: 'alpha coefficients (comma-separated): queueing, post-decode / per-input-token, per-output-token overheads in µs', scope: 'shared' },
  { name: 'beta-coeffs', kind: 'floats', def: [0, 0, 0], help: 'beta coefficients (comma-separated) of the step-time model', scope: 'shared' },
  { name: 'model-config-folder', kind: 'string', def: '', help: 'folder holding a HuggingFace config.json for --model (overrides the embedded catalog)', scope: 'shared' },
  { name: 'hardware-config', kind: 'string', def: '', help: 'hardware_config.json with extra or overriding GPU entries', scope: 'shared' },
  { name: 'defaults-filepath', kind: 'string', def: 'defaults.yaml', help: 'accepted for compatibility; blis-ts embeds the reference defaults', scope: 'shared' },
  { name: 'moe-comm-backend', kind: 'string', def: '', choices: namesOf(MOE_COMM_BACKENDS), help: 'MoE dispatch/combine backend at DP > 1 (vLLM\'s VLLM_ALL2ALL_BACKEND; default allgather_reducescatter): the all-gather family moves every rank\'s hidden states; the all-to-all family (pplx, deepep_*, mori, flashinfer_all2allv) moves each token to its experts (trained-physics: top-k copies; corrected-physics: once per other rank holding one)', scope: 'shared' },
  { name: 'enable-expert-parallel', kind: 'bool', def: false, help: 'enable expert parallelism: whole experts per GPU of the tp·dp group, dispatched per --moe-comm-backend in corrected-physics; with --semantics corrected or corrected-physics the KV cache is sized for tp/(tp·dp) of the routed experts per rank (upstream #1656)', scope: 'shared' },
  { name: 'attention-layers', kind: 'string', def: '', choices: ATTENTION_LAYER_MODES, help: 'which layers hold a KV cache: full (every layer full attention, as the reference reads any config) or config (the config.json\'s hybrid layout: layer_types, full_attention_interval, sliding_window(_pattern), linear_attn_config, Jamba/Nemotron-H hybrids; KV capacity over the full-attention layers, sliding layers priced over their window, linear layers a constant state); default config with --semantics corrected or --latency-model corrected-physics, else full', scope: 'shared' },
  { name: 'gpus-per-node', kind: 'int', def: 0, max: 1024, helpDefault: '0 (off: every collective inside one node)', help: 'GPUs per node: a TP group (or MoE tp·dp group) larger than this spans ceil(group/this) nodes and pays the inter-node cost; a TP group larger than a node must be a multiple of it', scope: 'shared' },
  { name: 'inter-node-bandwidth', kind: 'float', def: 0, helpDefault: "the GPU's InterNodeBwGBps (H100/H200/B200 50, B300 100, A100 25)", help: 'inter-node bandwidth per GPU in GB/s: the cross-node share (n-1)/n of a spanning collective\'s bytes moves at it (needs --gpus-per-node)', scope: 'shared' },
  { name: 'inter-node-latency', kind: 'float', def: 0, help: 'fixed latency in ms of each collective that crosses a node boundary (needs --gpus-per-node)', scope: 'shared' },
  // KV cache
  { name: 'total-kv-blocks', kind: 'int', def: 1000000, helpDefault: 'auto-sized from GPU memory', help: 'GPU KV blocks per instance (auto-calculated from GPU memory unless given)', scope: 'shared' },
  { name: 'block-size-in-tokens', kind: 'int', def: 16, help: 'tokens per KV block', scope: 'shared' },
  { name: 'gpu-memory-utilization', kind: 'float', def: 0.9, help: 'fraction of GPU memory for the engine, in (0, 1]', scope: 'shared' },
  { name: 'kv-cache-dtype', kind: 'string', def: 'auto', choices: KV_CACHE_DTYPES, help: 'KV-cache element type: auto (the model\'s dtype), fp8 / fp8_e4m3 / fp8_e5m2 (1 byte), bf16 / fp16 (2), fp32 (4); sets the auto-sized KV block count and the KV traffic of every latency model (fp8 doubles the blocks of a bf16 model)', scope: 'shared' },
  { name: 'kv-cpu-blocks', kind: 'int', def: 0, help: 'CPU KV blocks (tiered offload when > 0)', scope: 'shared' },
  { name: 'kv-offload-threshold', kind: 'float', def: 0.9, help: 'accepted and ignored, as by the reference: every full block of a running request is mirrored to the CPU tier after each step', scope: 'shared' },
  { name: 'kv-transfer-bandwidth', kind: 'float', def: 100, help: 'CPU->GPU reload bandwidth in tokens per tick (µs), not blocks: a reloaded block costs --kv-transfer-base-latency + ceil(block size / this) ticks', scope: 'shared' },
  { name: 'kv-transfer-base-latency', kind: 'int', def: 0, help: 'fixed latency per reloaded block (ticks)', scope: 'shared' },
  { name: 'kv-storage-blocks', kind: 'int', def: 0, help: 'storage-tier KV blocks per instance below the CPU tier (local NVMe / remote store; needs --kv-cpu-blocks; 0 = no storage tier; docs/kv-tiers.md)', scope: 'shared' },
  { name: 'kv-storage-bandwidth', kind: 'float', def: 5, help: 'storage-tier bandwidth per instance (GB/s), shared by its offloads and reloads', scope: 'shared' },
  { name: 'kv-storage-latency-us', kind: 'float', def: 100, help: 'storage-tier access latency per transfer (µs)', scope: 'shared' },
  { name: 'kv-thrash-window-us', kind: 'int', def: 1000000, help: 'with a storage tier: a block reloaded into the GPU again within this window counts as a thrashing cycle (µs)', scope: 'shared' },
  // batching
  { name: 'max-num-seqs', kind: 'int', def: 256, help: 'max running requests per step', aliases: ['max-num-running-reqs'], scope: 'shared' },
  { name: 'max-num-batched-tokens', kind: 'int', def: 2048, help: 'token budget per step', aliases: ['max-num-scheduled-tokens'], scope: 'shared' },
  { name: 'long-prefill-token-threshold', kind: 'int', def: 0, help: 'chunk prefills longer than this (0 = off)', scope: 'shared' },
  { name: 'prefix-caching', kind: 'string', def: 'auto', choices: ['auto', 'on', 'off'], help: 'automatic prefix caching (vLLM\'s --enable-prefix-caching): on, off (every prompt is prefilled in full, a preempted request recomputes everything), or auto: on, except under the vllm-v0 engine profile (V0 shipped with it off)', scope: 'shared' },
  { name: 'reserve-full-isl', kind: 'bool', def: false, help: 'admit a waiting or preempted request only when KV blocks for its whole known sequence (prompt and outputs so far, less its prefix-cache hits) are free, not only its first chunk\'s: vLLM\'s scheduler_reserve_full_isl, on by default from vLLM 0.19 (off: the reference\'s and older vLLM\'s admission on the first chunk)', scope: 'shared' },
  { name: 'num-speculative-tokens', kind: 'int', def: 0, max: 64, help: 'speculative decoding / MTP: draft tokens K verified per decode step (0 = off); a decode step is priced at verify width K+1 and advances 1 + accepted tokens; needs --speculative-acceptance-rate or --speculative-acceptance-rates', scope: 'shared' },
  { name: 'speculative-acceptance-rate', kind: 'float', def: 0, help: 'speculative decoding: mean fraction α of the K drafts accepted, in [0, 1]; a decode advances 1 + α·K tokens per step on average (a deterministic fractional carry, no randomness); required with --num-speculative-tokens', scope: 'shared' },
  { name: 'speculative-acceptance-rates', kind: 'floats', def: [], help: 'speculative decoding: acceptance rate of each draft position given the earlier ones were accepted (a1,a2,...,aK, each in [0, 1]); expected accepted = Σ_i Π_{j≤i} a_j; K = its length (instead of --speculative-acceptance-rate)', scope: 'shared' },
  { name: 'speculative-method', kind: 'string', def: '', choices: SPECULATIVE_METHODS, help: 'speculative decoding scheme label (mtp, eagle, medusa, ngram, draft): informational, the step cost follows K and the acceptance rate; needs --num-speculative-tokens', scope: 'shared' },
  { name: 'max-model-len', kind: 'int', def: 0, help: 'max sequence length (0 = derive from the model, capped at KV capacity)', scope: 'shared' },
  { name: 'scheduler', kind: 'string', def: 'fcfs', choices: namesOf(SCHEDULERS), help: 'wait-queue order: fcfs, priority-fcfs, sjf, reverse-priority', scope: 'shared' },
  { name: 'scheduling-mode', kind: 'string', def: '', choices: SCHEDULING_MODES, help: 'step formation: sync (the reference), async (vLLM V1 async scheduling: a request arriving during a step joins the step after next), prefill-first (vLLM V0 without chunked prefill: prefill-only steps stall decodes); default async with corrected-physics, else sync', scope: 'shared' },
  { name: 'preemption-policy', kind: 'string', def: 'fcfs', choices: namesOf(PREEMPTION_POLICIES), help: 'preemption victim: fcfs (batch tail) or priority', scope: 'shared' },
  // simulation
  { name: 'seed', kind: 'string', def: '42', int64: true, help: 'random seed (int64)', scope: 'shared' },
  { name: 'horizon', kind: 'string', def: MAX_INT64_TEXT, helpDefault: 'none', int64: true, help: 'simulation horizon in µs ticks (replay default: 2 x the last injection time)', scope: 'shared' },
  { name: 'semantics', kind: 'string', def: 'reference', choices: [...SEMANTICS], help: 'reference (default): reproduce the reference simulator exactly, its known bugs included; corrected: fix the reference bugs marked corrected in docs/reference-differences.md (results then differ from the reference)', scope: 'shared' },
  { name: 'log', kind: 'string', def: 'warn', choices: ['debug', 'info', 'warn', 'error'], help: 'stderr diagnostics: debug (also files read, timings, an internal error\'s stack), info (also what was resolved: engine, policies, workload), warn (default: warnings), error (errors only)', scope: 'shared' },
  { name: 'num-instances', kind: 'int', def: 1, help: 'number of instances', scope: 'shared' },
  { name: 'admission-latency', kind: 'int', def: 0, help: 'admission decision latency (µs)', scope: 'shared' },
  { name: 'routing-latency', kind: 'int', def: 0, help: 'routing decision latency (µs)', scope: 'shared' },
  // cluster policies
  { name: 'policy-config', kind: 'string', def: '', help: 'policy bundle YAML or JSON: the reference\'s keys (admission, routing, scheduler, tenant budgets, SLO priorities) and evolvable control points (type: parameterized | decision_tree | code, see docs/policies.md); explicit flags override the reference keys', scope: 'shared' },
  { name: 'policy-engine', kind: 'string', def: '', choices: ['fast', 'strict'], help: 'sandbox engine for code policies in --policy-config: fast (in-process, gas-metered) or strict (QuickJS in WebAssembly); default: each policy\'s engine: field, else fast', scope: 'shared' },
  { name: 'policy-wall-clock-s', kind: 'float', def: 600, help: 'wall-clock budget of a run whose policies include fast-engine code, in seconds (0 = none): past it the policy call in progress is stopped from outside the sandbox and the run fails with SANDBOX_BUDGET', scope: 'shared' },
  { name: 'policy-call-wall-clock-s', kind: 'float', def: 10, help: 'wall-clock limit of one fast-engine policy call, in seconds (0 = none): a call that runs longer (work the instruction budget does not count) is stopped from outside the sandbox within about this limit + 0.1 s and the run fails with SANDBOX_BUDGET', scope: 'shared' },
  { name: 'admission-policy', kind: 'string', def: 'always-admit', choices: namesOf(ADMISSION_POLICIES), help: 'admission policy: always-admit, token-bucket, reject-all, tier-shed, gaie-legacy', scope: 'shared' },
  { name: 'token-bucket-capacity', kind: 'float', def: 10000, help: 'token bucket capacity (input tokens)', scope: 'shared' },
  { name: 'token-bucket-refill-rate', kind: 'float', def: 1000, help: 'token bucket refill rate (tokens/second)', scope: 'shared' },
  { name: 'routing-policy', kind: 'string', def: 'round-robin', choices: namesOf(ROUTING_POLICIES), help: 'routing policy: round-robin, least-loaded, weighted, always-busiest', scope: 'shared' },
  { name: 'routing-scorers', kind: 'string', def: '', help: `weighted routing profile name:weight,... (default precise-prefix-cache:2,queue-depth:1,kv-utilization:1); scorers: ${SCORER_NAMES.join(', ')}`, scope: 'shared' },
  { name: 'lora-scorer-weight', kind: 'float', def: 0, help: 'weight of the lora-affinity scorer appended to the weighted profile (prefers instances holding the request\'s LoRA adapter); must be > 0 when given; weighted routing only', scope: 'shared' },
  { name: 'snapshot-refresh-interval', kind: 'int', def: 50000, help: 'refresh interval of the router\'s queue/batch/KV signals in µs (0 = live)', scope: 'shared' },
  { name: 'cache-signal-delay', kind: 'int', def: 50000, help: 'staleness of the prefix-cache signal in µs for precise-prefix-cache and no-hit-lru (0 = live)', scope: 'shared' },
  { name: 'trace-level', kind: 'string', def: 'none', choices: TRACE_LEVELS, help: 'tracing: none or minimal (summary metrics only), decisions (policy decisions and anomaly events), full (also batch formations and preemptions)', scope: 'shared' },
  { name: 'counterfactual-k', kind: 'int', def: 0, help: 'counterfactual candidates per routing decision (needs --trace-level decisions)', scope: 'shared' },
  { name: 'summarize-trace', kind: 'bool', def: false, help: 'print a summary of the decision trace', scope: 'shared' },
  // LoRA adapters
  { name: 'lora-config', kind: 'string', def: '', help: 'LoRA YAML with a top-level lora: block: adapters [{id, rank, base_model}], adapter_capacity (resident slots per instance), load and step-overhead coefficients (defaults from the reference\'s defaults.yaml)', scope: 'shared' },
  { name: 'lora-adapter-capacity', kind: 'int', def: 0, help: 'resident LoRA adapter slots per instance (overrides adapter_capacity; must be > 0 with adapters)', scope: 'shared' },
  { name: 'lora-load-base-latency-us', kind: 'float', def: 0, help: 'fixed cold-load latency of an adapter in µs (overrides --lora-config; default 1500)', scope: 'shared' },
  { name: 'lora-load-bandwidth-bytes-us', kind: 'float', def: 0, help: 'adapter load bandwidth in bytes/µs (overrides --lora-config; default 2e6)', scope: 'shared' },
  { name: 'lora-footprint-bytes-per-rank', kind: 'float', def: 0, help: 'adapter HBM bytes per rank unit: load size and KV reservation (overrides --lora-config; default 2e6)', scope: 'shared' },
  { name: 'lora-placement-schedule', kind: 'string', def: '', help: 'timed LoRA placement file (upstream\'s `scheduled` creation policy): lines "<t_us> <instance>=<adapter>[,...][;...]"; from each time the named instances load the adapters they do not hold (charged cold loads, one at a time); needs --lora-config with adapter_capacity', scope: 'shared' },
  // autoscaler
  { name: 'model-autoscaler-interval-us', kind: 'float', def: 0, help: 'autoscaler tick interval in µs (0 = off); overrides the policy bundle\'s autoscaler.interval_us. Scale-up needs the bundle\'s node_pools under reference semantics (corrected: replicas without node pools, at least 1 per model, no scale-down in the first interval); run only', scope: 'shared' },
  { name: 'autoscale-policy', kind: 'string', def: '', choices: AUTOSCALE_POLICIES, help: 'autoscaling policy per model: saturation (the reference analyzer), threshold, target-utilization ("" = the reference pipeline, or the policy bundle\'s autoscale section); needs an autoscaler interval', scope: 'shared' },
  { name: 'autoscale-min-replicas', kind: 'int', def: 1, help: 'with --autoscale-policy: fewest replicas per model', scope: 'shared' },
  { name: 'autoscale-max-replicas', kind: 'int', def: 0, help: 'with --autoscale-policy: most replicas per model (0 = as many as the node pools hold; > 0 also allows replicas without node pools)', scope: 'shared' },
  // deployment model
  { name: 'deployment', kind: 'string', def: '', help: 'deployment file (YAML/JSON): models x configurations x pools with their own hardware, TP, latency model, KV and replica bounds, and the autoscaler (see docs/deployments.md); replaces --num-instances and the P/D pool flags (replay takes it without its autoscaler)', scope: 'shared' },
  // prefill/decode disaggregation
  { name: 'prefill-instances', kind: 'int', def: 0, help: 'instances dedicated to prefill: instance_0 .. instance_{P-1} (0 = no P/D disaggregation)', scope: 'shared' },
  { name: 'decode-instances', kind: 'int', def: 0, help: 'instances dedicated to decode: the next D instances', scope: 'shared' },
  { name: 'prefill-decode-instances', kind: 'int', def: 0, help: 'shared-role instances serving both pools: the next S instances (they take the decode overrides)', scope: 'shared' },
  { name: 'pd-decider', kind: 'string', def: 'never', choices: DISAGGREGATION_DECIDERS, help: 'P/D disaggregation decider: never, always, prefix-threshold (a policy bundle\'s disaggregation section replaces it unless this is given)', scope: 'shared' },
  { name: 'encode-instances', kind: 'int', def: 0, help: 'E/P/D: instances of the encode pool, the next E after the P/D pools (0 = off; needs a decode-capable pool). Requests the encode decider picks are routed there first with the main routing policy; no encode work is simulated (with --semantics corrected each pod runs one encode job at a time, priced as a lone prefill of the media tokens, before the prefill)', scope: 'shared' },
  { name: 'encode-decider', kind: 'string', def: 'never', choices: ENCODE_DECIDERS, help: 'E/P/D encode decider: never, always, multimodal (requests with image, audio or video tokens); other than never needs --encode-instances > 0; a policy bundle\'s encode section replaces it unless this is given', scope: 'shared' },
  { name: 'pd-prefix-threshold', kind: 'int', def: 16, help: 'prefix-threshold decider: disaggregate when more prompt tokens than this are not cached on the chosen decode pod', scope: 'shared' },
  { name: 'pd-transfer-bandwidth', kind: 'float', def: 25, help: 'prefill->decode KV transfer bandwidth (GB/s)', scope: 'shared' },
  { name: 'pd-transfer-base-latency', kind: 'float', def: 0.05, help: 'fixed latency per KV transfer (ms)', scope: 'shared' },
  { name: 'pd-transfer-contention', kind: 'bool', def: false, help: 'share the transfer bandwidth equally among the transfers in flight when one starts', scope: 'shared' },
  { name: 'pd-kv-ownership', kind: 'string', def: 'duplicate', choices: PD_KV_OWNERSHIPS, help: 'P/D KV ownership: duplicate (the reference: the prefill pod keeps a cached copy; the default unless --semantics corrected) or single (the prefill pod holds the blocks until the transfer ends, then they are gone there; the default with --semantics corrected)', scope: 'shared' },
  { name: 'pd-transfer-mode', kind: 'string', def: 'whole', choices: PD_TRANSFER_MODES, help: 'P/D transfer: whole (the reference: starts when the prefill ends) or pipelined (each prefill chunk ships as soon as it is computed)', scope: 'shared' },
  { name: 'pd-transfer-granularity', kind: 'string', def: 'stream', choices: PD_TRANSFER_GRANULARITIES, help: 'P/D transfer unit paying the base latency: stream (the reference: once per transfer), chunk, block', scope: 'shared' },
  { name: 'pd-transfer-chunk-blocks', kind: 'int', def: 16, help: 'blocks per unit with --pd-transfer-granularity chunk', scope: 'shared' },
  { name: 'pd-backpressure-threshold', kind: 'int', def: 0, help: 'hold new prefills for a decode pod that already has this many requests prefilling or in transfer (0 = off)', scope: 'shared' },
  { name: 'pd-backpressure-retry-us', kind: 'int', def: 1000, help: 'how often a held prefill looks again (µs)', scope: 'shared' },
  { name: 'prefill-routing-scorers', kind: 'string', def: '', help: 'weighted scorer profile name:weight,... for the prefill pool (default: the main routing policy)', scope: 'shared' },
  { name: 'decode-routing-scorers', kind: 'string', def: '', help: 'weighted scorer profile name:weight,... for the decode pool (default: the main routing policy)', scope: 'shared' },
  { name: 'prefill-tp', kind: 'int', def: 0, max: 1024, help: 'tensor parallelism of prefill-pool instances (0 = --tp)', scope: 'shared' },
  { name: 'decode-tp', kind: 'int', def: 0, max: 1024, help: 'tensor parallelism of decode-pool and shared instances (0 = --tp)', scope: 'shared' },
  { name: 'prefill-hardware', kind: 'string', def: '', help: 'GPU of prefill-pool instances ("" = --hardware)', scope: 'shared' },
  { name: 'decode-hardware', kind: 'string', def: '', help: 'GPU of decode-pool and shared instances ("" = --hardware)', scope: 'shared' },
  { name: 'prefill-latency-model', kind: 'string', def: '', choices: namesOf(LATENCY_BACKENDS), help: 'latency backend of prefill-pool instances ("" = --latency-model)', scope: 'shared' },
  { name: 'decode-latency-model', kind: 'string', def: '', choices: namesOf(LATENCY_BACKENDS), help: 'latency backend of decode-pool and shared instances ("" = --latency-model)', scope: 'shared' },
  { name: 'prefill-max-model-len', kind: 'int', def: 0, help: 'max model length of prefill-pool instances (0 = --max-model-len, capped at the pool\'s KV capacity)', scope: 'shared' },
  { name: 'encode-tp', kind: 'int', def: 0, help: 'tensor parallelism of encode-pool instances (0 = --tp; beyond the reference): the GPUs they take on node pools and, with --semantics corrected, the speed of their encode jobs', scope: 'shared' },
  { name: 'encode-hardware', kind: 'string', def: '', help: 'GPU of encode-pool instances ("" = --hardware; beyond the reference): their node-pool placement and, with --semantics corrected, the speed of their encode jobs', scope: 'shared' },
  { name: 'decode-max-model-len', kind: 'int', def: 0, help: 'max model length of decode-pool and shared instances (0 = --max-model-len, capped at the pool\'s KV capacity)', scope: 'shared' },
  // gateway queue / flow control
  { name: 'flow-control', kind: 'bool', def: false, help: 'enable the gateway queue (flow control); it replaces --admission-policy', scope: 'shared' },
  { name: 'saturation-detector', kind: 'string', def: 'never', choices: SATURATION_DETECTOR_NAMES, help: 'saturation detector gating dispatch: never, utilization, concurrency', scope: 'shared' },
  { name: 'dispatch-order', kind: 'string', def: 'fifo', choices: DISPATCH_ORDERS, help: 'gateway dispatch order: fifo, priority, slo-deadline', scope: 'shared' },
  { name: 'slo-targets', kind: 'string', def: '', help: 'per-class TTFT targets in µs for slo-deadline dispatch, e.g. critical=100000', scope: 'shared' },
  { name: 'max-gateway-queue-depth', kind: 'int', def: 0, help: 'gateway queue capacity (0 = unlimited)', scope: 'shared' },
  { name: 'queue-depth-threshold', kind: 'float', def: 5, help: 'utilization detector: queue depth per instance at saturation', scope: 'shared' },
  { name: 'kv-cache-util-threshold', kind: 'float', def: 0.8, help: 'utilization detector: KV utilisation at saturation', scope: 'shared' },
  { name: 'max-concurrency', kind: 'int', def: 100, help: 'concurrency detector: in-flight requests per instance at saturation', scope: 'shared' },
  { name: 'per-band-capacity', kind: 'int', def: 0, help: 'gateway queue capacity per priority band (0 = unlimited)', scope: 'shared' },
  { name: 'usage-limit-threshold', kind: 'float', def: 1.0, help: 'ceiling of the lowest priority band, in (0, 1] (head-of-line gating below 1)', scope: 'shared' },
  { name: 'fairness-policy', kind: 'string', def: 'global-strict', choices: FAIRNESS_POLICY_NAMES, help: 'fairness across tenants within a band: global-strict or round-robin', scope: 'shared' },
  { name: 'request-ttl', kind: 'int', def: 0, help: 'gateway queue time-to-live in µs (0 = none)', scope: 'shared' },
  { name: 'queue-shedding', kind: 'bool', def: false, help: 'displace a less important sheddable request when the gateway queue is full', scope: 'shared' },
  { name: 'dispatch-tick-interval', kind: 'int', def: 1000, help: 'gateway dispatch tick in µs', scope: 'shared' },
  { name: 'in-flight-eviction', kind: 'bool', def: false, help: 'evict sheddable in-flight requests when saturated and important work waits', scope: 'shared' },
  { name: 'slo-ttft', kind: 'string', def: '', help: 'per-class TTFT goodput targets, e.g. critical=100ms,standard=500ms', scope: 'shared' },
  { name: 'slo-itl', kind: 'string', def: '', help: 'per-class mean-ITL goodput targets, e.g. critical=20ms', scope: 'shared' },
  { name: 'slo-e2e', kind: 'string', def: '', help: 'per-class E2E goodput targets, e.g. batch=30s', scope: 'shared' },
  { name: 'metrics-path', kind: 'string', def: '', writesFile: 'metrics', help: 'write the metrics JSON with per-request details to this file', scope: 'shared' },
  { name: 'timeseries-path', kind: 'string', def: '', help: 'write per-instance and cluster-wide time series (queue depth, batch size, KV use, in-flight, step time, throughput, arrivals, completions, admission outcomes, gateway queue) to this file: CSV (.csv) or JSON lines (.jsonl)', scope: 'shared' },
  { name: 'timeseries-interval-us', kind: 'int', def: 0, help: 'time-series sampling interval in simulated µs (0 = automatic: 1 ms, doubled as needed to keep at most 1024 rows); sampling never changes the results', scope: 'shared' },
  { name: 'timeseries-format', kind: 'string', def: 'auto', choices: ['auto', 'csv', 'jsonl'], help: 'time-series file format: auto (from the --timeseries-path extension), csv or jsonl', scope: 'shared' },
  { name: 'report-data', kind: 'bool', def: false, help: 'add a report_data section to the JSON output (latency CDFs per SLO class, sampled time series, routing counts, regret over time) for blis report and blis compare', scope: 'shared' },
  { name: 'output-format', kind: 'string', def: 'json', choices: ['json', 'reference'], help: 'stdout format: json (one JSON document) or reference (the reference text, byte for byte)', scope: 'shared' },
  // run: workload
  { name: 'workload-spec', kind: 'string', def: '', help: 'workload spec v2 YAML (clients, arrival processes, length distributions, tenants, SLO classes); replaces the distribution flags', scope: 'run' },
  { name: 'workload', kind: 'string', def: 'distribution', choices: ['distribution', ...PRESET_NAMES], help: 'workload: distribution or a preset (chatbot, contentgen, summarization, multidoc)', scope: 'run' },
  { name: 'rate', kind: 'float', def: 1.0, help: 'arrival rate (requests/s)', scope: 'run' },
  { name: 'num-requests', kind: 'int', def: 100, help: 'number of requests', scope: 'run' },
  { name: 'prefix-tokens', kind: 'int', def: 0, help: 'shared prefix length (tokens)', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'prompt-tokens', kind: 'int', def: 512, help: 'prompt length mean', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'prompt-tokens-stdev', kind: 'int', def: 256, help: 'prompt length stdev', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'prompt-tokens-min', kind: 'int', def: 2, help: 'prompt length min', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'prompt-tokens-max', kind: 'int', def: 7000, help: 'prompt length max', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'output-tokens', kind: 'int', def: 512, help: 'output length mean', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'output-tokens-stdev', kind: 'int', def: 256, help: 'output length stdev', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'output-tokens-min', kind: 'int', def: 2, help: 'output length min', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'output-tokens-max', kind: 'int', def: 7000, help: 'output length max', scope: 'run', max: MAX_REQUEST_TOKENS },
  { name: 'concurrency', kind: 'int', def: 0, help: 'closed-loop virtual users: each sends its next request --think-time-ms after its previous one finishes (mutually exclusive with --rate and --workload-spec; set --num-requests or --horizon)', scope: 'run' },
  { name: 'think-time-ms', kind: 'int', def: 0, help: 'think time in ms: between a response and the same user\'s next request (run --concurrency); replay closed-loop: between a round\'s end and the next round (0 = from the trace; excludes --think-time-dist)', scope: 'shared' },
  { name: 'timeout', kind: 'int', def: 300, help: 'client timeout per request in seconds (negative disables; 0 is rejected)', scope: 'run' },
  { name: 'concurrent-sessions', kind: 'int', def: 0, help: 'session pool: at most N closed-loop sessions in flight, the next one (in arrival order) starting when one ends; 0 = off (run: a spec\'s multi-turn sessions; replay: implies --session-mode closed-loop)', scope: 'shared' },
  { name: 'trace-output', kind: 'string', def: '', writesFile: 'trace', help: 'export the requests as TraceV2: writes <prefix>.yaml and <prefix>.csv (run: the arrivals; replay: the trace\'s requests with their replayed outcomes, header mode "replayed")', scope: 'shared' },
  { name: 'fitness-weights', kind: 'string', def: '', help: 'fitness score weights key:value,... (throughput, tokens_per_sec, p99_ttft, p50_ttft, mean_ttft, p99_e2e, p50_e2e, mean_e2e)', scope: 'run' },
  // replay
  { name: 'trace-header', kind: 'string', def: '', help: 'TraceV2 header YAML (required)', scope: 'replay' },
  { name: 'trace-data', kind: 'string', def: '', help: 'TraceV2 data CSV (required)', scope: 'replay' },
  { name: 'results-path', kind: 'string', def: '', writesFile: 'results', help: 'write per-request results (SimResult[] JSON) to this file', scope: 'replay' },
  { name: 'session-mode', kind: 'string', def: 'fixed', choices: ['fixed', 'closed-loop', 'fixed-accumulate'], help: 'fixed (every row injected at its recorded time), closed-loop (round 0 of each session injected; later rounds follow each round\'s end after a think time, with the recorded lengths) or fixed-accumulate (every row at its recorded time, each round\'s prompt rebuilt as the previous prompt + output + the row\'s input; needs session_context_growth: accumulate)', scope: 'replay' },

  { name: 'total-sessions', kind: 'int', def: 0, help: 'with --concurrent-sessions: replay this many sessions, the first ones of the trace or, past its end, copies of its sessions in turn (each with fresh token ids after the group prefix); 0 = every session once', scope: 'replay' },
  { name: 'think-time-dist', kind: 'string', def: '', help: 'closed-loop think time distribution: lognormal:mu=<log-s>,sigma=<s>[,min=<t>,max=<t>] or constant:value=<t> (t: us, ms or s; bare = ms); excludes --think-time-ms', scope: 'replay' },
] as const satisfies readonly FlagSpec[];

/** One entry of {@link FLAGS} with its literal name, kind and choices (the library derives its config type from them). */
export type Flag = (typeof FLAGS)[number];

const FLAG_MAX: ReadonlyMap<string, number> = new Map((FLAGS as readonly FlagSpec[]).filter((f) => f.max !== undefined).map((f) => [f.name, f.max as number]));

/** Option values plus which ones were set explicitly (the reference's `Changed`); flags or config keys. */
export class FlagValues {
  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly explicit: ReadonlySet<string>,
  ) {}

  changed(name: string): boolean {
    return this.explicit.has(name);
  }

  /** A copy with `name` set to `value` as if given explicitly. */
  with(name: string, value: string): FlagValues {
    return new FlagValues({ ...this.raw, [camel(name)]: value }, new Set([...this.explicit, name]));
  }

  /** Whether the option exists here at all (commands borrow subsets of the table). */
  has(name: string): boolean {
    return this.raw[camel(name)] !== undefined;
  }

  /** The options set explicitly, as [name, value text], in option-table order (reports show them). */
  explicitOptions(): [string, string][] {
    return FLAGS.filter((f) => this.explicit.has(f.name)).map((f) => [f.name, f.kind === 'bool' ? String(this.bool(f.name)) : this.text(f.name)]);
  }

  private text(name: string): string {
    const v = this.raw[camel(name)];
    if (v === undefined) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  str(name: string): string {
    return this.text(name);
  }

  int(name: string): number {
    const v = parseIntFlag(`--${name}`, this.text(name));
    const max = FLAG_MAX.get(name);
    if (max !== undefined && v > max) throw new ConfigError('bad-flag', `--${name}: ${v} exceeds the largest value blis-ts accepts (${max.toLocaleString('en-US')}); use a smaller value`);
    return v;
  }

  float(name: string): number {
    return parseFloatFlag(`--${name}`, this.text(name));
  }

  bool(name: string): boolean {
    return this.raw[camel(name)] === true;
  }

  floats(name: string): number[] {
    const t = this.text(name).trim();
    if (t === '') return [];
    return t.split(',').map((p, i) => {
      const v = p.trim();
      if (!DECIMAL_FLOAT.test(v) || !Number.isFinite(Number(v))) throw new ConfigError('bad-flag', `--${name}: element ${i + 1} (${showValue(p)}) is not a finite decimal number; pass comma-separated numbers, e.g. --${name} 1,2,3`);
      return Number(v);
    });
  }

  /** int64 text as bigint (seeds, horizons). */
  bigint(name: string): bigint {
    const t = this.text(name).trim();
    checkIntText(`--${name}`, t);
    const v = BigInt(t);
    if (v > 9223372036854775807n || v < -9223372036854775808n) throw new ConfigError('bad-flag', `--${name}: ${t} does not fit in int64`);
    return v;
  }
}

/**
 * Numbers on the command line are decimal only. The reference's flag parser (Go's strconv) reads integers with
 * base prefixes (`0x10` = 16, and `010` = 8, octal) and refuses hexadecimal floats without a `p` exponent;
 * JavaScript's Number() would read `0x10`, `0b11` and `0o7` as numbers and `010` as ten. Rather than guess,
 * blis-ts accepts plain decimals and refuses the rest with the fix (docs/reference-differences.md).
 */
export const DECIMAL_FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DECIMAL_INT = /^[+-]?\d+$/;

/** Refuses integer text that is not plain decimal (see {@link DECIMAL_FLOAT}). */
export function checkIntText(flag: string, t: string): void {
  if (!DECIMAL_INT.test(t)) {
    const hint = /^[+-]?0[xXbBoO]/.test(t) ? ' (write it in decimal: hexadecimal, binary and octal forms are not accepted)' : '';
    throw new ConfigError('bad-flag', `${flag}: ${showValue(t)} is not an integer${hint}; pass a whole number, e.g. ${flag} 16`);
  }
  if (/^[+-]?0\d/.test(t)) {
    throw new ConfigError('bad-flag', `${flag}: ${showValue(t)} has a leading zero, which the reference reads as octal; write it without the leading zeros`);
  }
}

/** A decimal integer flag value within ±2^53. */
export function parseIntFlag(flag: string, text: string): number {
  const t = text.trim();
  checkIntText(flag, t);
  const v = Number(t);
  if (!Number.isSafeInteger(v)) throw new ConfigError('bad-flag', `${flag}: ${t} is out of range (at most 2^53 in magnitude)`);
  return v;
}

/** A finite decimal number flag value. */
export function parseFloatFlag(flag: string, text: string): number {
  const t = text.trim();
  if (!DECIMAL_FLOAT.test(t) || !Number.isFinite(Number(t))) {
    const hint = /^[+-]?0[xXbBoO]/.test(t) ? ' (write it in decimal: hexadecimal, binary and octal forms are not accepted)' : '';
    throw new ConfigError('bad-flag', `${flag}: ${showValue(t)} is not a finite decimal number${hint}; pass e.g. ${flag} 1.5`);
  }
  return Number(t);
}

const CAMEL = new Map<string, string>();

export function camel(name: string): string {
  // Memoised: every option read goes through it (tens of reads per simulation, each a regex replace otherwise).
  let c = CAMEL.get(name);
  if (c === undefined) {
    c = name.replace(/-([a-z0-9])/g, (_, ch: string) => ch.toUpperCase());
    if (CAMEL.size < 4096) CAMEL.set(name, c);
  }
  return c;
}

