import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GPU_CATALOG, GPU_NAMES, canonicalGpuName, findGpu } from './hardware.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const referenceFile = path.join(path.resolve(projectRoot, '../shared'), 'parity', 'hardware_config.json');
const haveReference = existsSync(referenceFile);

describe('GPU catalog', () => {
  it('has the required GPUs', () => {
    for (const name of ['H100', 'H200', 'B200', 'A100-40', 'A100-80', 'A100-SXM', 'L40S', 'L4', 'RTX-4090', 'RTX-PRO-6000']) {
      expect(GPU_NAMES).toContain(name);
    }
  });

  it('holds the reference hardware_config.json values for H100, A100 and L40S', () => {
    // Plus the interconnect bandwidths (beyond the reference's file; they only default --inter-node-bandwidth).
    expect(GPU_CATALOG.H100).toEqual({ TFlopsPeak: 989.5, TFlopsFP8: 1979, BwPeakTBs: 3.35, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 80, IntraNodeBwGBps: 450, InterNodeBwGBps: 50 });
    expect(GPU_CATALOG['A100-SXM']).toEqual({ TFlopsPeak: 312, TFlopsFP8: 0, BwPeakTBs: 2.039, mfuPrefill: 0.38, mfuDecode: 0.18, MemoryGiB: 80, IntraNodeBwGBps: 300, InterNodeBwGBps: 25 });
    expect(GPU_CATALOG['A100-80']).toEqual(GPU_CATALOG['A100-SXM']);
    expect(GPU_CATALOG.L40S).toEqual({ TFlopsPeak: 362.05, TFlopsFP8: 1466, BwPeakTBs: 0.864, mfuPrefill: 0.32, mfuDecode: 0.08, MemoryGiB: 48 });
  });

  it('holds upstream\'s H200 entry (inference-sim PR #1710) and B200/B300 from their datasheets', () => {
    expect(GPU_CATALOG.H200).toEqual({ TFlopsPeak: 989.5, TFlopsFP8: 1979, BwPeakTBs: 4.8, mfuPrefill: 0.45, mfuDecode: 0.3, MemoryGiB: 141, IntraNodeBwGBps: 450, InterNodeBwGBps: 50 });
    expect(GPU_CATALOG.B200).toMatchObject({ TFlopsPeak: 2250, TFlopsFP8: 4500, BwPeakTBs: 7.7, MemoryGiB: 180, IntraNodeBwGBps: 900, InterNodeBwGBps: 50 });
    expect(GPU_CATALOG.B300).toMatchObject({ TFlopsPeak: 2250, TFlopsFP8: 4500, BwPeakTBs: 8, MemoryGiB: 288, IntraNodeBwGBps: 900, InterNodeBwGBps: 100 });
    expect(canonicalGpuName('NVIDIA B300 SXM 288GB')).toBe('B300');
  });

  it('has usable values everywhere (positive peaks and MFU, FP8 either absent or faster than BF16)', () => {
    for (const name of GPU_NAMES) {
      const g = GPU_CATALOG[name];
      expect(g.TFlopsPeak, name).toBeGreaterThan(0);
      expect(g.BwPeakTBs, name).toBeGreaterThan(0);
      expect(g.MemoryGiB, name).toBeGreaterThan(0);
      expect(g.mfuPrefill, name).toBeGreaterThan(0);
      expect(g.mfuDecode, name).toBeGreaterThan(0);
      if (g.TFlopsFP8 !== 0) expect(g.TFlopsFP8, name).toBeGreaterThan(g.TFlopsPeak);
    }
  });

  it('finds GPUs by exact name or alias, then by the spelling rule', () => {
    expect(findGpu('H100')).toBe(GPU_CATALOG.H100);
    expect(findGpu('RTX 4090')).toBe(GPU_CATALOG['RTX-4090']);
    expect(findGpu('h100')).toBe(GPU_CATALOG.H100);
    expect(findGpu('toString')).toBeUndefined();
  });

  it('resolves common spellings to catalog entries (case, separators, vendor words, memory and form-factor suffixes)', () => {
    const cases: Record<string, string> = {
      RTXPRO6000: 'RTX-PRO-6000', RTX_PRO_6000: 'RTX-PRO-6000', 'rtx-pro-6000': 'RTX-PRO-6000', 'RTX PRO 6000 Blackwell Server Edition': 'RTX-PRO-6000',
      'NVIDIA RTX PRO 6000 Blackwell Workstation Edition': 'RTX-PRO-6000', 'rtx-pro-6000-96gb': 'RTX-PRO-6000',
      'A100-SXM4-80GB': 'A100-80', 'A100-SXM4-40GB': 'A100-40', 'a100_40gb': 'A100-40', 'A100-SXM4': 'A100-SXM', 'nvidia-a100-80g': 'A100-80',
      'H100-SXM': 'H100', H100_SXM5: 'H100', 'h100-sxm5-80gb': 'H100', 'H100-80GB': 'H100', 'NVIDIA H100 PCIe': 'H100-PCIe', h100pcie: 'H100-PCIe', 'H100-PCIe-80GB': 'H100-PCIe',
      'h200-141gb': 'H200', 'B200-192GB': 'B200', 'b200_sxm': 'B200', 'NVIDIA L40S': 'L40S', 'l40s-48gb': 'L40S', l4: 'L4',
      'GeForce RTX 4090': 'RTX-4090', 'rtx_4090_24gb': 'RTX-4090',
    };
    for (const [spelling, name] of Object.entries(cases)) expect(canonicalGpuName(spelling), spelling).toBe(name);
  });

  it('does not resolve other GPUs, ambiguous names or contradicting suffixes', () => {
    for (const name of ['A100', 'A100-PCIe', 'H100-NVL', 'H100-94GB', 'H800', 'A10', 'L40', 'RTX-6000', 'RTX-4090-48GB', 'L4-SXM', 'H100-SXM-PCIe', 'H100-80GB-40GB', '', 'NVIDIA']) {
      expect(canonicalGpuName(name), name).toBeUndefined();
    }
  });

  const title = haveReference ? 'matches the reference hardware_config.json' : `reference comparison skipped: ${referenceFile} not found`;
  describe.skipIf(!haveReference)(title, () => {
    it('every reference GPU is in the catalog with the same numbers', () => {
      const ref = JSON.parse(readFileSync(referenceFile, 'utf8')) as Record<string, Record<string, unknown>>;
      for (const [name, entry] of Object.entries(ref)) {
        const { _comment: _unused, ...numbers } = entry;
        // The interconnect fields (--gpus-per-node's inter-node bandwidth default) are beyond the reference's file.
        const { IntraNodeBwGBps: _intra, InterNodeBwGBps: _inter, ...same } = findGpu(name) ?? {};
        expect(same, name).toEqual(numbers);
      }
    });
  });
});
