/**
 * What corrected-physics' collectives cost (src/latency/corrected-physics.ts prices a step with them): the α–β
 * model of src/config/catalog/gpu-physics.ts on the deployment's links, split at a node boundary when a group
 * spans nodes (--gpus-per-node).
 */
import type { LinkSpec } from '../config/catalog/gpu-physics.js';

/** The links and fabric shares of one deployment, derived once by corrected-physics' plan. */
export interface CollectivePlan {
  readonly tpLink: LinkSpec;
  /** tpLink's bandwidth protocol only: an NCCL call (the logits all-gather; vLLM's custom kernel only all-reduces). */
  readonly tpNcclLink: LinkSpec;
  readonly epLink: LinkSpec;
  /** With a network: the cross-node share of the TP and the expert collectives' bytes (0 inside a node). */
  readonly tpCross: number;
  readonly epCross: number;
  readonly interBytesPerUs: number;
  /** With a network: fixed latency of one collective that crosses a node, µs. */
  readonly interLatencyUs: number;
}

/**
 * A collective of `busBytes` per GPU over `n` GPUs on `link`; when its group spans nodes (`cross` > 0, only
 * with a network), the share `cross` of the bytes moves at the inter-node bandwidth with one inter-node latency
 * and the rest on the intra-node link.
 */
function collectiveAt(p: CollectivePlan, link: LinkSpec, n: number, busBytes: number, cross: number): number {
  if (cross === 0) return collectiveUs(link, n, busBytes);
  return collectiveUs(link, n, busBytes * (1 - cross)) + (busBytes * cross) / p.interBytesPerUs + p.interLatencyUs;
}

/** One collective moving `busBytes` per GPU over `n` GPUs: the cheaper of the link's two protocols. */
function collectiveUs(link: LinkSpec, n: number, busBytes: number): number {
  if (n <= 1) return 0;
  const hops = (1 + Math.log2(n)) / 2;
  const small = link.small.latencyUs * hops + busBytes / (link.small.busBandwidthGBs * 1e3);
  const large = link.large.latencyUs * hops + busBytes / (link.large.busBandwidthGBs * 1e3);
  return small < large ? small : large;
}

/** All-reduce of `bytes` over the TP group: a ring moves 2(n − 1)/n of them per GPU (nccl-tests' busbw convention). */
export function allReduceUs(p: CollectivePlan, n: number, bytes: number): number {
  return collectiveAt(p, p.tpLink, n, (bytes * 2 * (n - 1)) / n, p.tpCross);
}

/**
 * The logits all-gather of a step at TP > 1 (vLLM V1: `LogitsProcessor._gather_logits` calls
 * `tensor_model_parallel_all_gather` whenever `Platform.use_all_gather()`, true under V1): each GPU holds vocab/n
 * columns of every sampled position and receives the other (n − 1)/n of the `bytes`, as an NCCL call (the link's
 * bandwidth protocol; vLLM's custom kernel only all-reduces).
 */
export function logitsGatherUs(p: CollectivePlan, n: number, bytes: number): number {
  return collectiveAt(p, p.tpNcclLink, n, (bytes * (n - 1)) / n, p.tpCross);
}

/** All-to-all over the expert group where each GPU sends `bytes` spread over the other n − 1. */
export function allToAllUs(p: CollectivePlan, n: number, bytes: number): number {
  return collectiveAt(p, p.epLink, n, (bytes * (n - 1)) / n, p.epCross);
}
