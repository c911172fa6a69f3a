/**
 * What the corrected-physics latency model needs beyond a GPU's peak numbers: how its GPUs talk to each other
 * (the interconnect a tensor-parallel all-reduce or an expert-parallel all-to-all runs on) and how much of the
 * peak real kernels reach. The reference's models have neither: they price all-reduce at HBM bandwidth and
 * reuse one MFU across GPU classes.
 *
 * Collective cost is the α–β model NCCL's own performance notes use — a fixed latency per call plus the bytes
 * each GPU moves over the achievable bus bandwidth (nccl-tests' `busbw`) — for each of the two protocols a
 * library chooses between (low-latency for small messages, bandwidth for large), taking the cheaper. Sources
 * for the numbers, by kind:
 *
 * - Link peaks: NVIDIA datasheets (H100 SXM NVLink 4: 900 GB/s bidirectional, 450 GB/s per direction; A100
 *   SXM NVLink 3: 600 / 300 GB/s; B200 NVLink 5: 1.8 TB/s / 900 GB/s; PCIe 4.0 x16: 32 GB/s and PCIe 5.0
 *   x16: 64 GB/s per direction; ConnectX-7 NDR InfiniBand 400 Gb/s = 50 GB/s per GPU).
 * - Bandwidth protocol: published nccl-tests `all_reduce_perf` results — 8×H100 SXM with NVSwitch 460–480
 *   GB/s at GB sizes, 8×A100 SXM 230–250 GB/s, 8×H100 PCIe without NVLink 35–45 GB/s (e.g. Alaya NeW,
 *   "NCCL-tests in practice", 2026); the tens-of-MB messages of prefill reach about 75 % of that. NCCL's
 *   fixed cost on 8×H100 is ≈ 27 µs (microsoft/vidur `data/profiling/network/h100_dgx/all_reduce.csv`: 33 µs
 *   at 1 MiB, 39 µs at 2 MiB).
 * - Low-latency protocol: vLLM's custom all-reduce on H100 without CUDA graphs (sgl-project/sglang#2904):
 *   8.8 / 8.5 / 10.1 µs at 512 B for TP 2/4/8, and a slope of 17.8 / 25.5 / 27.2 µs per MB between 256 KB
 *   and 1 MB — a bus bandwidth of 56–64 GB/s — with intercepts 8.2 / 13.9 / 17 µs, i.e. ≈ 8.5 µs ×
 *   (1 + log2 n)/2. Decode messages (tokens × hidden × 2 bytes, 0.05–2 MB) live in this regime. Other links
 *   scale these by their peak ratio to NVLink 4; PCIe without peer NVLink roughly doubles the latency and an
 *   inter-node hop adds the NIC round trip. Where vLLM's custom all-reduce cannot run (no P2P; more than two
 *   PCIe GPUs) every call is an NCCL call of at least {@link NCCL_IN_STEP_CALL_US} (gpt-fast's TP rates).
 * - Kernel efficiency (fraction of peak that LLM-shaped kernels reach): FlashAttention-2 reaches 50–73 % of
 *   A100 peak in the forward pass (Dao, 2023, arXiv:2307.08691) and FlashAttention-3 up to 75 % of H100 BF16
 *   peak (Shah et al., 2024, arXiv:2407.08608), lower at the 0.5–4k-token lengths of serving; LLM-shaped BF16
 *   GEMMs at prefill sizes run at 66–77 % of Hopper and Ampere peak (vidur's kernel profiles, see AMPERE
 *   below); streaming reads sustain 85–90 % of HBM peak (H100 SXM: ~3.0 TB/s D2D copy and STREAM triad of
 *   3.35); a whole batch-1 decode step on A100 streams 68.5 % (gpt-fast, see AMPERE below), which Ampere's
 *   weightRead takes. Ada and workstation Blackwell parts (GDDR) reuse the Ampere/Hopper values of the same
 *   generation, as noted. Paged-KV decode reads: FlashInfer's batch-decode kernels reach
 *   ≈ 80 % of HBM bandwidth (Ye et al., MLSys 2025, arXiv:2501.01005); the first choice here, 60 % from a
 *   profiling blog, made the public 7B run at 20 req/s overload (docs/fidelity.md records this change).
 *
 * These are starting points, not truths: `blis calibrate --fit` measures the effective multipliers on a
 * user's own server (docs/fidelity.md).
 */

/** One collective protocol: fixed cost per call (at 2 GPUs) and achievable bus bandwidth. */
export interface ProtocolSpec {
  /** Latency of one call between 2 GPUs (µs); a call over n GPUs costs (1 + log2 n)/2 times this. */
  readonly latencyUs: number;
  /** nccl-tests `busbw` the protocol sustains, GB/s (1e9 bytes). */
  readonly busBandwidthGBs: number;
}

/**
 * One link class. Collective libraries pick a low-latency protocol for small messages (vLLM's custom
 * all-reduce, NCCL LL/LL128) and a bandwidth protocol for large ones (NCCL Simple ring/tree); a call costs
 * the cheaper of the two.
 */
export interface LinkSpec {
  /** Human-readable link family, e.g. `nvlink4-nvswitch`, `pcie5`, `infiniband-ndr`. */
  readonly kind: string;
  readonly small: ProtocolSpec;
  readonly large: ProtocolSpec;
  /**
   * The largest group vLLM's custom all-reduce (the low-latency `small` figures) runs on over this link; a larger
   * TP group's calls are NCCL calls of at least {@link NCCL_IN_STEP_CALL_US} × (1 + log2 n)/2. Absent: any size
   * (NVLink). PCIe with P2P: 2 (vLLM: "Custom allreduce is disabled because it's not supported on more than two
   * PCIe-only GPUs").
   */
  readonly customAllReduceMaxGpus?: number;
}

export interface InterconnectSpec {
  /** Between GPUs of one node (TP groups that fit in a node). */
  readonly intraNode: LinkSpec;
  /** Between nodes (TP or EP groups larger than a node). */
  readonly interNode: LinkSpec;
  readonly gpusPerNode: number;
}

/** Fractions of peak that serving kernels reach (each in (0, 1]). */
export interface EfficiencySpec {
  /** Dense and MoE GEMMs (projections, MLP, experts, LM head) vs TFlopsPeak (or TFlopsFP8 for FP8 weights). */
  readonly gemm: number;
  /** Prefill attention (FlashAttention) vs the same peak. */
  readonly attention: number;
  /** Streaming weight reads vs BwPeakTBs. */
  readonly weightRead: number;
  /** Paged KV-cache reads in decode attention vs BwPeakTBs. */
  readonly kvRead: number;
}

export interface GpuPhysics {
  readonly interconnect: InterconnectSpec;
  readonly efficiency: EfficiencySpec;
  /**
   * Query rows one decode occupies in the attention kernel of a mixed step (a step that also holds a prefill chunk):
   * {@link FA2_DECODE_TILE_ROWS} where vLLM runs FlashAttention-2's varlen kernel, absent or 0 where decodes cost
   * only their KV read (FlashAttention-3 on Hopper).
   */
  readonly mixedDecodeTileRows?: number;
}

/**
 * FlashAttention-2's varlen forward kernel, which vLLM runs for every GPU but Hopper (FA3) and datacenter Blackwell,
 * works on tiles of kBlockM query rows per head; with a paged KV cache (a block table, as vLLM always passes) it takes
 * the split-KV kernel, whose tile is 64 rows for every head size (flash_fwd_launch_template.h,
 * run_mha_fwd_splitkv_dispatch: `constexpr static int kBlockM = 64;  // Fixed for all head dimensions`). A mixed step (prefill chunks and decodes in one causal varlen call) gives each decode's single
 * query a whole tile, so its attention costs the KV read plus 4 · heads · head_dim · 64 FLOPs per context token at
 * the attention rate. casys-kaist/LLMServingSim's vLLM 0.19 attention profiles (RTX PRO 6000 Blackwell and RTX 4090,
 * `profiler/perf/<gpu>/<model>/bf16/tp<n>/attention.csv`: the same decodes timed alone and together with a prefill
 * chunk) measure it: at 128 decodes the decode part of a mixed call costs 7.5 ns per context token and sequence for
 * Llama-3.1-8B at TP 1 on the RTX PRO 6000 (this model: 2.86 read + 5.07 tile = 7.9), 6.5 for Qwen3-32B at TP 2
 * (1.43 + 5.07 = 6.5) and 17.1 for Llama-3.1-8B on the RTX 4090 (4.52 + 10.08 = 14.6), 1.4–4.5 times the decodes alone.
 */
export const FA2_DECODE_TILE_ROWS = 64;

const link = (kind: string, small: [number, number], large: [number, number]): LinkSpec => ({
  kind,
  small: { latencyUs: small[0], busBandwidthGBs: small[1] },
  large: { latencyUs: large[0], busBandwidthGBs: large[1] },
});

/** NDR 400 Gb/s per GPU (50 GB/s), hierarchical all-reduce across nodes. */
const IB_NDR = link('infiniband-ndr', [25, 20], [50, 40]);
/** XDR-class 800 Gb/s per GPU (100 GB/s, ConnectX-8): NDR's figures with twice the bandwidth. */
const IB_XDR = link('infiniband-xdr', [25, 40], [50, 80]);
/** HDR 200 Gb/s per GPU (25 GB/s), the A100 generation's usual fabric. */
const IB_HDR = link('infiniband-hdr', [25, 12], [50, 20]);
/** 100–200 GbE RoCE, common on PCIe inference servers. */
const ROCE_200 = link('roce-200g', [30, 10], [60, 18]);

/**
 * What one NCCL all-reduce costs inside a compiled decode step, µs, whatever the link: pytorch-labs/gpt-fast's
 * README ("Tensor Parallelism": A100-80GB, torch.compile + CUDA graphs, NCCL all-reduce, no custom kernel)
 * decodes Llama-2-7B at 104.9 tokens/s on one GPU and 136.27 on two, so its 64 all-reduces (2 per layer) add
 * (1/136.27 − 1/(2 · 104.9)) s / 64 = 40.2 µs each to a step whose weight streaming halved (an upper bound: work
 * that does not halve with TP is counted in the calls). The launch, the cross-GPU synchronisation and the
 * protocol's fixed work, not the link, set it: vLLM's custom all-reduce (P2P only) takes ≈ 10 µs instead.
 */
export const NCCL_IN_STEP_CALL_US = 40;

const HOPPER: EfficiencySpec = { gemm: 0.7, attention: 0.55, weightRead: 0.85, kvRead: 0.8 };
/**
 * Ampere's weight streaming is not H100's 85 %: pytorch-labs/gpt-fast (README, "Benchmarks": A100-80GB SXM,
 * power limited to 330 W, torch.compile + CUDA graphs, batch 1) decodes Llama-2-7B BF16 at 104.9 tokens/s =
 * 1,397.31 GB/s of weights and KV, 68.5 % of the card's 2,039 GB/s (82 % of the "about 1700 GB/s" its README
 * gives as that power-limited card's copy peak). That is a whole compiled decode step, the
 * quantity this fraction prices (issue 28: the H100 figure had been carried to Ampere, pricing A100 decode
 * 19–28 % too cheap). The A100 80GB PCIe (300 W) is power-limited like gpt-fast's card.
 *
 * Ampere's GEMMs reach 72 % of peak, not 80–85 %: microsoft/vidur's per-kernel profiles on A100
 * (`data/profiling/compute/a100/<model>/mlp.csv`, commit 7d47513: the QKV, output, up/gate and down projections of
 * Llama-2-7B, Llama-3-8B, CodeLlama-34B and Llama-2-70B at TP 1 and 2, medians over their 1,024, 2,048 and 4,096-token
 * rows) run at 0.66–0.77 of the 312 TFLOPS BF16 peak, median 0.72 (the same protocol gives H100 0.715, HOPPER's
 * 0.7, and the GDDR Ampere A40 0.74). The 0.8 of cuBLAS square-GEMM benchmarks priced A100 prefill 11 % too fast.
 */
const AMPERE: EfficiencySpec = { gemm: 0.72, attention: 0.55, weightRead: 0.685, kvRead: 0.8 };
/** Blackwell software is younger than Hopper's: same fractions, GEMMs a little lower. */
const BLACKWELL: EfficiencySpec = { gemm: 0.65, attention: 0.55, weightRead: 0.85, kvRead: 0.8 };
/** GDDR parts stream slightly less of their peak than HBM. */
const ADA: EfficiencySpec = { gemm: 0.7, attention: 0.5, weightRead: 0.8, kvRead: 0.75 };
/**
 * The two workstation cards measured kernel by kernel: casys-kaist/LLMServingSim's vLLM 0.19 profile bundles
 * (commit 5daddb2, `profiler/perf/<gpu>/meta-llama/Llama-3.1-8B/bf16/tp1/{dense,attention}.csv`: each kernel of one
 * Llama-3.1-8B layer timed alone, eager mode). The fractions below are taken from those kernel timings the way
 * AMPERE's GEMM figure is taken from vidur's, never from a served run (docs/fidelity.md, "Workstation GPUs"):
 * - gemm: median over the QKV, output, gate/up and down projections at 1,024 and 2,048 tokens, against the
 *   datasheet's dense BF16 peak with FP32 accumulate;
 * - weightRead: the four projections' weight bytes over their time at 1–16 tokens (memory-bound), median;
 * - kvRead: decode attention's KV bytes over its time, median over the batches of 64k tokens and more;
 * - attention: prefill attention FLOPs (causal) over its time, chunks of 1,024 and 2,048 tokens after 0–4,096
 *   cached tokens, median.
 * The GeForce RTX 4090 runs its GEMMs at the FP32-accumulate datasheet peak (0.98–1.0; it boosts past the clock
 * the datasheet assumes: an independent cuBLAS square-GEMM measurement, zzc0721/torch-performance-test-data
 * issue #78, gives 151–165 TFLOPS BF16) and streams GDDR6X at 0.91, where the Ada class figures (0.7, 0.8) priced it
 * 30 % slow. The RTX PRO 6000 Blackwell's GEMMs reach 0.73 (issue #160 there: 334–368 TFLOPS on square BF16 GEMMs,
 * 0.66–0.73) and its prefill attention only 0.41 (FlashAttention on sm_120 is young).
 */
const RTX_4090: EfficiencySpec = { gemm: 0.99, attention: 0.63, weightRead: 0.91, kvRead: 0.9 };
const RTX_PRO_6000: EfficiencySpec = { gemm: 0.73, attention: 0.41, weightRead: 0.8, kvRead: 0.8 };

const NVSWITCH_H: InterconnectSpec = { intraNode: link('nvlink4-nvswitch', [8.5, 57], [13.5, 360]), interNode: IB_NDR, gpusPerNode: 8 };
const NVSWITCH_A: InterconnectSpec = { intraNode: link('nvlink3-nvswitch', [10, 40], [15, 180]), interNode: IB_HDR, gpusPerNode: 8 };
/** NVLink 5 has twice NVLink 4's per-GPU bandwidth; the H100 figures scaled by it (no public vLLM measurement). */
const NVSWITCH_B: InterconnectSpec = { intraNode: link('nvlink5-nvswitch', [8, 110], [13, 700]), interNode: IB_NDR, gpusPerNode: 8 };
/** PCIe with P2P: vLLM's custom all-reduce runs on 2 GPUs at most; larger groups use NCCL. */
const pcie = (kind: string, small: [number, number], large: [number, number]): LinkSpec => ({ ...link(kind, small, large), customAllReduceMaxGpus: 2 });
const PCIE4: InterconnectSpec = { intraNode: pcie('pcie4', [15, 10], [25, 18]), interNode: ROCE_200, gpusPerNode: 8 };
const PCIE5: InterconnectSpec = { intraNode: pcie('pcie5', [12, 20], [20, 35]), interNode: ROCE_200, gpusPerNode: 8 };
/**
 * The workstation cards' collectives run without P2P unless a user says otherwise (`"PCIeGen"` and `"PCIeP2P": true`
 * in a `--hardware-config` entry of the same name, docs/usage.md):
 * - GeForce RTX 40 cards have peer access disabled by the driver (NVIDIA/nccl-tests#117; sgl-project/sglang#4814:
 *   "peer access is not supported between these two devices" on 4090s at TP 2).
 * - The RTX PRO 6000 Blackwell has P2P in hardware, but NCCL's P2P path hangs on stock hosts unless the IOMMU is
 *   off and `nvidia_uvm uvm_disable_hmm=1` is set ("required on virtually all RTX PRO 6000 multi-GPU setups",
 *   voipmonitor/rtx6kpro hardware/pcie-bandwidth.md; local-inference-lab/rtx6kpro#15: 2 cards hang on the
 *   first all-reduce "unless NCCL_P2P_DISABLE=1"), so deployments commonly run with it disabled.
 */
const PCIE4_NO_P2P: InterconnectSpec = { ...PCIE4, intraNode: withoutP2P(PCIE4.intraNode) };
const PCIE5_NO_P2P: InterconnectSpec = { ...PCIE5, intraNode: withoutP2P(PCIE5.intraNode) };

/** Keyed like the GPU catalog (config/catalog/hardware.ts); every catalog GPU has an entry. */
export const GPU_PHYSICS: Readonly<Record<string, GpuPhysics>> = {
  H100: { interconnect: NVSWITCH_H, efficiency: HOPPER },
  'H100-PCIe': { interconnect: PCIE5, efficiency: HOPPER },
  H200: { interconnect: NVSWITCH_H, efficiency: HOPPER },
  B200: { interconnect: NVSWITCH_B, efficiency: BLACKWELL },
  /** Blackwell Ultra: NVLink 5 like B200; its ConnectX-8 NICs (800 Gb/s per GPU) double the inter-node link. */
  B300: { interconnect: { ...NVSWITCH_B, interNode: IB_XDR }, efficiency: BLACKWELL },
  'A100-40': { interconnect: NVSWITCH_A, efficiency: AMPERE, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
  'A100-80': { interconnect: NVSWITCH_A, efficiency: AMPERE, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
  'A100-SXM': { interconnect: NVSWITCH_A, efficiency: AMPERE, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
  // PCIe cards without NVLink: collectives cross the PCIe switch / CPU root complex.
  L40S: { interconnect: PCIE4, efficiency: ADA, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
  L4: { interconnect: PCIE4, efficiency: ADA, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
  'RTX-4090': { interconnect: PCIE4_NO_P2P, efficiency: RTX_4090, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
  'RTX-PRO-6000': { interconnect: PCIE5_NO_P2P, efficiency: RTX_PRO_6000, mixedDecodeTileRows: FA2_DECODE_TILE_ROWS },
};

/** Physics of a catalog GPU by its exact catalog name (aliases and spellings are resolved by the caller). */
export function findGpuPhysics(name: string): GpuPhysics | undefined {
  return Object.hasOwn(GPU_PHYSICS, name) ? GPU_PHYSICS[name] : undefined;
}

/**
 * GPU classes (architecture generations) a user GPU names in its `--hardware-config` entry (`"class"`): the
 * kernel efficiencies of the generation, the NVLink per-call latencies it reaches, its FlashAttention tile in mixed
 * steps and whether its PCIe cards talk peer to peer by default (`"PCIeP2P"` overrides). `blackwell-gddr` is the
 * workstation Blackwell (the GB202 die of the RTX PRO 6000 and RTX 5090, GDDR7): the RTX PRO 6000's measured
 * kernel efficiencies, the only ones published for that die.
 */
export const GPU_CLASSES = {
  ampere: { efficiency: AMPERE, nvlinkLatencyUs: [10, 15], mixedDecodeTileRows: FA2_DECODE_TILE_ROWS, pcieP2P: true },
  ada: { efficiency: ADA, nvlinkLatencyUs: [8.5, 13.5], mixedDecodeTileRows: FA2_DECODE_TILE_ROWS, pcieP2P: true },
  hopper: { efficiency: HOPPER, nvlinkLatencyUs: [8.5, 13.5], mixedDecodeTileRows: 0, pcieP2P: true },
  blackwell: { efficiency: BLACKWELL, nvlinkLatencyUs: [8, 13], mixedDecodeTileRows: 0, pcieP2P: true },
  // GB202 cards: the GeForce RTX 5090's driver disables peer access (NVIDIA/nccl#1637), the RTX PRO 6000's needs
  // host changes (PCIE5_NO_P2P above).
  'blackwell-gddr': { efficiency: RTX_PRO_6000, nvlinkLatencyUs: [8, 13], mixedDecodeTileRows: FA2_DECODE_TILE_ROWS, pcieP2P: false },
} as const satisfies Record<string, { efficiency: EfficiencySpec; nvlinkLatencyUs: readonly [number, number]; mixedDecodeTileRows: number; pcieP2P: boolean }>;
export type GpuClass = keyof typeof GPU_CLASSES;
export const GPU_CLASS_NAMES = Object.keys(GPU_CLASSES) as readonly GpuClass[];

/**
 * PCIe collectives per generation, with peer-to-peer (P2P) transfers between the cards: the PCIe 4.0 and 5.0
 * figures are the catalog's (L40S/RTX-4090 and RTX-PRO-6000/H100-PCIe: nccl-tests on 8×H100 PCIe reach 35–45
 * GB/s busbw at GB sizes, ≈ 55 % of the 64 GB/s link), 3.0 and 6.0 halve and double the bandwidth of the
 * neighbouring generation, as the link does.
 */
export const PCIE_LINKS: Readonly<Record<number, LinkSpec>> = {
  3: pcie('pcie3', [18, 5], [30, 9]),
  4: PCIE4.intraNode,
  5: PCIE5.intraNode,
  6: pcie('pcie6', [10, 40], [18, 70]),
};

/**
 * Without P2P (consumer cards, or P2P disabled by the driver / IOMMU) vLLM's custom all-reduce is off (its log:
 * "Custom allreduce is disabled because your platform lacks GPU P2P capability"), so every call is an NCCL call
 * (at least {@link NCCL_IN_STEP_CALL_US} each, issue 28) and NCCL stages every transfer through host memory:
 * about twice the per-call latency and half the bandwidth of the same generation with P2P (an estimate from the
 * extra copy; measure with nccl-tests and give an explicit "interconnect" where it matters).
 */
export function pcieLink(gen: number, p2p: boolean): LinkSpec | undefined {
  const l = PCIE_LINKS[gen];
  if (l === undefined) return undefined;
  return p2p ? l : withoutP2P(l);
}

/** Whether a PCIe link is priced without P2P (made by {@link pcieLink} with p2p false). */
export function isNoP2PLink(l: LinkSpec): boolean {
  return l.kind.endsWith('-no-p2p');
}

function withoutP2P(l: LinkSpec): LinkSpec {
  const half = (p: ProtocolSpec): [number, number] => [Math.max(p.latencyUs * 2, NCCL_IN_STEP_CALL_US), p.busBandwidthGBs / 2];
  return link(`${l.kind}-no-p2p`, half(l.small), half(l.large));
}

/**
 * An NVLink/NVSwitch node from the datasheet's NVLink figure (GB/s, bidirectional per GPU: H100 SXM 900, A100
 * SXM 600, B200 1,800): the H100 measurements (57 GB/s busbw in the low-latency protocol, 360 GB/s at prefill
 * sizes, for 450 GB/s per direction) scaled by the per-direction bandwidth, at the class's per-call latency.
 */
export function nvlinkLink(bidirectionalGBs: number, cls: GpuClass): LinkSpec {
  const r = bidirectionalGBs / 2 / 450;
  const [small, large] = GPU_CLASSES[cls].nvlinkLatencyUs;
  return link(`nvlink-${bidirectionalGBs}`, [small, 57 * r], [large, 360 * r]);
}

/** The fabric between nodes that usually comes with a GPU class's NVLink servers, and with PCIe servers. */
export function interNodeLink(nvlink: boolean, cls: GpuClass | undefined): LinkSpec {
  if (!nvlink) return ROCE_200;
  return cls === 'ampere' ? IB_HDR : IB_NDR;
}

/** A placeholder for a deployment that never talks between GPUs (TP 1, DP 1): collectives over 1 GPU cost 0. */
export const NO_LINK: LinkSpec = link('none (single GPU)', [0, 1], [0, 1]);
