/**
 * Flags shared by `run` and `replay` → a resolved engine setup (reference resolveLatencyConfig plus the
 * engine flag checks). Reads the optional user model/hardware files; everything else is pure.
 */
import type { EngineSetup } from './engine-setup.js';
import { ConfigError } from './config-error.js';
import { resolveLatency, type LatencyInput, type ResolvedLatency } from './resolve-latency.js';
import { resolveDeployment } from './resolve-deployment.js';
import type { DeploymentSpec } from '../deploy/spec.js';
import { resolvePdFlags } from './resolve-pd.js';
import { calculateKVBlocks, kvBytesPerToken } from '../latency/kv-capacity.js';
import { resolveKvCacheDtype, resolveSpeculative } from './resolve-speculative.js';
import type { StorageTierConfig } from '../kv/storage-tier.js';
import { SCHEDULERS, PREEMPTION_POLICIES, type PreemptionPolicy, type SchedulerName } from '../instance/scheduler.js';
import { MAX_INT64 } from '../domain/units.js';
import { DEFAULT_SEMANTICS, SEMANTICS, isSemantics, type Semantics } from '../domain/semantics.js';
import { LIMITS, checkLimit } from '../domain/limits.js';
import type { FlagValues } from './options.js';
import type { SimEnv } from './env.js';
import { resolveLoraFlags, resolveLoraSchedule, type LoraSetup } from './resolve-lora.js';
import type { LatencyProfile } from '../latency/profile.js';
import type { AttentionLayerMode } from '../latency/attention-layout.js';
import { SCHEDULING_MODES, type SchedulingMode } from '../instance/batch-formation.js';
import { BlisError, showValue } from '../domain/errors.js';
import { locateJson } from '../format/json-locate.js';
import { parseJson } from '../format/json.js';
import { LatencyConfigError, LatencyErrorCode } from '../latency/errors.js';
import { ENGINE_PROFILES, isEngineProfileName } from '../latency/engine-profiles.js';

/** vLLM V0 turned chunked prefill on by itself above this max_model_len (tokens); its chunked budget was 512. */
const V0_LONG_CONTEXT = 32_768;
const V0_CHUNKED_BUDGET = 512;

/** A user model config.json: bounded, with syntax errors at `file:line:col`. */
function readJson(env: SimEnv, path: string, option: string): { raw: unknown; text: string } {
  const text = env.readText(path, option);
  try {
    return { raw: parseJson(text, path), text };
  } catch (e) {
    if (e instanceof BlisError) throw new ConfigError('bad-json', `${option}: ${e.message}`);
    throw e;
  }
}

/** Problems that come from a field of the model's config.json (as opposed to a flag such as --tp). */
const MODEL_FIELD_CODES: ReadonlySet<string> = new Set([
  LatencyErrorCode.InvalidHFConfig, LatencyErrorCode.InvalidKVCapacityInput, LatencyErrorCode.InvalidModelConfig, LatencyErrorCode.MoEExpertCountMissing,
]);
const FLAG_FIELDS: ReadonlySet<string> = new Set(['tp', 'dp', 'blockSize', 'gpuMemoryUtilization', 'adapterReservedBytes', 'MemoryGiB']);

interface UserFile {
  readonly raw: unknown;
  readonly text: string;
  readonly label: string;
}

/**
 * A problem found while building the model from a user's file (latency/ names the config.json key, or the GPU
 * field) becomes an error at that key's `line:col` in the file, so every error points into the file it came from.
 */
function locateUserFileError(e: unknown, model: UserFile | undefined, hardware: (UserFile & { gpu: string }) | undefined): unknown {
  if (!(e instanceof LatencyConfigError) || e.field === '') return e;
  const strip = (label: string): string => (e.message.startsWith(`${label}: `) ? e.message.slice(label.length + 2) : e.message);
  if (model !== undefined && MODEL_FIELD_CODES.has(e.code) && !FLAG_FIELDS.has(e.field)) {
    const tc = (model.raw as { text_config?: Record<string, unknown> } | null)?.text_config;
    const path = tc !== null && typeof tc === 'object' && tc[e.field] !== undefined ? ['text_config', e.field] : [e.field];
    const pos = locateJson(model.text, path);
    return new LatencyConfigError(e.code, e.field, `${model.label}:${pos.line}:${pos.col}: ${strip(model.label)}`);
  }
  if (hardware !== undefined && e.field === 'MemoryGiB' && e.code === LatencyErrorCode.InvalidKVCapacityInput) {
    const pos = locateJson(hardware.text, [hardware.gpu, e.field]);
    return new LatencyConfigError(e.code, e.field, `${hardware.label}:${pos.line}:${pos.col}: ${hardware.gpu}: ${e.message}`);
  }
  return e;
}

export interface EngineResolution {
  readonly setup: Omit<EngineSetup, 'horizon'>;
  readonly latency: ResolvedLatency;
  readonly seed: bigint;
  readonly lora: LoraSetup;
  /**
   * Engines per deployment: corrected-physics runs each of --dp data-parallel ranks as its own engine (its own
   * scheduler and KV cache) behind the router, so setup.numInstances = --num-instances × this (a MoE model's ranks
   * step in lockstep: setup.lockstepRanks). 1 otherwise.
   */
  readonly dpRanks: number;
  /** KV blocks of an instance placed on a GPU of given memory (node pools); null when capacity is fixed. */
  readonly kvForGpu: ((gpuMemoryGiB: number, tp: number) => number | null) | null;
}

/** `--semantics`: reference (default) or corrected. */
export function semanticsFlag(f: FlagValues): Semantics {
  // Commands without the option (serve) read '' and run the default.
  const v = f.changed('semantics') || f.str('semantics') !== '' ? f.str('semantics') : DEFAULT_SEMANTICS;
  if (!isSemantics(v)) throw new ConfigError('bad-flag', `--semantics must be ${SEMANTICS.join(' or ')}, got "${v}"`, { field: '--semantics' });
  return v;
}

/** The latency-resolution inputs the flags give (user model and hardware files read), and how to point an error into those files. */
export async function latencyInputs(f: FlagValues, env: SimEnv): Promise<{ inputs: LatencyInput; locate: (e: unknown) => unknown; lora: LoraSetup }> {
  const folder = f.str('model-config-folder');
  let userModelConfig: { raw: unknown; text: string; label: string } | undefined;
  if (folder !== '') {
    const p = `${folder.replace(/\/+$/, '')}/config.json`;
    userModelConfig = { ...readJson(env, p, '--model-config-folder'), label: p };
  }
  const profilePath = f.str('latency-profile');
  let profile: { profile: LatencyProfile; label: string } | undefined;
  if (profilePath !== '') {
    const { parseLatencyProfile } = await import('../latency/profile.js');
    profile = { profile: parseLatencyProfile(env.readText(profilePath, '--latency-profile'), profilePath), label: profilePath };
  }
  const hwPath = f.str('hardware-config');
  // The schema library is loaded only when a user catalog file is given (it costs startup time).
  const hwText = hwPath === '' ? '' : env.readText(hwPath, '--hardware-config');
  const userHardware = hwPath === '' ? undefined : (await import('../config/user-catalog.js')).parseUserHardwareConfig(hwText, hwPath);
  const lora = resolveLoraFlags(f, env, semanticsFlag(f) === 'corrected');
  const inputs: LatencyInput = {
    model: f.str('model'),
    hardware: f.str('hardware'),
    tp: f.int('tp'),
    dp: f.int('dp'),
    backend: f.str('latency-model'),
    backendExplicit: f.changed('latency-model'),
    alpha: f.floats('alpha-coeffs'),
    alphaExplicit: f.changed('alpha-coeffs'),
    beta: f.floats('beta-coeffs'),
    betaExplicit: f.changed('beta-coeffs'),
    totalKvBlocks: f.int('total-kv-blocks'),
    totalKvBlocksExplicit: f.changed('total-kv-blocks'),
    blockSize: f.int('block-size-in-tokens'),
    gpuMemoryUtilization: f.float('gpu-memory-utilization'),
    maxModelLen: f.int('max-model-len'),
    maxModelLenExplicit: f.changed('max-model-len'),
    moeCommBackend: f.str('moe-comm-backend'),
    enableExpertParallel: f.bool('enable-expert-parallel'),
    ...(f.has('dp-placement') && f.changed('dp-placement') ? { dpPlacement: f.str('dp-placement') } : {}),
    ...(f.has('attention-layers') && f.str('attention-layers') !== '' ? { attentionLayers: f.str('attention-layers') as AttentionLayerMode } : {}),
    ...(f.has('max-num-seqs') ? { maxNumSeqs: f.int('max-num-seqs') } : {}),
    network: { gpusPerNode: f.int('gpus-per-node'), bandwidthGBs: f.float('inter-node-bandwidth'), latencyMs: f.float('inter-node-latency') },
    ...(semanticsFlag(f) === 'corrected' ? { corrected: true } : {}),
    ...(userModelConfig ? { userModelConfig: { raw: userModelConfig.raw, label: userModelConfig.label } } : {}),
    ...(userHardware ? { userHardware, userHardwareLabel: hwPath } : {}),
    adapterReservedBytes: lora.reservedBytes,
    ...(profile ? { profile } : {}),
    ...(f.has('engine-profile') && f.str('engine-profile') !== '' ? { engineProfile: f.str('engine-profile') }
      : f.has('scheduling-mode') && f.str('scheduling-mode') === 'prefill-first' ? { impliedEngineProfile: 'vllm-v0' } : {}),
    ...kvDtypeAndWidth(f),
  };
  const locate = (e: unknown): unknown => {
    const gpu = f.str('hardware');
    const hwFile = userHardware?.has(gpu) === true ? { raw: null, text: hwText, label: hwPath, gpu } : undefined;
    return locateUserFileError(e, userModelConfig, hwFile);
  };
  return { inputs, locate, lora };
}

/** --kv-cache-dtype and the speculative verify width K+1 for the latency models (absent when off). */
function kvDtypeAndWidth(f: FlagValues): { kvCacheDtype?: string; verifyWidth?: number } {
  const dtype = resolveKvCacheDtype(f);
  const spec = resolveSpeculative(f, false);
  return { ...(dtype === 'auto' ? {} : { kvCacheDtype: dtype }), ...(spec === null ? {} : { verifyWidth: spec.k + 1 }) };
}

export async function resolveEngineFlags(f: FlagValues, env: SimEnv, deployment: DeploymentSpec | null = null): Promise<EngineResolution> {
  const semantics = semanticsFlag(f);
  const { inputs, locate, lora } = await latencyInputs(f, env);
  const dep = deployment === null ? null : resolveDeployment(deployment, inputs, f, env);
  let latency: ResolvedLatency;
  if (dep !== null) latency = dep.first;
  else {
    try {
      latency = resolveLatency(inputs);
    } catch (e) {
      throw locate(e);
    }
  }
  const positive = (name: string): number => {
    const v = f.int(name);
    if (v <= 0) throw new ConfigError('bad-flag', `--${name} must be > 0, got ${v}`);
    return v;
  };
  const nonNegative = (name: string): number => {
    const v = f.int(name);
    if (v < 0) throw new ConfigError('bad-flag', `--${name} must be >= 0, got ${v}`);
    return v;
  };
  // A deployment counts its engines itself (each configuration's replicas × its placed ranks).
  const dpRanks = dep !== null ? 1 : latency.backend === 'corrected-physics' ? f.int('dp') : latency.dpReplicas ?? 1;
  if (dpRanks > 1 && latency.backend !== 'corrected-physics') {
    // Upstream #1555 guards this too: the pools' sizes are counted in engines.
    const pdFlag = ['prefill-instances', 'decode-instances', 'prefill-decode-instances', 'encode-instances'].find((n) => f.has(n) && f.changed(n) && f.int(n) > 0);
    if (pdFlag !== undefined) throw new ConfigError('bad-flag', `--dp-placement replicas with --dp ${dpRanks} is not supported with P/D disaggregation (--${pdFlag}): the pools are sized in engines; use --dp-placement combined, or --dp 1 with pools of --dp times the engines`, { field: '--dp-placement' });
  }
  const numInstances = dep === null ? positive('num-instances') * dpRanks : dep.numInstances;
  // vLLM steps the DP ranks of a MoE model in lockstep (its expert layers span the ranks); dense ranks stay independent.
  const lockstepRanks = dpRanks > 1 && latency.backend === 'corrected-physics' && latency.latency.lockstep !== undefined ? dpRanks : 1;
  if (lockstepRanks > 1) checkLockstepFlags(f, lockstepRanks);
  if (latency.totalKvBlocks <= 0) throw new ConfigError('bad-flag', `--total-kv-blocks must be > 0, got ${latency.totalKvBlocks}`);
  checkEngineLimits(f, latency, numInstances, dep !== null);
  const scheduler = f.str('scheduler');
  if (!Object.hasOwn(SCHEDULERS, scheduler)) throw new ConfigError('bad-flag', `unknown --scheduler ${showValue(scheduler)}; valid: ${Object.keys(SCHEDULERS).join(', ')}`);
  const preemption = f.str('preemption-policy');
  if (!Object.hasOwn(PREEMPTION_POLICIES, preemption)) throw new ConfigError('bad-flag', `unknown --preemption-policy ${showValue(preemption)}; valid: ${Object.keys(PREEMPTION_POLICIES).join(', ')}`);
  const modeText = f.str('scheduling-mode');
  if (modeText !== '' && !(SCHEDULING_MODES as readonly string[]).includes(modeText)) {
    throw new ConfigError('bad-flag', `unknown --scheduling-mode ${showValue(modeText)}; valid: ${SCHEDULING_MODES.join(', ')}`);
  }
  // corrected-physics models vLLM V1, whose scheduler runs one step ahead, unless --engine-profile names another
  // engine (resolveLatency checked its name); the reference's models keep sync.
  const engine = f.has('engine-profile') ? f.str('engine-profile') : '';
  // vLLM V0 turned chunked prefill on by itself for models longer than 32K tokens (PR #6666, v0.5.4 on): its steps
  // then mix decodes and prefill chunks (sync), with V0's chunked budget of 512 tokens, unless the flags say otherwise.
  const v0Chunked = engine === 'vllm-v0' && modeText === '' && latency.maxModelLen > V0_LONG_CONTEXT;
  const schedulingMode: SchedulingMode = modeText !== ''
    ? (modeText as SchedulingMode)
    : v0Chunked ? 'sync'
      : isEngineProfileName(engine) ? ENGINE_PROFILES[engine].schedulingMode : latency.backend === 'corrected-physics' ? 'async' : 'sync';
  const speculative = resolveSpeculative(f, semantics === 'corrected');
  if ((speculative !== null || dep?.engine.pools.some((p) => (p.overrides.speculative ?? null) !== null) === true) && schedulingMode === 'prefill-first') {
    throw new ConfigError('bad-flag', '--num-speculative-tokens cannot be combined with --scheduling-mode prefill-first (vLLM V0 without chunked prefill); use sync or async', { field: '--num-speculative-tokens' });
  }
  const bw = f.float('kv-transfer-bandwidth');
  const cpuBlocks = nonNegative('kv-cpu-blocks');
  if (cpuBlocks > 0 && !(bw > 0)) throw new ConfigError('bad-flag', `--kv-transfer-bandwidth must be > 0 with --kv-cpu-blocks, got ${bw}`);
  const storage = resolveStorageTier(f, latency, cpuBlocks, f.int('block-size-in-tokens'));
  const maxModelLen = latency.maxModelLen;
  const blockSize = f.int('block-size-in-tokens');
  // `blis serve` shares this resolution but has no pools.
  const pd = dep !== null
    ? dep.pd
    : f.has('prefill-instances')
      ? resolvePdFlags(f, latency, { numInstances, blockSize, dp: f.int('dp'), gpuMemoryUtilization: f.float('gpu-memory-utilization'), moeCommBackend: f.str('moe-comm-backend'), adapterReservedBytes: Math.trunc(lora.reservedBytes), ...(semantics === 'corrected' ? { corrected: true } : {}) }, (m) => env.warn(m))
      : null;
  if (maxModelLen > 0 && Math.ceil(maxModelLen / blockSize) > latency.totalKvBlocks) {
    throw new ConfigError('bad-flag', `KV cache too small for --max-model-len ${maxModelLen}: needs ${Math.ceil(maxModelLen / blockSize)} blocks but --total-kv-blocks is ${latency.totalKvBlocks}`);
  }
  // Per-instance KV capacity on node pools: only when capacity is derived (not given) for an analytical model.
  const arch = latency.architecture;
  const params = latency.kvParams;
  const hw = latency.hardwareConfig;
  const util = f.float('gpu-memory-utilization');
  // Under --dp-placement replicas an instance is one rank: its KV cache is sized at DP 1 (experts over tp·dp with EP).
  const dp = latency.dpReplicas !== undefined ? 1 : f.int('dp');
  const epForGpu = latency.dpReplicas !== undefined && f.bool('enable-expert-parallel') ? { expertParallelSize: latency.tp * latency.dpReplicas } : {};
  const kvForGpu = !f.changed('total-kv-blocks') && arch !== null && params !== null && hw !== null && (latency.backend === 'roofline' || latency.backend === 'trained-physics')
    ? (mem: number, tp: number): number | null => {
      try {
        return calculateKVBlocks(arch, { ...hw, MemoryGiB: mem }, params, { tp, dp, blockSize, gpuMemoryUtilization: util, adapterReservedBytes: Math.trunc(lora.reservedBytes), maxNumSeqs: f.int('max-num-seqs'), ...(semantics === 'corrected' ? { corrected: true } : {}), ...epForGpu });
      } catch {
        return null;
      }
    }
    : null;
  const kvOrigin = f.changed('total-kv-blocks') ? '' : latency.totalKvBlocks === f.int('total-kv-blocks') ? ' (the default)' : ' (sized from GPU memory)';
  // --scheduling-mode prefill-first alone is vLLM V0's step formation: corrected-physics prices V0's overheads.
  const shownEngine = engine !== '' ? engine : schedulingMode === 'prefill-first' && latency.backend === 'corrected-physics' ? 'vllm-v0' : '';
  // Automatic prefix caching: on (vLLM V1's default), off under V0's profile (V0 shipped with it off), unless given.
  const cachingText = f.has('prefix-caching') ? f.str('prefix-caching') : 'auto';
  if (!['auto', 'on', 'off'].includes(cachingText)) throw new ConfigError('bad-flag', `unknown --prefix-caching ${showValue(cachingText)}; valid: auto, on, off`, { field: '--prefix-caching' });
  const prefixCaching = cachingText === 'auto' ? shownEngine !== 'vllm-v0' : cachingText === 'on';
  if (cachingText === 'auto' && !prefixCaching) env.info?.('prefix caching off: the vllm-v0 engine profile (V0\'s default; --prefix-caching on to enable it)');
  // V0's token budget: max(max_model_len, 2048) without chunked prefill (a prefill step takes whole prompts up to the
  // model length), 512 with it (vLLM SchedulerConfig, v0.4–v0.6).
  const v0Budget = shownEngine === 'vllm-v0' && !f.changed('max-num-batched-tokens') && maxModelLen > 0;
  const maxNumBatchedTokens = !v0Budget ? positive('max-num-batched-tokens') : v0Chunked ? V0_CHUNKED_BUDGET : Math.max(maxModelLen, 2048);
  if (v0Chunked) env.info?.(`scheduling mode sync: the vllm-v0 engine profile with max-model-len ${maxModelLen} > 32K (V0 enabled chunked prefill for such models; --scheduling-mode prefill-first to turn it off)`);
  if (v0Budget) env.info?.(`max-num-batched-tokens ${maxNumBatchedTokens}: the vllm-v0 engine profile (V0 ${v0Chunked ? 'with chunked prefill: 512' : 'without chunked prefill: max(max-model-len, 2048)'})`);
  if (isEngineProfileName(shownEngine)) {
    const o = ENGINE_PROFILES[shownEngine].overheads;
    env.info?.(`engine profile ${shownEngine}${shownEngine === engine ? '' : ' (implied by --scheduling-mode prefill-first: vLLM V0\'s step formation)'}: scheduling mode ${schedulingMode}, overheads ${o.step_us} µs per step + ${o.request_us} µs per scheduled sequence, front end ${o.frontend_us} µs${f.str('latency-profile') !== '' ? ' (a --latency-profile coefficient replaces these)' : ''}`);
  }
  env.info?.(`engine: model ${latency.model}, latency model ${latency.backend}${latency.hardware === '' ? '' : `, GPU ${latency.hardware}`}` +
    `${latency.tp > 0 ? `, TP ${latency.tp}` : ''}, ${numInstances} instance(s), ${latency.totalKvBlocks} KV blocks of ${blockSize} tokens${kvOrigin}, max-model-len ${maxModelLen === 0 ? 'unbounded' : maxModelLen}`);
  const loraSchedule = resolveLoraSchedule(f, env, lora, numInstances);
  return {
    seed: f.bigint('seed'),
    latency,
    lora,
    dpRanks,
    kvForGpu,
    setup: {
      semantics,
      seed: f.bigint('seed'),
      model: latency.model,
      gpuType: latency.hardware,
      tp: latency.tp,
      numInstances,
      admissionLatency: nonNegative('admission-latency'),
      routingLatency: nonNegative('routing-latency'),
      maxNumSeqs: positive('max-num-seqs'),
      maxNumBatchedTokens,
      longPrefillTokenThreshold: nonNegative('long-prefill-token-threshold'),
      ...(f.bool('reserve-full-isl') ? { reserveFullIsl: true } : {}),
      ...(prefixCaching ? {} : { prefixCaching: false }),
      maxModelLen,
      scheduler: scheduler as SchedulerName,
      preemptionPolicy: preemption as PreemptionPolicy,
      schedulingMode,
      ...(speculative === null ? {} : { speculative }),
      kv: {
        totalBlocks: latency.totalKvBlocks,
        blockSize,
        cpuBlocks,
        transferBandwidth: bw,
        transferBaseLatency: nonNegative('kv-transfer-base-latency'),
        ...(storage === null ? {} : { storage }),
      },
      latency: latency.latency,
      lora: lora.cost,
      ...(loraSchedule === null ? {} : { loraSchedule }),
      pd,
      deployment: dep?.engine ?? null,
      ...(lockstepRanks > 1 ? { lockstepRanks } : {}),
    },
  };
}

/**
 * The DP ranks of a MoE model under corrected-physics step in lockstep; what that does not model is refused:
 * P/D pools (sized in engines, and a group's ranks would sit in different pools), LoRA adapters (a rank's load
 * would stall its group), --dp-placement replicas (trained-physics' independent engines; `combined` changes
 * nothing under corrected-physics, as before).
 */
function checkLockstepFlags(f: FlagValues, dp: number): void {
  const pdFlag = ['prefill-instances', 'decode-instances', 'prefill-decode-instances', 'encode-instances'].find((n) => f.has(n) && f.changed(n) && f.int(n) > 0);
  const why = `the --dp ${dp} ranks of a MoE model under corrected-physics step in lockstep (docs/fidelity.md)`;
  if (pdFlag !== undefined) throw new ConfigError('bad-flag', `--dp ${dp} cannot be combined with P/D disaggregation (--${pdFlag}): ${why}, which is not modelled across pools; use --dp 1 with pools of --dp times the engines`, { field: '--dp' });
  if (f.has('lora-config') && f.str('lora-config') !== '') throw new ConfigError('bad-flag', `--dp ${dp} cannot be combined with --lora-config: ${why}, and adapter loads in lockstep are not modelled; use --dp 1`, { field: '--dp' });
  if (f.has('dp-placement') && f.str('dp-placement') === 'replicas') throw new ConfigError('bad-flag', `--dp-placement replicas (independent engines) applies to trained-physics; ${why}: drop --dp-placement`, { field: '--dp-placement' });
}

/** Lockstep DP groups cannot be scaled or placed on node pools: a group's ranks are one fixed set of engines. */
export function checkLockstepScaling(lockstepRanks: number | undefined, scaling: unknown): void {
  if ((lockstepRanks ?? 1) <= 1 || scaling === null || scaling === undefined) return;
  throw new ConfigError('bad-flag', `--dp ${lockstepRanks as number} cannot be combined with node pools or the autoscaler: the ranks of a MoE model under corrected-physics step in lockstep as one fixed set of engines; use --dp 1`, { field: '--dp' });
}

/**
 * The storage KV tier (docs/kv-tiers.md): null unless --kv-storage-blocks > 0. Its other flags without it
 * would do nothing, so they are refused rather than ignored.
 */
function resolveStorageTier(f: FlagValues, latency: ResolvedLatency, cpuBlocks: number, tokensPerBlock: number): StorageTierConfig | null {
  const blocks = f.int('kv-storage-blocks');
  const bad = (m: string): ConfigError => new ConfigError('bad-flag', m);
  if (blocks < 0) throw bad(`--kv-storage-blocks must be >= 0, got ${blocks}`);
  if (blocks === 0) {
    const set = ['kv-storage-bandwidth', 'kv-storage-latency-us', 'kv-thrash-window-us'].find((n) => f.changed(n));
    if (set !== undefined) throw bad(`--${set} needs a storage tier: set --kv-storage-blocks > 0 (or drop --${set})`);
    return null;
  }
  if (cpuBlocks <= 0) throw bad('--kv-storage-blocks needs a CPU tier to sit below: set --kv-cpu-blocks > 0');
  checkLimit(blocks, LIMITS.kvBlocksPerInstance, '--kv-storage-blocks', 'give a smaller --kv-storage-blocks', { field: '--kv-storage-blocks' });
  const bandwidthGBps = f.float('kv-storage-bandwidth');
  if (!(bandwidthGBps > 0) || !Number.isFinite(bandwidthGBps)) throw bad(`--kv-storage-bandwidth must be a finite number > 0 (GB/s), got ${bandwidthGBps}`);
  const latencyUs = f.float('kv-storage-latency-us');
  if (!(latencyUs >= 0) || !Number.isFinite(latencyUs)) throw bad(`--kv-storage-latency-us must be a finite number >= 0, got ${latencyUs}`);
  const cycleWindowUs = f.int('kv-thrash-window-us');
  if (cycleWindowUs <= 0) throw bad(`--kv-thrash-window-us must be > 0, got ${cycleWindowUs}`);
  const arch = latency.architecture;
  if (arch === null) throw bad(`--kv-storage-blocks needs the model's KV bytes per token to time transfers, but no config is known for ${latency.model}: give --model-config-folder`);
  let perToken: number;
  try {
    perToken = kvBytesPerToken(arch, Math.max(latency.tp, 1));
  } catch (e) {
    throw bad(`--kv-storage-blocks needs the model's KV bytes per token to time transfers: ${(e as Error).message}`);
  }
  return { blocks, bandwidthGBps, latencyUs, blockBytes: perToken * tokensPerBlock, cycleWindowUs };
}

/** Instances and KV blocks this machine can hold, checked before anything is allocated. */
function checkEngineLimits(f: FlagValues, latency: ResolvedLatency, numInstances: number, fromDeployment = false): void {
  const what = fromDeployment ? 'the deployment file\'s replicas' : '--num-instances';
  checkLimit(numInstances, LIMITS.instances, what, fromDeployment ? 'give the configurations fewer replicas' : 'simulate fewer, larger instances or a sample of the cluster', { field: fromDeployment ? '--deployment' : '--num-instances' });
  const gpu = latency.totalKvBlocks;
  const fix = f.changed('total-kv-blocks')
    ? 'give a smaller --total-kv-blocks'
    : `it was sized from the memory of ${latency.hardware} (MemoryGiB ${latency.hardwareConfig?.MemoryGiB ?? '?'}); check that hardware entry or give --total-kv-blocks`;
  checkLimit(gpu, LIMITS.kvBlocksPerInstance, f.changed('total-kv-blocks') ? '--total-kv-blocks' : 'the GPU KV cache of one instance (blocks)', fix, { field: '--total-kv-blocks' });
  const cpu = f.int('kv-cpu-blocks');
  checkLimit(cpu, LIMITS.kvBlocksPerInstance, '--kv-cpu-blocks', 'give a smaller --kv-cpu-blocks', { field: '--kv-cpu-blocks' });
  checkLimit(numInstances * (gpu + Math.max(cpu, 0)), LIMITS.kvBlocksPerCluster, `the cluster's KV blocks (${numInstances} instances x ${gpu + Math.max(cpu, 0)} blocks)`, 'use fewer instances or smaller KV caches (--total-kv-blocks, --kv-cpu-blocks)', { field: '--num-instances' });
}

/**
 * `--dp-placement replicas` places a fixed set of --dp engines per instance: an autoscaler would add or remove one
 * rank at a time, which upstream left undefined and refuses (#1553's decision); so does blis-ts.
 */
export function checkDpPlacementScaling(latency: ResolvedLatency, hasAutoscaler: boolean): void {
  if (latency.dpReplicas === undefined || !hasAutoscaler) return;
  throw new ConfigError('bad-flag', `--dp-placement replicas (--dp ${latency.dpReplicas}) cannot be combined with the autoscaler: it places a fixed set of ${latency.dpReplicas} engines per instance; use --dp-placement combined, or --dp 1 and let the autoscaler scale engines`, { field: '--dp-placement' });
}

/** `--horizon` as a tick count (MaxInt64 = none). */
export function horizonFlag(f: FlagValues): number {
  const v = f.bigint('horizon');
  if (v <= 0n) throw new ConfigError('bad-flag', `--horizon must be > 0, got ${v}`);
  return v >= 9007199254740992n ? MAX_INT64 : Number(v);
}
