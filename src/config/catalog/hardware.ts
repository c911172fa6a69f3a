/**
 * Embedded GPU catalog, in the reference's hardware_config.json units: dense (no 2:4 sparsity) tensor-core
 * TFLOPS for BF16 (`TFlopsPeak`) and FP8 (`TFlopsFP8`, 0 = no native FP8), HBM/GDDR bandwidth in TB/s,
 * capacity in GiB, and the prefill/decode model-FLOPs utilisation the roofline backend assumes.
 *
 * H100, A100-SXM/A100-80 and L40S are copied from the reference's hardware_config.json so results match it.
 * The other entries come from vendor spec sheets (named per entry); where a sheet quotes only "with
 * sparsity" figures, the dense value is half of it. Their MFUs are not measured: each reuses the reference's
 * calibration for the closest GPU of the same family, as noted.
 */

import type { GpuPhysics } from './gpu-physics.js';

/** One GPU, structurally identical to the latency layer's HardwareConfig. */
export interface GpuSpec {
  readonly TFlopsPeak: number;
  readonly TFlopsFP8: number;
  readonly BwPeakTBs: number;
  readonly mfuPrefill: number;
  readonly mfuDecode: number;
  readonly MemoryGiB: number;
  /** Interconnect and efficiencies of a user GPU (catalog GPUs keep theirs in gpu-physics.ts). */
  readonly physics?: GpuPhysics;
}

const A100_80: GpuSpec = {
  // Reference hardware_config.json "A100-SXM" / "A100-80" (MFU calibrated in the reference's discussion #589).
  TFlopsPeak: 312,
  TFlopsFP8: 0,
  BwPeakTBs: 2.039,
  mfuPrefill: 0.38,
  mfuDecode: 0.18,
  MemoryGiB: 80.0,
};

export const GPU_CATALOG = {
  H100: {
    // Reference hardware_config.json "H100".
    TFlopsPeak: 989.5,
    TFlopsFP8: 1979.0,
    BwPeakTBs: 3.35,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 80.0,
  },
  'H100-PCIe': {
    // NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column: BF16 1,513 and FP8 3,026 TFLOPS with sparsity,
    // 80 GB HBM2e, 2.0 TB/s; GPUs talk over PCIe 5.0 unless an NVLink bridge pairs them. MFU: the reference's
    // H100 values (same GH100 die).
    TFlopsPeak: 756.0,
    TFlopsFP8: 1513.0,
    BwPeakTBs: 2.0,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 80.0,
  },
  H200: {
    // NVIDIA H200 Tensor Core GPU datasheet (SXM): BF16 1,979 and FP8 3,958 TFLOPS with sparsity,
    // 141 GB HBM3e, 4.8 TB/s. MFU: the reference's H100 values (same Hopper GH100 die).
    TFlopsPeak: 989.5,
    TFlopsFP8: 1979.0,
    BwPeakTBs: 4.8,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 141.0,
  },
  B200: {
    // NVIDIA HGX B200 platform specifications, per-GPU column: FP16/BF16 4.5 and FP8 9 PFLOPS with sparsity,
    // 180 GB HBM3e, 7.7 TB/s. MFU: the reference has no Blackwell calibration; its H100 values are used.
    TFlopsPeak: 2250.0,
    TFlopsFP8: 4500.0,
    BwPeakTBs: 7.7,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 180.0,
  },
  'A100-40': {
    // NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM: BF16 312 TFLOPS dense (624 with sparsity),
    // no FP8, 40 GB HBM2, 1,555 GB/s. MFU: the reference's A100-SXM values.
    TFlopsPeak: 312,
    TFlopsFP8: 0,
    BwPeakTBs: 1.555,
    mfuPrefill: 0.38,
    mfuDecode: 0.18,
    MemoryGiB: 40.0,
  },
  'A100-80': A100_80,
  'A100-SXM': A100_80,
  L40S: {
    // Reference hardware_config.json "L40S". Note: its TFlopsFP8 (1466) is the datasheet's with-sparsity
    // figure (dense is 733); kept for parity with the reference.
    TFlopsPeak: 362.05,
    TFlopsFP8: 1466.0,
    BwPeakTBs: 0.864,
    mfuPrefill: 0.32,
    mfuDecode: 0.08,
    MemoryGiB: 48.0,
  },
  L4: {
    // NVIDIA L4 Tensor Core GPU datasheet: BF16 242 and FP8 485 TFLOPS with sparsity, 24 GB GDDR6,
    // 300 GB/s. MFU: the reference's L40S values (same Ada Lovelace architecture).
    TFlopsPeak: 121.0,
    TFlopsFP8: 242.5,
    BwPeakTBs: 0.3,
    mfuPrefill: 0.32,
    mfuDecode: 0.08,
    MemoryGiB: 24.0,
  },
  'RTX-4090': {
    // NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090 column: peak BF16 tensor 165.2 and
    // FP8 tensor 330.3 TFLOPS dense with FP32 accumulate, 24 GB GDDR6X, 1,008 GB/s. MFU: the reference's L40S
    // values (same Ada Lovelace architecture).
    TFlopsPeak: 165.2,
    TFlopsFP8: 330.3,
    BwPeakTBs: 1.008,
    mfuPrefill: 0.32,
    mfuDecode: 0.08,
    MemoryGiB: 24.0,
  },
  'RTX-PRO-6000': {
    // NVIDIA RTX Blackwell GPU architecture whitepaper / RTX PRO 6000 Blackwell datasheet: peak BF16 tensor
    // 503.8 and FP8 tensor 1,007.6 TFLOPS dense (FP32 accumulate), 96 GB GDDR7, 1,792 GB/s. MFU: the
    // reference's L40S values (closest workstation-class GDDR part it calibrated).
    TFlopsPeak: 503.8,
    TFlopsFP8: 1007.6,
    BwPeakTBs: 1.792,
    mfuPrefill: 0.32,
    mfuDecode: 0.08,
    MemoryGiB: 96.0,
  },
} as const satisfies Record<string, GpuSpec>;

export type GpuName = keyof typeof GPU_CATALOG;

/** Catalog names in declaration order (for help text and "available: ..." errors). */
export const GPU_NAMES = Object.keys(GPU_CATALOG) as readonly GpuName[];

/**
 * Alternative spellings accepted for `--hardware`, mapped to catalog names. Lookups are exact first (the
 * reference is case-sensitive), then through this table.
 */
const GPU_ALIASES: Readonly<Record<string, GpuName>> = {
  RTX4090: 'RTX-4090',
  'RTX 4090': 'RTX-4090',
  'RTX-PRO6000': 'RTX-PRO-6000',
  'H100-PCIE': 'H100-PCIe',
  'RTX PRO 6000': 'RTX-PRO-6000',
};

export function findGpu(name: string, corrected = false): GpuSpec | undefined {
  const canonical = canonicalGpuName(name);
  if (canonical === undefined) return undefined;
  const spec = GPU_CATALOG[canonical];
  return corrected && Object.hasOwn(CORRECTED_SPECS, canonical) ? { ...spec, ...CORRECTED_SPECS[canonical] } : spec;
}

/** The catalog name `name` stands for (itself or through an alias), or undefined when it is not in the catalog. */
export function canonicalGpuName(name: string): GpuName | undefined {
  if (Object.hasOwn(GPU_CATALOG, name)) return name as GpuName;
  return Object.hasOwn(GPU_ALIASES, name) ? GPU_ALIASES[name] : undefined;
}

/**
 * --semantics corrected (docs/reference-differences.md L1): catalog figures the reference gets wrong. The
 * L40S FP8 peak is the datasheet's dense figure, like its BF16 one, not the with-sparsity 1466.
 */
const CORRECTED_SPECS: Partial<Record<GpuName, Partial<GpuSpec>>> = {
  L40S: { TFlopsFP8: 733.0 },
};
