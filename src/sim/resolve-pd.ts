/**
 * The prefill/decode flags -> a resolved {@link PdEngineSetup} (reference cmd/root.go PD validation, per-pool
 * overrides and per-pool KV auto-capacity; blis-cluster.md §8.1). Quirks kept for parity: the per-pool
 * overrides (TP, hardware, latency model, max-model-len) apply only with --prefill-instances > 0; a pool whose
 * TP or GPU differs from the global one gets its KV capacity recomputed for its own TP/GPU even when
 * --total-kv-blocks was given (corrected semantics keep the given size), and its max-model-len capped at that capacity; shared-role pods take the decode
 * overrides; KV transfers are sized with the prefill pool's TP; a pool's GPU does not change its step times.
 */
import { parseScorerFlag } from '../policy/scorer-flag.js';
import { DEFAULT_POLICY_NAMES } from '../policy/names.js';
import { poolTopologyError, rolesFromCounts } from '../cluster/pd/pools.js';
import { isDisaggregationDecider, DISAGGREGATION_DECIDERS } from '../routing/disaggregation.js';
import { ENCODE_DECIDERS, isEncodeDecider, type EncodeDeciderName } from '../routing/encode-decider.js';
import { validateScorerConfigs, type ScorerConfig } from '../routing/scorer-config.js';
import { calculateKVBlocks, kvBytesPerToken } from '../latency/kv-capacity.js';
import { createBlackboxModel } from '../latency/blackbox.js';
import { createRooflineModel } from '../latency/roofline.js';
import { createTrainedPhysicsModel } from '../latency/trained-physics.js';
import { createCorrectedPhysicsModel } from '../latency/corrected-physics.js';
import type { HardwareConfig, LatencyModel } from '../latency/types.js';
import { canonicalGpuName } from '../config/catalog/hardware.js';
import { PD_KV_OWNERSHIPS, PD_TRANSFER_GRANULARITIES, PD_TRANSFER_MODES, type PdBeyondConfig } from '../cluster/pd/beyond.js';
import { ConfigError } from './config-error.js';
import type { InstanceOverrides, PdEngineSetup } from './setup.js';
import type { FlagValues } from './options.js';
import { LATENCY_BACKENDS, withGpuPhysics, type ResolvedLatency } from './resolve-latency.js';

/** The global engine facts the pools start from. */
export interface PdGlobals {
  readonly numInstances: number;
  readonly blockSize: number;
  readonly dp: number;
  readonly gpuMemoryUtilization: number;
  readonly moeCommBackend: string;
  /** The LoRA adapter slots' HBM, subtracted from a pool's auto-sized KV capacity (as from the global one). */
  readonly adapterReservedBytes?: number;
  /** --semantics corrected: a pool's recomputed KV capacity is sized over its TP group (E10). */
  readonly corrected?: boolean;
}

interface PoolOverrideFlags {
  tp: number | null;
  gpu: string | null;
  backend: string | null;
  maxModelLen: number | null;
  totalKvBlocks: number | null;
}

const PER_POOL_FLAGS = ['tp', 'hardware', 'latency-model', 'max-model-len'] as const;

function bad(message: string): ConfigError {
  return new ConfigError('bad-flag', message);
}

export function resolvePdFlags(f: FlagValues, lat: ResolvedLatency, g: PdGlobals, warn: (m: string) => void): PdEngineSetup | null {
  const prefill = f.int('prefill-instances');
  const decode = f.int('decode-instances');
  const shared = f.int('prefill-decode-instances');
  if (prefill < 0) throw bad(`--prefill-instances must be >= 0, got ${prefill}`);
  if (decode < 0) throw bad(`--decode-instances must be >= 0, got ${decode}`);
  if (shared < 0) throw bad(`--prefill-decode-instances must be >= 0, got ${shared}`);
  const decider = f.str('pd-decider');
  if (!isDisaggregationDecider(decider)) throw bad(`Unknown PD decider "${decider}". Valid: ${DISAGGREGATION_DECIDERS.join(', ')}; set --pd-decider`);
  const encode = f.int('encode-instances');
  const topo = poolTopologyError(prefill, decode, shared, g.numInstances, encode);
  if (topo !== null) throw bad(`Invalid PD pool topology: ${topo}`);
  const bandwidth = f.float('pd-transfer-bandwidth');
  const baseLatency = f.float('pd-transfer-base-latency');
  if (prefill > 0) {
    if (!(bandwidth > 0)) throw bad(`--pd-transfer-bandwidth must be a finite positive number, got ${bandwidth}`);
    if (!(baseLatency >= 0)) throw bad(`--pd-transfer-base-latency must be a finite non-negative number, got ${baseLatency}`);
  }
  const threshold = f.int('pd-prefix-threshold');
  if (decider === 'prefix-threshold' && threshold < 0) throw bad(`--pd-prefix-threshold must be >= 0, got ${threshold}`);
  if (decider !== 'prefix-threshold' && f.changed('pd-prefix-threshold')) warn(`--pd-prefix-threshold=${threshold} is ignored when --pd-decider="${decider}" (only applies to the prefix-threshold decider)`);
  if (decider !== 'never' && prefill === 0) warn(`--pd-decider="${decider}" has no effect because --prefill-instances=0 (disaggregation is disabled); set --prefill-instances and --decode-instances to enable`);
  const encodeDecider = resolveEncodeDecider(f, encode, warn);
  const encodeSet = ['encode-tp', 'encode-hardware'].find((n) => f.has(n) && f.changed(n));
  if (encodeSet !== undefined && encode === 0) throw bad(`--${encodeSet} needs an encode pool: set --encode-instances (or drop --${encodeSet})`);
  const perPoolChanged = PER_POOL_FLAGS.some((n) => f.changed(`prefill-${n}`) || f.changed(`decode-${n}`));
  if (perPoolChanged && prefill === 0) warn('per-pool hardware flags (--prefill-tp, --decode-tp, etc.) have no effect when --prefill-instances=0 (disaggregation is disabled)');
  const contention = f.bool('pd-transfer-contention');
  if (prefill === 0 && decode === 0 && shared === 0) {
    const beyond = pdBeyondFlags(f);
    const set = ['pd-kv-ownership', 'pd-transfer-mode', 'pd-transfer-granularity', 'pd-backpressure-threshold'].filter((n) => f.changed(n));
    if (set.length > 0 && beyond !== null) throw bad(`--${set[0] as string} needs P/D pools: set --prefill-instances and --decode-instances (or --prefill-decode-instances)`);
    if (contention) throw bad('--pd-transfer-contention requires PD disaggregation (--prefill-instances, --decode-instances, or --prefill-decode-instances must be set)');
    return null;
  }

  const arch = lat.architecture;
  if (arch === null) throw bad(`PD disaggregation requires model architecture for KV transfer sizing: no config.json is known for "${lat.model}"; pass --model-config-folder`);
  const prefillO = prefill > 0 ? overrideFlags(f, 'prefill') : emptyOverrides();
  const decodeO = prefill > 0 ? overrideFlags(f, 'decode') : emptyOverrides();
  const encodeO = encode > 0 ? encodeOverrideFlags(f) : emptyOverrides();
  if (lat.backend === 'roofline' || lat.backend === 'trained-physics') {
    if (prefill > 0) {
      autoCapacity(f, lat, g, 'prefill', prefillO, warn);
      autoCapacity(f, lat, g, 'decode', decodeO, warn);
    }
    if (encode > 0) autoCapacity(f, lat, g, 'encode', encodeO, warn);
  }
  const prefillTp = prefillO.tp ?? lat.tp;
  if (prefillTp <= 0) throw bad('PD disaggregation requires prefill TP > 0 (set --tp or --prefill-tp)');
  let bytesPerToken: number;
  try {
    bytesPerToken = kvBytesPerToken(arch, prefillTp);
  } catch (e) {
    throw bad(`PD disaggregation requires a valid model config for KV transfer sizing: ${(e as Error).message}`);
  }
  return {
    beyond: pdBeyondFlags(f),
    roles: rolesFromCounts(g.numInstances, prefill, decode, shared, encode),
    decider,
    encodeDecider,
    prefixThreshold: threshold,
    transfer: { bandwidthGBps: bandwidth, baseLatencyMs: baseLatency, contention, kvBytesPerToken: bytesPerToken, blockSize: g.blockSize },
    prefillScorers: poolScorers(f, 'prefill-routing-scorers'),
    decodeScorers: poolScorers(f, 'decode-routing-scorers'),
    prefill: instanceOverrides(lat, g, prefillO, '--prefill'),
    decode: instanceOverrides(lat, g, decodeO, '--decode'),
    encode: instanceOverrides(lat, g, encodeO, '--encode'),
  };
}

/**
 * The E/P/D flags, checked in the reference's order (the topology check has already refused a negative count
 * or an encode pool without a decode-capable pool): null when the encode stage is off (no encode pool).
 */
export function resolveEncodeDecider(f: FlagValues, encode: number, warn: (m: string) => void): EncodeDeciderName | null {
  if (encode < 0) throw bad(`--encode-instances must be >= 0, got ${encode}`);
  const name = f.str('encode-decider');
  if (!isEncodeDecider(name)) throw bad(`Unknown encode decider "${name}". Valid: ${[...ENCODE_DECIDERS].sort().join(', ')}; set --encode-decider`);
  if (name !== 'never' && encode === 0) throw bad(`--encode-decider="${name}" requires --encode-instances > 0 (the encode pool is disabled)`);
  if (encode > 0 && name === 'never') warn(`--encode-decider="${name}" has no effect because --encode-instances=${encode} but the decider never encodes; set --encode-decider=multimodal or always to activate the encode pool`);
  return encode > 0 ? name : null;
}

/** The beyond-reference P/D options (defaults: the reference's behaviour). */
export function pdBeyondFlags(f: FlagValues): PdBeyondConfig {
  const pick = <T extends string>(name: string, values: readonly T[]): T => {
    const v = f.str(name);
    if (!(values as readonly string[]).includes(v)) throw bad(`--${name} must be one of ${values.join(', ')}, got "${v}"`);
    return v as T;
  };
  const chunkBlocks = f.int('pd-transfer-chunk-blocks');
  if (chunkBlocks < 1) throw bad(`--pd-transfer-chunk-blocks must be >= 1, got ${chunkBlocks}`);
  const backpressure = f.int('pd-backpressure-threshold');
  if (backpressure < 0) throw bad(`--pd-backpressure-threshold must be >= 0 (0 = off), got ${backpressure}`);
  const retryUs = f.int('pd-backpressure-retry-us');
  if (retryUs < 1) throw bad(`--pd-backpressure-retry-us must be >= 1, got ${retryUs}`);
  // Corrected semantics (D6): a block is owned once unless --pd-kv-ownership says otherwise.
  const corrected = f.has('semantics') && f.str('semantics') === 'corrected';
  return {
    ownership: corrected && !f.changed('pd-kv-ownership') ? 'single' : pick('pd-kv-ownership', PD_KV_OWNERSHIPS),
    mode: pick('pd-transfer-mode', PD_TRANSFER_MODES),
    granularity: pick('pd-transfer-granularity', PD_TRANSFER_GRANULARITIES),
    chunkBlocks,
    backpressure,
    retryUs,
  };
}

function emptyOverrides(): PoolOverrideFlags {
  return { tp: null, gpu: null, backend: null, maxModelLen: null, totalKvBlocks: null };
}

function overrideFlags(f: FlagValues, pool: 'prefill' | 'decode'): PoolOverrideFlags {
  const o = emptyOverrides();
  if (f.changed(`${pool}-tp`)) {
    const tp = f.int(`${pool}-tp`);
    if (tp <= 0) throw bad(`--${pool}-tp must be > 0, got ${tp}`);
    o.tp = tp;
  }
  if (f.changed(`${pool}-hardware`)) o.gpu = f.str(`${pool}-hardware`);
  if (f.changed(`${pool}-latency-model`)) {
    const b = f.str(`${pool}-latency-model`);
    if (!Object.hasOwn(LATENCY_BACKENDS, b)) throw bad(`--${pool}-latency-model "${b}" is not a recognized backend; valid: ${Object.keys(LATENCY_BACKENDS).join(', ')}`);
    o.backend = b;
  }
  if (f.changed(`${pool}-max-model-len`)) {
    const mml = f.int(`${pool}-max-model-len`);
    if (mml <= 0) throw bad(`--${pool}-max-model-len must be > 0 when set, got ${mml}`);
    o.maxModelLen = mml;
  }
  return o;
}

/** The encode pool's overrides (beyond the reference: TP and GPU only). */
function encodeOverrideFlags(f: FlagValues): PoolOverrideFlags {
  const o = emptyOverrides();
  if (f.has('encode-tp') && f.changed('encode-tp')) {
    const tp = f.int('encode-tp');
    if (tp <= 0) throw bad(`--encode-tp must be > 0, got ${tp}`);
    o.tp = tp;
  }
  if (f.has('encode-hardware') && f.changed('encode-hardware')) o.gpu = f.str('encode-hardware');
  return o;
}

/** Per-pool KV capacity for a pool whose TP or GPU differs from the global one (reference per-pool auto-calc). */
function autoCapacity(f: FlagValues, lat: ResolvedLatency, g: PdGlobals, pool: 'prefill' | 'decode' | 'encode', o: PoolOverrideFlags, warn: (m: string) => void): void {
  const params = lat.kvParams;
  const arch = lat.architecture;
  if (params === null || arch === null) {
    if (pool === 'prefill') warn(`per-pool KV auto-calculation skipped (could not extract model KV params); both pools will use global total-kv-blocks=${lat.totalKvBlocks}`);
    return;
  }
  const tp = f.changed(`${pool}-tp`) ? f.int(`${pool}-tp`) : lat.tp;
  const gpu = f.changed(`${pool}-hardware`) ? f.str(`${pool}-hardware`) : lat.hardware;
  if (tp === lat.tp && gpu === lat.hardware) return;
  // Corrected semantics (D2): an explicit --total-kv-blocks is every pool's size, as it is the cluster's.
  if (g.corrected === true && f.changed('total-kv-blocks')) return;
  const hw = lat.findHardware(gpu);
  if (hw === undefined) {
    warn(`--${pool}-hardware: failed to load hardware config for GPU "${gpu}"; ${pool} pool will use global total-kv-blocks=${lat.totalKvBlocks}`);
    return;
  }
  if (!(hw.MemoryGiB > 0)) {
    warn(`--${pool}-hardware: GPU memory capacity not available for "${gpu}" in hardware config; ${pool} pool will use global total-kv-blocks=${lat.totalKvBlocks}`);
    return;
  }
  let blocks: number;
  try {
    blocks = calculateKVBlocks(arch, hw, params, { tp, dp: g.dp, blockSize: g.blockSize, gpuMemoryUtilization: g.gpuMemoryUtilization, adapterReservedBytes: g.adapterReservedBytes ?? 0, ...(g.corrected === true ? { corrected: true } : {}) });
  } catch (e) {
    throw bad(`--${pool}-tp/--${pool}-hardware: KV capacity auto-calculation failed for ${pool} pool: ${(e as Error).message}`);
  }
  o.totalKvBlocks = blocks;
  if (pool === 'encode' || !f.changed(`${pool}-max-model-len`)) {
    const feasible = blocks * g.blockSize;
    if (feasible < lat.maxModelLen) o.maxModelLen = feasible;
  }
}

export function poolScorers(f: FlagValues, flag: string): readonly ScorerConfig[] | null {
  const parsed = parseScorerFlag(f.str(flag), DEFAULT_POLICY_NAMES.scorers, `--${flag}`);
  return parsed === null ? null : validateScorerConfigs(parsed, flag);
}

/** The pool's instance setup, or null when it runs the global one (no override given). */
function instanceOverrides(lat: ResolvedLatency, g: PdGlobals, o: PoolOverrideFlags, flagPrefix: string): InstanceOverrides | null {
  if (o.tp === null && o.gpu === null && o.backend === null && o.maxModelLen === null && o.totalKvBlocks === null) return null;
  const tp = o.tp ?? lat.tp;
  const gpu = o.gpu ?? lat.hardware;
  const backend = o.backend ?? lat.backend;
  let latency: LatencyModel = lat.latency;
  // The reference's pool GPU only labels it and sizes its KV: its step times keep the global GPU's coefficients
  // (the hardware calibration is not overridden). Corrected semantics time the pool on its own GPU (D1).
  const ownGpu = g.corrected === true && gpu !== lat.hardware && backend !== 'blackbox';
  if (tp !== lat.tp || backend !== lat.backend || ownGpu) latency = poolLatency(lat, g, backend, tp, flagPrefix, ownGpu ? gpu : null);
  return { latency, kvTotalBlocks: o.totalKvBlocks ?? lat.totalKvBlocks, maxModelLen: o.maxModelLen ?? lat.maxModelLen, tp, gpuType: gpu };
}

function poolLatency(lat: ResolvedLatency, g: PdGlobals, backend: string, tp: number, flagPrefix: string, gpu: string | null): LatencyModel {
  const width = lat.verifyWidth === undefined ? {} : { verifyWidth: lat.verifyWidth };
  if (backend === 'blackbox') return createBlackboxModel({ alpha: lat.alpha, beta: lat.beta, ...width });
  const arch = lat.architecture;
  if (arch === null) throw bad(`${flagPrefix}-latency-model ${backend} needs the model's config.json; pass --model-config-folder`);
  const hw = gpu === null ? lat.hardwareConfig ?? lat.findHardware(lat.hardware) : poolGpu(lat, gpu, backend, flagPrefix, tp);
  if (hw === undefined || hw === null) throw bad(`${flagPrefix}-latency-model ${backend} needs a GPU: set --hardware`);
  if (tp <= 0) throw bad(`${flagPrefix}-tp must be > 0 for the ${backend} latency model`);
  // The run's --gpus-per-node fabric also times the pool (its TP group is checked against the node size).
  const network = lat.network;
  if (network !== undefined && tp > network.gpusPerNode && tp % network.gpusPerNode !== 0) {
    throw bad(`${flagPrefix}-tp ${tp} spans nodes of --gpus-per-node ${network.gpusPerNode} GPUs but is not a multiple of it; use a multiple of --gpus-per-node`);
  }
  const net = network === undefined ? {} : { network };
  if (backend === 'corrected-physics') {
    const name = gpu ?? lat.hardware;
    const own = hw.physics !== undefined ? hw : withGpuPhysics(name, hw, canonicalGpuName(name), tp, `${flagPrefix}-hardware`).hw;
    return createCorrectedPhysicsModel({ model: arch, hardware: own, tp, coefficients: lat.correctedCoefficients, ...net, ...width });
  }
  return backend === 'roofline'
    ? createRooflineModel({ model: arch, hardware: hw, tp, alpha: lat.alpha, corrected: g.corrected === true, ...net, ...width })
    : createTrainedPhysicsModel({ model: arch, hardware: hw, tp, dp: g.dp, moeCommBackend: g.moeCommBackend, alpha: lat.alpha, beta: lat.beta, corrected: g.corrected === true, ...net, ...width });
}

/** The pool's own GPU (corrected semantics), with the physics entry corrected-physics needs filled in as for --hardware. */
function poolGpu(lat: ResolvedLatency, gpu: string, backend: string, flagPrefix: string, tp: number): HardwareConfig {
  const hw = lat.findHardware(gpu);
  if (hw === undefined) throw bad(`${flagPrefix}-hardware: unknown GPU "${gpu}"; use a GPU of the catalog or add it to --hardware-config`);
  if (backend !== 'corrected-physics' || hw.physics !== undefined) return hw;
  return withGpuPhysics(gpu, hw, canonicalGpuName(gpu), tp, `${flagPrefix}-hardware`).hw;
}
