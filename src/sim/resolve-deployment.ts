/**
 * A deployment file -> the engine's per-pool configurations (each pool resolved like a standalone run:
 * hardware, TP, latency model, KV capacity derived from its GPU unless given, max-model-len capped at it),
 * the startup instances (pool by pool, in file order, ids `instance_<k>`), and the P/D setup when any
 * configuration is disaggregated (KV transfers sized with the prefill pool's own TP).
 */
import type { ConfigSpec, DeploymentSpec } from '../deploy/spec.js';
import type { SpeculativeConfig } from '../instance/speculative.js';
import { poolTargetId } from '../deploy/spec.js';
import { PoolRole } from '../cluster/pd/pools.js';
import { kvBytesPerToken } from '../latency/kv-capacity.js';
import { DISAGGREGATION_DECIDERS, isDisaggregationDecider } from '../routing/disaggregation.js';
import { parseJson } from '../format/json.js';
import { ConfigError } from './config-error.js';
import type { DeploymentEngineSetup, PdEngineSetup, PoolConfigSetup } from './setup.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';
import { resolveLatency, type LatencyInput, type ResolvedLatency } from './resolve-latency.js';
import { pdBeyondFlags, poolScorers } from './resolve-pd.js';

export type { DeploymentEngineSetup, PoolConfigSetup } from './setup.js';

/** Flags a deployment file replaces: giving both is ambiguous. */
const REPLACED = ['num-instances', 'prefill-instances', 'decode-instances', 'prefill-decode-instances', 'prefill-tp', 'decode-tp', 'prefill-hardware', 'decode-hardware', 'prefill-latency-model', 'decode-latency-model', 'prefill-max-model-len', 'decode-max-model-len'];

export interface DeploymentResolution {
  readonly first: ResolvedLatency;
  readonly numInstances: number;
  readonly pd: PdEngineSetup | null;
  readonly engine: DeploymentEngineSetup;
}

export function resolveDeployment(spec: DeploymentSpec, base: LatencyInput, f: FlagValues, env: SimEnv): DeploymentResolution {
  for (const name of REPLACED) {
    if (f.has(name) && f.changed(name)) throw new ConfigError('bad-flag', `--${name} cannot be combined with --deployment ${spec.file}: the deployment file defines the instances and pools; remove the flag`);
  }
  for (const name of ['encode-instances', 'encode-decider', 'encode-tp', 'encode-hardware']) {
    if (f.has(name) && f.changed(name)) throw new ConfigError('bad-flag', `--${name} cannot be combined with --deployment ${spec.file}: a deployment file has no encode pool; use --num-instances with the P/D pool flags and --encode-instances instead`);
  }
  const pools: PoolConfigSetup[] = [];
  const resolved: ResolvedLatency[] = [];
  for (const m of spec.models) {
    const userModelConfig = m.modelConfigFolder !== ''
      ? { raw: readJson(env, `${m.modelConfigFolder.replace(/\/+$/, '')}/config.json`, `${spec.file}: model_config_folder`), label: `${m.modelConfigFolder}/config.json` }
      : base.model.toLowerCase() === m.name ? base.userModelConfig : undefined;
    // The configuration's kv_cache_dtype and speculative fields replace the flags' (configFeatures).
    const { userModelConfig: _drop, kvCacheDtype: _dtype, verifyWidth: _width, ...rest } = base;
    void _drop;
    void _dtype;
    void _width;
    for (const c of m.configs) {
      for (const p of c.pools) {
        const kv = p.totalKvBlocks ?? (c.totalKvBlocks > 0 ? c.totalKvBlocks : 0);
        const mml = p.maxModelLen ?? (c.maxModelLen > 0 ? c.maxModelLen : 0);
        const backend = p.latencyModel ?? (c.latencyModel !== '' ? c.latencyModel : base.backend);
        let lat: ResolvedLatency;
        const where = `${spec.file}: configuration ${poolTargetId(c, p)}`;
        try {
          lat = resolveLatency({
            ...rest,
            model: m.name,
            hardware: p.hardware ?? c.hardware,
            tp: p.tp ?? c.tp,
            backend,
            backendExplicit: true,
            totalKvBlocks: kv > 0 ? kv : base.totalKvBlocks,
            totalKvBlocksExplicit: kv > 0 || base.totalKvBlocksExplicit,
            maxModelLen: mml > 0 ? mml : base.maxModelLen,
            maxModelLenExplicit: mml > 0 || base.maxModelLenExplicit,
            network: {
              gpusPerNode: c.gpusPerNode ?? base.network?.gpusPerNode ?? 0,
              bandwidthGBs: c.interNodeBandwidth ?? base.network?.bandwidthGBs ?? 0,
              latencyMs: c.interNodeLatency ?? base.network?.latencyMs ?? 0,
            },
            ...(userModelConfig === undefined ? {} : { userModelConfig }),
            ...configFeatures(c, base),
            dp: c.dp ?? base.dp,
            ...(c.dpPlacement !== undefined ? { dpPlacement: c.dpPlacement } : {}),
          });
        } catch (e) {
          if (e instanceof ConfigError || (e as { code?: unknown }).code !== undefined) throw new ConfigError('bad-config', `${where}: ${(e as Error).message}`);
          throw e;
        }
        for (const w of lat.warnings) env.warn(`${where}: ${w}`);
        for (const m of lat.info) env.info?.(`${where}: ${m}`);
        resolved.push(lat);
        const role = p.kind === 'prefill' ? PoolRole.Prefill : p.kind === 'decode' ? PoolRole.Decode : PoolRole.None;
        // DP placement (upstream #1555): each replica of the configuration is dp engines at DP 1 (lat is one rank's).
        const ranks = lat.dpReplicas ?? 1;
        if (ranks > 1 && role !== PoolRole.None) throw new ConfigError('bad-config', `${where}: dp_placement replicas (dp ${ranks}) is not supported in a disaggregated configuration: its pools are sized in engines; use dp_placement: combined, or dp: 1 with ${ranks} times the replicas`);
        if (ranks > 1 && spec.autoscaler !== null) throw new ConfigError('bad-config', `${where}: dp_placement replicas (dp ${ranks}) cannot be combined with the autoscaler of ${spec.file}: it places a fixed set of ${ranks} engines per replica; use dp_placement: combined, or dp: 1 and let the autoscaler scale engines`);
        let bytes = 0;
        if (role !== PoolRole.None) {
          if (lat.architecture === null) throw new ConfigError('bad-config', `${where}: P/D needs the model's architecture for KV transfer sizing; give model_config_folder`);
          bytes = kvBytesPerToken(lat.architecture, lat.tp);
        }
        pools.push({
          target: poolTargetId(c, p),
          model: m.name,
          role,
          overrides: {
            latency: lat.latency, kvTotalBlocks: lat.totalKvBlocks, maxModelLen: lat.maxModelLen, tp: lat.tp, gpuType: lat.hardware,
            ...(c.speculative === undefined ? {} : { speculative: configSpeculative(c.speculative, base.corrected === true) }),
          },
          costPerGpuHour: c.costPerGpuHour,
          kvBytesPerToken: bytes,
          initialReplicas: p.replicas * ranks,
          minReplicas: p.minReplicas * ranks,
          maxReplicas: p.maxReplicas * ranks,
        });
      }
    }
  }
  for (const m of spec.models) {
    const kinds = new Set(m.configs.map((c) => (c.pools.length > 1 ? 'pd' : 'mono')));
    if (kinds.size > 1) throw new ConfigError('bad-config', `${spec.file}: model ${m.name} mixes monolithic and disaggregated configurations; serve a model either way, not both (requests could not be routed to one of them)`);
  }
  const startup: number[] = [];
  pools.forEach((p, k) => {
    for (let i = 0; i < p.initialReplicas; i++) startup.push(k);
  });
  const engine: DeploymentEngineSetup = { file: spec.file, pools, startup, models: spec.models.map((m) => m.name), defaultModel: spec.defaultModel, spec };
  return { first: resolved[0] as ResolvedLatency, numInstances: startup.length, pd: pdSetup(engine, f), engine };
}

/** A configuration's kv_cache_dtype and speculative verify width for its latency model (the run's when not set). */
function configFeatures(c: ConfigSpec, base: LatencyInput): { kvCacheDtype?: string; verifyWidth?: number } {
  const { kvCacheDtype, verifyWidth } = base;
  const dtype = c.kvCacheDtype ?? kvCacheDtype;
  const width = c.speculative === undefined ? verifyWidth : c.speculative.tokens > 0 ? c.speculative.tokens + 1 : undefined;
  return { ...(dtype === undefined || dtype === 'auto' ? {} : { kvCacheDtype: dtype }), ...(width === undefined ? {} : { verifyWidth: width }) };
}

/** A configuration's speculative decoding (null = off there). */
function configSpeculative(s: NonNullable<ConfigSpec['speculative']>, corrected: boolean): SpeculativeConfig | null {
  return s.tokens === 0 ? null : { k: s.tokens, accepted: s.acceptanceRate * s.tokens, lookahead: corrected };
}

function pdSetup(d: DeploymentEngineSetup, f: FlagValues): PdEngineSetup | null {
  if (!d.pools.some((p) => p.role !== PoolRole.None)) return null;
  const decider = f.str('pd-decider');
  if (!isDisaggregationDecider(decider)) throw new ConfigError('bad-flag', `Unknown PD decider "${decider}". Valid: ${DISAGGREGATION_DECIDERS.join(', ')}; set --pd-decider`);
  const bandwidth = f.float('pd-transfer-bandwidth');
  const baseLatency = f.float('pd-transfer-base-latency');
  if (!(bandwidth > 0)) throw new ConfigError('bad-flag', `--pd-transfer-bandwidth must be a finite positive number, got ${bandwidth}`);
  if (!(baseLatency >= 0)) throw new ConfigError('bad-flag', `--pd-transfer-base-latency must be a finite non-negative number, got ${baseLatency}`);
  const threshold = f.int('pd-prefix-threshold');
  if (threshold < 0) throw new ConfigError('bad-flag', `--pd-prefix-threshold must be >= 0, got ${threshold}`);
  const firstPrefill = d.pools.find((p) => p.role === PoolRole.Prefill) as PoolConfigSetup;
  return {
    beyond: pdBeyondFlags(f),
    roles: d.startup.map((k) => (d.pools[k] as PoolConfigSetup).role),
    decider,
    prefixThreshold: threshold,
    transfer: { bandwidthGBps: bandwidth, baseLatencyMs: baseLatency, contention: f.bool('pd-transfer-contention'), kvBytesPerToken: firstPrefill.kvBytesPerToken, blockSize: f.int('block-size-in-tokens') },
    prefillScorers: poolScorers(f, 'prefill-routing-scorers'),
    decodeScorers: poolScorers(f, 'decode-routing-scorers'),
    pdModels: [...new Set(d.pools.filter((p) => p.role !== PoolRole.None).map((p) => p.model))],
    kvBytesPerTokenOf: (target) => d.pools.find((p) => p.target === target)?.kvBytesPerToken ?? firstPrefill.kvBytesPerToken,
    prefill: null,
    decode: null,
  };
}

function readJson(env: SimEnv, path: string, option: string): unknown {
  return parseJson(env.readText(path, option), path, { code: 'bad-json' });
}
