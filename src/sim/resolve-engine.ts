/**
 * Flags shared by `run` and `replay` → a resolved engine setup (reference resolveLatencyConfig plus the
 * engine flag checks). Reads the optional user model/hardware files; everything else is pure.
 */
import type { EngineSetup } from './engine-setup.js';
import { ConfigError } from './config-error.js';
import { resolveLatency, type ResolvedLatency } from './resolve-latency.js';
import { SCHEDULERS, PREEMPTION_POLICIES, type PreemptionPolicy, type SchedulerName } from '../instance/scheduler.js';
import { MAX_INT64 } from '../domain/units.js';
import { SEMANTICS, isSemantics, type Semantics } from '../domain/semantics.js';
import type { FlagValues } from './options.js';
import type { SimEnv } from './env.js';

function readJson(env: SimEnv, path: string, option: string): unknown {
  const text = env.readText(path, option);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new ConfigError('bad-json', `${option}: ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

export interface EngineResolution {
  readonly setup: Omit<EngineSetup, 'horizon'>;
  readonly latency: ResolvedLatency;
  readonly seed: bigint;
}

/** `--semantics`: reference (default) or corrected. */
export function semanticsFlag(f: FlagValues): Semantics {
  const v = f.str('semantics');
  if (!isSemantics(v)) throw new ConfigError('bad-flag', `--semantics must be ${SEMANTICS.join(' or ')}, got "${v}"`, { field: '--semantics' });
  return v;
}

export async function resolveEngineFlags(f: FlagValues, env: SimEnv): Promise<EngineResolution> {
  const semantics = semanticsFlag(f);
  const folder = f.str('model-config-folder');
  let userModelConfig: { raw: unknown; label: string } | undefined;
  if (folder !== '') {
    const p = `${folder.replace(/\/+$/, '')}/config.json`;
    userModelConfig = { raw: readJson(env, p, '--model-config-folder'), label: p };
  }
  const hwPath = f.str('hardware-config');
  // The schema library is loaded only when a user catalog file is given (it costs startup time).
  const userHardware = hwPath === '' ? undefined : (await import('../config/user-catalog.js')).parseUserHardwareConfig(env.readText(hwPath, '--hardware-config'), hwPath);
  const latency = resolveLatency({
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
    ...(semantics === 'corrected' ? { corrected: true } : {}),
    ...(userModelConfig ? { userModelConfig } : {}),
    ...(userHardware ? { userHardware } : {}),
  });
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
  const numInstances = positive('num-instances');
  if (latency.totalKvBlocks <= 0) throw new ConfigError('bad-flag', `--total-kv-blocks must be > 0, got ${latency.totalKvBlocks}`);
  const scheduler = f.str('scheduler');
  if (!Object.hasOwn(SCHEDULERS, scheduler)) throw new ConfigError('bad-flag', `unknown --scheduler "${scheduler}"; valid: ${Object.keys(SCHEDULERS).join(', ')}`);
  const preemption = f.str('preemption-policy');
  if (!Object.hasOwn(PREEMPTION_POLICIES, preemption)) throw new ConfigError('bad-flag', `unknown --preemption-policy "${preemption}"; valid: ${Object.keys(PREEMPTION_POLICIES).join(', ')}`);
  const bw = f.float('kv-transfer-bandwidth');
  const cpuBlocks = nonNegative('kv-cpu-blocks');
  if (cpuBlocks > 0 && !(bw > 0)) throw new ConfigError('bad-flag', `--kv-transfer-bandwidth must be > 0 with --kv-cpu-blocks, got ${bw}`);
  const maxModelLen = latency.maxModelLen;
  const blockSize = f.int('block-size-in-tokens');
  if (maxModelLen > 0 && Math.ceil(maxModelLen / blockSize) > latency.totalKvBlocks) {
    throw new ConfigError('bad-flag', `KV cache too small for --max-model-len ${maxModelLen}: needs ${Math.ceil(maxModelLen / blockSize)} blocks but --total-kv-blocks is ${latency.totalKvBlocks}`);
  }
  return {
    seed: f.bigint('seed'),
    latency,
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
      maxNumBatchedTokens: positive('max-num-batched-tokens'),
      longPrefillTokenThreshold: nonNegative('long-prefill-token-threshold'),
      maxModelLen,
      scheduler: scheduler as SchedulerName,
      preemptionPolicy: preemption as PreemptionPolicy,
      kv: {
        totalBlocks: latency.totalKvBlocks,
        blockSize,
        cpuBlocks,
        transferBandwidth: bw,
        transferBaseLatency: nonNegative('kv-transfer-base-latency'),
      },
      latency: latency.latency,
    },
  };
}

/** `--horizon` as a tick count (MaxInt64 = none). */
export function horizonFlag(f: FlagValues): number {
  const v = f.bigint('horizon');
  if (v <= 0n) throw new ConfigError('bad-flag', `--horizon must be > 0, got ${v}`);
  return v >= 9007199254740992n ? MAX_INT64 : Number(v);
}
