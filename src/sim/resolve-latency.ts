/**
 * Model/hardware/latency resolution (reference `resolveLatencyConfig`, blis-core.md §9): defaults for GPU and
 * TP, backend choice, coefficients, KV auto-capacity and max-model-len with its KV cap. Pure: the caller
 * passes any user-supplied config.json / hardware JSON already parsed.
 */
import { CATALOG_HF_IDS, findCatalogModel } from '../config/catalog/models.js';
import { canonicalGpuName, exactGpuName, findGpu, GPU_NAMES } from '../config/catalog/hardware.js';
import { describeGpuPhysics, resolveGpuPhysics } from '../config/gpu-physics-derive.js';
import { MODEL_DEFAULTS, findModelDefaults, TRAINED_PHYSICS_COEFFICIENTS } from '../config/defaults.js';
import { showValue } from '../domain/errors.js';
import { closestNames, didYouMean } from '../domain/suggest.js';
import { createBlackboxModel } from '../latency/blackbox.js';
import { applyWeightPrecisionFallback, extractKVCapacityParams, parseHFConfig } from '../latency/hf-config.js';
import { calculateKVBlocks, kvCacheDtypeBytes, resolveMaxModelLen } from '../latency/kv-capacity.js';
import { createRooflineModel } from '../latency/roofline.js';
import { createTrainedPhysicsModel } from '../latency/trained-physics.js';
import { createCorrectedPhysicsModel } from '../latency/corrected-physics.js';
import { MOE_COMM_BACKEND_NAMES, isMoECommBackend } from '../latency/moe-comm.js';
import { ENGINE_PROFILES, ENGINE_PROFILE_NAMES, isEngineProfileName, type EngineProfileName } from '../latency/engine-profiles.js';
import type { LatencyProfile, ProfileRange } from '../latency/profile.js';
import type { HardwareConfig, LatencyModel, ModelConfig } from '../latency/types.js';
import type { KVCapacityParams } from '../latency/hf-config.js';
import type { InterNodeNetwork } from '../latency/network.js';
import { ConfigError } from './config-error.js';
import { ATTENTION_LAYER_MODES, type AttentionLayerMode } from '../latency/attention-layout.js';

import { LATENCY_BACKENDS, type LatencyBackend } from './latency-backends.js';

export { LATENCY_BACKENDS, type LatencyBackend };

export interface LatencyInput {
  readonly model: string;
  readonly hardware: string;
  readonly tp: number;
  readonly dp: number;
  readonly backend: string;
  readonly backendExplicit: boolean;
  readonly alpha: readonly number[];
  readonly alphaExplicit: boolean;
  readonly beta: readonly number[];
  readonly betaExplicit: boolean;
  readonly totalKvBlocks: number;
  readonly totalKvBlocksExplicit: boolean;
  readonly blockSize: number;
  readonly gpuMemoryUtilization: number;
  readonly maxModelLen: number;
  readonly maxModelLenExplicit: boolean;
  readonly moeCommBackend: string;
  readonly enableExpertParallel: boolean;
  /**
   * --dp-placement (upstream #1555/#1683, beyond the pinned reference): 'replicas' runs a MoE model's --dp ranks
   * under trained-physics as that many engines at DP 1 (per-rank KV cache), and prices --enable-expert-parallel
   * in the step time; absent or 'combined' = the reference's one engine over the combined batch.
   */
  readonly dpPlacement?: string;
  /**
   * --gpus-per-node (0 = off), --inter-node-bandwidth (GB/s per GPU, 0 = the GPU's InterNodeBwGBps) and
   * --inter-node-latency (ms per crossing collective). Absent = off.
   */
  readonly network?: NetworkFlags;
  /** A user config.json (from --model-config-folder) overriding the catalog. */
  readonly userModelConfig?: { readonly raw: unknown; readonly label: string };
  /** User GPU entries (hardware_config.json format) overriding the catalog. */
  readonly userHardware?: ReadonlyMap<string, HardwareConfig>;
  /** The --hardware-config file the user entries come from (for messages). */
  readonly userHardwareLabel?: string;
  /** HBM reserved for resident LoRA adapters (bytes): less room for auto-sized KV. Default 0. */
  readonly adapterReservedBytes?: number;
  /**
   * --semantics corrected: catalog figure fixes (L1), KV capacity over the TP group (E10), and one architecture
   * definition for roofline, trained-physics and capacity sizing (E11, L2, L3).
   */
  readonly corrected?: boolean;
  /** A fitted latency profile (--latency-profile): selects corrected-physics with its coefficients. */
  readonly profile?: { readonly profile: LatencyProfile; readonly label: string };
  /**
   * --attention-layers: 'config' reads the config.json's hybrid layout (full / sliding-window / linear layers),
   * 'full' reads every layer as full attention; absent = 'config' with corrected-physics or --semantics
   * corrected, else 'full'.
   */
  readonly attentionLayers?: AttentionLayerMode;
  /** --max-num-seqs: the running requests a hybrid model's sliding and linear layers are budgeted for (256). */
  readonly maxNumSeqs?: number;
  /** --engine-profile ('' = not given): the engine generation's software overheads under corrected-physics. */
  readonly engineProfile?: string;
  /**
   * The engine generation the step formation implies when --engine-profile is not given: `--scheduling-mode
   * prefill-first` is vLLM V0's (V1 never runs prefill-only steps), so corrected-physics takes V0's overheads
   * with it. Unlike engineProfile it never selects the latency backend.
   */
  readonly impliedEngineProfile?: string;
  /** --kv-cache-dtype: KV bytes per element (absent or 'auto' = the model's dtype). */
  readonly kvCacheDtype?: string;
  /** Speculative decoding's verify width K+1 (absent or 1 = off). */
  readonly verifyWidth?: number;
}

export interface NetworkFlags {
  readonly gpusPerNode: number;
  readonly bandwidthGBs: number;
  readonly latencyMs: number;
}

export interface ResolvedLatency {
  readonly backend: LatencyBackend;
  readonly latency: LatencyModel;
  readonly model: string;
  readonly hardware: string;
  readonly tp: number;
  readonly modelConfig: ModelConfig | null;
  readonly hardwareConfig: HardwareConfig | null;
  readonly totalKvBlocks: number;
  readonly maxModelLen: number;
  readonly warnings: readonly string[];
  /** What was resolved beyond the flags (a GPU spelling's catalog entry, the corrected-physics GPU facts): `--log info`. */
  readonly info: readonly string[];
  /** Coefficients in effect (defaults filled in), for pools that run another backend. */
  readonly alpha: readonly number[];
  readonly beta: readonly number[];
  /** KV sizing facts of the model (null for blackbox or when they cannot be read). */
  readonly kvParams: KVCapacityParams | null;
  /** A GPU by name: the user's hardware file first, then the catalog. */
  readonly findHardware: (gpu: string) => HardwareConfig | undefined;
  /**
   * The model's architecture even for blackbox (P/D sizes KV transfers from it); null when no config.json is
   * known for the model.
   */
  readonly architecture: ModelConfig | null;
  /** corrected-physics coefficients from --latency-profile ({} without one), for pools that run that backend. */
  readonly correctedCoefficients: Readonly<Record<string, number>>;
  /** The --latency-profile file and the load it was fitted on (absent without a profile or a recorded range). */
  readonly profileRange?: { readonly label: string; readonly range: ProfileRange };
  /** The inter-node fabric the latency model prices (absent = off), for pools built from the same flags. */
  readonly network?: InterNodeNetwork;
  /** Speculative decoding's verify width K+1 the models were built with (absent = off), for pools' own models. */
  readonly verifyWidth?: number;
  /**
   * Engines per logical instance under `--dp-placement replicas` (the --dp of a MoE model under trained-physics;
   * absent = 1): the latency model and `totalKvBlocks` are then those of one rank.
   */
  readonly dpReplicas?: number;
}

function allZeros(v: readonly number[]): boolean {
  return v.every((x) => x === 0);
}

/**
 * corrected-physics coefficients: the engine profile's software overheads (--engine-profile), then a fitted
 * --latency-profile's coefficients over them (a profile fitted on the user's server knows its engine best).
 */
function correctedCoefficientsOf(inp: LatencyInput): Readonly<Record<string, number>> {
  const engine = engineOf(inp);
  const base = engine !== undefined ? ENGINE_PROFILES[engine].overheads : {};
  return { ...base, ...(inp.profile?.profile.coefficients ?? {}) };
}

/** The engine profile named or implied (--engine-profile, else the one --scheduling-mode implies); undefined = none. */
function engineOf(inp: LatencyInput): EngineProfileName | undefined {
  const engine = inp.engineProfile ?? inp.impliedEngineProfile ?? '';
  return isEngineProfileName(engine) ? engine : undefined;
}

/** Whether the engine profile runs one attention call per step (vLLM V1, also when no profile is named). */
function unifiedAttentionOf(inp: LatencyInput): boolean {
  const engine = engineOf(inp);
  return engine !== undefined ? ENGINE_PROFILES[engine].unifiedAttention : true;
}

export function resolveLatency(inp: LatencyInput): ResolvedLatency {
  const warnings: string[] = [];
  const model = inp.model.toLowerCase();
  if (model === '') throw new ConfigError('missing-model', '--model is required; e.g. --model meta-llama/llama-3.1-8b-instruct');
  if (!Object.hasOwn(LATENCY_BACKENDS, inp.backend)) {
    throw new ConfigError('bad-flag', `unknown --latency-model ${showValue(inp.backend)}; valid options: ${Object.keys(LATENCY_BACKENDS).join(', ')}`);
  }
  let backend = inp.backend as LatencyBackend;
  if (inp.profile !== undefined) {
    if (inp.backendExplicit && backend !== 'corrected-physics') {
      throw new ConfigError('bad-flag', `--latency-profile ${inp.profile.label} holds corrected-physics coefficients; it cannot be combined with --latency-model ${backend} (drop one)`);
    }
    if (inp.alphaExplicit || inp.betaExplicit) throw new ConfigError('bad-flag', '--latency-profile cannot be combined with --alpha-coeffs/--beta-coeffs: the profile sets the coefficients');
    backend = 'corrected-physics';
  }
  const engine = inp.engineProfile ?? '';
  if (engine !== '') {
    if (!isEngineProfileName(engine)) throw new ConfigError('bad-flag', `unknown --engine-profile ${showValue(engine)}; valid: ${ENGINE_PROFILE_NAMES.join(', ')}`, { field: '--engine-profile' });
    // Like --latency-profile, an engine profile selects corrected-physics unless another backend is named.
    if (inp.backendExplicit && backend !== 'corrected-physics') {
      throw new ConfigError('bad-flag', `--engine-profile ${engine} needs --latency-model corrected-physics (got ${backend}, whose coefficients were fitted on one engine); drop --latency-model ${backend} or --engine-profile`, { field: '--engine-profile' });
    }
    backend = 'corrected-physics';
  }
  if (backend === 'corrected-physics' && (inp.alphaExplicit || inp.betaExplicit)) {
    throw new ConfigError('bad-flag', '--latency-model corrected-physics takes no --alpha-coeffs/--beta-coeffs: its coefficients come from the hardware catalog and a fitted profile (--latency-profile, from blis calibrate --fit)');
  }
  if (inp.alphaExplicit !== inp.betaExplicit) {
    throw new ConfigError('bad-flag', inp.alphaExplicit
      ? '--alpha-coeffs requires --beta-coeffs: give both coefficient sets'
      : '--beta-coeffs requires --alpha-coeffs: give both coefficient sets');
  }
  const checkCoeffs = (name: string, v: readonly number[]): void => {
    v.forEach((c, i) => {
      if (!Number.isFinite(c) || c < 0) throw new ConfigError('bad-flag', `--${name}[${i}] must be a finite non-negative number, got ${c}`);
    });
  };
  checkCoeffs('alpha-coeffs', inp.alpha);
  checkCoeffs('beta-coeffs', inp.beta);
  if (!inp.backendExplicit && inp.alphaExplicit && inp.betaExplicit) backend = 'trained-physics';
  const u = inp.gpuMemoryUtilization;
  if (!(u > 0 && u <= 1)) throw new ConfigError('bad-flag', `--gpu-memory-utilization must be a finite value in (0, 1.0], got ${u}`);
  if (inp.blockSize <= 0) throw new ConfigError('bad-flag', `--block-size-in-tokens must be > 0, got ${inp.blockSize}`);
  if (inp.maxModelLen < 0) throw new ConfigError('bad-flag', `--max-model-len must be >= 0, got ${inp.maxModelLen}`);
  if (inp.totalKvBlocksExplicit && inp.totalKvBlocks <= 0) {
    throw new ConfigError('bad-flag', `--total-kv-blocks must be > 0, got ${inp.totalKvBlocks}; give the number of KV blocks per instance, or leave it out to size the cache from GPU memory`);
  }
  if (inp.dp < 1) throw new ConfigError('bad-flag', `--dp must be >= 1, got ${inp.dp}`);
  const placement = inp.dpPlacement ?? 'combined';
  if (placement !== 'combined' && placement !== 'replicas') {
    throw new ConfigError('bad-flag', `unknown --dp-placement ${showValue(placement)}; valid: combined (the reference: one engine over the combined batch), replicas (one engine per DP rank)`, { field: '--dp-placement' });
  }
  const replicasMode = placement === 'replicas';

  if (backend === 'blackbox') {
    if ((inp.network?.gpusPerNode ?? 0) > 0) throw new ConfigError('bad-flag', '--gpus-per-node has no effect with --latency-model blackbox (its coefficients have no communication term); use trained-physics, roofline or corrected-physics', { field: '--gpus-per-node' });
    if (!inp.betaExplicit) throw new ConfigError('bad-flag', '--latency-model blackbox needs --alpha-coeffs and --beta-coeffs (β0 + β1·prefill tokens + β2·decode tokens)');
    const latency = createBlackboxModel({ alpha: inp.alpha, beta: inp.beta, ...widthOpt(inp) });
    return {
      backend, latency, model, hardware: inp.hardware, tp: inp.tp, modelConfig: null, hardwareConfig: null,
      totalKvBlocks: inp.totalKvBlocks, maxModelLen: inp.maxModelLen, warnings, info: [],
      alpha: inp.alpha, beta: inp.beta, kvParams: null, findHardware: hardwareFinder(inp), architecture: architectureOf(inp, model), correctedCoefficients: correctedCoefficientsOf(inp),
    };
  }

  if (inp.tp < 0 || !Number.isInteger(inp.tp)) throw new ConfigError('bad-flag', `--tp must be >= 1, got ${inp.tp}; give the tensor parallelism degree (or leave it out for the model's default)`);
  let gpu = inp.hardware;
  let tp = inp.tp;
  const defs = findModelDefaults(model);
  if (!defs && !inp.userModelConfig && !findCatalogModel(model)) {
    // Before the hardware/TP defaults are missed: a typo would otherwise read as "requires --hardware and --tp".
    const known = new Set([...Object.keys(MODEL_DEFAULTS), ...CATALOG_HF_IDS.keys()]);
    const near = closestNames(model, known, Math.max(2, Math.floor(model.length / 12)));
    throw new ConfigError('unknown-model', `--model: unknown model ${showValue(model)}; ${didYouMean(near)}` +
      'use a model of the embedded catalog, or pass --model-config-folder <dir> holding its config.json (HuggingFace format) with --hardware and --tp');
  }
  if (defs) {
    if (tp === 0 && defs.tensorParallelism > 0) {
      tp = defs.tensorParallelism;
      warnings.push(`using default tp=${tp} for model=${model}`);
    }
    if (gpu === '' && defs.gpu !== '') {
      gpu = defs.gpu;
      warnings.push(`using default GPU=${gpu} for model=${model}`);
    }
  }
  const missing: string[] = [];
  if (gpu === '') missing.push('--hardware (GPU type)');
  if (tp <= 0) missing.push('--tp (tensor parallelism)');
  if (missing.length > 0) {
    throw new ConfigError('missing-flag', `--latency-model ${backend} requires ${missing.join(' and ')}: no defaults are known for model=${model}; provide them explicitly`);
  }
  let alpha = inp.alpha;
  let beta = inp.beta;
  if (backend === 'corrected-physics') {
    // Coefficients come from the profile (or the model's defaults), not from --alpha/--beta.
  } else if (backend === 'roofline') {
    if (inp.backendExplicit && inp.betaExplicit) {
      throw new ConfigError('bad-flag', '--alpha-coeffs/--beta-coeffs cannot be used with --latency-model roofline (it computes step time analytically); use --latency-model trained-physics for coefficient-based estimation');
    }
  } else {
    if (!inp.betaExplicit) beta = TRAINED_PHYSICS_COEFFICIENTS.beta;
    if (!inp.alphaExplicit) alpha = TRAINED_PHYSICS_COEFFICIENTS.alpha;
    if (!inp.betaExplicit && (beta.length < 7 || allZeros(beta))) {
      throw new ConfigError('bad-flag', '--latency-model trained-physics: no trained-physics coefficients available; provide --beta-coeffs');
    }
  }

  const info: string[] = [];
  let raw: unknown;
  let label: string;
  if (inp.userModelConfig) {
    raw = inp.userModelConfig.raw;
    label = inp.userModelConfig.label;
  } else {
    const entry = findCatalogModel(model);
    if (!entry) {
      throw new ConfigError('unknown-model', `no model config for ${showValue(model)}: it is not in the embedded catalog; pass --model-config-folder <dir> holding config.json (HuggingFace format)`);
    }
    raw = entry.config;
    label = `catalog:${model}`;
  }
  // corrected-physics and --semantics corrected read each config.json family as its model class does (OPT,
  // GPT-NeoX, Falcon, Qwen-MoE/DeepSeek layer placement); the reference's parser reads the common keys only.
  const families = backend === 'corrected-physics' || inp.corrected === true;
  const parseOpts = families ? { families: true } : {};
  const mc = withKvCacheDtype(applyWeightPrecisionFallback(parseHFConfig(raw, label, { ...parseOpts, ...(hybridLayers(inp, families) ? { attentionLayers: true } : {}) }), model), inp.kvCacheDtype);
  if (mc.attention !== undefined) {
    const a = mc.attention;
    info.push(`hybrid attention (${a.source}): ${a.full} full, ${a.sliding} sliding-window${a.sliding > 0 ? ` (${a.window} tokens)` : ''}, ${a.linear} linear, ${a.none} MLP-only of ${mc.numLayers} layers`);
  }
  const userEntry = inp.userHardware?.get(gpu);
  const canonical = canonicalGpuName(gpu);
  if (userEntry === undefined && canonical !== undefined && exactGpuName(gpu) === undefined) {
    info.push(`--hardware ${gpu} is the catalog GPU ${canonical}`);
    gpu = canonical;
  }
  const found = userEntry ?? findGpu(gpu, inp.corrected === true);
  if (!found) {
    const known = [...new Set([...GPU_NAMES, ...(inp.userHardware?.keys() ?? [])])].map((n) => (/^[\x21-\x7e]+$/.test(n) ? n : showValue(n))).join(', ');
    throw new ConfigError('unknown-hardware', `--hardware ${showValue(gpu)} is not a known GPU (known: ${known}); add it with --hardware-config <file.json>`);
  }
  let hw: HardwareConfig = found;
  if (backend === 'corrected-physics') {
    const gpus = tp * (mc.numLocalExperts >= 2 ? inp.dp : 1);
    const r = withGpuPhysics(gpu, found, canonical, gpus, inp.userHardwareLabel ?? '--hardware-config');
    hw = r.hw;
    info.push(r.info);
  }

  let totalKvBlocks = inp.totalKvBlocks;
  let kvParams: KVCapacityParams | null = null;
  try {
    kvParams = extractKVCapacityParams(raw, label, parseOpts);
  } catch (e) {
    if (!inp.totalKvBlocksExplicit) warnings.push(`could not extract KV capacity params: ${(e as Error).message}; using total-kv-blocks=${totalKvBlocks}`);
  }
  if (inp.totalKvBlocksExplicit && (inp.adapterReservedBytes ?? 0) > 0) {
    warnings.push(`--total-kv-blocks set explicitly (${totalKvBlocks} blocks); the LoRA adapter HBM reservation (${((inp.adapterReservedBytes ?? 0) / 2 ** 30).toFixed(2)} GiB) is not subtracted from it — omit --total-kv-blocks to let auto-sizing subtract it`);
  }
  // EP-aware capacity (upstream #1656): under --enable-expert-parallel each DP rank holds tp/(tp·dp) of the routed
  // experts. The pinned reference charges every rank all of them: kept under --semantics reference (R-row E-EP).
  // --dp-placement replicas follows upstream after #1656 too, whatever --semantics says.
  const epKv = inp.enableExpertParallel && (inp.corrected === true || backend === 'corrected-physics' || replicasMode) ? { expertParallelSize: tp * inp.dp } : {};
  // DP as placement (upstream #1555): each of the --dp ranks of a MoE model is its own engine with one rank's KV
  // cache (the combined total / dp, which is what dp 1 gives), its experts still spread over the logical group.
  const placed = replicasMode && backend === 'trained-physics' && mc.numLocalExperts >= 2 && inp.dp > 1;
  if (!inp.totalKvBlocksExplicit) {
    const params = kvParams;
    if (params) {
      const reserved = Math.trunc(inp.adapterReservedBytes ?? 0);
      // A bad --max-num-seqs is the engine's to refuse, under its own name.
      const seqs = inp.maxNumSeqs !== undefined && Number.isInteger(inp.maxNumSeqs) && inp.maxNumSeqs > 0 ? { maxNumSeqs: inp.maxNumSeqs } : {};
      if (hw.MemoryGiB <= 0) warnings.push(`GPU memory capacity unknown for ${gpu}; using total-kv-blocks=${totalKvBlocks}`);
      // corrected-physics: each DP rank is its own engine with its own KV cache, sized for its tp GPUs.
      else totalKvBlocks = backend === 'corrected-physics'
        ? calculateKVBlocks(mc, hw, params, { tp, dp: 1, blockSize: inp.blockSize, gpuMemoryUtilization: u, perGpuBlocks: true, adapterReservedBytes: reserved, ...seqs, ...parseOpts, ...(inp.corrected === true ? { corrected: true } : {}), ...epKv })
        : calculateKVBlocks(mc, hw, params, { tp, dp: placed ? 1 : inp.dp, blockSize: inp.blockSize, gpuMemoryUtilization: u, adapterReservedBytes: reserved, ...seqs, ...parseOpts, ...(inp.corrected === true ? { corrected: true } : {}), ...epKv });
    }
  }
  const mml = resolveMaxModelLen(mc, totalKvBlocks, inp.blockSize, inp.maxModelLenExplicit ? inp.maxModelLen : undefined);
  warnings.push(...mml.warnings);
  const isMoE = mc.numLocalExperts >= 2;
  if ((inp.dp > 1 || inp.enableExpertParallel) && backend !== 'trained-physics' && backend !== 'corrected-physics') {
    throw new ConfigError('bad-flag', `--dp > 1 and --enable-expert-parallel require --latency-model trained-physics or corrected-physics (got --dp=${inp.dp}, --latency-model ${backend})`);
  }
  if (inp.dp > 1 && !isMoE && backend !== 'corrected-physics') throw new ConfigError('bad-flag', `--dp > 1 is only supported for MoE models (got --dp=${inp.dp} for a dense model); use --num-instances for replicas, or --latency-model corrected-physics (DP ranks as independent engines)`);
  if (inp.enableExpertParallel && !isMoE) throw new ConfigError('bad-flag', `--enable-expert-parallel requires a MoE model (got dense model ${showValue(model)})`);
  if (inp.moeCommBackend !== '' && !isMoECommBackend(inp.moeCommBackend)) {
    throw new ConfigError('bad-flag', `unknown --moe-comm-backend ${showValue(inp.moeCommBackend)}; valid: ${MOE_COMM_BACKEND_NAMES.join(', ')}`, { field: '--moe-comm-backend' });
  }
  if (inp.moeCommBackend !== '' && backend !== 'trained-physics' && backend !== 'corrected-physics') {
    throw new ConfigError('bad-flag', `--moe-comm-backend requires --latency-model trained-physics or corrected-physics (got ${backend})`);
  }
  if (inp.profile !== undefined) warnings.push(...profileMismatch(inp.profile, model, gpu, tp));
  const network = resolveNetwork(inp.network, hw, gpu, tp);
  const net = network === undefined ? {} : { network };
  const latency = backend === 'roofline'
    ? createRooflineModel({ model: mc, hardware: hw, tp, alpha, corrected: inp.corrected === true, ...net, ...widthOpt(inp) })
    : backend === 'corrected-physics'
      ? createCorrectedPhysicsModel({ model: mc, hardware: hw, tp, dp: inp.dp, expertParallel: inp.enableExpertParallel, ...(inp.moeCommBackend !== '' ? { moeCommBackend: inp.moeCommBackend } : {}), unifiedAttention: unifiedAttentionOf(inp), coefficients: correctedCoefficientsOf(inp), ...net, ...widthOpt(inp) })
      : createTrainedPhysicsModel({
        model: mc, hardware: hw, tp, dp: placed ? 1 : inp.dp, moeCommBackend: inp.moeCommBackend, alpha, beta, corrected: inp.corrected === true, ...net, ...widthOpt(inp),
        ...(replicasMode && inp.enableExpertParallel ? { expertParallel: { groupDp: inp.dp } } : {}),
      });
  if (placed) {
    info.push(`DP placement: --dp ${inp.dp} (MoE) runs ${inp.dp} engines per instance, each at DP 1 with ${totalKvBlocks} KV blocks` +
      (inp.enableExpertParallel ? `; experts spread whole over the tp·dp = ${tp * inp.dp} GPUs of the expert-parallel group (dispatch/combine per MoE layer)` : ''));
    if (!inp.enableExpertParallel && inp.moeCommBackend !== '') {
      warnings.push(`--moe-comm-backend ${inp.moeCommBackend} has no effect under --dp-placement replicas without --enable-expert-parallel: each engine runs at DP 1, where the MoE layers all-reduce over tp instead of dispatching`);
    }
  }
  return {
    backend, latency, model, hardware: gpu, tp, modelConfig: mc, hardwareConfig: hw, totalKvBlocks, maxModelLen: mml.maxModelLen, warnings, info,
    alpha, beta, kvParams, findHardware: hardwareFinder(inp), architecture: mc,
    correctedCoefficients: correctedCoefficientsOf(inp),
    ...widthOpt(inp),
    ...(inp.profile?.profile.range !== undefined ? { profileRange: { label: inp.profile.label, range: inp.profile.profile.range } } : {}),
    ...net,
    ...(placed ? { dpReplicas: inp.dp } : {}),
  };
}

/**
 * The inter-node fabric from --gpus-per-node, --inter-node-bandwidth and --inter-node-latency (upstream
 * NetworkConfig, #1537): undefined when --gpus-per-node is 0. Bandwidth defaults to the GPU's InterNodeBwGBps.
 */
export function resolveNetwork(flags: NetworkFlags | undefined, hw: HardwareConfig, gpu: string, tp: number): InterNodeNetwork | undefined {
  if (flags === undefined) return undefined;
  const { gpusPerNode: gpn, bandwidthGBs: bw, latencyMs: lat } = flags;
  if (!Number.isInteger(gpn) || gpn < 0) throw new ConfigError('bad-flag', `--gpus-per-node must be an integer >= 0 (0 = off), got ${gpn}`, { field: '--gpus-per-node' });
  if (!(Number.isFinite(bw) && bw >= 0)) throw new ConfigError('bad-flag', `--inter-node-bandwidth must be a finite number of GB/s >= 0 (0 = the GPU's own), got ${bw}`, { field: '--inter-node-bandwidth' });
  if (!(Number.isFinite(lat) && lat >= 0)) throw new ConfigError('bad-flag', `--inter-node-latency must be a finite number of ms >= 0, got ${lat}`, { field: '--inter-node-latency' });
  if (gpn === 0) {
    if (bw > 0 || lat > 0) {
      throw new ConfigError('bad-flag', `--inter-node-bandwidth and --inter-node-latency have no effect without --gpus-per-node (got bandwidth ${bw} GB/s, latency ${lat} ms); set --gpus-per-node to the GPUs of one node`, { field: bw > 0 ? '--inter-node-bandwidth' : '--inter-node-latency' });
    }
    return undefined;
  }
  if (tp > gpn && tp % gpn !== 0) {
    throw new ConfigError('bad-flag', `--tp ${tp} spans nodes of --gpus-per-node ${gpn} GPUs but is not a multiple of it; a TP group larger than a node fills whole nodes: use a --tp that is a multiple of --gpus-per-node, or a larger --gpus-per-node`, { field: '--tp' });
  }
  const bandwidth = bw > 0 ? bw : hw.InterNodeBwGBps ?? 0;
  if (!(bandwidth > 0)) {
    throw new ConfigError('bad-flag', `--gpus-per-node needs an inter-node bandwidth: GPU ${showValue(gpu)} has no InterNodeBwGBps; give --inter-node-bandwidth <GB/s per GPU> (or InterNodeBwGBps in its --hardware-config entry)`, { field: '--inter-node-bandwidth' });
  }
  return { gpusPerNode: gpn, bandwidthGBs: bandwidth, latencyUs: lat * 1000 };
}

/**
 * GPU `gpu` (entry `hw`, catalog name `canonical` if any) with the corrected-physics facts of that very GPU,
 * for a deployment of `gpus` GPUs; a ConfigError naming the missing fields when they can be neither found nor
 * derived (never another GPU's physics).
 */
export function withGpuPhysics(gpu: string, hw: HardwareConfig, canonical: string | undefined, gpus: number, fileLabel: string): { hw: HardwareConfig; info: string } {
  const r = resolveGpuPhysics(hw.physics, hw.userPhysics, canonical, gpus);
  if (!r.ok) {
    throw new ConfigError('missing-gpu-physics', `${fileLabel}: GPU ${showValue(gpu)} is not a catalog GPU and corrected-physics cannot derive its interconnect and kernel efficiencies; add to its entry ${r.missing.map((m, i) => `(${i + 1}) ${m}`).join('; ')} ` +
      `(docs/usage.md, "GPU physics"), or name it as a catalog GPU (${GPU_NAMES.join(', ')})`, { field: r.missing.join(', ') });
  }
  return { hw: { ...hw, physics: r.physics }, info: `corrected-physics GPU ${gpu}: ${r.source}: ${describeGpuPhysics(r.physics)}` };
}

function hardwareFinder(inp: LatencyInput): (gpu: string) => HardwareConfig | undefined {
  return (gpu) => inp.userHardware?.get(gpu) ?? findGpu(gpu, inp.corrected === true);
}

/** The model's parsed config.json (user folder, else catalog), or null when neither knows it. */
function architectureOf(inp: LatencyInput, model: string): ModelConfig | null {
  const raw = inp.userModelConfig?.raw ?? findCatalogModel(model)?.config;
  if (raw === undefined) return null;
  const corrected = inp.corrected === true;
  const opts = { ...(corrected ? { families: true } : {}), ...(hybridLayers(inp, corrected) ? { attentionLayers: true } : {}) };
  return withKvCacheDtype(applyWeightPrecisionFallback(parseHFConfig(raw, inp.userModelConfig?.label ?? `catalog:${model}`, opts), model), inp.kvCacheDtype);
}

/** Whether --attention-layers reads the config's hybrid layout (`byDefault`: corrected-physics or semantics). */
function hybridLayers(inp: LatencyInput, byDefault: boolean): boolean {
  const mode = inp.attentionLayers;
  if (mode !== undefined && !(ATTENTION_LAYER_MODES as readonly string[]).includes(mode)) {
    throw new ConfigError('bad-flag', `--attention-layers must be ${ATTENTION_LAYER_MODES.join(' or ')}, got ${showValue(mode)}`, { field: '--attention-layers' });
  }
  return mode === undefined ? byDefault : mode === 'config';
}

/** The verify-width option of a latency model: absent when speculative decoding is off (the models' default 1). */
function widthOpt(inp: LatencyInput): { verifyWidth?: number } {
  return inp.verifyWidth !== undefined && inp.verifyWidth > 1 ? { verifyWidth: inp.verifyWidth } : {};
}

/** `mc` with --kv-cache-dtype's KV element size; unchanged for `auto` (or none). */
export function withKvCacheDtype(mc: ModelConfig, dtype: string | undefined): ModelConfig {
  const bytes = dtype === undefined ? undefined : kvCacheDtypeBytes(dtype);
  return bytes === undefined ? mc : { ...mc, kvBytesPerElement: bytes };
}

/**
 * A profile's coefficients are multipliers on physics and software overheads, so they carry over to another
 * model, GPU count or GPU of the same class with some error: warn, do not refuse.
 */
function profileMismatch(p: { readonly profile: LatencyProfile; readonly label: string }, model: string, gpu: string, tp: number): string[] {
  const out: string[] = [];
  const { profile } = p;
  if (profile.model !== '' && profile.model.toLowerCase() !== model) out.push(`--latency-profile ${p.label} was fitted on model ${profile.model}, not ${model}; its multipliers may not carry over`);
  if (profile.hardware !== '' && profile.hardware !== gpu) out.push(`--latency-profile ${p.label} was fitted on ${profile.hardware}, not ${gpu}; its multipliers may not carry over`);
  if (profile.tp > 0 && profile.tp !== tp) out.push(`--latency-profile ${p.label} was fitted at tp=${profile.tp}, not tp=${tp}; communication terms may not carry over`);
  return out;
}

