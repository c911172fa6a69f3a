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
import type { UserGpuPhysics } from '../gpu-physics-derive.js';

/** One GPU, structurally identical to the latency layer's HardwareConfig. */
export interface GpuSpec {
  readonly TFlopsPeak: number;
  readonly TFlopsFP8: number;
  readonly BwPeakTBs: number;
  readonly mfuPrefill: number;
  readonly mfuDecode: number;
  readonly MemoryGiB: number;
  /**
   * Intra-node GPU-to-GPU bandwidth per GPU and direction (NVLink, or PCIe), GB/s; upstream's hardware_config
   * field. Informational in blis-ts (corrected-physics has its measured links in gpu-physics.ts).
   */
  readonly IntraNodeBwGBps?: number;
  /** Inter-node bandwidth per GPU (its NIC's line rate), GB/s: the default of --inter-node-bandwidth. */
  readonly InterNodeBwGBps?: number;
  /** Interconnect and efficiencies of a user GPU (catalog GPUs keep theirs in gpu-physics.ts). */
  readonly physics?: GpuPhysics;
  /** Datasheet facts and partial physics of a user GPU, from which corrected-physics derives the rest. */
  readonly userPhysics?: UserGpuPhysics;
}

const A100_80: GpuSpec = {
  // Reference hardware_config.json "A100-SXM" / "A100-80" (MFU calibrated in the reference's discussion #589).
  TFlopsPeak: 312,
  TFlopsFP8: 0,
  BwPeakTBs: 2.039,
  mfuPrefill: 0.38,
  mfuDecode: 0.18,
  MemoryGiB: 80.0,
  // Not in the reference's file (used only by --gpus-per-node): NVLink 3 600 GB/s bidirectional = 300 per
  // direction; DGX A100's HDR 200 Gb/s NIC per GPU = 25 GB/s (NVIDIA DGX A100 datasheet).
  IntraNodeBwGBps: 300,
  InterNodeBwGBps: 25,
};

export const GPU_CATALOG = {
  H100: {
    // Reference hardware_config.json "H100". Interconnect (not in the reference's file; used only by
    // --gpus-per-node): NVLink 4 900 GB/s bidirectional = 450 per direction, ConnectX-7 NDR 400 Gb/s per GPU =
    // 50 GB/s (NVIDIA DGX H100 datasheet), the figures upstream's later hardware entries carry.
    TFlopsPeak: 989.5,
    TFlopsFP8: 1979.0,
    BwPeakTBs: 3.35,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 80.0,
    IntraNodeBwGBps: 450,
    InterNodeBwGBps: 50,
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
    // 141 GB HBM3e, 4.8 TB/s. MFU: the reference's H100 values (same Hopper GH100 die). Upstream's entry
    // (inference-sim PR #1710) has the same figures and the interconnect: NVLink 4 900 GB/s bidirectional =
    // 450 per direction; one ConnectX-7 NDR 400 Gb/s NIC per GPU = 50 GB/s.
    TFlopsPeak: 989.5,
    TFlopsFP8: 1979.0,
    BwPeakTBs: 4.8,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 141.0,
    IntraNodeBwGBps: 450,
    InterNodeBwGBps: 50,
  },
  B200: {
    // NVIDIA HGX B200 platform specifications, per-GPU column: FP16/BF16 4.5 and FP8 9 PFLOPS with sparsity,
    // 180 GB HBM3e, 7.7 TB/s. MFU: the reference has no Blackwell calibration; its H100 values are used.
    // Interconnect: NVLink 5 1.8 TB/s bidirectional = 900 GB/s per direction; HGX B200 networking is one
    // ConnectX-7 400 Gb/s NIC per GPU = 50 GB/s.
    TFlopsPeak: 2250.0,
    TFlopsFP8: 4500.0,
    BwPeakTBs: 7.7,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 180.0,
    IntraNodeBwGBps: 900,
    InterNodeBwGBps: 50,
  },
  B300: {
    // NVIDIA HGX B300 (Blackwell Ultra) platform specifications, per GPU (the 8-GPU board's figures / 8):
    // FP16/BF16 36 and FP8 72 PFLOPS with sparsity per board = 2.25 / 4.5 PFLOPS dense per GPU, 2.3 TB HBM3e
    // per board = 288 GB per GPU at 8 TB/s; NVLink 5 1.8 TB/s bidirectional = 900 GB/s per direction;
    // ConnectX-8 SuperNIC 800 Gb/s per GPU = 100 GB/s. MFU: no Blackwell calibration; the reference's H100 values.
    TFlopsPeak: 2250.0,
    TFlopsFP8: 4500.0,
    BwPeakTBs: 8.0,
    mfuPrefill: 0.45,
    mfuDecode: 0.3,
    MemoryGiB: 288.0,
    IntraNodeBwGBps: 900,
    InterNodeBwGBps: 100,
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

/**
 * The catalog name `name` stands for, or undefined when it is not in the catalog: an exact name or alias
 * first (the reference is case-sensitive), then the spelling rule of {@link resolveGpuName}.
 */
export function canonicalGpuName(name: string): GpuName | undefined {
  return exactGpuName(name) ?? resolveGpuName(name);
}

/** The catalog name for an exact catalog name or alias (the reference's lookup), else undefined. */
export function exactGpuName(name: string): GpuName | undefined {
  if (Object.hasOwn(GPU_CATALOG, name)) return name as GpuName;
  return Object.hasOwn(GPU_ALIASES, name) ? GPU_ALIASES[name] : undefined;
}

/** Family, form factor and memory of each catalog entry, which the spelling rule matches against. */
const GPU_IDENTITY: Readonly<Record<GpuName, { family: string; form: 'SXM' | 'PCIE'; memGB: readonly number[] }>> = {
  H100: { family: 'H100', form: 'SXM', memGB: [80] },
  'H100-PCIe': { family: 'H100', form: 'PCIE', memGB: [80] },
  H200: { family: 'H200', form: 'SXM', memGB: [141] },
  B200: { family: 'B200', form: 'SXM', memGB: [180, 192] },
  B300: { family: 'B300', form: 'SXM', memGB: [288] },
  'A100-40': { family: 'A100', form: 'SXM', memGB: [40] },
  'A100-80': { family: 'A100', form: 'SXM', memGB: [80] },
  'A100-SXM': { family: 'A100', form: 'SXM', memGB: [80] },
  L40S: { family: 'L40S', form: 'PCIE', memGB: [48] },
  L4: { family: 'L4', form: 'PCIE', memGB: [24] },
  'RTX-4090': { family: 'RTX4090', form: 'PCIE', memGB: [24] },
  'RTX-PRO-6000': { family: 'RTXPRO6000', form: 'PCIE', memGB: [96] },
};

const compactName = (s: string): string => s.toUpperCase().replace(/[^A-Z0-9]/g, '');

/**
 * The spelling rule for GPU names (docs/usage.md, "GPU names"): case and separators (`-`, `_`, spaces, dots)
 * are ignored; a leading vendor word (`NVIDIA`, `GeForce`, `Tesla`) and a trailing `Blackwell`,
 * `Server Edition` or `Workstation Edition` are dropped; a trailing memory size (`80GB`, `40G`) and form factor
 * (`SXM`, `SXM4`, `SXM5`, `PCIe`) select among the entries of that family and must agree with the entry. When
 * the spelling leaves several entries open, the one named by the family alone (with the form factor given) is
 * taken (`H100-80GB` → H100, `A100-SXM4` → A100-SXM); otherwise the name is ambiguous (`A100`) and not
 * resolved. `RTXPRO6000`, `rtx_pro_6000`, `A100-SXM4-80GB`, `H100_SXM5` and `nvidia-h100-pcie` all resolve.
 */
export function resolveGpuName(name: string): GpuName | undefined {
  let c = compactName(name);
  for (const [alias, target] of [...Object.entries(GPU_ALIASES), ...GPU_NAMES.map((n) => [n, n] as const)]) {
    if (compactName(alias) === c) return target;
  }
  for (let changed = true; changed;) {
    changed = false;
    for (const prefix of ['NVIDIA', 'GEFORCE', 'TESLA']) {
      if (c.startsWith(prefix) && c.length > prefix.length) {
        c = c.slice(prefix.length);
        changed = true;
      }
    }
  }
  // Every way of reading trailing suffixes off the name (a memory size may take 2 or 3 of its digits).
  const matches = new Set<GpuName>();
  for (const p of suffixReadings(c, {})) {
    const candidates = GPU_NAMES.filter((n) => {
      const id = GPU_IDENTITY[n];
      return id.family === p.family && (p.form === undefined || id.form === p.form) && (p.mem === undefined || id.memGB.includes(p.mem));
    });
    const one = pickCandidate(candidates, p.family, p.form);
    if (one !== undefined) matches.add(one);
  }
  // Readings that land on entries with the same figures (A100-80 and A100-SXM) agree.
  const found = [...matches];
  return new Set(found.map((n) => JSON.stringify(GPU_CATALOG[n]))).size === 1 ? found[0] : undefined;
}

interface Reading { readonly family: string; readonly mem?: number; readonly form?: 'SXM' | 'PCIE' }

function suffixReadings(c: string, got: { mem?: number; form?: 'SXM' | 'PCIE' }): Reading[] {
  const out: Reading[] = [{ family: c, ...got }];
  const word = /^(.+)(BLACKWELL|SERVEREDITION|WORKSTATIONEDITION)$/.exec(c);
  if (word !== null) out.push(...suffixReadings(word[1]!, got));
  const form = /^(.+)(SXM\d?|PCIE)$/.exec(c);
  if (form !== null && got.form === undefined) out.push(...suffixReadings(form[1]!, { ...got, form: form[2]!.startsWith('SXM') ? 'SXM' : 'PCIE' }));
  for (const digits of [2, 3]) {
    const mem = new RegExp(`^(.+)(\\d{${digits}})GB?$`).exec(c);
    if (mem !== null && got.mem === undefined) out.push(...suffixReadings(mem[1]!, { ...got, mem: Number(mem[2]) }));
  }
  return out;
}

/** One GPU among the entries a reading fits; when they differ, the entry named by the family (and form) alone. */
function pickCandidate(candidates: readonly GpuName[], family: string, form: string | undefined): GpuName | undefined {
  if (candidates.length === 0) return undefined;
  const distinct = new Set(candidates.map((n) => JSON.stringify(GPU_CATALOG[n])));
  if (distinct.size === 1) return candidates[0];
  // Several different GPUs fit: the entry named by the family alone (plus the form factor given) is meant.
  return candidates.find((n) => compactName(n) === family || compactName(n) === family + (form ?? ''));
}

/**
 * --semantics corrected (docs/reference-differences.md L1): catalog figures the reference gets wrong. The
 * L40S FP8 peak is the datasheet's dense figure, like its BF16 one, not the with-sparsity 1466.
 */
const CORRECTED_SPECS: Partial<Record<GpuName, Partial<GpuSpec>>> = {
  L40S: { TFlopsFP8: 733.0 },
};
