/**
 * Inter-node network cost of collectives (upstream inference-sim #1530, PRs #1537/#1629: `--gpus-per-node`,
 * `--inter-node-bandwidth`, `--inter-node-latency`). A collective whose group of G GPUs is larger than a node
 * spans n = ceil(G / gpusPerNode) nodes; the fraction (n − 1)/n of the bytes each GPU moves crosses a node
 * boundary and is charged at the inter-node bandwidth (per GPU, GB/s) instead of the intra-node rate, plus a
 * fixed latency per collective. A group inside one node costs what it did without the network (n = 1).
 *
 * Every latency backend uses this one definition: trained-physics (as upstream), corrected-physics and
 * roofline (beyond upstream, which left roofline without a communication term: #1663).
 */
import { LatencyConfigError, LatencyErrorCode } from './errors.js';

/** The inter-node fabric of a deployment. Absent (undefined) = every collective stays inside one node. */
export interface InterNodeNetwork {
  /** GPUs sharing the fast intra-node fabric (NVLink); a larger group spans nodes. Integer >= 1. */
  readonly gpusPerNode: number;
  /** Achievable inter-node bandwidth per GPU, GB/s (1e9 bytes/s). > 0. */
  readonly bandwidthGBs: number;
  /** Fixed latency of one collective that crosses a node boundary, µs. >= 0. */
  readonly latencyUs: number;
}

/** Nodes a group of `group` GPUs spans: 1 without a network or when it fits in one node. */
export function nodesSpanned(net: InterNodeNetwork | undefined, group: number): number {
  if (net === undefined || group <= net.gpusPerNode) return 1;
  return Math.ceil(group / net.gpusPerNode);
}

/** The share of a collective's bytes that crosses a node boundary: (n − 1)/n over n nodes. */
export function crossNodeFraction(nodes: number): number {
  return nodes <= 1 ? 0 : (nodes - 1) / nodes;
}

/** Inter-node bandwidth in bytes per µs (1 GB/s = 1e3 bytes/µs). */
export function interNodeBytesPerUs(net: InterNodeNetwork): number {
  return net.bandwidthGBs * 1e3;
}

/** Checks a network's fields (a library caller may build one by hand); throws naming the field. */
export function validateNetwork(net: InterNodeNetwork, backend: string): void {
  const P = LatencyErrorCode.InvalidParallelism;
  if (!Number.isInteger(net.gpusPerNode) || net.gpusPerNode < 1) {
    throw new LatencyConfigError(P, 'gpusPerNode', `${backend}: gpus per node must be an integer >= 1, got ${net.gpusPerNode}`);
  }
  if (!(Number.isFinite(net.bandwidthGBs) && net.bandwidthGBs > 0)) {
    throw new LatencyConfigError(P, 'interNodeBandwidth', `${backend}: inter-node bandwidth must be a finite number > 0 GB/s, got ${net.bandwidthGBs}`);
  }
  if (!(Number.isFinite(net.latencyUs) && net.latencyUs >= 0)) {
    throw new LatencyConfigError(P, 'interNodeLatency', `${backend}: inter-node latency must be a finite number >= 0, got ${net.latencyUs} µs`);
  }
}

/**
 * A TP group larger than a node must fill whole nodes (vLLM places a multi-node TP group on whole nodes):
 * tp a multiple of gpusPerNode. Throws naming both otherwise.
 */
export function checkTpSpan(net: InterNodeNetwork | undefined, tp: number, backend: string): void {
  if (net === undefined || tp <= net.gpusPerNode || tp % net.gpusPerNode === 0) return;
  throw new LatencyConfigError(
    LatencyErrorCode.InvalidParallelism,
    'tp',
    `${backend}: tp ${tp} spans nodes of ${net.gpusPerNode} GPUs but is not a multiple of gpus per node; a TP group larger than a node must fill whole nodes`,
  );
}
