/**
 * Trained-physics latency model (reference blis-core.md §6.2), the default backend: roofline-style basis
 * functions (compute, KV traffic, weight loading, TP/MoE communication) scaled by fitted β coefficients plus
 * per-layer, per-request and per-step overheads. MFU is not used.
 *
 * Expression operand order follows the reference term by term; see roofline.ts for why that matters.
 */
import type { Request } from '../domain/request.js';
import { clampToInt64 } from '../domain/units.js';
import { LatencyConfigError, LatencyErrorCode, isPositiveFinite, validateCoefficients } from './errors.js';
import { DEFAULT_MOE_COMM_BACKEND, MOE_COMM_BACKEND_NAMES, MOE_COMM_BACKENDS, isMoECommBackend } from './moe-comm.js';
import type { HardwareConfig, LatencyModel, ModelConfig } from './types.js';

export interface TrainedPhysicsOptions {
  readonly model: ModelConfig;
  readonly hardware: HardwareConfig;
  readonly tp: number;
  /** Data parallelism (default 1). Values > 1 are only meaningful, and only allowed, for MoE models. */
  readonly dp?: number;
  /** vLLM all-to-all backend name; '' or absent = allgather_reducescatter. Only matters for MoE at dp > 1. */
  readonly moeCommBackend?: string;
  /** [α0 queueing, α1 post-decode, α2 per-output-token], at least 3 entries. */
  readonly alpha: readonly number[];
  /**
   * 7 to 11 entries. With >= 9 the prefill term splits into compute and KV parts (β0, β8); with >= 10 the
   * decode term does too (β1, β9). β10 (MoE dispatch) defaults to β3 when fewer than 11 are given.
   */
  readonly beta: readonly number[];
}

/** KV cache elements are 16-bit whatever the weight precision. */
const KV_ELEMENT_BYTES = 2.0;

function fail(code: LatencyErrorCode, field: string, message: string): never {
  throw new LatencyConfigError(code, field, `trained-physics: ${message}`);
}

function validate(opts: TrainedPhysicsOptions, dp: number): void {
  const { model: mc, hardware: hw, tp } = opts;
  const M = LatencyErrorCode.InvalidModelConfig;
  if (!Number.isInteger(tp) || tp <= 0) fail(LatencyErrorCode.InvalidParallelism, 'tp', `tp must be a positive integer, got ${tp}`);
  if (!Number.isInteger(dp) || dp < 1) fail(LatencyErrorCode.InvalidParallelism, 'dp', `dp must be an integer >= 1, got ${dp}`);
  if (dp > 1 && mc.numLocalExperts < 2) {
    fail(
      LatencyErrorCode.InvalidParallelism,
      'dp',
      `dp > 1 is only supported for MoE models (got dp=${dp} for a dense model); ` +
        'model dense data parallelism as more instances instead',
    );
  }
  if (mc.numLayers <= 0) fail(M, 'num_hidden_layers', `num_hidden_layers must be > 0, got ${mc.numLayers}`);
  if (mc.numHeads <= 0) fail(M, 'num_attention_heads', `num_attention_heads must be > 0, got ${mc.numHeads}`);
  if (mc.hiddenDim <= 0) fail(M, 'hidden_size', `hidden_size must be > 0, got ${mc.hiddenDim}`);
  if (mc.intermediateDim <= 0) {
    fail(M, 'intermediate_size', `intermediate_size must be > 0, got ${mc.intermediateDim}`);
  }
  if (mc.numHeads % tp !== 0) {
    fail(LatencyErrorCode.InvalidParallelism, 'tp', `num_attention_heads (${mc.numHeads}) must be divisible by tp (${tp}); choose a tp that divides it`);
  }
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  if (kvHeads % tp !== 0) {
    fail(LatencyErrorCode.InvalidParallelism, 'tp', `num_key_value_heads (${kvHeads}) must be divisible by tp (${tp}); choose a tp that divides it`);
  }
  if (!isPositiveFinite(hw.TFlopsPeak)) fail(LatencyErrorCode.InvalidHardwareConfig, 'TFlopsPeak', `TFlopsPeak must be > 0, got ${hw.TFlopsPeak}`);
  if (!isPositiveFinite(hw.BwPeakTBs)) fail(LatencyErrorCode.InvalidHardwareConfig, 'BwPeakTBs', `BwPeakTBs must be > 0, got ${hw.BwPeakTBs}`);
  if (!isPositiveFinite(mc.bytesPerParam)) {
    fail(M, 'torch_dtype', `bytes per parameter must be > 0, got ${mc.bytesPerParam} (set torch_dtype to float32, float16, bfloat16, ...)`);
  }
  if (mc.numLocalExperts > 1 && mc.numExpertsPerTok <= 0) {
    fail(M, 'num_experts_per_tok', `MoE model with ${mc.numLocalExperts} experts needs num_experts_per_tok > 0`);
  }
}

export function createTrainedPhysicsModel(opts: TrainedPhysicsOptions): LatencyModel {
  const dp = opts.dp ?? 1;
  validateCoefficients('alpha', opts.alpha, 3, 'trained-physics');
  validateCoefficients('beta', opts.beta, 7, 'trained-physics');
  const backend = opts.moeCommBackend === undefined || opts.moeCommBackend === '' ? DEFAULT_MOE_COMM_BACKEND : opts.moeCommBackend;
  if (!isMoECommBackend(backend)) {
    fail(
      LatencyErrorCode.UnknownMoECommBackend,
      'moeCommBackend',
      `unknown MoE comm backend "${backend}"; valid: ${MOE_COMM_BACKEND_NAMES.join(', ')}`,
    );
  }
  validate(opts, dp);

  const { model: mc, hardware: hw, tp } = opts;
  const given = opts.beta.length;
  const beta = Array.from({ length: 11 }, (_, i) => (i < given ? opts.beta[i]! : 0));
  if (given < 11) beta[10] = beta[3]!;
  const [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10] = beta as [number, number, number, number, number, number, number, number, number, number, number];
  const prefillSplit = given >= 9;
  const decodeSplit = given >= 10;

  const isMoE = mc.numLocalExperts >= 2;
  let moeLayerCount = 0;
  let denseLayerCount = mc.numLayers;
  if (mc.interleaveMoELayerStep > 0 && isMoE) {
    moeLayerCount = Math.trunc(mc.numLayers / (mc.interleaveMoELayerStep + 1));
    denseLayerCount = mc.numLayers - moeLayerCount;
  } else if (isMoE) {
    moeLayerCount = mc.numLayers;
    denseLayerCount = 0;
  }
  const interleaved = mc.interleaveMoELayerStep > 0 && isMoE;
  const headDimInt = Math.trunc(mc.hiddenDim / mc.numHeads);
  const kvHeads = mc.numKVHeads === 0 ? mc.numHeads : mc.numKVHeads;
  const dFFMoE = mc.moeExpertFFNDim > 0 ? mc.moeExpertFFNDim : mc.intermediateDim;
  const dFFDense = mc.denseIntermediateDim > 0 ? mc.denseIntermediateDim : mc.intermediateDim;
  const weightBPP = mc.weightBytesPerParam > 0 ? mc.weightBytesPerParam : mc.bytesPerParam;
  const actBPP = mc.bytesPerParam;
  const flopsPerUs = weightBPP === 1.0 && hw.TFlopsFP8 > 0 ? hw.TFlopsFP8 * 1e6 : hw.TFlopsPeak * 1e6;
  const bytesPerUs = hw.BwPeakTBs * 1e6;
  const moeGroupInt = isMoE ? tp * dp : tp;
  const all2all = MOE_COMM_BACKENDS[backend] === 'all2all';
  const shared = mc.sharedExpertFFNDim;

  const L = mc.numLayers;
  const d = mc.hiddenDim;
  const dKV = kvHeads * headDimInt;
  const dH = headDimInt;
  const kEff = Math.max(1, mc.numExpertsPerTok);
  const hPerGPU = mc.numHeads / tp;
  const dpf = dp;
  const tpdp = tp * dpf;
  const nMoE = moeLayerCount;
  const nDense = denseLayerCount;
  const group = moeGroupInt;
  const experts = mc.numLocalExperts;
  const projWidth = 2 * d + 2 * dKV;

  /** FFN FLOPs of `tokens` routed through the MoE and dense layers (balanced expert placement). */
  const ffnFlops = (tokens: number): number => {
    let f = 0;
    if (nMoE > 0) {
      f += nMoE * ((tokens * kEff) / group) * 6 * d * dFFMoE;
      f += shared === 0 ? 0 : (nMoE * tokens * 6 * d * shared) / tpdp;
    }
    if (nDense > 0) f += (nDense * tokens * 1 * 6 * d * dFFDense) / tpdp;
    return f;
  };

  /** Ring all-reduce of `tokens` hidden states across the TP group, `units` times; 0 without TP. */
  const allReduce = (units: number, tokens: number): number => {
    if (tp <= 1) return 0;
    const tpFactor = (tp - 1) / tp;
    return (units * tokens * d * actBPP * 2.0 * tpFactor) / bytesPerUs;
  };

  /** One MoE layer's DP>1 dispatch+combine time for the chosen volume family. */
  const dispatch = (tokens: number): number => {
    if (all2all) {
      const commTokens = ((((tokens / dp) * kEff * (group - 1)) / group) * 2);
      return (commTokens * d * actBPP) / bytesPerUs;
    }
    return ((((tokens / dpf) * (group - 1)) / group) * 2 * d * actBPP) / bytesPerUs;
  };

  // Weight loading does not depend on the batch (each GPU holds a fixed share of the experts).
  const attnWeights = (L * d * projWidth * weightBPP) / tp;
  let ffnWeights = 0;
  if (nMoE > 0) {
    ffnWeights += nMoE * (experts / group) * 3 * d * dFFMoE * weightBPP;
    if (shared > 0) ffnWeights += (nMoE * 3 * d * shared * weightBPP) / tp;
  }
  if (nDense > 0) ffnWeights += (nDense * 1 * 3 * d * dFFDense * weightBPP) / tp;
  const tWeight = (attnWeights + ffnWeights) / bytesPerUs;

  const a0 = clampToInt64(opts.alpha[0]!);
  const a1 = clampToInt64(opts.alpha[1]!);
  const a2 = clampToInt64(opts.alpha[2]!);

  return {
    name: 'trained-physics',
    stepTime(batch: readonly Request[], count: number): number {
      if (count === 0) return 1;
      let pf = 0;
      let td = 0;
      let sumCtx = 0;
      let attn = 0;
      for (let i = 0; i < count; i++) {
        const r = batch[i]!;
        if (r.progressIndex < r.inputLen) {
          const ti = r.numNewTokens;
          pf += ti;
          attn += 4 * hPerGPU * ti * (r.inputLen + ti / 2) * dH;
        } else if (r.outputLen > 0) {
          td++;
          sumCtx += r.progressIndex;
        }
      }

      let tPfCompute = 0;
      let tPfKv = 0;
      if (pf > 0) {
        const proj = (L * 2 * pf * d * projWidth) / tpdp;
        tPfCompute = (proj + (L * attn) / dpf + ffnFlops(pf)) / flopsPerUs;
        tPfKv = (L * 2 * (dKV / tpdp) * pf * KV_ELEMENT_BYTES) / bytesPerUs;
      }
      let tDcCompute = 0;
      let tDcKv = 0;
      if (td > 0) {
        const proj = (L * 2 * td * d * projWidth) / tpdp;
        const attnDc = (L * 4 * hPerGPU * sumCtx * dH) / dpf;
        tDcCompute = (proj + attnDc + ffnFlops(td)) / flopsPerUs;
        tDcKv = (L * 2 * (dKV / tpdp) * KV_ELEMENT_BYTES * (sumCtx + td)) / bytesPerUs;
      }

      const tokens = pf + td;
      let tTpAttn = 0;
      let tTpDense = 0;
      if (tp > 1) {
        tTpAttn = allReduce(L, tokens) / dpf;
        tTpDense = allReduce(nDense, tokens) / dpf;
      }
      const tMoEReduce = isMoE && nMoE > 0 && dp === 1 && tp > 1 ? allReduce(nMoE, tokens) : 0;
      const tMoEDispatch = isMoE && dp > 1 ? dispatch(tokens) * nMoE : 0;

      const prefill = prefillSplit ? b0 * tPfCompute + b8 * tPfKv : b0 * Math.max(tPfCompute, tPfKv);
      const decode = decodeSplit ? b1 * tDcCompute + b9 * tDcKv : b1 * Math.max(tDcCompute, tDcKv);
      const step =
        prefill +
        decode +
        b2 * tWeight +
        b3 * (tTpAttn + tTpDense + tMoEReduce) +
        b10 * tMoEDispatch +
        b4 * L +
        b5 * count +
        b6 +
        b7 * (interleaved ? 1.0 : 0.0) * nMoE;
      return Math.max(1, clampToInt64(step));
    },
    queueingTime(): number {
      return a0;
    },
    outputTokenProcessingTime(): number {
      return a2;
    },
    postDecodeFixedOverhead(): number {
      return a1;
    },
  };
}
