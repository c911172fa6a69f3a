/**
 * Builders shared by the latency tests (not used by the library): requests at a given progress point and
 * ModelConfig literals with every field spelled out.
 */
import { Request } from '../domain/request.js';
import { CORRECTED_PHYSICS_COEFFICIENTS, createCorrectedPhysicsModel, type CorrectedPhysicsCoefficient, type CorrectedPhysicsOptions } from './corrected-physics.js';
import type { ModelConfig, StepBatch } from './types.js';

/** A request with `input` prompt tokens, `output` oracle output tokens, progress `pi` and `newTokens` scheduled. */
export function req(input: number, output: number, pi: number, newTokens: number): Request {
  const r = new Request('r', new Int32Array(input), new Int32Array(output), 0);
  r.progressIndex = pi;
  r.numNewTokens = newTokens;
  return r;
}

export function times(n: number, make: () => Request): Request[] {
  return Array.from({ length: n }, make);
}

/** A Llama-3.1-8B-shaped dense model; `over` replaces fields. */
export function model(over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    numLayers: 32,
    hiddenDim: 4096,
    numHeads: 32,
    numKVHeads: 8,
    vocabSize: 0,
    bytesPerParam: 2,
    weightBytesPerParam: 0,
    intermediateDim: 14336,
    numLocalExperts: 0,
    numExpertsPerTok: 0,
    moeExpertFFNDim: 0,
    sharedExpertFFNDim: 0,
    interleaveMoELayerStep: 0,
    denseIntermediateDim: 0,
    hiddenAct: 'silu',
    headDim: 0,
    kvLoraRank: 0,
    qkRopeHeadDim: 0,
    firstKDenseReplace: 0,
    tieWordEmbeddings: false,
    maxPositionEmbeddings: 0,
    ropeScaling: null,
    modelType: '',
    ...over,
  };
}

/** One corrected-physics gradient term (µs) of `batch`, e.g. `'comm'` or `'compute'`. */
export function correctedTerm(opts: CorrectedPhysicsOptions, batch: StepBatch, term: CorrectedPhysicsCoefficient): number {
  const g = new Float64Array(CORRECTED_PHYSICS_COEFFICIENTS.length);
  createCorrectedPhysicsModel(opts).linear!.stepGradient(batch, g);
  return g[CORRECTED_PHYSICS_COEFFICIENTS.indexOf(term)]!;
}

/** `n` identical batch entries: `tokens` new tokens at context `progress` of an `input`-token prompt. */
export function uniformBatch(n: number, progress: number, tokens: number, input: number): StepBatch {
  return {
    count: n,
    progress: new Int32Array(n).fill(progress),
    newTokens: new Int32Array(n).fill(tokens),
    inputLen: new Int32Array(n).fill(input),
    outputLen: new Int32Array(n).fill(10),
  };
}
